// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: RSS and hash report decisions and command encoding. */
#include <kunit/test.h>
#include <uapi/linux/ethtool.h>
#include "policy/rss.h"

#define ALL_EX		(VIRTIO_NET_RSS_HASH_TYPE_IP_EX |	\
			 VIRTIO_NET_RSS_HASH_TYPE_TCP_EX |	\
			 VIRTIO_NET_RSS_HASH_TYPE_UDP_EX)
#define IP4		VIRTIO_NET_RSS_HASH_TYPE_IPv4
#define TCP4		VIRTIO_NET_RSS_HASH_TYPE_TCPv4
#define UDP4		VIRTIO_NET_RSS_HASH_TYPE_UDPv4
#define IP6		VIRTIO_NET_RSS_HASH_TYPE_IPv6
#define TCP6		VIRTIO_NET_RSS_HASH_TYPE_TCPv6
#define UDP6		VIRTIO_NET_RSS_HASH_TYPE_UDPv6
#define SD		(RXH_IP_SRC | RXH_IP_DST)
#define SDFN		(SD | RXH_L4_B_0_1 | RXH_L4_B_2_3)

static void rss_limits_qemu(struct kunit *test)
{
	struct vnet_rss_limits l;
	const char *why = NULL;

	/* QEMU 7.2 rss=on: 128 entries, 40-byte key, all nine types */
	KUNIT_ASSERT_EQ(test, vnet_rss_limits(true, 128, 40,
					      VNET_RSS_TYPES_KNOWN | ALL_EX,
					      &l, &why), 0);
	KUNIT_EXPECT_EQ(test, l.table_len, 128);
	KUNIT_EXPECT_EQ(test, l.key_len, 40);
	KUNIT_EXPECT_EQ(test, l.types, (u32)VNET_RSS_TYPES_KNOWN);
}

static void rss_limits_odd_devices(struct kunit *test)
{
	struct vnet_rss_limits l;
	const char *why = NULL;

	KUNIT_ASSERT_EQ(test, vnet_rss_limits(true, 100, 40, IP4, &l,
					      &why), 0);
	KUNIT_EXPECT_EQ(test, l.table_len, 64);
	KUNIT_ASSERT_EQ(test, vnet_rss_limits(true, 0xffff, 52, IP4, &l,
					      &why), 0);
	KUNIT_EXPECT_EQ(test, l.table_len, VNET_RSS_TABLE_MAX);
	KUNIT_EXPECT_EQ(test, l.key_len, 52);
	/* hash report only: no table */
	KUNIT_ASSERT_EQ(test, vnet_rss_limits(false, 128, 40, TCP6, &l,
					      &why), 0);
	KUNIT_EXPECT_EQ(test, l.table_len, 0);

	KUNIT_EXPECT_EQ(test, vnet_rss_limits(true, 0, 40, IP4, &l, &why),
			-EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, why);
	KUNIT_EXPECT_EQ(test, vnet_rss_limits(true, 128, 0, IP4, &l, &why),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vnet_rss_limits(true, 128, 40, ALL_EX, &l, &why),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vnet_rss_limits(true, 128, 40, 0, &l, &why),
			-EINVAL);
}

static void rss_default_table(struct kunit *test)
{
	u16 t[8];
	unsigned int i;
	static const u16 want[8] = { 0, 1, 2, 0, 1, 2, 0, 1 };

	vnet_rss_fill_table(t, 8, 3);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, t[i], want[i]);
	vnet_rss_fill_table(t, 8, 0);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, t[i], 0);
}

static void rss_table_check(struct kunit *test)
{
	u32 good[4] = { 0, 1, 1, 0 };
	u32 bad[4] = { 0, 1, 2, 0 };

	KUNIT_EXPECT_TRUE(test, vnet_rss_table_ok(good, 4, 2));
	KUNIT_EXPECT_FALSE(test, vnet_rss_table_ok(bad, 4, 2));
	KUNIT_EXPECT_TRUE(test, vnet_rss_table_ok(bad, 4, 3));
	KUNIT_EXPECT_FALSE(test, vnet_rss_table_ok(good, 4, 1));
}

static void rss_flow_fields_get(struct kunit *test)
{
	u32 all = VNET_RSS_TYPES_KNOWN;

	KUNIT_EXPECT_EQ(test, vnet_rss_flow_fields(all, TCP_V4_FLOW), (u64)SDFN);
	KUNIT_EXPECT_EQ(test, vnet_rss_flow_fields(all, UDP_V6_FLOW), (u64)SDFN);
	KUNIT_EXPECT_EQ(test, vnet_rss_flow_fields(all, IPV4_FLOW), (u64)SD);
	/* the IP type covers TCP when TCP's own type is off */
	KUNIT_EXPECT_EQ(test, vnet_rss_flow_fields(IP4, TCP_V4_FLOW),
			(u64)SD);
	KUNIT_EXPECT_EQ(test, vnet_rss_flow_fields(IP4, SCTP_V4_FLOW),
			(u64)SD);
	KUNIT_EXPECT_EQ(test, vnet_rss_flow_fields(IP4, UDP_V6_FLOW), 0ULL);
	KUNIT_EXPECT_EQ(test, vnet_rss_flow_fields(0, TCP_V4_FLOW), 0ULL);
	KUNIT_EXPECT_EQ(test, vnet_rss_flow_fields(all, ETHER_FLOW), 0ULL);
	/* the ethtool modifier bits do not change the flow */
	KUNIT_EXPECT_EQ(test, vnet_rss_flow_fields(all, TCP_V6_FLOW | FLOW_RSS),
			(u64)SDFN);
}

static void rss_flow_fields_set(struct kunit *test)
{
	u32 all = VNET_RSS_TYPES_KNOWN, out = 0;

	KUNIT_ASSERT_EQ(test, vnet_rss_set_flow_fields(all, all, TCP_V4_FLOW,
						       SD, &out), 0);
	KUNIT_EXPECT_EQ(test, out, all & ~TCP4);
	KUNIT_ASSERT_EQ(test, vnet_rss_set_flow_fields(IP4, all,
						       UDP_V4_FLOW, SDFN, &out),
			0);
	KUNIT_EXPECT_EQ(test, out, (u32)(IP4 | UDP4));
	/* addresses on for TCP turn the shared IPv4 type on */
	KUNIT_ASSERT_EQ(test, vnet_rss_set_flow_fields(0, all, TCP_V4_FLOW, SD,
						       &out), 0);
	KUNIT_EXPECT_EQ(test, out, (u32)IP4);
	/* nothing for TCP: neither its type nor the IPv4 one */
	KUNIT_ASSERT_EQ(test, vnet_rss_set_flow_fields(all, all, TCP_V4_FLOW, 0,
						       &out), 0);
	KUNIT_EXPECT_EQ(test, out, all & ~(IP4 | TCP4));
	KUNIT_ASSERT_EQ(test, vnet_rss_set_flow_fields(all, all, IPV6_FLOW, 0,
						       &out), 0);
	KUNIT_EXPECT_EQ(test, out, all & ~IP6);

	/* impossible requests leave @out alone */
	out = 7;
	KUNIT_EXPECT_EQ(test, vnet_rss_set_flow_fields(all, all, IPV4_FLOW,
						       SDFN, &out), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnet_rss_set_flow_fields(all, all, TCP_V4_FLOW,
						       RXH_IP_SRC, &out),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vnet_rss_set_flow_fields(all, all, TCP_V4_FLOW,
						       SD | RXH_VLAN, &out),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vnet_rss_set_flow_fields(all, all, SCTP_V4_FLOW,
						       SD, &out), -EOPNOTSUPP);
	/* the device cannot hash UDP over IPv6 by ports */
	KUNIT_EXPECT_EQ(test, vnet_rss_set_flow_fields(IP6, IP6,
						       UDP_V6_FLOW, SDFN, &out),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, out, 7U);
}

static void rss_types_programmed(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vnet_rss_types_to_program(true, false, 5U), 5U);
	KUNIT_EXPECT_EQ(test, vnet_rss_types_to_program(true, true, 5U), 5U);
	KUNIT_EXPECT_EQ(test, vnet_rss_types_to_program(false, true, 5U), 5U);
	KUNIT_EXPECT_EQ(test, vnet_rss_types_to_program(false, false, 5U), 0U);
}

static void rss_encode_rss_config(struct kunit *test)
{
	static const u16 table[4] = { 0, 1, 0x0102, 1 };
	static const u8 key[3] = { 0xaa, 0xbb, 0xcc };
	static const u8 want[] = {
		0x3f, 0x00, 0x00, 0x00,		/* hash_types */
		0x03, 0x00,			/* indirection_table_mask */
		0x00, 0x00,			/* unclassified_queue */
		0x00, 0x00, 0x01, 0x00, 0x02, 0x01, 0x01, 0x00,
		0x02, 0x00,			/* max_tx_vq */
		0x03, 0xaa, 0xbb, 0xcc,		/* key */
	};
	struct vnet_rss_cmd c = {
		.types = 0x3f, .table = table, .table_len = 4,
		.unclassified = 0, .max_tx_vq = 2, .key = key, .key_len = 3,
	};
	u8 buf[64];

	memset(buf, 0x55, sizeof(buf));
	KUNIT_ASSERT_EQ(test, vnet_rss_cmd_size(4, 3), sizeof(want));
	KUNIT_ASSERT_EQ(test, vnet_rss_encode(buf, &c), sizeof(want));
	KUNIT_EXPECT_EQ(test, memcmp(buf, want, sizeof(want)), 0);
	KUNIT_EXPECT_EQ(test, buf[sizeof(want)], 0x55);
}

static void rss_encode_hash_config(struct kunit *test)
{
	static const u8 key[2] = { 1, 2 };
	static const u8 want[] = {
		0x12, 0x00, 0x00, 0x00,
		0, 0, 0, 0, 0, 0, 0, 0,		/* reserved */
		0x02, 0x01, 0x02,
	};
	struct vnet_rss_cmd c = {
		.types = 0x12, .max_tx_vq = 9, .unclassified = 3,
		.key = key, .key_len = 2,
	};
	u8 buf[32];

	memset(buf, 0x55, sizeof(buf));
	KUNIT_ASSERT_EQ(test, vnet_rss_cmd_size(0, 2), sizeof(want));
	KUNIT_ASSERT_EQ(test, vnet_rss_encode(buf, &c), sizeof(want));
	KUNIT_EXPECT_EQ(test, memcmp(buf, want, sizeof(want)), 0);
	/* the hash config layout is the RSS one with a one-entry table */
	KUNIT_EXPECT_EQ(test, vnet_rss_cmd_size(0, 40), vnet_rss_cmd_size(1, 40));
}

static void rss_report_levels(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vnet_rss_report_level(VIRTIO_NET_HASH_REPORT_TCPv4),
			PKT_HASH_TYPE_L4);
	KUNIT_EXPECT_EQ(test, vnet_rss_report_level(VIRTIO_NET_HASH_REPORT_UDPv6_EX),
			PKT_HASH_TYPE_L4);
	KUNIT_EXPECT_EQ(test, vnet_rss_report_level(VIRTIO_NET_HASH_REPORT_IPv6),
			PKT_HASH_TYPE_L3);
	KUNIT_EXPECT_EQ(test, vnet_rss_report_level(VIRTIO_NET_HASH_REPORT_NONE),
			PKT_HASH_TYPE_NONE);
	KUNIT_EXPECT_EQ(test, vnet_rss_report_level(10), PKT_HASH_TYPE_NONE);
	KUNIT_EXPECT_EQ(test, vnet_rss_report_level(0xffff), PKT_HASH_TYPE_NONE);
}

/* The XDP types are fixed numbers (enum xdp_rss_hash_type): spelled out. */
static void rss_report_xdp_types(struct kunit *test)
{
	static const struct {
		u16 report;
		u32 type;
	} want[] = {
		{ VIRTIO_NET_HASH_REPORT_NONE, 0 },
		{ VIRTIO_NET_HASH_REPORT_IPv4, 0x01 },
		{ VIRTIO_NET_HASH_REPORT_TCPv4, 0x19 },
		{ VIRTIO_NET_HASH_REPORT_UDPv4, 0x29 },
		{ VIRTIO_NET_HASH_REPORT_IPv6, 0x02 },
		{ VIRTIO_NET_HASH_REPORT_TCPv6, 0x1a },
		{ VIRTIO_NET_HASH_REPORT_UDPv6, 0x2a },
		{ VIRTIO_NET_HASH_REPORT_IPv6_EX, 0x06 },
		{ VIRTIO_NET_HASH_REPORT_TCPv6_EX, 0x1e },
		{ VIRTIO_NET_HASH_REPORT_UDPv6_EX, 0x2e },
		{ 10, 0 },
		{ 0xffff, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(want); i++)
		KUNIT_EXPECT_EQ_MSG(test, vnet_rss_report_xdp_type(want[i].report),
				    want[i].type, "report %u", want[i].report);
}

static struct kunit_case rss_cases[] = {
	KUNIT_CASE(rss_limits_qemu),
	KUNIT_CASE(rss_limits_odd_devices),
	KUNIT_CASE(rss_default_table),
	KUNIT_CASE(rss_table_check),
	KUNIT_CASE(rss_flow_fields_get),
	KUNIT_CASE(rss_flow_fields_set),
	KUNIT_CASE(rss_types_programmed),
	KUNIT_CASE(rss_encode_rss_config),
	KUNIT_CASE(rss_encode_hash_config),
	KUNIT_CASE(rss_report_levels),
	KUNIT_CASE(rss_report_xdp_types),
	{}
};

static struct kunit_suite rss_suite = {
	.name = "vnet_rss",
	.test_cases = rss_cases,
};

kunit_test_suite(rss_suite);
