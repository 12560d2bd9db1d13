// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: deadline plan of the shared per-queue-pair timer. */
#include <kunit/test.h>
#include <linux/bits.h>
#include <linux/limits.h>
#include "policy/clock.h"
#include "timer.h"

static void plan_first_request_arms(struct kunit *test)
{
	struct vnet_timer_plan p = {};

	KUNIT_EXPECT_TRUE(test, vnet_timer_plan_request(&p, VNET_TIMER_TX_FLUSH, 1000, 1000));
	KUNIT_EXPECT_EQ(test, p.armed, 1000ULL);
	KUNIT_EXPECT_TRUE(test, vnet_timer_plan_pending(&p, VNET_TIMER_TX_FLUSH));
	KUNIT_EXPECT_FALSE(test, vnet_timer_plan_pending(&p, VNET_TIMER_RX_POLL));
}

/* A batch asks again and again: the timer is armed once. */
static void plan_repeat_request_keeps_first(struct kunit *test)
{
	struct vnet_timer_plan p = {};

	vnet_timer_plan_request(&p, VNET_TIMER_TX_FLUSH, 1000, 1000);
	KUNIT_EXPECT_FALSE(test, vnet_timer_plan_request(&p, VNET_TIMER_TX_FLUSH, 1500, 1500));
	KUNIT_EXPECT_FALSE(test, vnet_timer_plan_request(&p, VNET_TIMER_TX_FLUSH, 1000, 1000));
	KUNIT_EXPECT_EQ(test, p.due[VNET_TIMER_TX_FLUSH], 1000ULL);
	KUNIT_EXPECT_EQ(test, p.armed, 1000ULL);
}

static void plan_earlier_request_rearms(struct kunit *test)
{
	struct vnet_timer_plan p = {};

	vnet_timer_plan_request(&p, VNET_TIMER_TX_RECLAIM, 5000, 5000);
	KUNIT_EXPECT_TRUE(test, vnet_timer_plan_request(&p, VNET_TIMER_RX_POLL, 2000, 2000));
	KUNIT_EXPECT_EQ(test, p.armed, 2000ULL);
	/* The same user moving its deadline earlier re-arms too. */
	KUNIT_EXPECT_TRUE(test, vnet_timer_plan_request(&p, VNET_TIMER_RX_POLL, 1500, 1500));
	KUNIT_EXPECT_EQ(test, p.armed, 1500ULL);
}

static void plan_later_user_rides_along(struct kunit *test)
{
	struct vnet_timer_plan p = {};

	vnet_timer_plan_request(&p, VNET_TIMER_RX_POLL, 2000, 2000);
	KUNIT_EXPECT_FALSE(test, vnet_timer_plan_request(&p, VNET_TIMER_TX_FLUSH, 3000, 3000));
	KUNIT_EXPECT_EQ(test, p.armed, 2000ULL);
	KUNIT_EXPECT_EQ(test, p.due[VNET_TIMER_TX_FLUSH], 3000ULL);
}

static void plan_expire_collects_due_users(struct kunit *test)
{
	struct vnet_timer_plan p = {};
	unsigned long mask;

	vnet_timer_plan_request(&p, VNET_TIMER_TX_FLUSH, 1000, 1000);
	vnet_timer_plan_request(&p, VNET_TIMER_RX_POLL, 1000, 1000);
	vnet_timer_plan_request(&p, VNET_TIMER_TX_RECLAIM, 9000, 9000);

	mask = vnet_timer_plan_expire(&p, 1200);
	KUNIT_EXPECT_EQ(test, mask, BIT(VNET_TIMER_TX_FLUSH) | BIT(VNET_TIMER_RX_POLL));
	KUNIT_EXPECT_EQ(test, p.armed, 9000ULL);
	KUNIT_EXPECT_FALSE(test, vnet_timer_plan_pending(&p, VNET_TIMER_TX_FLUSH));

	mask = vnet_timer_plan_expire(&p, 9000);
	KUNIT_EXPECT_EQ(test, mask, BIT(VNET_TIMER_TX_RECLAIM));
	KUNIT_EXPECT_EQ(test, p.armed, 0ULL);
}

/* Cancelling does not reprogram; the idle expiry then finds nothing. */
static void plan_cancel_is_lazy(struct kunit *test)
{
	struct vnet_timer_plan p = {};

	vnet_timer_plan_request(&p, VNET_TIMER_TX_FLUSH, 1000, 1000);
	vnet_timer_plan_request(&p, VNET_TIMER_RX_POLL, 4000, 4000);
	KUNIT_EXPECT_FALSE(test, vnet_timer_plan_cancel(&p, VNET_TIMER_TX_FLUSH));
	KUNIT_EXPECT_EQ(test, p.armed, 1000ULL);
	KUNIT_EXPECT_EQ(test, vnet_timer_plan_expire(&p, 1000), 0UL);
	KUNIT_EXPECT_EQ(test, p.armed, 4000ULL);
	KUNIT_EXPECT_TRUE(test, vnet_timer_plan_cancel(&p, VNET_TIMER_RX_POLL));
	KUNIT_EXPECT_EQ(test, vnet_timer_plan_expire(&p, 5000), 0UL);
	KUNIT_EXPECT_EQ(test, p.armed, 0ULL);
}

/* A request after a lazy cancel, later than the stale expiry. */
static void plan_request_after_cancel(struct kunit *test)
{
	struct vnet_timer_plan p = {};

	vnet_timer_plan_request(&p, VNET_TIMER_TX_FLUSH, 1000, 1000);
	vnet_timer_plan_cancel(&p, VNET_TIMER_TX_FLUSH);
	/* Still programmed for 1000: no new arm needed for 3000... */
	KUNIT_EXPECT_FALSE(test, vnet_timer_plan_request(&p, VNET_TIMER_TX_FLUSH, 3000, 3000));
	/* ...and the stale expiry hands over to the real deadline. */
	KUNIT_EXPECT_EQ(test, vnet_timer_plan_expire(&p, 1000), 0UL);
	KUNIT_EXPECT_EQ(test, p.armed, 3000ULL);
}

static void plan_zero_deadline_is_valid(struct kunit *test)
{
	struct vnet_timer_plan p = {};

	KUNIT_EXPECT_TRUE(test, vnet_timer_plan_request(&p, VNET_TIMER_RX_POLL, 0, 0));
	KUNIT_EXPECT_TRUE(test, vnet_timer_plan_pending(&p, VNET_TIMER_RX_POLL));
	KUNIT_EXPECT_EQ(test, vnet_timer_plan_expire(&p, 1), BIT(VNET_TIMER_RX_POLL));
}

/*
 * Windows: the programmed soft expiry is the earliest window start, the
 * hard expiry the earliest window end; a wider window that ends later
 * does not reprogram.
 */
static void plan_windows(struct kunit *test)
{
	struct vnet_timer_plan p = {};

	KUNIT_EXPECT_TRUE(test, vnet_timer_plan_request(&p, VNET_TIMER_TX_FLUSH, 1000, 4000));
	KUNIT_EXPECT_EQ(test, p.armed, 1000ULL);
	KUNIT_EXPECT_EQ(test, p.armed_limit, 4000ULL);
	/* Ends later than what is programmed: rides along. */
	KUNIT_EXPECT_FALSE(test, vnet_timer_plan_request(&p, VNET_TIMER_RX_POLL, 3000, 9000));
	/* A tick at 2500: only the flush's window is open. */
	KUNIT_EXPECT_EQ(test, vnet_timer_plan_expire(&p, 2500), BIT(VNET_TIMER_TX_FLUSH));
	KUNIT_EXPECT_EQ(test, p.armed, 3000ULL);
	KUNIT_EXPECT_EQ(test, p.armed_limit, 9000ULL);
	/* A window that must end sooner reprograms, keeping the earlier start. */
	KUNIT_EXPECT_TRUE(test, vnet_timer_plan_request(&p, VNET_TIMER_TX_FLUSH, 5000, 6000));
	KUNIT_EXPECT_EQ(test, p.armed, 3000ULL);
	KUNIT_EXPECT_EQ(test, p.armed_limit, 6000ULL);
	/* A limit before the start is taken as the start. */
	vnet_timer_plan_cancel(&p, VNET_TIMER_TX_FLUSH);
	vnet_timer_plan_cancel(&p, VNET_TIMER_RX_POLL);
	vnet_timer_plan_expire(&p, 6000);
	KUNIT_EXPECT_TRUE(test, vnet_timer_plan_request(&p, VNET_TIMER_RX_POLL, 8000, 7000));
	KUNIT_EXPECT_EQ(test, p.limit[VNET_TIMER_RX_POLL], 8000ULL);
}

/* Time since a stamp: zero for one that lies ahead, right across a wrap. */
static void clock_ns_since(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vnet_ns_since(5000, 2000), 3000ULL);
	KUNIT_EXPECT_EQ(test, vnet_ns_since(2000, 2000), 0ULL);
	KUNIT_EXPECT_EQ(test, vnet_ns_since(2000, 2001), 0ULL);
	KUNIT_EXPECT_EQ(test, vnet_ns_since(2000, 5000), 0ULL);
	KUNIT_EXPECT_EQ(test, vnet_ns_since(10, U64_MAX - 9), 20ULL);
}

static struct kunit_case timer_plan_cases[] = {
	KUNIT_CASE(plan_windows),
	KUNIT_CASE(plan_first_request_arms),
	KUNIT_CASE(plan_repeat_request_keeps_first),
	KUNIT_CASE(plan_earlier_request_rearms),
	KUNIT_CASE(plan_later_user_rides_along),
	KUNIT_CASE(plan_expire_collects_due_users),
	KUNIT_CASE(plan_cancel_is_lazy),
	KUNIT_CASE(plan_request_after_cancel),
	KUNIT_CASE(plan_zero_deadline_is_valid),
	KUNIT_CASE(clock_ns_since),
	{}
};

static struct kunit_suite timer_plan_suite = {
	.name = "vnet_timer_plan",
	.test_cases = timer_plan_cases,
};

kunit_test_suite(timer_plan_suite);
