// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: RX moderation policy. */
#include <kunit/test.h>
#include "policy/rx_moderation.h"

#define US	1000ULL
#define TICK	(4000 * US)	/* HZ=250 */

/* Adaptive, rx-usecs narrower than a tick: every deferral costs a timer. */
static const struct vnet_rx_mod_cfg adaptive = {
	.usecs = 100, .frames = 32, .adaptive = true, .ring = 256,
	.tick_ns = TICK,
};

/* Adaptive, rx-usecs of two ticks: deferrals can ride on the tick. */
static const struct vnet_rx_mod_cfg wide = {
	.usecs = 8000, .frames = 32, .adaptive = true, .ring = 256,
	.tick_ns = TICK,
};

/* Fixed mode: defer by rx-usecs after a poll of 8 packets or more. */
static const struct vnet_rx_mod_cfg fixed8 = {
	.usecs = 100, .frames = 8, .ring = 256, .tick_ns = TICK,
};

/* Adaptive defaults: rx-usecs 100, bulk deferrals up to rx-usecs-high 8 ms. */
static const struct vnet_rx_mod_cfg bulk = {
	.usecs = 100, .frames = 32, .adaptive = true, .usecs_high = 8000,
	.ring = 256, .tick_ns = TICK,
};

#define SMALL	300	/* bytes: a request, an ACK */
#define MTU	3000	/* bytes: a full segment, not small, below bulk */
#define GSO	40000	/* bytes: a host-coalesced TCP segment */

/* Mergeable buffers of a page (less headroom) each. */
#define BUF	4000

static enum vnet_rx_next decide_len(struct vnet_rx_mod_state *s,
				    const struct vnet_rx_mod_cfg *cfg, int work,
				    u32 len, u64 now, u64 *d, u64 *dmax)
{
	struct vnet_rx_poll p = {
		.work = work, .budget = 64, .bytes = (u64)work * len,
		.descs = (u64)work * DIV_ROUND_UP(len, BUF), .now = now,
		.small = len < VNET_RX_BULK_LEN ? work : 0,
	};

	return vnet_rx_mod_decide(s, cfg, &p, d, dmax);
}

/* Full segments: what the deferral rules are about (small ones never wait). */
static enum vnet_rx_next decide(struct vnet_rx_mod_state *s,
				const struct vnet_rx_mod_cfg *cfg, int work,
				u64 now, u64 *d, u64 *dmax)
{
	return decide_len(s, cfg, work, MTU, now, d, dmax);
}

static void rxmod_budget_polls_again(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};
	u64 d = 0, dmax = 0;

	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 64, 0, &d, &dmax),
			VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 64, 0, &d, &dmax),
			VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, s.polls, 2U);
	KUNIT_EXPECT_EQ(test, s.work, 128U);
}

/* An idle or latency-bound flow gets its interrupt back at once. */
static void rxmod_idle_flow_immediate(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};
	u64 d = 0, dmax = 0;
	int i;

	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 1, i * US, &d, &dmax),
				VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 0, 20 * US, &d, &dmax),
			VNET_RX_REARM);
	/* Below the batch that pays for a timer: no deferral either. */
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, VNET_RX_MIN_BATCH - 1,
				     30 * US, &d, &dmax),
			VNET_RX_REARM);
}

/* Sustained load is batched, with windows sized from the rate. */
static void rxmod_load_batches(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};
	u64 d = 0, dmax = 0, t = 1000 * US;

	/* First busy poll after an interrupt: no rate yet, rx-usecs / 4. */
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 8, t, &d, &dmax),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, 25 * US);
	KUNIT_EXPECT_EQ(test, dmax, 100 * US);
	KUNIT_EXPECT_FALSE(test, s.free);
	/* 64 packets came in the 50 us it took: aim for 32, half as long. */
	t += 50 * US;
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 63, t, &d, &dmax),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, 50 * US * 32 / 63);
	/* Half the ring (128) at that rate comes after 101 us: rx-usecs wins. */
	KUNIT_EXPECT_EQ(test, dmax, 100 * US);
	/* Thinner (24 = 3 interrupts' worth in 100 us): the window opens later. */
	t += 100 * US;
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 24, t, &d, &dmax),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, 100 * US);
	/* Polls that use the budget count together: 64 + 64 + 10 = 138 in 100 us. */
	t += 100 * US;
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 64, t, &d, &dmax),
			VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 64, t, &d, &dmax),
			VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 10, t, &d, &dmax),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, 100 * US * 32 / 138);
	/* Half the ring at 138 per 100 us: 92 us, the window's end. */
	KUNIT_EXPECT_EQ(test, dmax, 100 * US * 128 / 138);
	/* Thinner still (16 < 3 x 8): not worth a timer, interrupt again. */
	t += 100 * US;
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 16, t, &d, &dmax),
			VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, s.defer_ns, 0ULL);
}

/*
 * A window wider than a tick rides on the tick's interrupt and costs no
 * exit: such a deferral only has to gather what an interrupt brings,
 * where a narrow one must gather three times that.
 */
static void rxmod_tick_window_is_cheap(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};
	u64 d = 0, dmax = 0, t = 1000 * US;

	KUNIT_EXPECT_EQ(test, decide(&s, &wide, 8, t, &d, &dmax), VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, 2000 * US);
	KUNIT_EXPECT_EQ(test, dmax, 8000 * US);
	KUNIT_EXPECT_TRUE(test, s.free);
	/* The tick came 3 ms later with 10 packets (>= 8, < 3 x 8): go on. */
	t += 3000 * US;
	KUNIT_EXPECT_EQ(test, decide(&s, &wide, 10, t, &d, &dmax), VNET_RX_DEFER);
	/* 10 in 3 ms: 32 take 9.6 ms, more than rx-usecs. */
	KUNIT_EXPECT_EQ(test, d, 8000 * US);
	KUNIT_EXPECT_EQ(test, dmax, 8000 * US);
	/* Open and close together: no tick inside, the timer costs exits. */
	KUNIT_EXPECT_FALSE(test, s.free);
	/* Then 10 is below 3 x 8: back to interrupts. */
	t += 8000 * US;
	KUNIT_EXPECT_EQ(test, decide(&s, &wide, 10, t, &d, &dmax), VNET_RX_REARM);
}

/* The window closes before half the ring can fill at the seen rate. */
static void rxmod_ring_bounds_window(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};
	u64 d = 0, dmax = 0, t = 1000 * US;

	decide(&s, &wide, 8, t, &d, &dmax);
	/* 200 packets in 2 ms: 128 would come in 1.28 ms. */
	t += 2000 * US;
	KUNIT_EXPECT_EQ(test, decide(&s, &wide, 64, t, &d, &dmax),
			VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, decide(&s, &wide, 64, t, &d, &dmax),
			VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, decide(&s, &wide, 64, t, &d, &dmax),
			VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, decide(&s, &wide, 8, t, &d, &dmax), VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, 8000 * US / VNET_RX_MIN_DEFER_DIV);
	KUNIT_EXPECT_EQ(test, dmax, 2000 * US * 128 / 200);
}

/*
 * A deferral must gather VNET_RX_DEFER_GAIN interrupts' worth of packets,
 * or it only traded device interrupts for timer exits: interrupts that
 * bring 5 packets each and deferrals that gather 6 stop deferring, and
 * the next try waits for a doubling number of interrupts.
 */
static void rxmod_unprofitable_deferral_backs_off(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};
	u64 d = 0, dmax = 0, t = 0;
	int round, tries = 0;

	for (round = 0; round < 300; round++) {
		t += 100 * US;
		if (decide(&s, &adaptive, 5, t, &d, &dmax) == VNET_RX_REARM)
			continue;
		tries++;
		/* The deferred poll gathers 6 < 3 x 5: back to interrupts. */
		t += d;
		KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 6, t, &d, &dmax),
				VNET_RX_REARM);
	}
	/* 300 interrupts: tries after 0, 1, 2, 4 ... 256 skipped ones. */
	KUNIT_EXPECT_GE(test, tries, 8);
	KUNIT_EXPECT_LE(test, tries, 9);

	/* A deferral that pays resets the back-off. */
	s.skip = 0;
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 5, t, &d, &dmax),
			VNET_RX_DEFER);
	t += d;
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 40, t, &d, &dmax),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, s.backoff, 0);
}

static void rxmod_usecs_zero_disables(struct kunit *test)
{
	struct vnet_rx_mod_cfg cfg = { .usecs = 0, .frames = 32, .adaptive = true };
	struct vnet_rx_mod_state s = {};
	u64 d = 0, dmax = 0;

	KUNIT_EXPECT_EQ(test, decide(&s, &cfg, 50, 0, &d, &dmax), VNET_RX_REARM);
	cfg.adaptive = false;
	KUNIT_EXPECT_EQ(test, decide(&s, &cfg, 50, 0, &d, &dmax), VNET_RX_REARM);
}

/* Fixed mode: defer by exactly rx-usecs once a poll found rx-frames packets. */
static void rxmod_fixed(struct kunit *test)
{
	struct vnet_rx_mod_cfg cfg = { .usecs = 200, .frames = 8, .tick_ns = TICK };
	struct vnet_rx_mod_state s = {};
	u64 d = 0, dmax = 0;

	KUNIT_EXPECT_EQ(test, decide(&s, &cfg, 7, 0, &d, &dmax), VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, decide(&s, &cfg, 8, 0, &d, &dmax), VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, 200 * US);
	KUNIT_EXPECT_EQ(test, dmax, 200 * US);
	cfg.frames = 0;
	KUNIT_EXPECT_EQ(test, decide(&s, &cfg, 1, 0, &d, &dmax), VNET_RX_DEFER);
}

/*
 * Bulk receive: two large segments per interrupt, every 4 ms.  No
 * rx-usecs window gathers more than an interrupt, but one of rx-usecs-high
 * that holds a tick costs no exit, so any packet starts it.
 */
static void rxmod_bulk_rides_tick(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};
	u64 d = 0, dmax = 0, t = 1000 * US;

	/* No rate yet (the interrupt was never re-enabled): interrupt. */
	KUNIT_EXPECT_EQ(test, decide_len(&s, &bulk, 2, GSO, t, &d, &dmax),
			VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, s.len_avg, (u32)GSO);
	t += 4000 * US;
	KUNIT_EXPECT_EQ(test, decide_len(&s, &bulk, 2, GSO, t, &d, &dmax),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, 4000 * US);
	KUNIT_EXPECT_EQ(test, dmax, 8000 * US);
	KUNIT_EXPECT_TRUE(test, s.free);
	/* The tick 5 ms later found 2, what an interrupt brings: go on. */
	t += 5000 * US;
	KUNIT_EXPECT_EQ(test, decide_len(&s, &bulk, 2, GSO, t, &d, &dmax),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, 4000 * US);
	KUNIT_EXPECT_TRUE(test, s.free);
	/* One segment on the next tick is still worth it. */
	t += 4500 * US;
	KUNIT_EXPECT_EQ(test, decide_len(&s, &bulk, 1, GSO, t, &d, &dmax),
			VNET_RX_DEFER);
	/*
	 * The stream paused: the empty poll hands back the interrupt, and
	 * the next one may defer again at once (it cost nothing).
	 */
	t += 6000 * US;
	KUNIT_EXPECT_EQ(test, decide_len(&s, &bulk, 0, GSO, t, &d, &dmax),
			VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, s.skip, 0U);
	t += 2000 * US;
	KUNIT_EXPECT_EQ(test, decide_len(&s, &bulk, 1, GSO, t, &d, &dmax),
			VNET_RX_DEFER);
	/*
	 * No tick came (an idle CPU): the timer fired at the window's end,
	 * two exits for 2 segments, less than 3 interrupts' worth.
	 */
	t += 8000 * US;
	KUNIT_EXPECT_EQ(test, decide_len(&s, &bulk, 2, GSO, t, &d, &dmax),
			VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, s.skip, 1U);
}

/* The same arrivals in small packets are requests: interrupts at once. */
static void rxmod_small_packets_not_bulk(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};
	u64 d = 0, dmax = 0, t = 1000 * US;
	int i;

	for (i = 0; i < 8; i++, t += 4000 * US)
		KUNIT_EXPECT_EQ(test,
				decide_len(&s, &bulk, 2, SMALL, t, &d, &dmax),
				VNET_RX_REARM);
	/* Just under the bulk size is still not bulk. */
	for (i = 0; i < 8; i++, t += 4000 * US)
		KUNIT_EXPECT_EQ(test,
				decide_len(&s, &bulk, 2, VNET_RX_BULK_LEN - 1,
					   t, &d, &dmax),
				VNET_RX_REARM);
	/* One poll of larger packets among small ones is not a stream... */
	s = (struct vnet_rx_mod_state){};
	for (i = 0; i < 8; i++, t += 4000 * US)
		decide_len(&s, &bulk, 2, SMALL, t, &d, &dmax);
	KUNIT_EXPECT_EQ(test, decide_len(&s, &bulk, 2, 4000, t, &d, &dmax),
			VNET_RX_REARM);
	/* ... a few are. */
	t += 4000 * US;
	decide_len(&s, &bulk, 2, 4000, t, &d, &dmax);
	t += 4000 * US;
	KUNIT_EXPECT_EQ(test, decide_len(&s, &bulk, 2, 4000, t, &d, &dmax),
			VNET_RX_DEFER);
}

/*
 * From a fresh state, a stream of host-coalesced segments (two a poll)
 * on the tick from *@t: four polls, then @p (the same) is deferred.
 * Leaves *@t at @p's time.
 */
static void stream_deferred(struct kunit *test, struct vnet_rx_mod_state *s,
			    struct vnet_rx_poll *p, u64 *t)
{
	u64 d = 0, dmax = 0;
	int i;

	*s = (struct vnet_rx_mod_state){};
	*p = (struct vnet_rx_poll){
		.work = 2, .budget = 64, .bytes = 2 * GSO,
		.descs = 2 * DIV_ROUND_UP(GSO, BUF),
	};
	for (i = 0; i < 4; i++, *t += 4000 * US)
		decide_len(s, &bulk, 2, GSO, *t, &d, &dmax);
	p->now = *t;
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(s, &bulk, p, &d, &dmax),
			VNET_RX_DEFER);
}

/*
 * Adaptive: while the guest is answering (a large request's answer went
 * out lately), bulk segments are not deferred either; fixed mode still is.
 */
static void rxmod_answering_never_waits(struct kunit *test)
{
	struct vnet_rx_mod_state s;
	struct vnet_rx_poll p;
	u64 d = 0, dmax = 0, t = 1000 * US;

	/* A stream on the tick is deferred... */
	stream_deferred(test, &s, &p, &t);
	/* ...but not while the guest answers. */
	p.answering = true;
	p.now = t + 4000 * US;
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &bulk, &p, &d, &dmax),
			VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, s.defer_ns, 0ULL);
	p.now += 50 * US;
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, &p, &d, &dmax),
			VNET_RX_REARM);
	p.work = 8;
	p.now += 50 * US;
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &fixed8, &p, &d, &dmax),
			VNET_RX_DEFER);
}

/*
 * Adaptive: while a TCP receiver with a fixed receive buffer is active,
 * a stream's segments are not deferred (its sender waits for the
 * acknowledgment that opens the window), and the deferral in progress
 * ends; once it is gone, the stream is deferred again.  Fixed mode still
 * defers.
 */
static void rxmod_fixed_rcvbuf_never_waits(struct kunit *test)
{
	struct vnet_rx_mod_state s;
	struct vnet_rx_poll p;
	u64 d = 0, dmax = 0, t = 1000 * US;
	int i;

	stream_deferred(test, &s, &p, &t);
	/* The deferred poll with such a receiver: the interrupt goes back on. */
	p.fixed_rcv = true;
	p.now = t + 4000 * US;
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &bulk, &p, &d, &dmax),
			VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, s.defer_ns, 0ULL);
	/* Every poll after an interrupt too, however much it found. */
	for (i = 0; i < 8; i++) {
		p.now += 4000 * US;
		KUNIT_EXPECT_EQ(test,
				vnet_rx_mod_decide(&s, &bulk, &p, &d, &dmax),
				VNET_RX_REARM);
	}
	p.work = 16;
	p.bytes = 16 * GSO;
	p.now += 50 * US;
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, &p, &d, &dmax),
			VNET_RX_REARM);
	/* The user's fixed mode defers as asked. */
	p.now += 50 * US;
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &fixed8, &p, &d, &dmax),
			VNET_RX_DEFER);
	/* Gone: the stream is deferred again. */
	t = p.now + 4000 * US;
	stream_deferred(test, &s, &p, &t);
}

/*
 * Adaptive: a poll that found a small packet (a request, an answer, an
 * ACK someone waits for) re-enables the interrupt, however many packets
 * came with it; fixed mode defers them as the user asked.
 */
static void rxmod_small_packets_never_wait(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};
	struct vnet_rx_poll mixed = {
		.work = 41, .budget = 64, .bytes = 40 * GSO + SMALL,
		.descs = 40 * DIV_ROUND_UP(GSO, BUF) + 1, .small = 1,
	};
	u64 d = 0, dmax = 0, t = 1000 * US;
	int i;

	for (i = 0; i < 20; i++, t += 50 * US) {
		KUNIT_EXPECT_EQ(test, decide_len(&s, &adaptive, 40, SMALL, t,
						 &d, &dmax), VNET_RX_REARM);
		KUNIT_EXPECT_EQ(test, decide_len(&s, &bulk, 40, SMALL, t,
						 &d, &dmax), VNET_RX_REARM);
	}
	/* The same load of full segments is deferred. */
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 40, t, &d, &dmax),
			VNET_RX_DEFER);

	/* A stream on the tick: one small packet among its segments. */
	s = (struct vnet_rx_mod_state){};
	for (i = 0; i < 4; i++, t += 4000 * US)
		decide_len(&s, &bulk, 2, GSO, t, &d, &dmax);
	KUNIT_EXPECT_EQ(test, decide_len(&s, &bulk, 2, GSO, t, &d, &dmax),
			VNET_RX_DEFER);
	mixed.now = t + 4000 * US;
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &bulk, &mixed, &d, &dmax),
			VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, s.defer_ns, 0ULL);

	/* Budget-long polls count together: a small one anywhere counts. */
	s = (struct vnet_rx_mod_state){};
	KUNIT_EXPECT_EQ(test, decide_len(&s, &adaptive, 64, SMALL, t, &d, &dmax),
			VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, decide(&s, &adaptive, 20, t, &d, &dmax),
			VNET_RX_REARM);

	s = (struct vnet_rx_mod_state){};
	KUNIT_EXPECT_EQ(test, decide_len(&s, &fixed8, 40, SMALL, t, &d, &dmax),
			VNET_RX_DEFER);
}

/*
 * A bulk window must hold a tick: not with rx-usecs-high under two ticks,
 * not when half the ring would fill first, not with rx-usecs-high or
 * rx-usecs 0.
 */
static void rxmod_bulk_window_must_hold_tick(struct kunit *test)
{
	struct vnet_rx_mod_cfg cfg = bulk;
	struct vnet_rx_mod_state s = {};
	u64 d = 0, dmax = 0, t = 1000 * US;

	cfg.usecs_high = 7999;
	decide_len(&s, &cfg, 2, GSO, t, &d, &dmax);
	t += 4000 * US;
	KUNIT_EXPECT_EQ(test, decide_len(&s, &cfg, 2, GSO, t, &d, &dmax),
			VNET_RX_REARM);

	/* 3 x 64 KB (51 buffers) in 100 us: half the ring in 251 us. */
	cfg.usecs_high = 10000;
	s = (struct vnet_rx_mod_state){};
	decide_len(&s, &cfg, 3, 65536, t, &d, &dmax);
	t += 100 * US;
	KUNIT_EXPECT_EQ(test, decide_len(&s, &cfg, 3, 65536, t, &d, &dmax),
			VNET_RX_REARM);
	/* In 3 ms: half the ring in 7.5 ms, under two ticks. */
	t += 3000 * US;
	KUNIT_EXPECT_EQ(test, decide_len(&s, &cfg, 3, 65536, t, &d, &dmax),
			VNET_RX_REARM);
	/* In 3.5 ms: 8.8 ms, the window's end; it opens a tick before. */
	t += 3500 * US;
	KUNIT_EXPECT_EQ(test, decide_len(&s, &cfg, 3, 65536, t, &d, &dmax),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, dmax, 3500 * US * 128 / 51);
	KUNIT_EXPECT_EQ(test, d, dmax - TICK);

	cfg = bulk;
	cfg.usecs_high = 0;
	s = (struct vnet_rx_mod_state){};
	decide_len(&s, &cfg, 2, GSO, t, &d, &dmax);
	t += 4000 * US;
	KUNIT_EXPECT_EQ(test, decide_len(&s, &cfg, 2, GSO, t, &d, &dmax),
			VNET_RX_REARM);
	cfg = bulk;
	cfg.usecs = 0;
	t += 4000 * US;
	KUNIT_EXPECT_EQ(test, decide_len(&s, &cfg, 2, GSO, t, &d, &dmax),
			VNET_RX_REARM);
}

static struct kunit_case rx_moderation_cases[] = {
	KUNIT_CASE(rxmod_budget_polls_again),
	KUNIT_CASE(rxmod_idle_flow_immediate),
	KUNIT_CASE(rxmod_load_batches),
	KUNIT_CASE(rxmod_tick_window_is_cheap),
	KUNIT_CASE(rxmod_ring_bounds_window),
	KUNIT_CASE(rxmod_unprofitable_deferral_backs_off),
	KUNIT_CASE(rxmod_usecs_zero_disables),
	KUNIT_CASE(rxmod_fixed),
	KUNIT_CASE(rxmod_bulk_rides_tick),
	KUNIT_CASE(rxmod_small_packets_not_bulk),
	KUNIT_CASE(rxmod_bulk_window_must_hold_tick),
	KUNIT_CASE(rxmod_small_packets_never_wait),
	KUNIT_CASE(rxmod_answering_never_waits),
	KUNIT_CASE(rxmod_fixed_rcvbuf_never_waits),
	{}
};

static struct kunit_suite rx_moderation_suite = {
	.name = "vnet_rx_moderation",
	.test_cases = rx_moderation_cases,
};

kunit_test_suite(rx_moderation_suite);
