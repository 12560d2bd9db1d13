// SPDX-License-Identifier: GPL-2.0-only
/*
 * TX reclaim policy (pure).
 *
 * Baseline: take completed buffers back on every transmit.  With TX NAPI
 * the completion interrupt is asked for once a burst ends (so that
 * sockets get their memory back even when nothing else is sent); without
 * TX NAPI skbs are orphaned at transmit, and the interrupt is only wanted
 * when the ring fills up (see tx.c).
 */
#include "reclaim_policy.h"

void vnet_reclaim_on_xmit(const struct vnet_reclaim_in *in,
			  struct vnet_reclaim_out *out)
{
	out->reclaim = true;
	out->arm_irq = in->use_napi && in->batch_end;
}

/* Whether @num_free descriptors leave room for a packet needing @need. */
bool vnet_reclaim_room(unsigned int num_free, unsigned int need)
{
	return num_free >= need;
}
