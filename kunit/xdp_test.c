// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: XDP send queues, frame sizes, MTU and attach checks, tokens (XDP, AF_XDP). */
#include <kunit/test.h>
#include "policy/xdp.h"

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

static void xdp_frags_frame_size(struct kunit *test)
{
	/* 17 fragment slots, buffers of at least 1518 bytes */
	KUNIT_EXPECT_EQ(test, vnet_xdp_max_frags_frame(17, 1518), 25806U);
	KUNIT_EXPECT_EQ(test, vnet_xdp_max_frags_frame(0, 1518), 0U);
}

static const struct vnet_xdp_limits lim = { .single = 3520, .frags = 25806 };

static void xdp_mtu_checks(struct kunit *test)
{
	/* single-buffer: a 1500-byte MTU fits; a page's worth is the limit */
	KUNIT_EXPECT_NULL(test, vnet_xdp_check_mtu(VNET_XDP_MERGEABLE, 1500,
						   false, &lim));
	KUNIT_EXPECT_NULL(test, vnet_xdp_check_mtu(VNET_XDP_MERGEABLE,
						   3520 - 18, false, &lim));
	KUNIT_EXPECT_NOT_NULL(test, vnet_xdp_check_mtu(VNET_XDP_MERGEABLE,
						       3520 - 17, false, &lim));
	/* a fragments program on mergeable buffers takes up to 17 buffers */
	KUNIT_EXPECT_NULL(test, vnet_xdp_check_mtu(VNET_XDP_MERGEABLE, 9000,
						   true, &lim));
	KUNIT_EXPECT_NULL(test, vnet_xdp_check_mtu(VNET_XDP_MERGEABLE,
						   25806 - 18, true, &lim));
	KUNIT_EXPECT_NOT_NULL(test, vnet_xdp_check_mtu(VNET_XDP_MERGEABLE,
						       25806 - 17, true, &lim));
	/* small buffers never spread a frame: fragments change nothing */
	KUNIT_EXPECT_NOT_NULL(test, vnet_xdp_check_mtu(VNET_XDP_SMALL, 9000,
						       true, &lim));
}

static void xdp_attach_checks(struct kunit *test)
{
	KUNIT_EXPECT_NULL(test, vnet_xdp_check_attach(VNET_XDP_MERGEABLE, 1500,
						      false, &lim, true, true));
	KUNIT_EXPECT_NULL(test, vnet_xdp_check_attach(VNET_XDP_SMALL, 1500,
						      false, &lim, false,
						      false));
	KUNIT_EXPECT_NULL(test, vnet_xdp_check_attach(VNET_XDP_MERGEABLE,
						      3520 - 18, false, &lim,
						      false, false));
	KUNIT_EXPECT_NOT_NULL(test, vnet_xdp_check_attach(VNET_XDP_MERGEABLE,
							  3520 - 17, false,
							  &lim, false, false));
	KUNIT_EXPECT_NOT_NULL(test, vnet_xdp_check_attach(VNET_XDP_MERGEABLE,
							  9000, false, &lim,
							  true, true));
	KUNIT_EXPECT_NULL(test, vnet_xdp_check_attach(VNET_XDP_MERGEABLE, 9000,
						      true, &lim, true, true));
	KUNIT_EXPECT_NOT_NULL(test, vnet_xdp_check_attach(VNET_XDP_BIG, 1500,
							  true, &lim, false,
							  true));
	KUNIT_EXPECT_NOT_NULL(test, vnet_xdp_check_attach(VNET_XDP_SMALL, 1500,
							  false, &lim, true,
							  false));
	/* the offload check holds for a fragments program too */
	KUNIT_EXPECT_NOT_NULL(test, vnet_xdp_check_attach(VNET_XDP_MERGEABLE,
							  9000, true, &lim,
							  true, false));
}

static void xdp_tokens(struct kunit *test)
{
	unsigned long frame[2];
	void *t = vnet_xdp_to_token(frame);

	KUNIT_EXPECT_TRUE(test, vnet_xdp_is_token(t));
	KUNIT_EXPECT_PTR_EQ(test, vnet_xdp_from_token(t), (void *)frame);
	KUNIT_EXPECT_FALSE(test, vnet_xdp_is_token(frame));
}

/* AF_XDP frames: a length in the token, told apart from skbs and frames. */
static void xsk_tokens(struct kunit *test)
{
	unsigned long frame[2];
	static const u32 lens[] = { 0, 1, 60, 1514, 4096, 65535 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		void *t = vnet_xsk_to_token(lens[i]);

		KUNIT_EXPECT_TRUE(test, vnet_xsk_is_token(t));
		KUNIT_EXPECT_FALSE(test, vnet_xdp_is_token(t));
		KUNIT_EXPECT_EQ(test, vnet_xsk_token_len(t), lens[i]);
	}
	/* an skb pointer and an XDP frame's token are neither */
	KUNIT_EXPECT_FALSE(test, vnet_xsk_is_token(frame));
	KUNIT_EXPECT_FALSE(test, vnet_xsk_is_token(vnet_xdp_to_token(frame)));
}

static struct kunit_case xdp_plan_cases[] = {
	KUNIT_CASE(xdp_dedicated_pairs),
	KUNIT_CASE(xdp_txq_choice),
	KUNIT_CASE(xdp_frame_size),
	KUNIT_CASE(xdp_frags_frame_size),
	KUNIT_CASE(xdp_mtu_checks),
	KUNIT_CASE(xdp_attach_checks),
	KUNIT_CASE(xdp_tokens),
	KUNIT_CASE(xsk_tokens),
	{}
};

static struct kunit_suite xdp_plan_suite = {
	.name = "vnet_xdp_plan",
	.test_cases = xdp_plan_cases,
};

kunit_test_suite(xdp_plan_suite);
