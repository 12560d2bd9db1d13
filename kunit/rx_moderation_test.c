// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: RX moderation policy. */
#include <kunit/test.h>
#include "rx_moderation.h"

static void rxmod_drained_ring_rearms(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};

	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, 0, 64), VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, 63, 64), VNET_RX_REARM);
}

static void rxmod_full_budget_polls_again(struct kunit *test)
{
	struct vnet_rx_mod_state s = {};

	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, 64, 64), VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, 64, 64), VNET_RX_POLL_AGAIN);
	KUNIT_EXPECT_EQ(test, s.polls, 2U);
	KUNIT_EXPECT_EQ(test, vnet_rx_mod_decide(&s, 3, 64), VNET_RX_REARM);
	KUNIT_EXPECT_EQ(test, s.polls, 0U);
}

static struct kunit_case rx_moderation_cases[] = {
	KUNIT_CASE(rxmod_drained_ring_rearms),
	KUNIT_CASE(rxmod_full_budget_polls_again),
	{}
};

static struct kunit_suite rx_moderation_suite = {
	.name = "vnet_rx_moderation",
	.test_cases = rx_moderation_cases,
};

kunit_test_suite(rx_moderation_suite);
