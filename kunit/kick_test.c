// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: TX kick policy. */
#include <kunit/test.h>
#include <linux/limits.h>
#include "policy/kick.h"

#define US	1000ULL		/* ns per microsecond */

static enum vnet_kick_action pkt(struct vnet_kick_state *s,
				 const struct vnet_kick_cfg *cfg, u64 now,
				 bool more)
{
	struct vnet_kick_in in = { .now = now, .xmit_more = more };

	return vnet_kick_decide(s, cfg, &in);
}

static void kick_frames_one_kicks_every_packet(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 1, .usecs = 100 };
	struct vnet_kick_state s;
	int i;

	vnet_kick_init(&s, &cfg);
	for (i = 1; i <= 5; i++) {
		KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, i * US, false), VNET_KICK_NOW);
		vnet_kick_done(&s, &cfg, s.why, i * US);
	}
	/* A burst of the stack still shares one notification. */
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 10 * US, true), VNET_KICK_HOLD);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 10 * US, false), VNET_KICK_NOW);
}

static void kick_no_hold_without_usecs(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 0, .usecs = 0 };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1 * US, false), VNET_KICK_NOW);
}

/* tx-frames 4, tx-usecs 100, not adaptive: the seed's scheme. */
static void kick_batch_by_count(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 4, .usecs = 100 };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1000 * US, false), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, vnet_kick_deadline(&s, &cfg), 1100 * US);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1010 * US, false), VNET_KICK_HOLD);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1020 * US, false), VNET_KICK_HOLD);
	/* Threshold edge: the fourth packet triggers the kick. */
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1030 * US, false), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_COUNT);
	vnet_kick_done(&s, &cfg, s.why, 1030 * US);
	KUNIT_EXPECT_EQ(test, s.pending, 0U);
	KUNIT_EXPECT_FALSE(test, s.armed);
	KUNIT_EXPECT_EQ(test, s.max_hold_ns, 30 * US);
}

static void kick_time_limit_edges(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 64, .usecs = 100 };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1000 * US, false), VNET_KICK_ARM);
	/* One ns before the deadline still holds... */
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1100 * US - 1, false), VNET_KICK_HOLD);
	/* ...at the deadline (a late timer) it goes out as if flushed. */
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1100 * US, false), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_TIMER);
}

static void kick_timer_flush_records_hold(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 8, .usecs = 50 };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	pkt(&s, &cfg, 100 * US, false);
	/* The timer ran 3 us after it was due (100 + 50). */
	vnet_kick_flush_late(&s, 150 * US, 153 * US);
	KUNIT_EXPECT_EQ(test, s.max_late_ns, 3 * US);
	/* A smaller lateness leaves the maximum, an early run records none. */
	vnet_kick_flush_late(&s, 150 * US, 152 * US);
	vnet_kick_flush_late(&s, 150 * US, 140 * US);
	KUNIT_EXPECT_EQ(test, s.max_late_ns, 3 * US);
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, 153 * US);
	KUNIT_EXPECT_EQ(test, s.max_hold_ns, 53 * US);
	/* A timer with nothing held records nothing. */
	vnet_kick_flush_late(&s, 150 * US, 900 * US);
	KUNIT_EXPECT_EQ(test, s.max_late_ns, 3 * US);
	/* The next packet starts a new batch and arms again. */
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 200 * US, false), VNET_KICK_ARM);
}

/* A stopped queue (ring full or byte limit) or netpoll never waits. */
static void kick_ring_full_and_urgent(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100 };
	struct vnet_kick_in stopped = { .now = 2 * US, .xmit_more = true,
					.queue_stopped = true };
	struct vnet_kick_in urgent = { .now = 3 * US, .xmit_more = true,
				       .urgent = true };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1 * US, false), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, vnet_kick_decide(&s, &cfg, &stopped), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_FORCED);
	vnet_kick_done(&s, &cfg, s.why, 2 * US);
	KUNIT_EXPECT_EQ(test, vnet_kick_decide(&s, &cfg, &urgent), VNET_KICK_NOW);
}

/* Adaptive: a latency-bound flow (far-apart packets) is never held. */
static void kick_adaptive_sparse_flow_not_held(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_state s;
	int i;

	vnet_kick_init(&s, &cfg);
	for (i = 1; i <= 20; i++) {
		u64 t = i * 300 * US;

		KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, t, false), VNET_KICK_NOW);
		vnet_kick_done(&s, &cfg, s.why, t);
	}
	KUNIT_EXPECT_EQ(test, s.target, 1U);
	KUNIT_EXPECT_EQ(test, s.max_hold_ns, 0ULL);
}

/* Adaptive: dense traffic starts batching; batches that fill fast grow. */
static void kick_adaptive_load_batches(struct kunit *test)
{
	/* Small packets: held at most half of tx-usecs, 100 us. */
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 200, .adaptive = true };
	struct vnet_kick_state s;
	u64 t = 1000 * US;
	int i, bursts = 0;

	vnet_kick_init(&s, &cfg);
	/* Bursts 5 us apart (20 per window): kicked one by one at first... */
	while (s.target == 1 && bursts < 20) {
		KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, t, false), VNET_KICK_NOW);
		vnet_kick_done(&s, &cfg, s.why, t);
		t += 5 * US;
		bursts++;
	}
	/* ...until the moving average is sure: not after one short gap. */
	KUNIT_EXPECT_GT(test, bursts, 2);
	KUNIT_EXPECT_LT(test, bursts, 10);
	KUNIT_EXPECT_EQ(test, s.target, (u32)VNET_KICK_MIN_BATCH);

	/* Now held until four have gathered. */
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, t, false), VNET_KICK_ARM);
	for (i = 0; i < 2; i++) {
		t += 5 * US;
		KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, t, false), VNET_KICK_HOLD);
	}
	t += 5 * US;
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, t, false), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_COUNT);
	vnet_kick_done(&s, &cfg, s.why, t);
	/* Filled before its deadline: the next batch is twice as big... */
	KUNIT_EXPECT_EQ(test, s.target, 8U);
	/* ...up to tx-frames. */
	s.target = 32;
	for (i = 0; i < 32; i++) {
		t += 1 * US;
		pkt(&s, &cfg, t, false);
	}
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_COUNT);
	vnet_kick_done(&s, &cfg, s.why, t);
	KUNIT_EXPECT_EQ(test, s.target, 32U);
}

/*
 * Learn the notification rate from 640 single-packet bursts spread too
 * far apart to hold (3 ms; small packets, so the window is half of
 * tx-usecs: 2 ms), the device wanting a notification
 * for @want of every 5; then bursts come 100 us apart.  Returns the batch
 * the policy starts holding for, 1 if it never starts.
 */
static u32 start_after_rate(struct kunit *test, int want)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 4000, .adaptive = true };
	struct vnet_kick_state s;
	u64 t = 1000 * US;
	int i;

	vnet_kick_init(&s, &cfg);
	for (i = 0; i < 640; i++, t += 3000 * US) {
		KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, t, false), VNET_KICK_NOW);
		vnet_kick_sample(&s, s.why, i % 5 < want);
		vnet_kick_done(&s, &cfg, s.why, t);
	}
	KUNIT_EXPECT_EQ(test, s.target, 1U);
	for (i = 0; i < 40 && s.target == 1; i++, t += 100 * US) {
		pkt(&s, &cfg, t, false);
		vnet_kick_sample(&s, s.why, true);
		vnet_kick_done(&s, &cfg, s.why, t);
	}
	return s.target;
}

/* Holding must beat what the device's event index already saves. */
static void kick_adaptive_weighs_notify_rate(struct kunit *test)
{
	/* Every burst notifies: 4 packets pay for a timer arm + interrupt. */
	KUNIT_EXPECT_EQ(test, start_after_rate(test, 5), 4U);
	/* Two in five: unheld packets cost 0.4 exits; 3 / 0.4 -> 8. */
	KUNIT_EXPECT_EQ(test, start_after_rate(test, 2), 8U);
	/* One in five (kept as 51/256): 768 / 51 -> 16, within tx-frames. */
	KUNIT_EXPECT_EQ(test, start_after_rate(test, 1), 16U);
	/* The device never wants one: holding cannot pay, never starts. */
	KUNIT_EXPECT_EQ(test, start_after_rate(test, 0), 1U);
}

/* Held batches and forced kicks do not count as unheld samples. */
static void kick_sample_only_unheld(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 2000, .adaptive = true };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	s.pending = 64;
	vnet_kick_sample(&s, VNET_KICKED_TIMER, false);
	vnet_kick_sample(&s, VNET_KICKED_COUNT, false);
	vnet_kick_sample(&s, VNET_KICKED_FORCED, false);
	KUNIT_EXPECT_EQ(test, s.sample_pkts, 0U);
	KUNIT_EXPECT_EQ(test, s.notify_rate, (u32)VNET_KICK_RATE_ONE);
	vnet_kick_sample(&s, VNET_KICKED_UNHELD, false);
	KUNIT_EXPECT_EQ(test, s.notify_rate, (u32)VNET_KICK_RATE_ONE / 2);
}

static enum vnet_kick_action pkt_len(struct vnet_kick_state *s,
				     const struct vnet_kick_cfg *cfg, u64 now,
				     u32 len)
{
	struct vnet_kick_in in = { .now = now, .len = len };

	return vnet_kick_decide(s, cfg, &in);
}

/*
 * Bulk data that ran out early in the window (TCP waiting for the
 * acknowledgements of the previous batch) keeps gathering up to
 * tx-frames; small packets that ran out are kicked at that size, once
 * the moving average of packet sizes says they are no stream's.
 */
static void kick_adaptive_bulk_keeps_window(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 2000, .adaptive = true };
	struct vnet_kick_state s;
	u64 t = 10000 * US;
	int i, w;

	vnet_kick_init(&s, &cfg);
	s.target = 32;
	s.last_end_ns = t - 10 * US;
	for (i = 0; i < 6; i++, t += 10 * US)
		pkt_len(&s, &cfg, t, 7000);
	t = 12000 * US;
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, t);
	KUNIT_EXPECT_EQ(test, s.target, 32U);
	KUNIT_EXPECT_EQ(test, s.nogrow, 0);

	/*
	 * The same batches of 300-byte requests: one such window is a
	 * stream's small segments, still bulk; by the fifth the average is
	 * below 2048 bytes and batches are kicked at six from then on.
	 */
	for (w = 1; w <= 5 && s.target == 32; w++) {
		t += 10 * US;
		for (i = 0; i < 6; i++, t += 10 * US)
			pkt_len(&s, &cfg, t, 300);
		t += 2000 * US;
		vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, t);
		if (w == 1)
			KUNIT_EXPECT_EQ(test, s.target, 32U);
	}
	KUNIT_EXPECT_EQ(test, w, 6);
	KUNIT_EXPECT_EQ(test, s.target, 6U);
	KUNIT_EXPECT_EQ(test, s.nogrow, (u8)VNET_KICK_NOGROW);
}

/* Adaptive: bulk data is held the whole tx-usecs, small packets half of it. */
static void kick_adaptive_small_holds_half(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 64, .usecs = 8000, .adaptive = true };
	struct vnet_kick_state s;
	u64 t = 100000 * US;

	vnet_kick_init(&s, &cfg);
	s.target = 8;
	s.last_end_ns = t - 10 * US;
	KUNIT_EXPECT_EQ(test, pkt_len(&s, &cfg, t, 66), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, vnet_kick_deadline(&s, &cfg), t + 4000 * US);
	/* A large packet joining the batch does not lengthen its hold. */
	KUNIT_EXPECT_EQ(test, pkt_len(&s, &cfg, t + 10 * US, 9000), VNET_KICK_HOLD);
	KUNIT_EXPECT_FALSE(test, vnet_kick_overdue(&s, &cfg, t + 3999 * US));
	KUNIT_EXPECT_TRUE(test, vnet_kick_overdue(&s, &cfg, t + 4000 * US));
	KUNIT_EXPECT_EQ(test, pkt_len(&s, &cfg, t + 4000 * US, 66), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_TIMER);
	vnet_kick_done(&s, &cfg, s.why, t + 4000 * US);
	KUNIT_EXPECT_EQ(test, s.max_hold_ns, 4000 * US);

	/* Once the timer-flushed batches average bulk: the whole tx-usecs. */
	s.len_avg = VNET_KICK_BULK_LEN + 1;
	s.target = 8;
	s.skip = 0;
	t += 5000 * US;
	KUNIT_EXPECT_EQ(test, pkt_len(&s, &cfg, t, 66), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, vnet_kick_deadline(&s, &cfg), t + 8000 * US);
	KUNIT_EXPECT_FALSE(test, vnet_kick_overdue(&s, &cfg, t + 7999 * US));
	vnet_kick_done(&s, &cfg, VNET_KICKED_FORCED, t + 10 * US);

	/* Fixed mode holds what the user set, whatever the traffic. */
	cfg.adaptive = false;
	vnet_kick_init(&s, &cfg);
	t += 20000 * US;
	KUNIT_EXPECT_EQ(test, pkt_len(&s, &cfg, t, 66), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, vnet_kick_deadline(&s, &cfg), t + 8000 * US);
}

/* TCP Small Queues are told about the hold: 1 ms of their own + tx-usecs. */
static void kick_pacing_shift(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 0 };

	KUNIT_EXPECT_EQ(test, vnet_kick_pacing_shift(&cfg), VNET_KICK_TCP_PACING_SHIFT);
	cfg.usecs = 2000;	/* needs ~2976 us: 2^-8 s = 3906 us */
	KUNIT_EXPECT_EQ(test, vnet_kick_pacing_shift(&cfg), 8);
	cfg.usecs = 500;	/* needs ~1476 us: 2^-9 s = 1953 us */
	KUNIT_EXPECT_EQ(test, vnet_kick_pacing_shift(&cfg), 9);
	cfg.usecs = 10000;	/* needs ~10976 us: 2^-6 s = 15625 us */
	KUNIT_EXPECT_EQ(test, vnet_kick_pacing_shift(&cfg), 6);
	/* tx-frames 1 never holds, whatever tx-usecs says. */
	cfg.frames = 1;
	KUNIT_EXPECT_EQ(test, vnet_kick_pacing_shift(&cfg), VNET_KICK_TCP_PACING_SHIFT);
}

/*
 * Adaptive, closed loop (request/response): the sender waits for an answer
 * to its held packet, so a window yields one packet.  Each failed hold
 * doubles the number of bursts kicked at once before holding is tried
 * again: over many rounds only a few wait for the timer.
 */
static void kick_adaptive_closed_loop_backs_off(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_state s;
	u64 t = 1000 * US;
	int round, waits = 0;

	vnet_kick_init(&s, &cfg);
	for (round = 0; round < 1000; round++) {
		enum vnet_kick_action a = pkt(&s, &cfg, t, false);

		if (a == VNET_KICK_NOW) {
			vnet_kick_done(&s, &cfg, s.why, t);
			t += 10 * US;	/* the answer comes 10 us after a kick */
			continue;
		}
		/* Held: nothing else comes; the timer flushes it. */
		KUNIT_EXPECT_EQ(test, a, VNET_KICK_ARM);
		waits++;
		t = vnet_kick_deadline(&s, &cfg);
		vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, t);
		KUNIT_EXPECT_EQ(test, s.target, 1U);
		t += 10 * US;
	}
	/* 1000 rounds: back-off 1, 2, 4 ... 256 bursts, then every 256. */
	KUNIT_EXPECT_GT(test, waits, 0);
	KUNIT_EXPECT_LE(test, waits, 12);
	KUNIT_EXPECT_EQ(test, s.backoff, (u8)VNET_KICK_MAX_BACKOFF);
}

/*
 * Adaptive, senders that run out: eight flows each send one packet and
 * wait.  The timer flushes eight packets that all came early in the
 * window; from then on batches go out when they reach eight, and do not
 * grow past it for a while.
 */
static void kick_adaptive_senders_run_out(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_state s;
	u64 t = 1000 * US;
	int i, round;

	vnet_kick_init(&s, &cfg);
	s.target = 16;
	s.gap_avg_ns = 2 * US;
	s.last_end_ns = t - 2 * US;
	for (i = 0; i < 8; i++, t += 2 * US)
		pkt(&s, &cfg, t, false);
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, 1100 * US);
	KUNIT_EXPECT_EQ(test, s.target, 8U);
	KUNIT_EXPECT_EQ(test, s.nogrow, (u8)VNET_KICK_NOGROW);

	t = 1102 * US;
	for (round = 0; round < VNET_KICK_NOGROW; round++) {
		for (i = 0; i < 7; i++, t += 2 * US)
			KUNIT_EXPECT_NE(test, pkt(&s, &cfg, t, false), VNET_KICK_NOW);
		KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, t, false), VNET_KICK_NOW);
		KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_COUNT);
		vnet_kick_done(&s, &cfg, s.why, t);
		KUNIT_EXPECT_EQ(test, s.target, 8U);
		t += 2 * US;
	}
	KUNIT_EXPECT_EQ(test, s.nogrow, 0);
}

/* Held packets past their tx-usecs are overdue for any lock holder. */
static void kick_overdue(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 8, .usecs = 100 };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	KUNIT_EXPECT_FALSE(test, vnet_kick_overdue(&s, &cfg, 5000 * US));
	pkt(&s, &cfg, 1000 * US, false);
	KUNIT_EXPECT_FALSE(test, vnet_kick_overdue(&s, &cfg, 1100 * US - 1));
	KUNIT_EXPECT_TRUE(test, vnet_kick_overdue(&s, &cfg, 1100 * US));
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, 1100 * US);
	KUNIT_EXPECT_FALSE(test, vnet_kick_overdue(&s, &cfg, 9000 * US));
}

/* Adaptive: a batch the timer had to flush sets the target to its size. */
static void kick_adaptive_timer_shrinks(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	s.target = 16;
	s.last_end_ns = 990 * US;
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1000 * US, false), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1040 * US, false), VNET_KICK_HOLD);
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, 1100 * US);
	/* Only two gathered: too few to be worth a timer, stop holding. */
	KUNIT_EXPECT_EQ(test, s.target, 1U);

	s.target = 16;
	s.last_end_ns = 1190 * US;
	pkt(&s, &cfg, 1200 * US, false);
	pkt(&s, &cfg, 1210 * US, false);
	pkt(&s, &cfg, 1220 * US, false);
	pkt(&s, &cfg, 1230 * US, false);
	pkt(&s, &cfg, 1240 * US, false);
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, 1300 * US);
	KUNIT_EXPECT_EQ(test, s.target, 5U);
}

/*
 * Holds one timer window (2 ms) of @n bulk packets (4 KB, spread over its
 * first 1.5 ms) and lets the timer flush it.  Returns the target after.
 */
static u32 bulk_window(struct vnet_kick_state *s,
		       const struct vnet_kick_cfg *cfg, u64 *t, int n)
{
	int i;

	for (i = 0; i < n; i++, *t += 1500 * US / n)
		pkt_len(s, cfg, *t, 4096);
	*t = vnet_kick_deadline(s, cfg);
	vnet_kick_done(s, cfg, VNET_KICKED_TIMER, *t);
	*t += 50 * US;
	return s->target;
}

/*
 * Adaptive: a stream whose windows gathered twelve keeps holding through
 * a thin window of two (its senders waited for acknowledgements), and
 * stops only when thin windows go on (worth holding: four, the notify
 * rate being one); a flow that holding has just started on stops at its
 * first thin window.
 */
static void kick_adaptive_stream_rides_out_thin_window(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 2000, .adaptive = true };
	struct vnet_kick_state s;
	u64 t = 10000 * US;
	int i;

	vnet_kick_init(&s, &cfg);
	s.target = 32;
	s.last_end_ns = t - 50 * US;
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, bulk_window(&s, &cfg, &t, 12), 32U);
	KUNIT_EXPECT_EQ(test, bulk_window(&s, &cfg, &t, 2), 32U);
	KUNIT_EXPECT_EQ(test, bulk_window(&s, &cfg, &t, 12), 32U);
	/* Thin windows in a row: the fourth takes the average below four. */
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, bulk_window(&s, &cfg, &t, 2), 32U);
	KUNIT_EXPECT_EQ(test, bulk_window(&s, &cfg, &t, 2), 1U);

	/* Holding starts afresh: one thin window is enough to stop. */
	s.target = 32;
	s.last_end_ns = t - 50 * US;
	KUNIT_EXPECT_EQ(test, bulk_window(&s, &cfg, &t, 2), 1U);
}

/* Adaptive: the first packet after idle goes out at once, even when batching. */
static void kick_adaptive_idle_then_immediate(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	s.target = 16;
	s.last_end_ns = 1000 * US;
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 5000 * US, false), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_UNHELD);
	vnet_kick_done(&s, &cfg, s.why, 5000 * US);
	KUNIT_EXPECT_EQ(test, s.target, 16U);
	/* The packet right after it is held again. */
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 5005 * US, false), VNET_KICK_ARM);

	/*
	 * The timer flushes it at 5105 us; the sender, which waited for
	 * that, sends again 20 us later, 120 us after its last packet: not
	 * idle (no window passed without a notification), held.
	 */
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, 5105 * US);
	s.target = 16;
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 5125 * US, false), VNET_KICK_ARM);
}

/* Growth never passes tx-frames (or the cap when tx-frames is 0). */
static void kick_adaptive_caps(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 6, .usecs = 100, .adaptive = true };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	s.target = 4;
	s.pending = 4;
	vnet_kick_done(&s, &cfg, VNET_KICKED_COUNT, 0);
	KUNIT_EXPECT_EQ(test, s.target, 6U);

	cfg.frames = 0;
	s.target = VNET_KICK_MAX_BATCH;
	s.pending = VNET_KICK_MAX_BATCH;
	vnet_kick_done(&s, &cfg, VNET_KICKED_COUNT, 0);
	KUNIT_EXPECT_EQ(test, s.target, (u32)VNET_KICK_MAX_BATCH);
}

/* Time differences stay right when the clock value wraps. */
static void kick_clock_wraparound(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 64, .usecs = 100 };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, U64_MAX - 10 * US, false), VNET_KICK_ARM);
	/* 20 us later in wrapped time: not overdue. */
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 10 * US - 1, false), VNET_KICK_HOLD);
	/* 110 us later: overdue. */
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 100 * US, false), VNET_KICK_NOW);
}

static struct kunit_case kick_policy_cases[] = {
	KUNIT_CASE(kick_frames_one_kicks_every_packet),
	KUNIT_CASE(kick_no_hold_without_usecs),
	KUNIT_CASE(kick_batch_by_count),
	KUNIT_CASE(kick_time_limit_edges),
	KUNIT_CASE(kick_timer_flush_records_hold),
	KUNIT_CASE(kick_ring_full_and_urgent),
	KUNIT_CASE(kick_adaptive_sparse_flow_not_held),
	KUNIT_CASE(kick_adaptive_load_batches),
	KUNIT_CASE(kick_adaptive_closed_loop_backs_off),
	KUNIT_CASE(kick_adaptive_senders_run_out),
	KUNIT_CASE(kick_overdue),
	KUNIT_CASE(kick_adaptive_bulk_keeps_window),
	KUNIT_CASE(kick_adaptive_small_holds_half),
	KUNIT_CASE(kick_pacing_shift),
	KUNIT_CASE(kick_adaptive_timer_shrinks),
	KUNIT_CASE(kick_adaptive_stream_rides_out_thin_window),
	KUNIT_CASE(kick_adaptive_idle_then_immediate),
	KUNIT_CASE(kick_adaptive_caps),
	KUNIT_CASE(kick_clock_wraparound),
	KUNIT_CASE(kick_adaptive_weighs_notify_rate),
	KUNIT_CASE(kick_sample_only_unheld),
	{}
};

static struct kunit_suite kick_policy_suite = {
	.name = "vnet_kick_policy",
	.test_cases = kick_policy_cases,
};

kunit_test_suite(kick_policy_suite);
