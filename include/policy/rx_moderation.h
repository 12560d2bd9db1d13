/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RX moderation policy: at the end of a NAPI poll, decide whether to
 * re-enable the receive interrupt, keep polling, or keep the interrupt
 * off and poll again after a deferral on the pair's timer.
 *
 * No device feature is needed: the receive interrupt is simply left off
 * while the timer runs.  A deferral costs a timer arm and a timer
 * interrupt (two VM exits, often a third to put the tick back) instead of
 * the device interrupts it saves, and every packet that arrives during it
 * waits.  So:
 *
 * rx-usecs 0: never defer (the interrupt is re-enabled as soon as a poll
 * drains the ring, like the stock driver); rx-usecs-high 0: no bulk
 * deferrals.
 *
 * Fixed mode (adaptive-rx off): defer by rx-usecs after a poll that found
 * at least rx-frames packets (any work when rx-frames is 0 or 1).
 *
 * Adaptive mode (the default):
 *  - Only bulk receive is deferred.  A poll (with the busy polls before
 *    it) that found any packet shorter than VNET_RX_BULK_LEN re-enables
 *    the interrupt: a small packet is a request, an answer or an
 *    acknowledgment someone waits for, and a latency-bound flow that
 *    shares the queue with a stream keeps its immediate interrupt.
 *    Segments of VNET_RX_BULK_LEN bytes or more are what the sender's
 *    stack or the host coalesced: a stream with a backlog.
 *  - Nor is anything deferred while the guest is answering: the caller
 *    says so when the device sent a latency-bound packet (neither bulk
 *    nor a pure acknowledgment, see policy/kick.h) within the
 *    conversation window (tx-usecs, at least 8 ms, whatever the transmit
 *    settings).  Large
 *    requests (a 16 KiB query, an upload of a few segments) come as bulk
 *    segments, and in a closed loop the next one would wait for the
 *    deferral.
 *  - Nor while a TCP receiver whose application fixed its receive
 *    buffer (SO_RCVBUF) is active: the caller says so when the guest
 *    acknowledged data for such a socket within the conversation
 *    window.  Its window cannot grow, so its sender has at most that
 *    much in flight and then waits for the acknowledgment of it; what
 *    it sends next waits in the ring for the rest of the deferral.  A
 *    bulk deferral of 4-8 ms cut such a flow (iperf3 -R -w 32K) to a
 *    tenth of stock's rate.  A receiver whose buffer the kernel tunes
 *    is not limited so: its window grows to cover the deferrals.
 *  - Ordinary deferral: learn how many packets an interrupt brings (a
 *    moving average over the polls that follow an interrupt).  A poll
 *    after an interrupt that found at least VNET_RX_MIN_BATCH packets
 *    starts a deferral.  Its window opens when, at the rate the last
 *    deferral saw, about rx-frames packets will have come, and closes
 *    after rx-usecs, or sooner if half the ring would fill first.
 *  - Bulk deferral: packets averaging VNET_RX_BULK_LEN bytes or more (a
 *    moving average) may come only a few per millisecond, so no rx-usecs
 *    window gathers more than an interrupt does.  Instead a poll that
 *    found any packet defers to a window of rx-usecs-high that holds one
 *    scheduler tick, [rx-usecs-high - tick, rx-usecs-high], cut to the
 *    time half the ring would take to fill at the rate (in descriptors)
 *    seen since the interrupt went back on or the last deferral began.
 *    When what is left cannot hold a tick the ordinary rules apply.
 *  - Cost: a window wider than the scheduler tick is served by the tick's
 *    own interrupt when the CPU is busy (see timer.h) and costs no exit.
 *    A deferral whose own timer fired, and a narrower one, must gather
 *    VNET_RX_DEFER_GAIN times what an interrupt brings.  A bulk deferral
 *    the tick served is kept while it gathers any packet; when it found
 *    none the interrupt is re-enabled without backing off (the sender
 *    paused; the empty poll cost nothing).  A deferral that did not pay
 *    re-enables the interrupt, and the next one is only tried after a
 *    number of interrupts that doubles with each failure.
 *
 * Pure decision logic; napi.c acts on the answer.
 */
#ifndef VNET_RX_MODERATION_H
#define VNET_RX_MODERATION_H

#include <linux/types.h>

#define VNET_RX_MIN_BATCH	4
/* A deferral must gather this many interrupts' worth of packets. */
#define VNET_RX_DEFER_GAIN	3
/* Most interrupts a failed deferral holds the next one off for: 2^8. */
#define VNET_RX_MAX_BACKOFF	8
/* Adaptive deferrals never go below this share of rx-usecs. */
#define VNET_RX_MIN_DEFER_DIV	16
/* Packets averaging this many bytes or more are bulk receive. */
#define VNET_RX_BULK_LEN	2048

struct vnet_rx_mod_cfg {
	u32 usecs;	/* longest deferral; 0: never defer */
	/* Fixed: packets that trigger a deferral; adaptive: the aim. */
	u32 frames;
	bool adaptive;
	u32 usecs_high;	/* adaptive: longest bulk deferral; 0: none */
	u32 ring;	/* RX ring size (0: unknown) */
	u64 tick_ns;	/* scheduler tick period (0: do not count on it) */
};

struct vnet_rx_mod_state {
	u32 polls;	/* consecutive polls that used their whole budget */
	u32 work;	/* packets of those polls */
	u32 small;	/* those shorter than VNET_RX_BULK_LEN */
	u64 bytes;	/* bytes of those polls */
	u64 descs;	/* ring descriptors they used */
	u32 len_avg;	/* bytes per packet, averaged over polls */
	u32 irq_yield8;	/* adaptive: packets per interrupt, x8, averaged */
	u32 skip;	/* adaptive: interrupts before the next deferral */
	u8 backoff;	/* adaptive: log2 of the next skip */
	u64 defer_ns;	/* window opening of the deferral in progress; 0: none */
	u64 start_ns;	/* when the deferral in progress began */
	u64 limit_ns;	/* end of its window, from start_ns */
	bool free;	/* its window holds a tick: it costs no exit */
	bool bulk;	/* it is a bulk deferral */
	u64 rearm_ns;	/* when the interrupt was last re-enabled; 0: never */
};

enum vnet_rx_next {
	VNET_RX_POLL_AGAIN,	/* budget used up: NAPI polls again */
	VNET_RX_REARM,		/* ring drained: re-enable the interrupt */
	VNET_RX_DEFER,		/* keep the interrupt off, poll in the window
				 * [*defer_ns, *defer_max_ns] from now
				 */
};

/* What a NAPI poll did. */
struct vnet_rx_poll {
	int work;	/* packets received */
	int budget;	/* NAPI budget of the poll */
	u64 bytes;	/* bytes of those packets */
	u32 small;	/* those shorter than VNET_RX_BULK_LEN */
	u64 descs;	/* ring descriptors they took */
	u64 now;	/* ns, monotonic */
	/* the guest sent a latency-bound packet lately (see above) */
	bool answering;
	/* a TCP receiver with a fixed receive buffer is active (see above) */
	bool fixed_rcv;
};

enum vnet_rx_next vnet_rx_mod_decide(struct vnet_rx_mod_state *s,
				     const struct vnet_rx_mod_cfg *cfg,
				     const struct vnet_rx_poll *p,
				     u64 *defer_ns, u64 *defer_max_ns);

#endif /* VNET_RX_MODERATION_H */
