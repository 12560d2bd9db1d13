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

/* A bulk packet (a GSO packet, a large TCP segment). */
static enum vnet_kick_action pkt_b(struct vnet_kick_state *s,
				   const struct vnet_kick_cfg *cfg, u64 now)
{
	struct vnet_kick_in in = { .now = now, .bulk = true };

	return vnet_kick_decide(s, cfg, &in);
}

/* A bulk packet sent from the pair's running receive poll. */
static enum vnet_kick_action pkt_bp(struct vnet_kick_state *s,
				    const struct vnet_kick_cfg *cfg, u64 now)
{
	struct vnet_kick_in in = { .now = now, .bulk = true, .in_poll = true };

	return vnet_kick_decide(s, cfg, &in);
}

/* A TCP segment of socket @sender (not answering), bulk or not. */
static enum vnet_kick_action pkt_s(struct vnet_kick_state *s,
				   const struct vnet_kick_cfg *cfg, u64 now,
				   u64 sender, bool bulk)
{
	struct vnet_kick_in in = { .now = now, .sender = sender, .bulk = bulk,
				   .stream = true };

	return vnet_kick_decide(s, cfg, &in);
}

/* A bulk TCP segment whose sender waits on the held batch. */
static enum vnet_kick_action pkt_w(struct vnet_kick_state *s,
				   const struct vnet_kick_cfg *cfg, u64 now,
				   bool in_poll)
{
	struct vnet_kick_in in = { .now = now, .bulk = true, .waits = true,
				   .in_poll = in_poll };

	return vnet_kick_decide(s, cfg, &in);
}

/* A packet sent from the pair's running receive poll. */
static enum vnet_kick_action pkt_p(struct vnet_kick_state *s,
				   const struct vnet_kick_cfg *cfg, u64 now)
{
	struct vnet_kick_in in = { .now = now, .in_poll = true };

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

/*
 * Adaptive: packets nobody said were bulk (requests, answers,
 * datagrams) are never held, however dense.
 */
static void kick_adaptive_latency_never_held(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_state s;
	int i;

	vnet_kick_init(&s, &cfg);
	for (i = 1; i <= 200; i++) {
		u64 t = i * US;

		KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, t, false), VNET_KICK_NOW);
		KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_UNHELD);
		vnet_kick_done(&s, &cfg, s.why, t);
	}
	KUNIT_EXPECT_EQ(test, s.target, 1U);
	KUNIT_EXPECT_EQ(test, s.max_hold_ns, 0ULL);
	/* A burst of the stack still shares one notification. */
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 300 * US, true), VNET_KICK_HOLD);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 300 * US, false), VNET_KICK_NOW);
}

/*
 * Adaptive: a latency-bound packet arriving while a bulk batch is held
 * goes out at once and takes the batch with it; that ends the batch
 * without counting as a failed or a full one.
 */
static void kick_adaptive_latency_flushes_batch(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 2000, .adaptive = true };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	s.target = 16;
	s.last_end_ns = 990 * US;
	KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, 1000 * US), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, 1010 * US), VNET_KICK_HOLD);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1011 * US, false), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_FORCED);
	KUNIT_EXPECT_EQ(test, s.pending, 3U);
	vnet_kick_done(&s, &cfg, s.why, 1011 * US);
	KUNIT_EXPECT_EQ(test, s.target, 16U);
	KUNIT_EXPECT_EQ(test, s.backoff, 0);
	KUNIT_EXPECT_FALSE(test, s.armed);
	KUNIT_EXPECT_EQ(test, s.max_hold_ns, 11 * US);
}

/*
 * Adaptive: what the receive poll sends waits for that poll's end, with
 * no timer; a later batch is untouched by it.  tx-frames 1 still kicks
 * every packet.
 */
static void kick_adaptive_poll_waits_for_poll_end(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_state s;
	int i;

	vnet_kick_init(&s, &cfg);
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_EQ(test, pkt_p(&s, &cfg, (100 + i) * US), VNET_KICK_POLL);
	KUNIT_EXPECT_TRUE(test, s.poll);
	KUNIT_EXPECT_FALSE(test, s.armed);
	KUNIT_EXPECT_EQ(test, s.pending, 10U);
	vnet_kick_done(&s, &cfg, VNET_KICKED_POLL, 112 * US);
	KUNIT_EXPECT_FALSE(test, s.poll);
	KUNIT_EXPECT_EQ(test, s.target, 1U);
	KUNIT_EXPECT_EQ(test, s.max_hold_ns, 12 * US);
	/* Never held: a packet that is neither poll's nor bulk. */
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 200 * US, false), VNET_KICK_NOW);
	vnet_kick_done(&s, &cfg, s.why, 200 * US);

	/*
	 * Bulk the poll sends joins a held batch instead (a TCP sender the
	 * poll's acknowledgments let go on): the poll's end does not kick it.
	 */
	s.target = 16;
	s.last_end_ns = 395 * US;
	KUNIT_EXPECT_EQ(test, pkt_bp(&s, &cfg, 400 * US), VNET_KICK_ARM);
	KUNIT_EXPECT_FALSE(test, s.poll);
	KUNIT_EXPECT_EQ(test, pkt_p(&s, &cfg, 401 * US), VNET_KICK_POLL);
	KUNIT_EXPECT_TRUE(test, s.poll);
	vnet_kick_done(&s, &cfg, VNET_KICKED_POLL, 410 * US);
	/* Not holding yet, bulk from the poll waits for the poll's end. */
	s.target = 1;
	KUNIT_EXPECT_EQ(test, pkt_bp(&s, &cfg, 500 * US), VNET_KICK_POLL);
	vnet_kick_done(&s, &cfg, VNET_KICKED_POLL, 510 * US);

	cfg.frames = 1;
	KUNIT_EXPECT_EQ(test, pkt_p(&s, &cfg, 600 * US), VNET_KICK_NOW);
	KUNIT_EXPECT_FALSE(test, s.poll);
}

/*
 * Adaptive: a bulk sender whose bursts come densely starts batching;
 * batches that fill before their deadline grow up to tx-frames.
 */
static void kick_adaptive_bulk_batches(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_state s;
	u64 t = 1000 * US;
	int i, bursts = 0;

	vnet_kick_init(&s, &cfg);
	/* Bursts 5 us apart (20 per window): kicked one by one at first... */
	while (s.target == 1 && bursts < 20) {
		KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, t), VNET_KICK_NOW);
		vnet_kick_done(&s, &cfg, s.why, t);
		t += 5 * US;
		bursts++;
	}
	/* ...until the moving average is sure: not after one short gap. */
	KUNIT_EXPECT_GT(test, bursts, 2);
	KUNIT_EXPECT_LT(test, bursts, 10);
	KUNIT_EXPECT_EQ(test, s.target, (u32)VNET_KICK_MIN_BATCH);

	/* Now held until four have gathered. */
	KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, t), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, vnet_kick_deadline(&s, &cfg), t + 100 * US);
	for (i = 0; i < 2; i++) {
		t += 5 * US;
		KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, t), VNET_KICK_HOLD);
	}
	t += 5 * US;
	KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, t), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_COUNT);
	vnet_kick_done(&s, &cfg, s.why, t);
	/* Filled before its deadline: the next batch is twice as big... */
	KUNIT_EXPECT_EQ(test, s.target, 8U);
	/* ...up to tx-frames. */
	s.target = 32;
	for (i = 0; i < 32; i++) {
		t += 1 * US;
		pkt_b(&s, &cfg, t);
	}
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_COUNT);
	vnet_kick_done(&s, &cfg, s.why, t);
	KUNIT_EXPECT_EQ(test, s.target, 32U);
}

/*
 * Start holding for batches of 16 at @t and hold six bulk packets, the
 * first arming the flush timer.
 */
static void hold_six(struct kunit *test, struct vnet_kick_state *s,
		     const struct vnet_kick_cfg *cfg, u64 t)
{
	int i;

	vnet_kick_init(s, cfg);
	s->target = 16;
	s->last_end_ns = t - 10 * US;
	KUNIT_EXPECT_EQ(test, pkt_b(s, cfg, t), VNET_KICK_ARM);
	for (i = 1; i <= 5; i++)
		KUNIT_EXPECT_EQ(test, pkt_b(s, cfg, t + i * US), VNET_KICK_HOLD);
}

/*
 * Adaptive: a bulk segment whose sender waits on the held batch sends
 * the batch at once (sent from a receive poll: at the poll's end), and
 * the batch counts as what a window yields, as one the timer flushed.
 * Fixed mode holds it like any packet.
 */
static void kick_adaptive_waiting_sender(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_state s;

	hold_six(test, &s, &cfg, 1000 * US);
	KUNIT_EXPECT_EQ(test, pkt_w(&s, &cfg, 1010 * US, false), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_WAITED);
	vnet_kick_done(&s, &cfg, s.why, 1010 * US);
	/* Seven gathered: the next batch is that size. */
	KUNIT_EXPECT_EQ(test, s.target, 7U);

	s.last_end_ns = 1090 * US;
	KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, 1100 * US), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, pkt_w(&s, &cfg, 1101 * US, true), VNET_KICK_POLL);
	KUNIT_EXPECT_TRUE(test, s.poll);
	vnet_kick_done(&s, &cfg, VNET_KICKED_POLL, 1102 * US);

	/* Two gathered when holding had just started: not worth holding. */
	vnet_kick_init(&s, &cfg);
	s.target = 16;
	s.last_end_ns = 1990 * US;
	KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, 2000 * US), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, pkt_w(&s, &cfg, 2001 * US, false), VNET_KICK_NOW);
	vnet_kick_done(&s, &cfg, s.why, 2001 * US);
	KUNIT_EXPECT_EQ(test, s.target, 1U);

	/* Not holding: like any bulk packet. */
	KUNIT_EXPECT_EQ(test, pkt_w(&s, &cfg, 2100 * US, false), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_UNHELD);
	vnet_kick_done(&s, &cfg, s.why, 2100 * US);

	cfg.adaptive = false;
	vnet_kick_init(&s, &cfg);
	KUNIT_EXPECT_EQ(test, pkt_w(&s, &cfg, 3000 * US, false), VNET_KICK_ARM);
}

/*
 * A sender whose windows leave it no room waits on the batch as an eager
 * one does; its batch is told apart (ethtool -S window_kicks) and teaches
 * the policy what a window yields all the same.
 */
static void kick_adaptive_window_sender(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_in in = { .bulk = true, .waits = true, .window = true };
	struct vnet_kick_state s;

	hold_six(test, &s, &cfg, 1000 * US);
	in.now = 1010 * US;
	KUNIT_EXPECT_EQ(test, vnet_kick_decide(&s, &cfg, &in), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_WINDOW);
	vnet_kick_done(&s, &cfg, s.why, 1010 * US);
	KUNIT_EXPECT_EQ(test, s.target, 7U);
}

/*
 * Which segment of a held batch the waiting rule watches, as the driver
 * notes them (tx.c): @socks and @eager describe @n held TCP segments
 * with data.  Returns the index of the watched one.
 */
static int watched(const int *socks, const bool *eager, int n)
{
	bool watching = false, watched_eager = false;
	int w = -1, i;

	for (i = 0; i < n; i++) {
		bool same = watching && socks[i] == socks[w];

		if (vnet_kick_watch(watching, same, watched_eager, eager[i])) {
			w = i;
			watching = true;
			watched_eager = eager[i];
		} else if (same && eager[i]) {
			watched_eager = true;
		}
	}
	return w;
}

/*
 * The batch watches its first segment with data, eager or not, so that a
 * socket whose sender turns eager later in the batch is judged from its
 * first held segment; an eager socket takes over only from another one
 * that never showed eagerness.
 */
static void kick_watch_first_segment(struct kunit *test)
{
	/* A late publisher's softirq send, then its next paced one. */
	static const int one[] = { 1, 1, 1 };
	static const bool late_then_paced[] = { false, true, false };
	/* A stream's segment, then a publisher's on the same queue. */
	static const int two[] = { 1, 2, 2 };
	static const bool stream_then_pub[] = { false, true, true };
	static const bool both_eager[] = { true, true, true };
	/* The watched socket turned eager: it keeps the watch. */
	static const int three[] = { 1, 1, 2 };

	KUNIT_EXPECT_EQ(test, watched(one, late_then_paced, 3), 0);
	KUNIT_EXPECT_EQ(test, watched(two, stream_then_pub, 3), 1);
	KUNIT_EXPECT_EQ(test, watched(two, both_eager, 3), 0);
	KUNIT_EXPECT_EQ(test, watched(three, late_then_paced, 3), 0);
	KUNIT_EXPECT_EQ(test, watched(three, stream_then_pub, 3), 0);
	/* Nothing eager anywhere: the first is watched all the same. */
	KUNIT_EXPECT_EQ(test, watched(two, late_then_paced + 2, 1), 0);
	KUNIT_EXPECT_FALSE(test, vnet_kick_watch(true, false, false, false));
	KUNIT_EXPECT_TRUE(test, vnet_kick_watch(false, false, false, false));
}

/*
 * A socket waits on the batch when at most one full segment before it is
 * unacknowledged: its receiver may hold that acknowledgment for the next.
 */
static void kick_unacked_before(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, vnet_kick_unacked_before(1000, 1000, 1448));
	KUNIT_EXPECT_TRUE(test, vnet_kick_unacked_before(1000, 2448, 1448));
	KUNIT_EXPECT_FALSE(test, vnet_kick_unacked_before(1000, 2449, 1448));
	KUNIT_EXPECT_FALSE(test, vnet_kick_unacked_before(1000, 3896, 1448));
	/* The device took held segments already: acknowledged past them. */
	KUNIT_EXPECT_TRUE(test, vnet_kick_unacked_before(5000, 1000, 1448));
	/* Across the wrap of the sequence space. */
	KUNIT_EXPECT_TRUE(test, vnet_kick_unacked_before(0xfffffe00, 0x200, 1448));
	KUNIT_EXPECT_FALSE(test, vnet_kick_unacked_before(0xfffff000, 0x200, 1448));
}

/*
 * A segment fills the peer's window when less than a full segment of it
 * is left after the segment: its sender waits for an acknowledgment.
 */
static void kick_window_full(struct kunit *test)
{
	/* 64 KiB window from 1000: room for a full segment after 64000... */
	KUNIT_EXPECT_FALSE(test, vnet_kick_window_full(64000, 66536, 1448));
	KUNIT_EXPECT_FALSE(test, vnet_kick_window_full(65088, 66536, 1448));
	/* ... not after 65089, nor at or past the window's end. */
	KUNIT_EXPECT_TRUE(test, vnet_kick_window_full(65089, 66536, 1448));
	KUNIT_EXPECT_TRUE(test, vnet_kick_window_full(66536, 66536, 1448));
	KUNIT_EXPECT_TRUE(test, vnet_kick_window_full(70000, 66536, 1448));
	/* A zero window (the peer's buffer is full). */
	KUNIT_EXPECT_TRUE(test, vnet_kick_window_full(5000, 5000, 1448));
	/* Across the wrap of the sequence space. */
	KUNIT_EXPECT_FALSE(test, vnet_kick_window_full(0xfffff000, 0x1000, 1448));
	KUNIT_EXPECT_TRUE(test, vnet_kick_window_full(0xc00, 0x1000, 1448));
}

/*
 * TCP sends nothing more while the room its windows leave after a segment
 * is under a full segment or a third of the smaller window.  The case of
 * the 7.2 run: a 128 KiB stream whose whole window in flight was held.
 */
static void kick_tcp_defers(struct kunit *test)
{
	struct vnet_kick_room r = {
		.end = 196232, .wnd_end = 209152, .snd_wnd = 209152,
		.cwnd = 247, .in_flight = 136, .mss = 1448, .divisor = 3,
	};

	/* 12920 bytes of window left, under a third of it (69717). */
	KUNIT_EXPECT_TRUE(test, vnet_kick_tcp_defers(&r));
	/* A third of the window left: TCP sends into it. */
	r.end = 209152 - 69717;
	KUNIT_EXPECT_FALSE(test, vnet_kick_tcp_defers(&r));
	r.end = 209152 - 69716;
	KUNIT_EXPECT_TRUE(test, vnet_kick_tcp_defers(&r));

	/* A large window: the congestion window's room decides... */
	r.end = 100000;
	r.wnd_end = 4 << 20;
	r.snd_wnd = 4 << 20;
	r.cwnd = 100;
	r.in_flight = 40;	/* 86880 bytes of room, a third is 48266 */
	KUNIT_EXPECT_FALSE(test, vnet_kick_tcp_defers(&r));
	r.in_flight = 67;	/* 47784 */
	KUNIT_EXPECT_TRUE(test, vnet_kick_tcp_defers(&r));
	/* ... and a full one leaves none. */
	r.in_flight = 100;
	KUNIT_EXPECT_TRUE(test, vnet_kick_tcp_defers(&r));
	r.in_flight = 130;
	KUNIT_EXPECT_TRUE(test, vnet_kick_tcp_defers(&r));

	/* Without a divisor TCP defers below three segments. */
	r.divisor = 0;
	r.in_flight = 97;
	KUNIT_EXPECT_FALSE(test, vnet_kick_tcp_defers(&r));
	r.in_flight = 98;
	KUNIT_EXPECT_TRUE(test, vnet_kick_tcp_defers(&r));

	/* Past the window's end, and across the sequence space's wrap. */
	r.in_flight = 0;
	r.wnd_end = 0x1000;
	r.end = 0x2000;
	KUNIT_EXPECT_TRUE(test, vnet_kick_tcp_defers(&r));
	r.end = 0xfff00000;
	KUNIT_EXPECT_FALSE(test, vnet_kick_tcp_defers(&r));
}

/*
 * Learn the notification rate from 640 single-packet bursts spread too
 * far apart to hold (3 ms, tx-usecs being 2 ms), the device wanting a
 * notification for @want of every 5; then bulk bursts come 100 us
 * apart.  Returns the batch the policy starts holding for, 1 if it never
 * starts.
 */
static u32 start_after_rate(struct kunit *test, int want)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 2000, .adaptive = true };
	struct vnet_kick_state s;
	u64 t = 1000 * US;
	int i;

	vnet_kick_init(&s, &cfg);
	for (i = 0; i < 640; i++, t += 3000 * US) {
		KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, t), VNET_KICK_NOW);
		vnet_kick_sample(&s, s.why, i % 5 < want);
		vnet_kick_done(&s, &cfg, s.why, t);
	}
	KUNIT_EXPECT_EQ(test, s.target, 1U);
	for (i = 0; i < 40 && s.target == 1; i++, t += 100 * US) {
		pkt_b(&s, &cfg, t);
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

/* Held batches, poll and forced kicks do not count as unheld samples. */
static void kick_sample_only_unheld(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 2000, .adaptive = true };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	s.pending = 64;
	vnet_kick_sample(&s, VNET_KICKED_TIMER, false);
	vnet_kick_sample(&s, VNET_KICKED_COUNT, false);
	vnet_kick_sample(&s, VNET_KICKED_POLL, false);
	vnet_kick_sample(&s, VNET_KICKED_FORCED, false);
	KUNIT_EXPECT_EQ(test, s.sample_pkts, 0U);
	KUNIT_EXPECT_EQ(test, s.notify_rate, (u32)VNET_KICK_RATE_ONE);
	vnet_kick_sample(&s, VNET_KICKED_UNHELD, false);
	KUNIT_EXPECT_EQ(test, s.notify_rate, (u32)VNET_KICK_RATE_ONE / 2);
}

/*
 * Adaptive: a bulk sender that cannot fill a batch (its data waits
 * for acknowledgments or for its own completions) yields one packet per
 * window.  Each failed hold doubles the number of bursts kicked at once
 * before holding is tried again: over many rounds only a few wait for
 * the timer.
 */
static void kick_adaptive_thin_bulk_backs_off(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_state s;
	u64 t = 1000 * US;
	int round, waits = 0;

	vnet_kick_init(&s, &cfg);
	for (round = 0; round < 1000; round++) {
		enum vnet_kick_action a = pkt_b(&s, &cfg, t);

		if (a == VNET_KICK_NOW) {
			vnet_kick_done(&s, &cfg, s.why, t);
			t += 10 * US;	/* the next one comes 10 us after a kick */
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
 * Adaptive: a batch the timer had to flush sets the target to its size
 * (at least the smallest worth holding for); too few stop holding.
 */
static void kick_adaptive_timer_sets_target(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	s.target = 16;
	s.last_end_ns = 990 * US;
	KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, 1000 * US), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, 1040 * US), VNET_KICK_HOLD);
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, 1100 * US);
	/* Only two gathered: too few to be worth a timer, stop holding. */
	KUNIT_EXPECT_EQ(test, s.target, 1U);

	s.target = 16;
	s.last_end_ns = 1190 * US;
	pkt_b(&s, &cfg, 1200 * US);
	pkt_b(&s, &cfg, 1210 * US);
	pkt_b(&s, &cfg, 1220 * US);
	pkt_b(&s, &cfg, 1230 * US);
	pkt_b(&s, &cfg, 1240 * US);
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, 1300 * US);
	KUNIT_EXPECT_EQ(test, s.target, 5U);
}

/*
 * One timer window (2 ms) of @n bulk packets spread over its first
 * 1.5 ms, which only the timer ends (the batch may take more than @n).
 * Returns whether the policy still holds afterwards.
 */
static bool bulk_window(struct vnet_kick_state *s,
			const struct vnet_kick_cfg *cfg, u64 *t, int n)
{
	int i;

	if (s->target > 1)
		s->target = 32;
	for (i = 0; i < n; i++, *t += 1500 * US / n)
		pkt_b(s, cfg, *t);
	*t = vnet_kick_deadline(s, cfg);
	vnet_kick_done(s, cfg, VNET_KICKED_TIMER, *t);
	*t += 50 * US;
	return s->target > 1;
}

/*
 * Adaptive: a stream whose windows gathered twelve keeps holding through
 * a thin window of two, and stops only when thin windows go on (worth
 * holding: four, the notify rate being one); a sender that holding has
 * just started on stops at its first thin window.
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
		KUNIT_EXPECT_TRUE(test, bulk_window(&s, &cfg, &t, 12));
	KUNIT_EXPECT_EQ(test, s.target, 12U);
	KUNIT_EXPECT_TRUE(test, bulk_window(&s, &cfg, &t, 2));
	KUNIT_EXPECT_TRUE(test, bulk_window(&s, &cfg, &t, 12));
	/* Thin windows in a row: the fourth takes the average below four. */
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_TRUE(test, bulk_window(&s, &cfg, &t, 2));
	KUNIT_EXPECT_FALSE(test, bulk_window(&s, &cfg, &t, 2));

	/* Holding starts afresh: one thin window is enough to stop. */
	s.target = 32;
	s.last_end_ns = t - 50 * US;
	KUNIT_EXPECT_FALSE(test, bulk_window(&s, &cfg, &t, 2));
}

/*
 * Adaptive: a socket that sent bulk within tx-usecs has its small packets
 * held with the batch (a small write between autocorked ones); another
 * socket's small packet flushes it, and so does the first one's once the
 * window passed.  The last VNET_KICK_SENDERS bulk senders are remembered.
 */
static void kick_adaptive_bulk_senders(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 2000, .adaptive = true };
	struct vnet_kick_state s;
	int i;

	vnet_kick_init(&s, &cfg);
	s.target = 16;
	s.last_end_ns = 990 * US;
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 1000 * US, 0xa, true), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 1010 * US, 0xa, false), VNET_KICK_HOLD);
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 1020 * US, 0xb, false), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_FORCED);
	vnet_kick_done(&s, &cfg, s.why, 1020 * US);
	/* 0xb's packet stops all holding for a window (see the next test). */
	s.shared_until = 0;
	/* Within the window of its last bulk packet, without it after. */
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 2999 * US, 0xa, false), VNET_KICK_ARM);
	vnet_kick_done(&s, &cfg, VNET_KICKED_FORCED, 2999 * US);
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 3000 * US, 0xa, false), VNET_KICK_NOW);
	vnet_kick_done(&s, &cfg, s.why, 3000 * US);

	/*
	 * That last packet was latency-bound: no holding until 5000 us.
	 * Nine bulk senders: the first one to expire makes room.
	 */
	for (i = 1; i <= VNET_KICK_SENDERS + 1; i++) {
		pkt_s(&s, &cfg, (5000 + i) * US, 0x100 + i, true);
		vnet_kick_done(&s, &cfg, VNET_KICKED_FORCED, (5000 + i) * US);
	}
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 5100 * US, 0x102, false), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 5101 * US, 0x100 + VNET_KICK_SENDERS + 1,
				    false), VNET_KICK_HOLD);
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 5102 * US, 0x101, false), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_FORCED);
}

/* The remembered entry of @sender, or NULL. */
static struct vnet_kick_sender *sender_entry(struct vnet_kick_state *s, u64 sender)
{
	int i;

	for (i = 0; i < VNET_KICK_SENDERS; i++)
		if (s->senders[i].id == sender)
			return &s->senders[i];
	return NULL;
}

/*
 * Adaptive: a socket whose held batch stopped the holding (a publisher
 * whose batch went out for its waiting sender with 2 packets) is spared:
 * its packets are not held for VNET_KICK_SPARE_WINDOWS windows, while
 * another socket's still are; each further failed batch of it doubles
 * that, up to 2^VNET_KICK_MAX_SPARES times; a batch of it that yields
 * enough ends the doubling.  The queue-wide back-off alone let a thin
 * socket be held again after every batch another flow (or its own
 * burst) filled.
 */
static void kick_adaptive_thin_socket_spared(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_sender *e;
	struct vnet_kick_state s;
	u64 t, span = VNET_KICK_SPARE_WINDOWS * 100 * US;
	int i;

	vnet_kick_init(&s, &cfg);
	s.target = 16;
	s.last_end_ns = 990 * US;
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 1000 * US, 0xa, true), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 1010 * US, 0xa, true), VNET_KICK_HOLD);
	KUNIT_EXPECT_TRUE(test, vnet_kick_done(&s, &cfg, VNET_KICKED_WAITED, 1020 * US));
	KUNIT_EXPECT_EQ(test, s.target, 1U);
	e = sender_entry(&s, 0xa);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, e->spare_until, 1020 * US + span);
	KUNIT_EXPECT_EQ(test, e->strikes, 1);

	/* Holding again (a burst filled a batch): 0xa is not held, 0xb is. */
	s.target = 16;
	s.skip = 0;
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 1100 * US, 0xa, true), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_UNHELD);
	vnet_kick_done(&s, &cfg, s.why, 1100 * US);
	s.shared_until = 0;
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 1150 * US, 0xb, true), VNET_KICK_ARM);
	vnet_kick_done(&s, &cfg, VNET_KICKED_FORCED, 1150 * US);
	s.shared_until = 0;
	t = 1020 * US + span - 1 * US;
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, t, 0xa, true), VNET_KICK_NOW);
	vnet_kick_done(&s, &cfg, s.why, t);
	s.shared_until = 0;

	/* Spared no more: held, and a second failure spares it twice as long. */
	t = 1020 * US + span + 1 * US;
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, t, 0xa, true), VNET_KICK_ARM);
	t = vnet_kick_deadline(&s, &cfg);
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, t);
	KUNIT_EXPECT_EQ(test, e->spare_until, t + 2 * span);
	KUNIT_EXPECT_EQ(test, e->strikes, 2);
	KUNIT_EXPECT_EQ(test, e->id, 0xaULL);

	/* The doubling stops at 2^VNET_KICK_MAX_SPARES. */
	for (i = 0; i < VNET_KICK_MAX_SPARES + 2; i++) {
		t = e->spare_until + 1 * US;
		s.target = 16;
		s.skip = 0;
		s.shared_until = 0;
		KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, t, 0xa, true), VNET_KICK_ARM);
		vnet_kick_done(&s, &cfg, VNET_KICKED_WAITED, t + 10 * US);
	}
	KUNIT_EXPECT_EQ(test, e->spare_until,
			t + 10 * US + (span << VNET_KICK_MAX_SPARES));

	/* A batch of it that yields enough: the next failure spares it briefly. */
	t = e->spare_until + 1 * US;
	s.target = 8;
	s.skip = 0;
	s.shared_until = 0;
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, t, 0xa, true), VNET_KICK_ARM);
	for (i = 1; i < 6; i++)
		KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, t + i * US, 0xa, true), VNET_KICK_HOLD);
	KUNIT_EXPECT_FALSE(test, vnet_kick_done(&s, &cfg, VNET_KICKED_WAITED, t + 10 * US));
	KUNIT_EXPECT_EQ(test, e->strikes, 0);
	KUNIT_EXPECT_EQ(test, s.target, 6U);
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, t + 20 * US, 0xa, true), VNET_KICK_ARM);
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, t + 120 * US);
	KUNIT_EXPECT_EQ(test, e->spare_until, t + 120 * US + span);
	KUNIT_EXPECT_EQ(test, s.pending_bytes, 0U);
}

/*
 * Adaptive: a thin batch of a stream's large packets (its socket gathers
 * its writes into them while the batch waits) stops the holding but
 * spares no socket: VNET_KICK_SPARE_BYTES or more.
 */
static void kick_adaptive_large_thin_batch_spares_none(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 100, .adaptive = true };
	struct vnet_kick_in in = { .sender = 0xa, .bulk = true, .stream = true,
				   .len = VNET_KICK_SPARE_BYTES / 2 };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	s.target = 16;
	s.last_end_ns = 990 * US;
	in.now = 1000 * US;
	KUNIT_EXPECT_EQ(test, vnet_kick_decide(&s, &cfg, &in), VNET_KICK_ARM);
	in.now = 1010 * US;
	KUNIT_EXPECT_EQ(test, vnet_kick_decide(&s, &cfg, &in), VNET_KICK_HOLD);
	KUNIT_EXPECT_EQ(test, s.pending_bytes, (u32)VNET_KICK_SPARE_BYTES);
	KUNIT_EXPECT_FALSE(test, vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, 1100 * US));
	KUNIT_EXPECT_EQ(test, s.target, 1U);
	KUNIT_ASSERT_NOT_NULL(test, sender_entry(&s, 0xa));
	KUNIT_EXPECT_EQ(test, sender_entry(&s, 0xa)->spare_until, 0ULL);
	KUNIT_EXPECT_EQ(test, sender_entry(&s, 0xa)->strikes, 0);

	/* One byte less: spared. */
	s.target = 16;
	s.skip = 0;
	in.now = 1200 * US;
	KUNIT_EXPECT_EQ(test, vnet_kick_decide(&s, &cfg, &in), VNET_KICK_ARM);
	in.now = 1210 * US;
	in.len--;
	KUNIT_EXPECT_EQ(test, vnet_kick_decide(&s, &cfg, &in), VNET_KICK_HOLD);
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, 1300 * US);
	KUNIT_EXPECT_EQ(test, sender_entry(&s, 0xa)->strikes, 1);
}

/*
 * Adaptive: while a latency-bound packet was sent within tx-usecs, bulk is
 * held in no batch (at once, or at the end of the poll that sent it); pure
 * acknowledgments do not count as latency-bound.
 */
static void kick_adaptive_shared_queue_holds_no_bulk(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 2000, .adaptive = true };
	struct vnet_kick_in ack = { .pure_ack = true };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	s.target = 16;
	s.last_end_ns = 990 * US;
	KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, 1000 * US), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1001 * US, false), VNET_KICK_NOW);
	vnet_kick_done(&s, &cfg, s.why, 1001 * US);
	/* For tx-usecs after it, bulk is not held... */
	KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, 1100 * US), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_UNHELD);
	vnet_kick_done(&s, &cfg, s.why, 1100 * US);
	KUNIT_EXPECT_EQ(test, pkt_bp(&s, &cfg, 3000 * US), VNET_KICK_POLL);
	vnet_kick_done(&s, &cfg, VNET_KICKED_POLL, 3000 * US);
	/* ...nor does it learn: the batch size stays for later. */
	KUNIT_EXPECT_EQ(test, s.target, 16U);
	/* Acknowledgments leave holding alone. */
	ack.now = 3001 * US;
	KUNIT_EXPECT_EQ(test, vnet_kick_decide(&s, &cfg, &ack), VNET_KICK_NOW);
	vnet_kick_done(&s, &cfg, s.why, 3001 * US);
	KUNIT_EXPECT_EQ(test, pkt_b(&s, &cfg, 3010 * US), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, pkt_bp(&s, &cfg, 3011 * US), VNET_KICK_HOLD);
}

/*
 * Adaptive: a socket's earlier bulk makes only its TCP stream's segments
 * bulk.  Not the answer of an HTTP keep-alive connection after a download
 * on it (the socket received the next request: answering), nor a small
 * datagram of a socket that has just sent a GSO burst (QUIC): both go at
 * once and take the held batch with them, and count as latency-bound.
 */
static void kick_adaptive_history_makes_no_answer_bulk(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 2000, .adaptive = true };
	struct vnet_kick_in answer = { .sender = 0xa };
	struct vnet_kick_in dgram = { .sender = 0xb };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	s.target = 16;
	s.last_end_ns = 990 * US;
	/* The download: bulk, held. */
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 1000 * US, 0xa, true), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, pkt_s(&s, &cfg, 1010 * US, 0xa, false), VNET_KICK_HOLD);
	/* The next answer on the connection, within tx-usecs of the download. */
	answer.now = 1020 * US;
	KUNIT_EXPECT_EQ(test, vnet_kick_decide(&s, &cfg, &answer), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_FORCED);
	KUNIT_EXPECT_EQ(test, s.answer_until, 1020 * US + VNET_KICK_CONV_USECS * US);
	vnet_kick_done(&s, &cfg, s.why, 1020 * US);

	vnet_kick_init(&s, &cfg);
	s.target = 16;
	s.last_end_ns = 990 * US;
	/* A GSO burst of a UDP socket, then its small datagram. */
	dgram.now = 1000 * US;
	dgram.bulk = true;
	KUNIT_EXPECT_EQ(test, vnet_kick_decide(&s, &cfg, &dgram), VNET_KICK_ARM);
	dgram.now = 1010 * US;
	dgram.bulk = false;
	KUNIT_EXPECT_EQ(test, vnet_kick_decide(&s, &cfg, &dgram), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.why, VNET_KICKED_FORCED);
	KUNIT_EXPECT_NE(test, s.answer_until, 0ULL);
}

/*
 * Whatever the transmit settings, a packet that is neither bulk nor a
 * pure acknowledgment makes the guest answer for the conversation window
 * (tx-usecs, at least VNET_KICK_CONV_USECS), which the receive side
 * reads: with tx-frames 1, tx-usecs 0, adaptive-tx off and a short
 * tx-usecs as with the defaults.  Bulk and pure acknowledgments do not.
 * In fixed mode the window starts when the held answer may reach the
 * device, tx-usecs after it was sent.
 */
static void kick_answer_window_every_setting(struct kunit *test)
{
	static const struct vnet_kick_cfg cfgs[] = {
		{ .frames = 64, .usecs = 8000, .adaptive = true },	/* defaults */
		{ .frames = 1, .usecs = 8000, .adaptive = true },
		{ .frames = 64, .usecs = 0, .adaptive = true },
		{ .frames = 32, .usecs = 2000, .adaptive = false },
		{ .frames = 0, .usecs = 0, .adaptive = false },
		{ .frames = 64, .usecs = 100, .adaptive = true },
		{ .frames = 64, .usecs = 10000, .adaptive = true },
	};
	/* how long each may hold the answer (only fixed mode holds it) */
	static const u64 held_us[] = { 0, 0, 0, 2000, 0, 0, 0 };
	int i;

	for (i = 0; i < ARRAY_SIZE(cfgs); i++) {
		const struct vnet_kick_cfg *cfg = &cfgs[i];
		u64 conv = (u64)max_t(u32, cfg->usecs, VNET_KICK_CONV_USECS) * US;
		u64 held = held_us[i] * US;
		struct vnet_kick_in ack = { .now = 5000 * US, .pure_ack = true };
		struct vnet_kick_state s;

		KUNIT_EXPECT_EQ_MSG(test, (u64)vnet_kick_conv_usecs(cfg) * US, conv,
				    "settings %d", i);
		vnet_kick_init(&s, cfg);
		pkt_b(&s, cfg, 1000 * US);
		vnet_kick_done(&s, cfg, VNET_KICKED_FORCED, 1000 * US);
		KUNIT_EXPECT_EQ_MSG(test, s.answer_until, 0ULL, "settings %d", i);
		pkt(&s, cfg, 2000 * US, false);
		vnet_kick_done(&s, cfg, VNET_KICKED_FORCED, 2000 * US);
		KUNIT_EXPECT_EQ_MSG(test, s.answer_until, 2000 * US + conv + held,
				    "settings %d", i);
		vnet_kick_decide(&s, cfg, &ack);
		vnet_kick_done(&s, cfg, VNET_KICKED_FORCED, 5000 * US);
		KUNIT_EXPECT_EQ_MSG(test, s.answer_until, 2000 * US + conv + held,
				    "settings %d", i);
	}
}

/* The notification cost is a moving average; one stalled sample is capped. */
static void kick_cost_average(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 32, .usecs = 2000, .adaptive = true };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	KUNIT_EXPECT_EQ(test, s.cost_ns, 0ULL);
	vnet_kick_cost(&s, 8 * US);
	KUNIT_EXPECT_EQ(test, s.cost_ns, 8 * US);
	vnet_kick_cost(&s, 16 * US);
	KUNIT_EXPECT_EQ(test, s.cost_ns, 9 * US);
	vnet_kick_cost(&s, 100 * NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, s.cost_ns, (7 * 9 * US + NSEC_PER_MSEC) / 8);
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

/*
 * The driver's clock is monotonic per CPU only: a packet stamped by a CPU
 * whose clock runs a little ahead is not overdue for this one, and a gap
 * that comes out negative is no gap.
 */
static void kick_stamp_from_another_cpu(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 64, .usecs = 100 };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1000 * US, false), VNET_KICK_ARM);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1000 * US - 3 * US, false), VNET_KICK_HOLD);
	KUNIT_EXPECT_FALSE(test, vnet_kick_overdue(&s, &cfg, 1000 * US - 3 * US));
	KUNIT_EXPECT_TRUE(test, vnet_kick_overdue(&s, &cfg, 1100 * US));
}

/*
 * The flush timer or the kick may run on a CPU whose clock is behind the
 * one that stamped the batch: a wait that comes out negative records
 * nothing (it would wrap to a huge u64 maximum otherwise).
 */
static void kick_hold_and_late_clock_behind(struct kunit *test)
{
	struct vnet_kick_cfg cfg = { .frames = 64, .usecs = 100 };
	struct vnet_kick_state s;

	vnet_kick_init(&s, &cfg);
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 1000 * US, false), VNET_KICK_ARM);
	vnet_kick_flush_late(&s, 1100 * US, 1100 * US - 2 * US);
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, 1000 * US - 5 * US);
	KUNIT_EXPECT_EQ(test, s.max_late_ns, 0ULL);
	KUNIT_EXPECT_EQ(test, s.max_hold_ns, 0ULL);

	/* The same path with the clocks in order does record. */
	KUNIT_EXPECT_EQ(test, pkt(&s, &cfg, 2000 * US, false), VNET_KICK_ARM);
	vnet_kick_flush_late(&s, 2100 * US, 2103 * US);
	vnet_kick_done(&s, &cfg, VNET_KICKED_TIMER, 2103 * US);
	KUNIT_EXPECT_EQ(test, s.max_late_ns, 3ULL * US);
	KUNIT_EXPECT_EQ(test, s.max_hold_ns, 103ULL * US);
}

/*
 * TCP segments: a pure acknowledgment is one whatever else holds; an
 * answering socket sends no bulk; otherwise bulk is a segment with the
 * socket's data queued behind it, whatever its size, and a segment that
 * carries the last data written is only large (GSO or 1 KiB or more) or
 * neither: whether its sender slept decides (kick_adaptive_publisher_*).
 */
static void kick_classify_tcp(struct kunit *test)
{
	static const struct {
		struct vnet_kick_seg seg;
		bool bulk, large, pure_ack;
	} cases[] = {
		/* pure acknowledgments */
		{ { .known = true }, false, false, true },
		{ { .known = true, .answering = true, .unsent = 5000 },
		  false, false, true },
		/* the last data written: large from 1 KiB or GSO, not bulk */
		{ { .known = true, .payload = 1400, .unsent = 1400 },
		  false, true, false },
		{ { .known = true, .payload = 1024, .unsent = 1024 },
		  false, true, false },
		{ { .known = true, .payload = 1023, .unsent = 1023 },
		  false, false, false },
		{ { .known = true, .gso = true, .payload = 16384, .unsent = 16384 },
		  false, true, false },
		{ { .known = true, .gso = true, .payload = 600, .unsent = 600 },
		  false, true, false },
		{ { .known = true, .payload = 64, .unsent = 64 }, false, false, false },
		/* data behind it: a backlog (TSO, autocorking) */
		{ { .known = true, .gso = true, .payload = 65000, .unsent = 65001 },
		  true, false, false },
		{ { .known = true, .payload = 1400, .unsent = 2800 }, true, false, false },
		{ { .known = true, .payload = 64, .unsent = 65 }, true, false, false },
		/* an answer, even with a backlog */
		{ { .known = true, .answering = true, .gso = true, .payload = 16384,
		    .unsent = 65536 }, false, false, false },
		{ { .known = true, .answering = true, .payload = 1400,
		    .unsent = 1400 }, false, false, false },
		/* no plain headers: only GSO says bulk */
		{ { .gso = true, .unsent = 1 }, true, false, false },
		{ { .unsent = 100000 }, false, false, false },
		{ { .gso = true, .answering = true }, false, false, false },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct vnet_kick_in in = { .bulk = !cases[i].bulk,
					   .large = !cases[i].large,
					   .pure_ack = !cases[i].pure_ack };

		vnet_kick_classify_tcp(&cases[i].seg, &in);
		KUNIT_EXPECT_EQ_MSG(test, in.bulk, cases[i].bulk, "case %d", i);
		KUNIT_EXPECT_EQ_MSG(test, in.large, cases[i].large, "case %d", i);
		KUNIT_EXPECT_EQ_MSG(test, in.pure_ack, cases[i].pure_ack, "case %d", i);
		KUNIT_EXPECT_EQ_MSG(test, in.stream, !cases[i].seg.answering,
				    "case %d", i);
	}
}

/*
 * One packet of the writer runs below at @in->now: the timer flushes
 * what is overdue, then the policy decides, and an unheld packet is
 * notified.  Returns whether the packet was held.
 */
static bool kick_step(struct vnet_kick_state *s,
		      const struct vnet_kick_cfg *cfg,
		      const struct vnet_kick_in *in)
{
	if (vnet_kick_overdue(s, cfg, in->now))
		vnet_kick_done(s, cfg, VNET_KICKED_TIMER, in->now);
	if (vnet_kick_decide(s, cfg, in) != VNET_KICK_NOW)
		return true;
	vnet_kick_sample(s, s->why, true);
	vnet_kick_done(s, cfg, s->why, in->now);
	return false;
}

/*
 * 3000 TCP segments of 1400 B, 333 us apart, from one socket, through a
 * fresh policy: @behind bytes queued behind segment i when i % @every == 0
 * (@every 0: never), the sending task asleep between segments when
 * @sleeps.  Returns how many were held (not notified at once).
 */
static int kick_run_writer(u32 behind, int every, bool sleeps)
{
	struct vnet_kick_cfg cfg = { .frames = 64, .usecs = 8000, .adaptive = true };
	struct vnet_kick_state s;
	u64 t = 1000 * US, wake = 7ull << 32;
	int i, held = 0;

	vnet_kick_init(&s, &cfg);
	for (i = 0; i < 3000; i++, t += 333 * US) {
		struct vnet_kick_seg seg = { .known = true, .payload = 1400,
					     .unsent = 1400 };
		struct vnet_kick_in in = { .now = t, .sender = 0xa };

		if (every && i % every == 0)
			seg.unsent += behind;
		if (sleeps)
			wake++;
		in.wake = wake;
		vnet_kick_classify_tcp(&seg, &in);
		held += kick_step(&s, &cfg, &in);
	}
	return held;
}

/*
 * A telemetry publisher: 1400 B messages every 333 us, each sent as it is
 * written, its task asleep in between.  None may wait for a batch, even
 * when now and then a message finds the previous one still queued: that
 * one may be held, the next, with nothing behind, takes it out.  The same
 * segments from a task that never sleeps (a saturated writer whose
 * writes each leave at once) or with a backlog behind each are batched:
 * the sleeps and the backlog, not the timing, tell them apart.
 */
static void kick_adaptive_publisher_not_held(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kick_run_writer(0, 0, true), 0);
	/* The first message of a socket is taken as large: it has no past. */
	KUNIT_EXPECT_LE(test, kick_run_writer(1400, 50, true), 3000 / 50 + 1);
	KUNIT_EXPECT_GT(test, kick_run_writer(0, 0, false), 2000);
	KUNIT_EXPECT_GT(test, kick_run_writer(1400, 1, true), 2000);
}

/*
 * 3000 GSO buffers of datagrams (UDP_SEGMENT, 20 x 1200 B), 500 us apart,
 * from one socket, through a fresh policy, the sending task asleep
 * between them when @sleeps.  Returns how many were held.
 */
static int kick_run_datagram_sender(bool sleeps)
{
	struct vnet_kick_cfg cfg = { .frames = 64, .usecs = 8000, .adaptive = true };
	struct vnet_kick_state s;
	u64 t = 1000 * US, wake = 9ull << 32;
	int i, held = 0;

	vnet_kick_init(&s, &cfg);
	for (i = 0; i < 3000; i++, t += 500 * US) {
		struct vnet_kick_in in = { .now = t, .sender = 0xb,
					   .len = 24000 };

		if (sleeps)
			wake++;
		in.wake = wake;
		vnet_kick_classify_other(true, &in);
		held += kick_step(&s, &cfg, &in);
	}
	return held;
}

/*
 * A sender of datagram batches (a QUIC server pacing its bursts or
 * waiting for acknowledgments in between) is not held when its task
 * sleeps between them, after its first one; the same batches from a task
 * that never sleeps are.  A packet that is not GSO is never large.
 */
static void kick_adaptive_datagram_gso(struct kunit *test)
{
	struct vnet_kick_in in = { .bulk = true, .stream = true,
				   .pure_ack = true };

	vnet_kick_classify_other(false, &in);
	KUNIT_EXPECT_FALSE(test, in.bulk || in.large || in.stream || in.pure_ack);
	vnet_kick_classify_other(true, &in);
	KUNIT_EXPECT_TRUE(test, in.large);
	KUNIT_EXPECT_FALSE(test, in.bulk || in.stream || in.pure_ack);

	KUNIT_EXPECT_EQ(test, kick_run_datagram_sender(true), 0);
	KUNIT_EXPECT_GT(test, kick_run_datagram_sender(false), 2000);
}

static struct kunit_case kick_policy_cases[] = {
	KUNIT_CASE(kick_frames_one_kicks_every_packet),
	KUNIT_CASE(kick_no_hold_without_usecs),
	KUNIT_CASE(kick_batch_by_count),
	KUNIT_CASE(kick_time_limit_edges),
	KUNIT_CASE(kick_timer_flush_records_hold),
	KUNIT_CASE(kick_ring_full_and_urgent),
	KUNIT_CASE(kick_adaptive_latency_never_held),
	KUNIT_CASE(kick_adaptive_latency_flushes_batch),
	KUNIT_CASE(kick_adaptive_poll_waits_for_poll_end),
	KUNIT_CASE(kick_adaptive_bulk_batches),
	KUNIT_CASE(kick_adaptive_weighs_notify_rate),
	KUNIT_CASE(kick_sample_only_unheld),
	KUNIT_CASE(kick_adaptive_thin_bulk_backs_off),
	KUNIT_CASE(kick_overdue),
	KUNIT_CASE(kick_pacing_shift),
	KUNIT_CASE(kick_adaptive_timer_sets_target),
	KUNIT_CASE(kick_adaptive_waiting_sender),
	KUNIT_CASE(kick_adaptive_window_sender),
	KUNIT_CASE(kick_watch_first_segment),
	KUNIT_CASE(kick_unacked_before),
	KUNIT_CASE(kick_window_full),
	KUNIT_CASE(kick_tcp_defers),
	KUNIT_CASE(kick_adaptive_stream_rides_out_thin_window),
	KUNIT_CASE(kick_adaptive_caps),
	KUNIT_CASE(kick_cost_average),
	KUNIT_CASE(kick_adaptive_bulk_senders),
	KUNIT_CASE(kick_adaptive_thin_socket_spared),
	KUNIT_CASE(kick_adaptive_large_thin_batch_spares_none),
	KUNIT_CASE(kick_adaptive_shared_queue_holds_no_bulk),
	KUNIT_CASE(kick_clock_wraparound),
	KUNIT_CASE(kick_stamp_from_another_cpu),
	KUNIT_CASE(kick_hold_and_late_clock_behind),
	KUNIT_CASE(kick_classify_tcp),
	KUNIT_CASE(kick_adaptive_publisher_not_held),
	KUNIT_CASE(kick_adaptive_datagram_gso),
	KUNIT_CASE(kick_adaptive_history_makes_no_answer_bulk),
	KUNIT_CASE(kick_answer_window_every_setting),
	{}
};

static struct kunit_suite kick_policy_suite = {
	.name = "vnet_kick_policy",
	.test_cases = kick_policy_cases,
};

kunit_test_suite(kick_policy_suite);
