// SPDX-License-Identifier: GPL-2.0-only
/*
 * TX kick policy (pure).
 *
 * Baseline: notify the device at the end of every burst the stack hands
 * us.  The stack marks a burst with xmit_more; a stopped queue will get no
 * further packets, so its burst has ended too, and urgent senders
 * (netpoll, teardown) never wait.
 */
#include "kick_policy.h"

enum vnet_kick_action vnet_kick_decide(struct vnet_kick_state *s,
				       const struct vnet_kick_in *in)
{
	s->pending++;
	if (in->urgent || in->queue_stopped || !in->xmit_more)
		return VNET_KICK_NOW;
	return VNET_KICK_HOLD;
}

/* The device was notified (or declined to be): nothing is pending. */
void vnet_kick_done(struct vnet_kick_state *s)
{
	s->pending = 0;
}
