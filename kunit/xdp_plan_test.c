// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: XDP send queues, frame size, attach checks, queue tokens. */
#include <kunit/test.h>
#include "xdp_plan.h"

static void xdp_dedicated_pairs(struct kunit *test)
{
	/* 4 pairs, 2 used by the stack, 2 CPUs: one pair per CPU */
	KUNIT_EXPECT_EQ(test, vnet_xdp_dedicated_pairs(4, 2, 2), 2U);
	KUNIT_EXPECT_EQ(test, vnet_xdp_dedicated_pairs(8, 2, 4), 4U);
	/* too few spare pairs: shared, locked queues */
	KUNIT_EXPECT_EQ(test, vnet_xdp_dedicated_pairs(4, 3, 2), 0U);
	KUNIT_EXPECT_EQ(test, vnet_xdp_dedicated_pairs(2, 2, 2), 0U);
	KUNIT_EXPECT_EQ(test, vnet_xdp_dedicated_pairs(1, 1, 1), 0U);
	KUNIT_EXPECT_EQ(test, vnet_xdp_dedicated_pairs(2, 3, 1), 0U);
	KUNIT_EXPECT_EQ(test, vnet_xdp_dedicated_pairs(4, 2, 0), 0U);
}

static void xdp_txq_choice(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vnet_xdp_txq(2, 2, 0), 2U);
	KUNIT_EXPECT_EQ(test, vnet_xdp_txq(2, 2, 1), 3U);
	KUNIT_EXPECT_EQ(test, vnet_xdp_txq(2, 0, 0), 0U);
	KUNIT_EXPECT_EQ(test, vnet_xdp_txq(2, 0, 3), 1U);
	KUNIT_EXPECT_EQ(test, vnet_xdp_txq(3, 0, 7), 1U);
	KUNIT_EXPECT_EQ(test, vnet_xdp_txq(0, 0, 7), 0U);
}

static void xdp_frame_size(struct kunit *test)
{
	/* 4 KiB page, 256 bytes of XDP headroom, 320 of skb_shared_info */
	KUNIT_EXPECT_EQ(test, vnet_xdp_max_frame(4096, 256, 320), 3520U);
	KUNIT_EXPECT_EQ(test, vnet_xdp_max_frame(4096, 4000, 320), 0U);
}

static void xdp_attach_checks(struct kunit *test)
{
	unsigned int max = vnet_xdp_max_frame(4096, 256, 320);

	KUNIT_EXPECT_NULL(test, vnet_xdp_check_attach(VNET_XDP_MERGEABLE, 1500,
						      max, true, true));
	KUNIT_EXPECT_NULL(test, vnet_xdp_check_attach(VNET_XDP_SMALL, 1500,
						      max, false, false));
	KUNIT_EXPECT_NULL(test, vnet_xdp_check_attach(VNET_XDP_MERGEABLE,
						      3520 - 18, max, false,
						      false));
	KUNIT_EXPECT_NOT_NULL(test, vnet_xdp_check_attach(VNET_XDP_MERGEABLE,
							  3520 - 17, max,
							  false, false));
	KUNIT_EXPECT_NOT_NULL(test, vnet_xdp_check_attach(VNET_XDP_MERGEABLE,
							  9000, max, true,
							  true));
	KUNIT_EXPECT_NOT_NULL(test, vnet_xdp_check_attach(VNET_XDP_BIG, 1500,
							  max, false, true));
	KUNIT_EXPECT_NOT_NULL(test, vnet_xdp_check_attach(VNET_XDP_SMALL, 1500,
							  max, true, false));
}

static void xdp_tokens(struct kunit *test)
{
	unsigned long frame[2];
	void *t = vnet_xdp_to_token(frame);

	KUNIT_EXPECT_TRUE(test, vnet_xdp_is_token(t));
	KUNIT_EXPECT_PTR_EQ(test, vnet_xdp_from_token(t), (void *)frame);
	KUNIT_EXPECT_FALSE(test, vnet_xdp_is_token(frame));
}

static struct kunit_case xdp_plan_cases[] = {
	KUNIT_CASE(xdp_dedicated_pairs),
	KUNIT_CASE(xdp_txq_choice),
	KUNIT_CASE(xdp_frame_size),
	KUNIT_CASE(xdp_attach_checks),
	KUNIT_CASE(xdp_tokens),
	{}
};

static struct kunit_suite xdp_plan_suite = {
	.name = "vnet_xdp_plan",
	.test_cases = xdp_plan_cases,
};

kunit_test_suite(xdp_plan_suite);
