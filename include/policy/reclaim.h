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
 * Borrowing a spare CPU.  Delayed reclaim frees a queue's skbs and
 * restarts its TCP Small Queues senders on the CPU that transmits or
 * polls: the pair's own.  When a bulk sender saturates that CPU while
 * another CPU of the pair's XPS share sits idle (more vCPUs than pairs,
 * the sender pinned beside the interrupts), that work is what the stock
 * driver moves off it, through its completion interrupt on another CPU.
 * So, with a spare CPU planned (policy/affinity.h) and the TX interrupt
 * placed there, the queue reclaims as stock does (interrupt at every
 * burst end, TX NAPI on the spare CPU) while all of these hold:
 *  - the queue carried bulk lately: a GSO packet within VNET_BORROW_BULK_MS
 *    (a rate-limited or request/response stream never borrows: an
 *    interrupt per burst would wake the spare CPU for every message);
 *  - over the last sample period (VNET_BORROW_PERIOD_MS) the pair's CPU
 *    was idle under VNET_BORROW_HOME_IDLE_PCT of the time and the spare CPU
 *    over VNET_BORROW_SPARE_IDLE_PCT.
 * The decision is re-sampled from the CPUs' idle times each period;
 * unknown idle times (no NOHZ accounting) or a period out of range
 * (first sample, a long pause) mean no borrowing.
 *
 * Measured on 2 vCPUs / 1 pair with the bulk sender pinned beside the
 * interrupts: docs/investigations/2026-11-27-mixed-cell-placement.md.
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

/* Borrowing a spare CPU for completions (see above). */
#define VNET_BORROW_BULK_MS		20
#define VNET_BORROW_PERIOD_MS		10
#define VNET_BORROW_PERIOD_MAX_MS	1000
#define VNET_BORROW_HOME_IDLE_PCT	10
#define VNET_BORROW_SPARE_IDLE_PCT	50
#define VNET_BORROW_IDLE_UNKNOWN	((u64)-1)

struct vnet_borrow {
	u64 bulk_ns;		/* last GSO packet queued, 0: none yet */
	u64 next_ns;		/* when the next sample is due */
	u64 wall_us;		/* the last sample: its time, 0: none */
	u64 idle_home_us;	/* ... the pair's CPU's idle time */
	u64 idle_spare_us;	/* ... and the spare CPU's */
	bool on;		/* borrowing, as of the last sample */
};

enum vnet_borrow_step {
	VNET_BORROW_NO,		/* not borrowing (no spare, no bulk) */
	VNET_BORROW_KEEP,	/* as the last sample said (->on) */
	VNET_BORROW_SAMPLE,	/* sample idle times: vnet_borrow_sample() */
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
enum vnet_borrow_step vnet_borrow_step(const struct vnet_borrow *b,
				       bool have_spare, u64 now);
bool vnet_borrow_sample(struct vnet_borrow *b, u64 now, u64 wall_us,
			u64 idle_home_us, u64 idle_spare_us);

#endif /* VNET_RECLAIM_POLICY_H */
