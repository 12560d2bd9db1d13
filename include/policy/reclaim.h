/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TX reclaim policy: when to take completed buffers back from a send
 * queue, and when the device should interrupt us for completions.
 *
 * Completed buffers are taken back in batches: on transmit once
 * tx-frames-irq descriptors are in use or tx-usecs-irq passed since the
 * last reclaim, by the pair's RX poll, and by a deadline on the pair's
 * timer when the queue goes quiet.  A TX interrupt is only asked for when
 * something must wake us: the queue is stopped, or the deadline found
 * buffers still with the device and nobody transmitting.  Sockets thus
 * get their memory back within tx-usecs-irq (TCP Small Queues, BQL) while
 * busy queues take almost no TX interrupts.  XDP frames in a send queue
 * get the same bound, with or without TX NAPI (they pin pages).
 *
 * Buffers whose sender waits for them to come back (waited): an AF_XDP
 * socket's frames, zero-copy or the skbs of its copy mode, return to it
 * only through their completion, and a socket that has used up its
 * frames or its send buffer sends nothing more until then.  While any is
 * with the device every transmit reclaims (as the in-tree driver did up
 * to 6.x), so the socket gets them back within its own sends; the
 * interrupt and the deadline stay as above.  (Asking for the completion
 * interrupt instead, as in-tree 7.x does, was slower on a 6.1 guest:
 * docs/benchmarks.md.)
 *
 * tx-usecs-irq 0 selects the stock behaviour: reclaim on every transmit,
 * interrupt at the end of every burst.
 *
 * Pure decision logic; tx.c and napi.c act on the answers.
 */
#ifndef VNET_RECLAIM_POLICY_H
#define VNET_RECLAIM_POLICY_H

#include <linux/types.h>

struct vnet_reclaim_cfg {
	u32 frames;	/* reclaim on transmit once this many are in use (>= 1) */
	u32 usecs;	/* ... or once the last reclaim is this old */
};

struct vnet_reclaim_state {
	u64 last_ns;		/* last reclaim */
	u64 last_xmit_ns;	/* last packet added */
	bool deadline_armed;	/* reclaim deadline requested, not yet run */
	u32 waited;		/* buffers out whose sender waits for them */
};

/* What to do about completions still with the device. */
enum vnet_reclaim_next {
	VNET_RECLAIM_IDLE,	/* nothing: no interrupt, no deadline */
	VNET_RECLAIM_IRQ,	/* ask the device for a completion interrupt */
	VNET_RECLAIM_DEADLINE,	/* arm the reclaim deadline (see _deadline()) */
};

bool vnet_reclaim_delayed(const struct vnet_reclaim_cfg *cfg);
bool vnet_reclaim_on_xmit(const struct vnet_reclaim_cfg *cfg,
			  const struct vnet_reclaim_state *s,
			  unsigned int in_use, u64 now);
enum vnet_reclaim_next vnet_reclaim_at_burst_end(const struct vnet_reclaim_cfg *cfg,
						 const struct vnet_reclaim_state *s,
						 unsigned int in_use,
						 bool use_napi);
enum vnet_reclaim_next vnet_reclaim_xdp_sent(const struct vnet_reclaim_cfg *cfg,
					     const struct vnet_reclaim_state *s,
					     unsigned int in_use,
					     bool use_napi);
enum vnet_reclaim_next vnet_reclaim_after(const struct vnet_reclaim_cfg *cfg,
					  const struct vnet_reclaim_state *s,
					  unsigned int in_use,
					  bool queue_stopped, bool use_napi,
					  u64 now);
u64 vnet_reclaim_deadline(const struct vnet_reclaim_cfg *cfg,
			  const struct vnet_reclaim_state *s);
bool vnet_reclaim_room(unsigned int num_free, unsigned int need);

#endif /* VNET_RECLAIM_POLICY_H */
