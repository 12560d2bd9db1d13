// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: RX moderation policy. */
#include <kunit/test.h>
#include "rx_moderation.h"

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

static enum vnet_rx_next decide(struct vnet_rx_mod_state *s,
				const struct vnet_rx_mod_cfg *cfg, int work,
				u64 now, u64 *d, u64 *dmax)
{
	return vnet_rx_mod_decide(s, cfg, work, 64, now, d, dmax);
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

static struct kunit_case rx_moderation_cases[] = {
	KUNIT_CASE(rxmod_budget_polls_again),
	KUNIT_CASE(rxmod_idle_flow_immediate),
	KUNIT_CASE(rxmod_load_batches),
	KUNIT_CASE(rxmod_tick_window_is_cheap),
	KUNIT_CASE(rxmod_ring_bounds_window),
	KUNIT_CASE(rxmod_unprofitable_deferral_backs_off),
	KUNIT_CASE(rxmod_usecs_zero_disables),
	KUNIT_CASE(rxmod_fixed),
	{}
};

static struct kunit_suite rx_moderation_suite = {
	.name = "vnet_rx_moderation",
	.test_cases = rx_moderation_cases,
};

kunit_test_suite(rx_moderation_suite);
