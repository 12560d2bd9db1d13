/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TX kick policy: after a packet has been added to a send queue, decide
 * whether to notify the device now or to hold the notification back.
 *
 * A notification is held until tx-frames packets were queued since the
 * last one or tx-usecs passed since the first held packet, whichever comes
 * first; the flush timer enforces the time limit.  Packets the stack
 * sends as one burst (xmit_more) always share a notification, and a
 * stopped queue or an urgent sender (netpoll, teardown, a packet that
 * wants a software transmit timestamp) never waits.
 *
 * Adaptive mode learns how many packets one hold window gathers.  The
 * first packet after idle (a window without packets or notifications)
 * is kicked at once.  Holding starts only when
 * the recent gaps between bursts (a moving average) promise a batch per
 * window that pays: a batch costs a timer arm and a timer interrupt
 * besides its notification, and unheld packets cost only the
 * notifications the device's event index asks for, which the policy
 * samples (vnet_kick_sample()).  The smallest batch worth holding for is
 * (1 + VNET_KICK_BATCH_EXITS) / (notifications per unheld packet), and
 * at least VNET_KICK_MIN_BATCH: 4 when every unheld burst notifies, 8
 * when the device declines three in five (a busy device, many flows
 * per queue).  A batch that fills before its deadline lets the next one
 * grow; one the timer had to flush shows what a window really yields:
 *  - too few packets, on average over the timer flushes since holding
 *    started (weighted to the recent ones, and starting at the least
 *    worthwhile batch: a thin first window stops holding at once, a thin
 *    window in a stream that filled the earlier ones does not): holding
 *    stops, and may only start again after a number of bursts that
 *    doubles with every such failure (closed-loop traffic, e.g.
 *    request/response, stops sending while its packet is held: probing
 *    it costs one wait per 2^n rounds, not every round);
 *  - bulk data (packets of the timer-flushed batches averaging over
 *    VNET_KICK_BULK_LEN bytes, a moving average, so that a window of a
 *    stream's small segments does not count as requests: TCP is already
 *    coalescing, its senders are paced by acknowledgements and keep
 *    sending while the window lasts): the next batches gather up to
 *    tx-frames again;
 *  - small packets whose last one came early in the window: the senders
 *    ran out (all of them waiting for answers), so the next batches are
 *    kicked as soon as they reach that size and do not grow past it for
 *    a while.
 *
 * Holding delays when TCP learns that a packet left, and TCP Small Queues
 * allow a socket only about 1 ms of data below it (sk_pacing_shift 10):
 * a hold of tx-usecs would throttle the flow instead of batching it.
 * vnet_kick_pacing_shift() gives the shift that allows that plus
 * tx-usecs, which the transmit path applies to the sending TCP socket, as
 * wireless drivers do for their aggregation.
 *
 * Adaptive mode holds the whole tx-usecs only for bulk data (above);
 * batches of small packets are held at most half of it.  Someone waits
 * for those: a request's answer, or the sender of a receive stream for
 * its acknowledgements, so a long hold costs more throughput than its
 * kicks are worth, while a TCP stream's segments keep coming.
 *
 * Pure decision logic: the caller (tx.c) passes the time and what it
 * knows about the packet and the queue, and carries out the answer.  The
 * device's own event-index suppression still applies afterwards
 * (virtqueue_kick_prepare()).
 */
#ifndef VNET_KICK_POLICY_H
#define VNET_KICK_POLICY_H

#include <linux/types.h>

#define VNET_KICK_MIN_BATCH	4
/* Exits a held batch adds besides its notification: timer arm, interrupt. */
#define VNET_KICK_BATCH_EXITS	2
/* Notifications per unheld packet are kept as a fraction of this. */
#define VNET_KICK_RATE_ONE	256
/* Unheld packets per sample of that rate. */
#define VNET_KICK_RATE_SAMPLE	64
#define VNET_KICK_MAX_BATCH	64
/* TCP's own pacing shift: about 1 ms of data below the socket. */
#define VNET_KICK_TCP_PACING_SHIFT	10
/* Most bursts a failed hold keeps holding off for: 2^VNET_KICK_MAX_BACKOFF. */
#define VNET_KICK_MAX_BACKOFF	8
/* Batches that may not grow after the senders were seen to run out. */
#define VNET_KICK_NOGROW	16
/*
 * Held packets averaging more than this are bulk data (TCP already
 * coalesces what it sends): their senders are paced by acknowledgements,
 * not waiting for answers, and more keep coming while a window lasts.
 */
#define VNET_KICK_BULK_LEN	2048

struct vnet_kick_cfg {
	u32 frames;	/* most packets per notification; 0: no count limit */
	u32 usecs;	/* longest hold; 0: never hold beyond a burst */
	bool adaptive;
};

/* Why pending packets were finally notified (feeds adaptive mode). */
enum vnet_kick_reason {
	VNET_KICKED_UNHELD,	/* not holding: the burst ended */
	VNET_KICKED_COUNT,	/* the batch filled before its deadline */
	VNET_KICKED_TIMER,	/* the hold time ran out */
	VNET_KICKED_FORCED,	/* stopped queue, urgent sender, teardown */
};

struct vnet_kick_state {
	u32 pending;	/* packets added since the last notification */
	u64 bytes;	/* bytes of those packets */
	u32 target;	/* adaptive: packets to gather; 1: not holding */
	u32 skip;	/* adaptive: bursts before holding may start again */
	u8 backoff;	/* adaptive: log2 of the next skip */
	u8 nogrow;	/* adaptive: batches that may not grow */
	/* adaptive: notifications per unheld packet, x VNET_KICK_RATE_ONE */
	u32 notify_rate;
	u32 sample_pkts;	/* unheld packets in the current sample */
	u32 sample_notifies;	/* notifications they needed */
	/*
	 * adaptive: packets the flush timer found held, x8, averaged over
	 * the timer flushes since holding (re)started
	 */
	u32 flush_avg8;
	/* adaptive: bytes per packet of the timer-flushed batches, averaged */
	u32 len_avg;
	bool armed;	/* flush timer requested for this batch */
	enum vnet_kick_reason why;	/* why the last VNET_KICK_NOW */
	u64 first_ns;	/* when the oldest pending packet was added */
	u64 hold_ns;	/* longest this batch may be held */
	u64 last_add_ns;	/* when the newest pending packet was added */
	/* when the previous burst ended, or was notified if that was later */
	u64 last_end_ns;
	u64 gap_avg_ns;	/* adaptive: moving average of burst gaps */
	u64 max_hold_ns;	/* longest wait of a packet for its kick */
	/*
	 * Latest a flush came after its deadline because the armed timer
	 * was late (its own latency, seen by the timer or by a transmit
	 * that got there first).
	 */
	u64 max_late_ns;
};

struct vnet_kick_in {
	u64 now;		/* ns, monotonic */
	bool xmit_more;		/* the stack promises another packet now */
	bool queue_stopped;	/* ring or byte-queue limit stopped the queue */
	bool urgent;		/* netpoll, teardown, timestamp: never hold */
	u32 len;		/* bytes of the packet */
};

enum vnet_kick_action {
	VNET_KICK_HOLD,		/* wait: more is coming or the timer is armed */
	VNET_KICK_ARM,		/* wait, and arm the flush timer (see deadline) */
	VNET_KICK_NOW,		/* notify the device now */
};

void vnet_kick_init(struct vnet_kick_state *s, const struct vnet_kick_cfg *cfg);
enum vnet_kick_action vnet_kick_decide(struct vnet_kick_state *s,
				       const struct vnet_kick_cfg *cfg,
				       const struct vnet_kick_in *in);
u64 vnet_kick_deadline(const struct vnet_kick_state *s,
		       const struct vnet_kick_cfg *cfg);
u8 vnet_kick_pacing_shift(const struct vnet_kick_cfg *cfg);
void vnet_kick_flush_late(struct vnet_kick_state *s, u64 due, u64 now);
bool vnet_kick_overdue(const struct vnet_kick_state *s,
		       const struct vnet_kick_cfg *cfg, u64 now);
void vnet_kick_sample(struct vnet_kick_state *s, enum vnet_kick_reason why,
		      bool notified);
void vnet_kick_done(struct vnet_kick_state *s, const struct vnet_kick_cfg *cfg,
		    enum vnet_kick_reason why, u64 now);

#endif /* VNET_KICK_POLICY_H */
