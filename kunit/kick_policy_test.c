// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: TX kick policy. */
#include <kunit/test.h>
#include "kick_policy.h"

static enum vnet_kick_action decide(struct vnet_kick_state *s, bool more,
				    bool stopped, bool urgent)
{
	struct vnet_kick_in in = {
		.xmit_more = more, .queue_stopped = stopped, .urgent = urgent,
	};

	return vnet_kick_decide(s, &in);
}

static void kick_end_of_burst(struct kunit *test)
{
	struct vnet_kick_state s = {};

	KUNIT_EXPECT_EQ(test, decide(&s, true, false, false), VNET_KICK_HOLD);
	KUNIT_EXPECT_EQ(test, decide(&s, true, false, false), VNET_KICK_HOLD);
	KUNIT_EXPECT_EQ(test, s.pending, 2U);
	KUNIT_EXPECT_EQ(test, decide(&s, false, false, false), VNET_KICK_NOW);
	KUNIT_EXPECT_EQ(test, s.pending, 3U);
	vnet_kick_done(&s);
	KUNIT_EXPECT_EQ(test, s.pending, 0U);
}

static void kick_stopped_queue_never_waits(struct kunit *test)
{
	struct vnet_kick_state s = {};

	KUNIT_EXPECT_EQ(test, decide(&s, true, true, false), VNET_KICK_NOW);
}

static void kick_urgent_never_waits(struct kunit *test)
{
	struct vnet_kick_state s = {};

	KUNIT_EXPECT_EQ(test, decide(&s, true, false, true), VNET_KICK_NOW);
}

static struct kunit_case kick_policy_cases[] = {
	KUNIT_CASE(kick_end_of_burst),
	KUNIT_CASE(kick_stopped_queue_never_waits),
	KUNIT_CASE(kick_urgent_never_waits),
	{}
};

static struct kunit_suite kick_policy_suite = {
	.name = "vnet_kick_policy",
	.test_cases = kick_policy_cases,
};

kunit_test_suite(kick_policy_suite);
