// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: RX moderation policy. */
#include <kunit/test.h>
#include "rx_moderation.h"

#define US	1000ULL

static const struct vnet_rx_mod_cfg adaptive = {
	.usecs = 100, .frames = 32, .adaptive = true,
};

static void rxmod_budget_polls_again(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};
	u64 d = 0;

	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 64, 64, &d),
			VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 64, 64, &d),
			VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, s.polls, 2U);
}

/* An idle or latency-bound flow gets its interrupt back at once. */
static void rxmod_idle_flow_immediate(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};
	u64 d = 0;
	int i;

	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 1, 64, &d),
				VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 0, 64, &d),
			VNET_RX_REARM);
	/* Below the batch that pays for a timer: no deferral either. */
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive,
						 VNET_RX_MIN_BATCH - 1, 64, &d),
			VNET_RX_REARM);
}

/* Sustained load is batched, with deferrals sized from the rate. */
static void rxmod_load_batches(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};
	u64 d = 0, prev;

	/* First busy poll after an interrupt: the longest deferral. */
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 8, 64, &d),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, 100 * US);
	/* 63 packets in 100 us: aim for 32 needs half as long. */
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 63, 64, &d),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, 100 * US * 32 / 63);
	/* Traffic thinned out (24 = 3 interrupts' worth): a longer deferral. */
	prev = d;
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 24, 64, &d),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, prev * 32 / 24);
	/* Polls that use the budget count together: 64 + 64 + 10 = 138. */
	prev = d;
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 64, 64, &d),
			VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 64, 64, &d),
			VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 10, 64, &d),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, prev * 32 / 138);
	/* Thinner still (16 < 3 x 8): not worth a timer, interrupt again. */
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 16, 64, &d),
			VNET_RX_REARM);
	/* Interrupt-driven again: one packet does not start a deferral. */
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 1, 64, &d),
			VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, s.defer_ns, 0ULL);
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
	int round, tries = 0;
	u64 d = 0;

	for (round = 0; round < 300; round++) {
		if (vnet_rx_mod_decide(&s, &adaptive, 5, 64, &d) == VNET_RX_REARM)
			continue;
		tries++;
		/* The deferred poll gathers 6 < 3 x 5: back to interrupts. */
		KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 6, 64, &d),
				VNET_RX_REARM);
	}
	/* 300 interrupts: tries after 0, 1, 2, 4 ... 256 skipped ones. */
	KUNIT_EXPECT_GE(test, tries, 8);
	KUNIT_EXPECT_LE(test, tries, 9);

	/* A deferral that pays resets the back-off. */
	s.skip = 0;
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 5, 64, &d),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 40, 64, &d),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, s.backoff, 0);
}

/* Deferrals never shrink below rx-usecs / VNET_RX_MIN_DEFER_DIV. */
static void rxmod_bounds(struct kunit *test)
{
	struct vnet_rx_mod_state s = { .defer_ns = 10 * US };
	u64 d = 0;

	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &adaptive, 63, 64, &d),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, 100 * US / VNET_RX_MIN_DEFER_DIV);
}

static void rxmod_usecs_zero_disables(struct kunit *test)
{
	struct vnet_rx_mod_cfg cfg = { .usecs = 0, .frames = 32, .adaptive = true };
	struct vnet_rx_mod_state s = {};
	u64 d = 0;

	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &cfg, 50, 64, &d),
			VNET_RX_REARM);
	cfg.adaptive = false;
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &cfg, 50, 64, &d),
			VNET_RX_REARM);
}

/* Fixed mode: defer by rx-usecs once a poll found rx-frames packets. */
static void rxmod_fixed(struct kunit *test)
{
	struct vnet_rx_mod_cfg cfg = { .usecs = 200, .frames = 8 };
	struct vnet_rx_mod_state s = {};
	u64 d = 0;

	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &cfg, 7, 64, &d),
			VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &cfg, 8, 64, &d),
			VNET_RX_DEFER);
	KUNIT_EXPECT_EQ(test, d, 200 * US);
	cfg.frames = 0;
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, &cfg, 1, 64, &d),
			VNET_RX_DEFER);
}

static struct kunit_case rx_moderation_cases[] = {
	KUNIT_CASE(rxmod_budget_polls_again),
	KUNIT_CASE(rxmod_idle_flow_immediate),
	KUNIT_CASE(rxmod_load_batches),
	KUNIT_CASE(rxmod_unprofitable_deferral_backs_off),
	KUNIT_CASE(rxmod_bounds),
	KUNIT_CASE(rxmod_usecs_zero_disables),
	KUNIT_CASE(rxmod_fixed),
	{}
};

static struct kunit_suite rx_moderation_suite = {
	.name = "vnet_rx_moderation",
	.test_cases = rx_moderation_cases,
};

kunit_test_suite(rx_moderation_suite);
