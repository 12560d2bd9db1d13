/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TX kick policy: after a packet has been added to a send queue, decide
 * whether to notify the device now or to hold the notification back.
 *
 * Pure decision logic: the caller passes what it knows about the packet
 * and the queue, and acts on the answer (tx.c).  The device's own
 * event-index suppression is applied afterwards by virtqueue_kick_prepare(),
 * so "kick now" means "tell the device unless it asked not to be told".
 */
#ifndef VNET_KICK_POLICY_H
#define VNET_KICK_POLICY_H

#include <linux/types.h>

struct vnet_kick_state {
	/* Packets added since the last notification. */
	u32 pending;
};

struct vnet_kick_in {
	bool xmit_more;		/* the stack promises another packet now */
	bool queue_stopped;	/* ring or byte-queue limit stopped the queue */
	bool urgent;		/* netpoll, teardown: never hold */
};

enum vnet_kick_action {
	VNET_KICK_HOLD,		/* more is coming: wait */
	VNET_KICK_NOW,		/* notify the device now */
};

enum vnet_kick_action vnet_kick_decide(struct vnet_kick_state *s,
				       const struct vnet_kick_in *in);
void vnet_kick_done(struct vnet_kick_state *s);

#endif /* VNET_KICK_POLICY_H */
