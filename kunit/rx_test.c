// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: receive buffer sizing, refill and the checks of device-reported
 * values (src/policy/rx.c).  Two suites: vnet_rx_buf (sizes, lengths, refill)
 * and vnet_rx_hdr (receive headers and frame lengths a hostile or broken
 * device may hand back, fed to the checks that run before the kernel sees
 * them).
 */
#include <kunit/test.h>
#include <linux/limits.h>
#include <linux/skbuff.h>
#include <uapi/linux/virtio_net.h>
#include "policy/features.h"
#include "policy/rx.h"

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

static void rxbuf_copy_len(struct kunit *test)
{
	/* A frame that fits the head's room is copied whole... */
	KUNIT_EXPECT_EQ(test, vnet_rx_copy_len(322, 640), 322U);
	KUNIT_EXPECT_EQ(test, vnet_rx_copy_len(640, 640), 640U);
	/* ...even above the room asked for, when the allocator gave more. */
	KUNIT_EXPECT_GT(test, vnet_rx_copy_len(322, 640), (unsigned int)VNET_COPY_LEN);
	/* One byte over: only the Ethernet header goes to the head. */
	KUNIT_EXPECT_EQ(test, vnet_rx_copy_len(641, 640), (unsigned int)ETH_HLEN);
	KUNIT_EXPECT_EQ(test, vnet_rx_copy_len(1514, 128), (unsigned int)ETH_HLEN);
}

static void rxbuf_build_fits(struct kunit *test)
{
	/* 12 + 322 bytes of a 1536-byte buffer leave room for 320 more. */
	KUNIT_EXPECT_TRUE(test, vnet_rx_build_fits(334, 1536, 320));
	KUNIT_EXPECT_TRUE(test, vnet_rx_build_fits(1216, 1536, 320));
	/* One byte short of the tail: not built around the buffer. */
	KUNIT_EXPECT_FALSE(test, vnet_rx_build_fits(1217, 1536, 320));
	/* A length past the buffer (never trusted) does not wrap around. */
	KUNIT_EXPECT_FALSE(test, vnet_rx_build_fits(1600, 1536, 320));
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
	KUNIT_CASE(rxbuf_copy_len),
	KUNIT_CASE(rxbuf_build_fits),
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

#define ALL_RX	(VNET_RX_ALLOW_CSUM | VNET_RX_ALLOW_TCPV4 | VNET_RX_ALLOW_TCPV6 | \
		 VNET_RX_ALLOW_UDP | VNET_RX_ALLOW_ECN | VNET_RX_ALLOW_UDP_L4)

/* A 1514-byte TCP/IPv4 frame: checksum at 34 + 16. */
#define FRAME	1514U

static enum vnet_rx_verdict check(u8 flags, u8 gso_type, u16 gso_size,
				  u16 start, u16 off, unsigned int len,
				  u32 allowed)
{
	struct vnet_rx_hdr_fields h = {
		.flags = flags, .gso_type = gso_type, .gso_size = gso_size,
		.csum_start = start, .csum_offset = off,
	};
	const char *why = NULL;
	enum vnet_rx_verdict v = vnet_rx_check_hdr(&h, len, allowed, &why);

	/* Every refusal says why; an accepted header leaves why alone. */
	if (v != VNET_RX_OK && !why)
		return VNET_RX_BAD_LEN;
	if (v == VNET_RX_OK && why)
		return VNET_RX_BAD_LEN;
	return v;
}

static void rxhdr_allowed_from_features(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vnet_rx_hdr_allowed(0), 0U);
	KUNIT_EXPECT_EQ(test, vnet_rx_hdr_allowed(1ULL << VIRTIO_NET_F_GUEST_CSUM),
			VNET_RX_ALLOW_CSUM);
	KUNIT_EXPECT_EQ(test, vnet_rx_hdr_allowed((1ULL << VIRTIO_NET_F_GUEST_CSUM) |
						  (1ULL << VIRTIO_NET_F_GUEST_TSO4) |
						  (1ULL << VIRTIO_NET_F_GUEST_TSO6) |
						  (1ULL << VIRTIO_NET_F_GUEST_UFO) |
						  (1ULL << VIRTIO_NET_F_GUEST_ECN) |
						  (1ULL << VNET_F_GUEST_USO4) |
						  (1ULL << VNET_F_GUEST_USO6)),
			ALL_RX);
	/* Either USO feature allows the one UDP_L4 type. */
	KUNIT_EXPECT_EQ(test, vnet_rx_hdr_allowed(1ULL << VNET_F_GUEST_USO4),
			VNET_RX_ALLOW_UDP_L4);
	KUNIT_EXPECT_EQ(test, vnet_rx_hdr_allowed(1ULL << VNET_F_GUEST_USO6),
			VNET_RX_ALLOW_UDP_L4);
	/* Host-side offloads say nothing about what we receive. */
	KUNIT_EXPECT_EQ(test, vnet_rx_hdr_allowed((1ULL << VIRTIO_NET_F_CSUM) |
						  (1ULL << VIRTIO_NET_F_HOST_TSO4)),
			0U);
}

static void rxhdr_plain_frames(struct kunit *test)
{
	/* An all-zero header is always fine, even with nothing negotiated. */
	KUNIT_EXPECT_EQ(test, check(0, 0, 0, 0, 0, FRAME, 0), VNET_RX_OK);
	/* Leftover gso_size/csum fields of a non-GSO, no-checksum frame. */
	KUNIT_EXPECT_EQ(test, check(0, 0, 1448, 9999, 9999, FRAME, ALL_RX), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, check(VIRTIO_NET_HDR_F_DATA_VALID, 0, 0, 0, 0, FRAME, ALL_RX),
			VNET_RX_OK);
}

static void rxhdr_flags(struct kunit *test)
{
	/* Checksum flags need GUEST_CSUM. */
	KUNIT_EXPECT_EQ(test, check(VIRTIO_NET_HDR_F_DATA_VALID, 0, 0, 0, 0, FRAME, 0),
			VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(VIRTIO_NET_HDR_F_NEEDS_CSUM, 0, 0, 34, 16, FRAME, 0),
			VNET_RX_BAD_HDR);
	/* RSC_INFO (never negotiated) and undefined bits. */
	KUNIT_EXPECT_EQ(test, check(4, 0, 0, 0, 0, FRAME, ALL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(0x80, 0, 0, 0, 0, FRAME, ALL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(0xff, 0, 0, 34, 16, FRAME, ALL_RX), VNET_RX_BAD_HDR);
	/* Both checksum flags together are allowed. */
	KUNIT_EXPECT_EQ(test, check(VIRTIO_NET_HDR_F_NEEDS_CSUM | VIRTIO_NET_HDR_F_DATA_VALID,
				    0, 0, 34, 16, FRAME, ALL_RX), VNET_RX_OK);
}

static void rxhdr_checksum_position(struct kunit *test)
{
	const u8 nc = VIRTIO_NET_HDR_F_NEEDS_CSUM;

	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, 34, 16, FRAME, ALL_RX), VNET_RX_OK);
	/* The checksum field ends exactly at the end of the frame. */
	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, FRAME - 8, 6, FRAME, ALL_RX), VNET_RX_OK);
	/* One byte beyond it. */
	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, FRAME - 8, 7, FRAME, ALL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, FRAME - 1, 0, FRAME, ALL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, FRAME, 0, FRAME, ALL_RX), VNET_RX_BAD_HDR);
	/* Largest values: no 16-bit overflow lets them through. */
	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, U16_MAX, U16_MAX, FRAME, ALL_RX),
			VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, U16_MAX, U16_MAX, UINT_MAX, ALL_RX), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, 34, U16_MAX, FRAME, ALL_RX), VNET_RX_BAD_HDR);
	/* Inside the Ethernet header. */
	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, 0, 16, FRAME, ALL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, 13, 16, FRAME, ALL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, 14, 16, FRAME, ALL_RX), VNET_RX_OK);
	/* A frame too short for any checksum. */
	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, 14, 0, 15, ALL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, 14, 0, 16, ALL_RX), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, check(nc, 0, 0, 14, 0, 0, ALL_RX), VNET_RX_BAD_HDR);
}

static void rxhdr_gso_types(struct kunit *test)
{
	const u8 nc = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	const u32 len = 65000;

	KUNIT_EXPECT_EQ(test, check(nc, VIRTIO_NET_HDR_GSO_TCPV4, 1448, 34, 16, len, ALL_RX),
			VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, check(nc, VIRTIO_NET_HDR_GSO_TCPV6, 1428, 54, 16, len, ALL_RX),
			VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, check(nc, VIRTIO_NET_HDR_GSO_UDP, 1472, 34, 6, len, ALL_RX),
			VNET_RX_OK);
	/* GSO of already checksummed data (forwarded GRO frames). */
	KUNIT_EXPECT_EQ(test, check(VIRTIO_NET_HDR_F_DATA_VALID, VIRTIO_NET_HDR_GSO_TCPV4,
				    1448, 0, 0, len, ALL_RX), VNET_RX_OK);
	/* Each type needs its feature. */
	KUNIT_EXPECT_EQ(test, check(nc, VIRTIO_NET_HDR_GSO_TCPV4, 1448, 34, 16, len,
				    ALL_RX & ~VNET_RX_ALLOW_TCPV4), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, VIRTIO_NET_HDR_GSO_TCPV6, 1428, 54, 16, len,
				    ALL_RX & ~VNET_RX_ALLOW_TCPV6), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, VIRTIO_NET_HDR_GSO_UDP, 1472, 34, 6, len,
				    ALL_RX & ~VNET_RX_ALLOW_UDP), VNET_RX_BAD_HDR);
	/* UDP_L4 (USO, type 5) needs GUEST_USO4/6. */
	KUNIT_EXPECT_EQ(test, check(nc, VNET_HDR_GSO_UDP_L4, 1400, 34, 6, len, ALL_RX),
			VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, check(nc, VNET_HDR_GSO_UDP_L4, 1400, 34, 6, len,
				    ALL_RX & ~VNET_RX_ALLOW_UDP_L4), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, VNET_HDR_GSO_UDP_L4, 0, 34, 6, len, ALL_RX),
			VNET_RX_BAD_HDR);
	/* Types that do not exist. */
	KUNIT_EXPECT_EQ(test, check(nc, 2, 1448, 34, 16, len, ALL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, 6, 1472, 34, 6, len, ALL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, 0x7f, 1448, 34, 16, len, ALL_RX), VNET_RX_BAD_HDR);
}

static void rxhdr_gso_ecn(struct kunit *test)
{
	const u8 nc = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	const u8 ecn = VIRTIO_NET_HDR_GSO_ECN;
	const u32 len = 65000;

	KUNIT_EXPECT_EQ(test, check(nc, ecn | VIRTIO_NET_HDR_GSO_TCPV4, 1448, 34, 16, len,
				    ALL_RX), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, check(nc, ecn | VIRTIO_NET_HDR_GSO_TCPV6, 1428, 54, 16, len,
				    ALL_RX), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, check(nc, ecn | VIRTIO_NET_HDR_GSO_TCPV4, 1448, 34, 16, len,
				    ALL_RX & ~VNET_RX_ALLOW_ECN), VNET_RX_BAD_HDR);
	/* ECN alone, or on UDP. */
	KUNIT_EXPECT_EQ(test, check(0, ecn, 0, 0, 0, len, ALL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, ecn | VIRTIO_NET_HDR_GSO_UDP, 1472, 34, 6, len,
				    ALL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, ecn | VNET_HDR_GSO_UDP_L4, 1400, 34, 6, len,
				    ALL_RX), VNET_RX_BAD_HDR);
}

static void rxhdr_gso_size(struct kunit *test)
{
	const u8 nc = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	const u32 len = 65000;

	KUNIT_EXPECT_EQ(test, check(nc, VIRTIO_NET_HDR_GSO_TCPV4, 0, 34, 16, len, ALL_RX),
			VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, VIRTIO_NET_HDR_GSO_TCPV6, 0, 54, 16, len, ALL_RX),
			VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, VIRTIO_NET_HDR_GSO_TCPV4, GSO_BY_FRAGS, 34, 16, len,
				    ALL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, check(nc, VIRTIO_NET_HDR_GSO_TCPV4, 1, 34, 16, len, ALL_RX),
			VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, check(nc, VIRTIO_NET_HDR_GSO_TCPV4, GSO_BY_FRAGS - 1, 34, 16,
				    len, ALL_RX), VNET_RX_OK);
	/* GSO with its checksum outside the frame. */
	KUNIT_EXPECT_EQ(test, check(nc, VIRTIO_NET_HDR_GSO_TCPV4, 1448, 34, 16, 40, ALL_RX),
			VNET_RX_BAD_HDR);
}

static void rxhdr_frame_length(struct kunit *test)
{
	const unsigned int gso = vnet_max_rx_frame(true, 1500);
	const unsigned int plain = vnet_max_rx_frame(false, 1500);

	KUNIT_EXPECT_EQ(test, vnet_rx_check_frame(plain, plain), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_frame(plain + 1, plain), VNET_RX_BAD_LEN);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_frame(gso, gso), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_frame(gso + 1, gso), VNET_RX_BAD_LEN);
	/* 256 mergeable buffers of a page each: far beyond any frame. */
	KUNIT_EXPECT_EQ(test, vnet_rx_check_frame(256 * 4096, gso), VNET_RX_BAD_LEN);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_frame(UINT_MAX, gso), VNET_RX_BAD_LEN);
	KUNIT_EXPECT_EQ(test, vnet_rx_check_frame(0, gso), VNET_RX_OK);
}

#define TNL_RX	(ALL_RX | VNET_RX_ALLOW_TNL | VNET_RX_ALLOW_TNL_CSUM)

/*
 * VXLAN over IPv4 around TCP/IPv4: outer UDP at 14 + 20 = 34, VXLAN and
 * inner Ethernet (8 + 14) up to the inner IP header at 56, inner TCP at
 * 56 + 20 = 76.  Over IPv6 with an IPv6 inner packet: 54, 76, 116.
 */
#define T4_OUTER	34
#define T4_INNER	56
#define T4_TH		76
#define T6_OUTER	54
#define T6_INNER	76
#define T6_TH		116

static enum vnet_rx_verdict tcheck(u8 flags, u8 gso_type, u16 start,
				   u16 outer_th, u16 inner_nh, u32 allowed)
{
	struct vnet_rx_hdr_fields h = {
		.flags = flags, .gso_type = gso_type, .gso_size = 1398,
		.csum_start = start, .csum_offset = 16,
		.outer_th_offset = outer_th, .inner_nh_offset = inner_nh,
	};
	const char *why = NULL;
	enum vnet_rx_verdict v = vnet_rx_check_hdr(&h, 65000, allowed, &why);

	/* As in check(): every refusal says why, an acceptance does not. */
	if (v == VNET_RX_OK ? !!why : !why)
		return VNET_RX_BAD_LEN;
	return v;
}

static void rxhdr_tnl_allowed_from_features(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vnet_rx_tnl_allowed(0), 0U);
	KUNIT_EXPECT_EQ(test, vnet_rx_tnl_allowed(VNET_HI_BIT(VNET_F_GUEST_UDP_TUNNEL_GSO)),
			VNET_RX_ALLOW_TNL);
	KUNIT_EXPECT_EQ(test,
			vnet_rx_tnl_allowed(VNET_HI_BIT(VNET_F_GUEST_UDP_TUNNEL_GSO) |
					    VNET_HI_BIT(VNET_F_GUEST_UDP_TUNNEL_GSO_CSUM)),
			VNET_RX_ALLOW_TNL | VNET_RX_ALLOW_TNL_CSUM);
	/* The transmit side's features allow nothing on receive. */
	KUNIT_EXPECT_EQ(test,
			vnet_rx_tnl_allowed(VNET_HI_BIT(VNET_F_HOST_UDP_TUNNEL_GSO) |
					    VNET_HI_BIT(VNET_F_HOST_UDP_TUNNEL_GSO_CSUM)),
			0U);
}

static void rxhdr_tnl_good(struct kunit *test)
{
	const u8 nc = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	const u8 t4 = VNET_HDR_GSO_UDP_TUNNEL_IPV4, t6 = VNET_HDR_GSO_UDP_TUNNEL_IPV6;

	KUNIT_EXPECT_EQ(test, tcheck(nc, t4 | VIRTIO_NET_HDR_GSO_TCPV4, T4_TH, T4_OUTER,
				     T4_INNER, TNL_RX), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, tcheck(nc, t6 | VIRTIO_NET_HDR_GSO_TCPV6, T6_TH, T6_OUTER,
				     T6_INNER, TNL_RX), VNET_RX_OK);
	/* IPv6 inside IPv4, and the reverse. */
	KUNIT_EXPECT_EQ(test, tcheck(nc, t4 | VIRTIO_NET_HDR_GSO_TCPV6, T4_INNER + 40,
				     T4_OUTER, T4_INNER, TNL_RX), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, tcheck(nc, t6 | VIRTIO_NET_HDR_GSO_TCPV4, T6_INNER + 20,
				     T6_OUTER, T6_INNER, TNL_RX), VNET_RX_OK);
	/* USO and ECN inside the tunnel. */
	KUNIT_EXPECT_EQ(test, tcheck(nc, t4 | VNET_HDR_GSO_UDP_L4, T4_TH, T4_OUTER,
				     T4_INNER, TNL_RX), VNET_RX_OK);
	KUNIT_EXPECT_EQ(test, tcheck(nc, t4 | VIRTIO_NET_HDR_GSO_ECN |
				     VIRTIO_NET_HDR_GSO_TCPV4, T4_TH, T4_OUTER, T4_INNER,
				     TNL_RX), VNET_RX_OK);
	/* Headers at their minimal distances (e.g. Geneve without options). */
	KUNIT_EXPECT_EQ(test, tcheck(nc, t4 | VIRTIO_NET_HDR_GSO_TCPV4, 62, 34, 42,
				     TNL_RX), VNET_RX_OK);
	/* The outer checksum flag, with its feature. */
	KUNIT_EXPECT_EQ(test, tcheck(nc | VNET_HDR_F_UDP_TUNNEL_CSUM,
				     t4 | VIRTIO_NET_HDR_GSO_TCPV4, T4_TH, T4_OUTER,
				     T4_INNER, TNL_RX), VNET_RX_OK);
	/* A checked tunnel frame that is not GSO: both checksums valid. */
	KUNIT_EXPECT_EQ(test, tcheck(VIRTIO_NET_HDR_F_DATA_VALID | VNET_HDR_F_UDP_TUNNEL_CSUM,
				     0, 0, 0, 0, TNL_RX), VNET_RX_OK);
	/* Offsets are ignored without a tunnel GSO type. */
	KUNIT_EXPECT_EQ(test, tcheck(nc, VIRTIO_NET_HDR_GSO_TCPV4, 34, 0, 0, ALL_RX),
			VNET_RX_OK);
}

static void rxhdr_tnl_not_negotiated(struct kunit *test)
{
	const u8 nc = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	const u8 t4 = VNET_HDR_GSO_UDP_TUNNEL_IPV4, t6 = VNET_HDR_GSO_UDP_TUNNEL_IPV6;

	KUNIT_EXPECT_EQ(test, tcheck(nc, t4 | VIRTIO_NET_HDR_GSO_TCPV4, T4_TH, T4_OUTER,
				     T4_INNER, ALL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(nc, t6 | VIRTIO_NET_HDR_GSO_TCPV6, T6_TH, T6_OUTER,
				     T6_INNER, ALL_RX | VNET_RX_ALLOW_TNL_CSUM),
			VNET_RX_BAD_HDR);
	/* The outer checksum flag needs GUEST_UDP_TUNNEL_GSO_CSUM. */
	KUNIT_EXPECT_EQ(test, tcheck(nc | VNET_HDR_F_UDP_TUNNEL_CSUM,
				     t4 | VIRTIO_NET_HDR_GSO_TCPV4, T4_TH, T4_OUTER,
				     T4_INNER, ALL_RX | VNET_RX_ALLOW_TNL), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(VIRTIO_NET_HDR_F_DATA_VALID | VNET_HDR_F_UDP_TUNNEL_CSUM,
				     0, 0, 0, 0, ALL_RX | VNET_RX_ALLOW_TNL), VNET_RX_BAD_HDR);
	/* The inner GSO type needs its own feature. */
	KUNIT_EXPECT_EQ(test, tcheck(nc, t4 | VIRTIO_NET_HDR_GSO_TCPV4, T4_TH, T4_OUTER,
				     T4_INNER, TNL_RX & ~VNET_RX_ALLOW_TCPV4), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(nc, t4 | VNET_HDR_GSO_UDP_L4, T4_TH, T4_OUTER,
				     T4_INNER, TNL_RX & ~VNET_RX_ALLOW_UDP_L4), VNET_RX_BAD_HDR);
}

static void rxhdr_tnl_types(struct kunit *test)
{
	const u8 nc = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	const u8 t4 = VNET_HDR_GSO_UDP_TUNNEL_IPV4;

	/* Both outer IP versions at once. */
	KUNIT_EXPECT_EQ(test, tcheck(nc, VNET_HDR_GSO_UDP_TUNNEL | VIRTIO_NET_HDR_GSO_TCPV4,
				     T6_TH, T6_OUTER, T6_INNER, TNL_RX), VNET_RX_BAD_HDR);
	/* A tunnel around no GSO, around UFO, around an unknown type. */
	KUNIT_EXPECT_EQ(test, tcheck(nc, t4, T4_TH, T4_OUTER, T4_INNER, TNL_RX),
			VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(nc, t4 | VIRTIO_NET_HDR_GSO_UDP, T4_TH, T4_OUTER,
				     T4_INNER, TNL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(nc, t4 | 2, T4_TH, T4_OUTER, T4_INNER, TNL_RX),
			VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(nc, t4 | 0x1f, T4_TH, T4_OUTER, T4_INNER, TNL_RX),
			VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(nc, 0xff, T4_TH, T4_OUTER, T4_INNER, TNL_RX),
			VNET_RX_BAD_HDR);
	/* Without a partial checksum, or with DATA_VALID besides. */
	KUNIT_EXPECT_EQ(test, tcheck(0, t4 | VIRTIO_NET_HDR_GSO_TCPV4, T4_TH, T4_OUTER,
				     T4_INNER, TNL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(VIRTIO_NET_HDR_F_DATA_VALID,
				     t4 | VIRTIO_NET_HDR_GSO_TCPV4, 0, T4_OUTER, T4_INNER,
				     TNL_RX), VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(nc | VIRTIO_NET_HDR_F_DATA_VALID,
				     t4 | VIRTIO_NET_HDR_GSO_TCPV4, T4_TH, T4_OUTER,
				     T4_INNER, TNL_RX), VNET_RX_BAD_HDR);
	/* Unknown flags next to the tunnel flag. */
	KUNIT_EXPECT_EQ(test, tcheck(nc | VNET_HDR_F_UDP_TUNNEL_CSUM | 0x10,
				     t4 | VIRTIO_NET_HDR_GSO_TCPV4, T4_TH, T4_OUTER,
				     T4_INNER, TNL_RX), VNET_RX_BAD_HDR);
}

static void rxhdr_tnl_offsets(struct kunit *test)
{
	const u8 nc = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	const u8 g4 = VNET_HDR_GSO_UDP_TUNNEL_IPV4 | VIRTIO_NET_HDR_GSO_TCPV4;
	const u8 g6 = VNET_HDR_GSO_UDP_TUNNEL_IPV6 | VIRTIO_NET_HDR_GSO_TCPV6;

	/* All zero (a device that forgot them). */
	KUNIT_EXPECT_EQ(test, tcheck(nc, g4, T4_TH, 0, 0, TNL_RX), VNET_RX_BAD_HDR);
	/* Outer UDP inside the outer IP header, by version. */
	KUNIT_EXPECT_EQ(test, tcheck(nc, g4, T4_TH, T4_OUTER - 1, T4_INNER, TNL_RX),
			VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(nc, g6, T6_TH, T6_OUTER - 1, T6_INNER, TNL_RX),
			VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(nc, g6, T6_TH, T4_OUTER, T6_INNER, TNL_RX),
			VNET_RX_BAD_HDR);
	/* Inner IP inside the outer UDP header, or before it. */
	KUNIT_EXPECT_EQ(test, tcheck(nc, g4, T4_TH, T4_OUTER, T4_OUTER + 7, TNL_RX),
			VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(nc, g4, T4_TH, T4_INNER, T4_OUTER, TNL_RX),
			VNET_RX_BAD_HDR);
	/* Inner transport header inside the inner IP header, by version. */
	KUNIT_EXPECT_EQ(test, tcheck(nc, g4, T4_INNER + 19, T4_OUTER, T4_INNER, TNL_RX),
			VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(nc, g6, T6_INNER + 39, T6_OUTER, T6_INNER, TNL_RX),
			VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(nc, g6, T6_INNER + 40, T6_OUTER, T6_INNER, TNL_RX),
			VNET_RX_OK);
	/* Largest values: no 16-bit overflow lets them through. */
	KUNIT_EXPECT_EQ(test, tcheck(nc, g4, T4_TH, U16_MAX, U16_MAX, TNL_RX),
			VNET_RX_BAD_HDR);
	KUNIT_EXPECT_EQ(test, tcheck(nc, g4, T4_TH, U16_MAX - 7, U16_MAX, TNL_RX),
			VNET_RX_BAD_HDR);
}

static struct kunit_case rx_hdr_cases[] = {
	KUNIT_CASE(rxhdr_allowed_from_features),
	KUNIT_CASE(rxhdr_plain_frames),
	KUNIT_CASE(rxhdr_flags),
	KUNIT_CASE(rxhdr_checksum_position),
	KUNIT_CASE(rxhdr_gso_types),
	KUNIT_CASE(rxhdr_gso_ecn),
	KUNIT_CASE(rxhdr_gso_size),
	KUNIT_CASE(rxhdr_frame_length),
	KUNIT_CASE(rxhdr_tnl_allowed_from_features),
	KUNIT_CASE(rxhdr_tnl_good),
	KUNIT_CASE(rxhdr_tnl_not_negotiated),
	KUNIT_CASE(rxhdr_tnl_types),
	KUNIT_CASE(rxhdr_tnl_offsets),
	{}
};

static struct kunit_suite rx_hdr_suite = {
	.name = "vnet_rx_hdr",
	.test_cases = rx_hdr_cases,
};

kunit_test_suites(&rx_buf_suite, &rx_hdr_suite);
