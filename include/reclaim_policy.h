/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TX reclaim policy: when to take completed buffers back from a send
 * queue, and whether the device should interrupt us for completions.
 *
 * Pure decision logic; tx.c and napi.c act on the answers.
 */
#ifndef VNET_RECLAIM_POLICY_H
#define VNET_RECLAIM_POLICY_H

#include <linux/types.h>

struct vnet_reclaim_in {
	unsigned int num_free;	/* free descriptors in the ring */
	unsigned int ring_size;
	bool use_napi;		/* completions arrive through TX NAPI */
	bool batch_end;		/* this packet was kicked: the batch ended */
};

struct vnet_reclaim_out {
	bool reclaim;		/* take completed buffers back now */
	bool arm_irq;		/* ask for a completion interrupt */
};

void vnet_reclaim_on_xmit(const struct vnet_reclaim_in *in,
			  struct vnet_reclaim_out *out);
bool vnet_reclaim_room(unsigned int num_free, unsigned int need);

#endif /* VNET_RECLAIM_POLICY_H */
