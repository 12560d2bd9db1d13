// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: receive buffer sizing and validation of device-reported values. */
#include <kunit/test.h>
#include <linux/limits.h>
#include "rx_buf.h"

static void rxbuf_header_length(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vnet_hdr_len(true, true), 12U);
	KUNIT_EXPECT_EQ(test, vnet_hdr_len(true, false), 12U);
	KUNIT_EXPECT_EQ(test, vnet_hdr_len(false, true), 12U);
	KUNIT_EXPECT_EQ(test, vnet_hdr_len(false, false), 10U);
}

static void rxbuf_max_frame(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vnet_max_rx_frame(true, 1500), 65535U + 14 + 4);
	KUNIT_EXPECT_EQ(test, vnet_max_rx_frame(false, 1500), 1518U);
	KUNIT_EXPECT_EQ(test, vnet_max_rx_frame(false, 9000), 9018U);
	/* Never below a standard frame, even with a tiny MTU. */
	KUNIT_EXPECT_EQ(test, vnet_max_rx_frame(false, 68), 1518U);
}

static void rxbuf_big_pages(struct kunit *test)
{
	/* 64 KiB frame + header pad needs 17 pages of 4 KiB. */
	KUNIT_EXPECT_EQ(test, vnet_big_pages(true, 1500, 4096), 17U);
	KUNIT_EXPECT_GE(test, vnet_big_capacity(17, 4096), 65535U + 18);
	KUNIT_EXPECT_EQ(test, vnet_big_pages(false, 9000, 4096), 3U);
	KUNIT_EXPECT_GE(test, vnet_big_capacity(3, 4096), 9018U);
	KUNIT_EXPECT_EQ(test, vnet_big_pages(false, 1500, 4096), 1U);
	KUNIT_EXPECT_EQ(test, vnet_big_capacity(1, 4096), 4096U - VNET_BIG_HDR_PAD);
}

static void rxbuf_mergeable_min(struct kunit *test)
{
	/* Large rings: a standard frame per buffer is enough. */
	KUNIT_EXPECT_EQ(test, vnet_mrg_min_len(12, 65553, 256), 1518U);
	/* Small rings must still hold a 64 KiB frame in total. */
	KUNIT_EXPECT_EQ(test, vnet_mrg_min_len(12, 65553, 32), 2049U);
	KUNIT_EXPECT_GE(test, 32 * vnet_mrg_min_len(12, 65553, 32), 65553U + 12);
	/* A zero ring size (never valid) does not divide by zero. */
	KUNIT_EXPECT_EQ(test, vnet_mrg_min_len(12, 1518, 0), 1530U);
}

static void rxbuf_mergeable_len(struct kunit *test)
{
	/* No history: the minimum, plus header, cache aligned. */
	KUNIT_EXPECT_EQ(test, vnet_mrg_buf_len(0, 1518, 12, 4096, 64), 1536U);
	/* Large average: capped at the maximum. */
	KUNIT_EXPECT_EQ(test, vnet_mrg_buf_len(60000, 1518, 12, 4096, 64), 4096U);
	/* In between: follows the average. */
	KUNIT_EXPECT_EQ(test, vnet_mrg_buf_len(2000, 1518, 12, 4096, 64), 2048U);
	/* A minimum above the maximum is clamped, not trusted. */
	KUNIT_EXPECT_EQ(test, vnet_mrg_buf_len(0, 9000, 12, 4096, 64), 4096U);
}

static void rxbuf_refill_due(struct kunit *test)
{
	/* Smallest buffers of a 32-entry ring: 2049 + 12, cache aligned. */
	unsigned int small = vnet_mrg_buf_len(0, vnet_mrg_min_len(12, 65553, 32),
					      12, 4096, 64);
	unsigned int need32 = vnet_rx_min_posted(12, 65553, small);
	unsigned int need256 = vnet_rx_min_posted(12, 65553,
						  vnet_mrg_buf_len(0, 1518, 12,
								   4096, 64));

	KUNIT_EXPECT_EQ(test, small, 2112U);
	/* A 32-entry ring needs all its buffers for a 64 KiB frame... */
	KUNIT_EXPECT_EQ(test, need32, 32U);
	/* ...so any free descriptor calls for a refill, */
	KUNIT_EXPECT_TRUE(test, vnet_rx_refill_due(1, 32, 64, need32));
	/* though the half-ring rule alone would wait for 17 (RX stalled). */
	KUNIT_EXPECT_FALSE(test, vnet_rx_refill_due(16, 32, 64, 1));
	KUNIT_EXPECT_TRUE(test, vnet_rx_refill_due(16, 32, 64, need32));
	KUNIT_EXPECT_FALSE(test, vnet_rx_refill_due(0, 32, 64, need32));
	/* 1536-byte buffers: 43 of them hold 64 KiB. */
	KUNIT_EXPECT_EQ(test, need256, 43U);
	KUNIT_EXPECT_GE(test, need256 * 1536U, 65553U + 12);
	KUNIT_EXPECT_LT(test, (need256 - 1) * 1536U, 65553U + 12);
	/* Large rings: batches of half a budget, as before. */
	KUNIT_EXPECT_FALSE(test, vnet_rx_refill_due(32, 256, 64, need256));
	KUNIT_EXPECT_TRUE(test, vnet_rx_refill_due(33, 256, 64, need256));
	/* A 64-entry ring refills once fewer than 43 are left (22 free). */
	KUNIT_EXPECT_FALSE(test, vnet_rx_refill_due(21, 64, 64, need256));
	KUNIT_EXPECT_TRUE(test, vnet_rx_refill_due(22, 64, 64, need256));
	/* Whole-frame buffers (big, small): one is enough. */
	KUNIT_EXPECT_FALSE(test, vnet_rx_refill_due(10, 256, 64, 1));
	KUNIT_EXPECT_EQ(test, vnet_rx_min_posted(12, 1518, 0), 1530U);
}

static void rxbuf_ctx_round_trip(struct kunit *test)
{
	void *ctx = vnet_rx_ctx(4096 + 1500, 256);

	KUNIT_EXPECT_EQ(test, vnet_rx_ctx_truesize(ctx), 5596U);
	KUNIT_EXPECT_EQ(test, vnet_rx_ctx_headroom(ctx), 256U);
	ctx = vnet_rx_ctx((1U << VNET_CTX_SIZE_BITS) - 1, 0);
	KUNIT_EXPECT_EQ(test, vnet_rx_ctx_truesize(ctx), (1U << VNET_CTX_SIZE_BITS) - 1);
	KUNIT_EXPECT_EQ(test, vnet_rx_ctx_headroom(ctx), 0U);
}

/* Used lengths the device may report for a first buffer. */
static void rxbuf_check_first(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vnet_rx_check_first(0, 12, 1536), VNET_RX_BAD_LEN);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_first(12, 12, 1536), VNET_RX_BAD_LEN);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_first(12 + 13, 12, 1536), VNET_RX_BAD_LEN);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_first(12 + 14, 12, 1536), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_first(1536, 12, 1536), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_first(1537, 12, 1536), VNET_RX_BAD_LEN);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_first(UINT_MAX, 12, 1536), VNET_RX_BAD_LEN);
}

static void rxbuf_check_more(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vnet_rx_check_more(0, 1536), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_more(1536, 1536), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_more(1537, 1536), VNET_RX_BAD_LEN);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_more(UINT_MAX, 1536), VNET_RX_BAD_LEN);
}

static void rxbuf_check_num_buffers(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vnet_rx_check_num_buffers(0, 256), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_num_buffers(1, 256), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_num_buffers(256, 256), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_num_buffers(257, 256), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_num_buffers(65535, 256), VNET_RX_BAD_HDR);
}

static struct kunit_case rx_buf_cases[] = {
	KUNIT_CASE(rxbuf_header_length),
	KUNIT_CASE(rxbuf_max_frame),
	KUNIT_CASE(rxbuf_big_pages),
	KUNIT_CASE(rxbuf_mergeable_min),
	KUNIT_CASE(rxbuf_mergeable_len),
	KUNIT_CASE(rxbuf_refill_due),
	KUNIT_CASE(rxbuf_ctx_round_trip),
	KUNIT_CASE(rxbuf_check_first),
	KUNIT_CASE(rxbuf_check_more),
	KUNIT_CASE(rxbuf_check_num_buffers),
	{}
};

static struct kunit_suite rx_buf_suite = {
	.name = "vnet_rx_buf",
	.test_cases = rx_buf_cases,
};

kunit_test_suite(rx_buf_suite);
