// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: device statistics requests and the parsing of replies. */
#include <kunit/test.h>
#include <linux/string.h>
#include "policy/dev_stats.h"

#define BIT_OF(g)	VNET_DS_BIT(VNET_DS_##g)

/* Reply builder: a record of @type for @vq, @size bytes in all, counters n + i. */
static size_t put_rec(u8 *buf, size_t off, u8 type, u16 vq, u16 size, u64 n)
{
	struct vnet_ds_hdr_wire h = {
		.type = type,
		.vq = cpu_to_le16(vq),
		.size = cpu_to_le16(size),
	};
	unsigned int i;

	memcpy(buf + off, &h, sizeof(h));
	for (i = 0; i + sizeof(h) + 8 <= size; i += 8) {
		__le64 v = cpu_to_le64(n + i / 8);

		memcpy(buf + off + sizeof(h) + i, &v, 8);
	}
	return off + size;
}

/* Record size of a group with @n counters. */
#define REC(n)	(8 + 8 * (n))

static void ds_wire_layout(struct kunit *test)
{
	static const u8 want[16] = {
		0x05, 0x00,			/* vq 5: transmitq 2 */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x05, 0x00,		/* groups 16 and 18: */
		0x00, 0x00, 0x00, 0x00,		/* TX_BASIC, TX_GSO */
	};
	struct vnet_ds_query q = {
		.caps = BIT_OF(TX_BASIC) | BIT_OF(TX_GSO), .first_pair = 2,
		.pairs = 1,
	};
	struct vnet_ds_req_wire req[2];

	KUNIT_EXPECT_EQ(test, VNET_F_DEVICE_STATS, 50);
	KUNIT_EXPECT_EQ(test, VNET_CTRL_STATS, 8);
	KUNIT_EXPECT_EQ(test, VNET_CTRL_STATS_QUERY, 0);
	KUNIT_EXPECT_EQ(test, VNET_CTRL_STATS_GET, 1);
	KUNIT_EXPECT_EQ(test, sizeof(struct vnet_ds_req_wire), 16UL);
	KUNIT_EXPECT_EQ(test, sizeof(struct vnet_ds_hdr_wire), 8UL);
	KUNIT_EXPECT_EQ(test, sizeof(struct vnet_ds_caps_wire), 8UL);
	KUNIT_EXPECT_EQ(test, VNET_DS_BIT(VNET_DS_CTRL), 1ULL << 32);

	/* Only TX groups: the receiveq is not named at all. */
	memset(req, 0xff, sizeof(req));
	KUNIT_ASSERT_EQ(test, vnet_ds_encode(&q, req), 1U);
	KUNIT_EXPECT_EQ(test, memcmp(&req[0], want, sizeof(want)), 0);
}

static void ds_caps_drop_unknown_groups(struct kunit *test)
{
	struct vnet_ds_caps_wire w = {
		.groups = cpu_to_le64(BIT_OF(RX_BASIC) | BIT_OF(CTRL) |
				      (1ULL << 7) | (1ULL << 40)),
	};

	KUNIT_EXPECT_EQ(test, vnet_ds_caps_decode(&w),
			BIT_OF(RX_BASIC) | BIT_OF(CTRL));
}

/* Pairs 1..2 and the control queue of a 4-pair device (vq 8). */
static void ds_encode_queue_set(struct kunit *test)
{
	struct vnet_ds_query q = {
		.caps = BIT_OF(RX_BASIC) | BIT_OF(RX_CSUM) | BIT_OF(TX_GSO) |
			BIT_OF(CTRL),
		.first_pair = 1, .pairs = 2, .ctrl = true, .ctrl_vq = 8,
	};
	static const u16 vqs[] = { 2, 3, 4, 5, 8 };
	struct vnet_ds_req_wire req[5];
	unsigned int i, n;

	KUNIT_ASSERT_EQ(test, vnet_ds_req_entries(&q), 5U);
	n = vnet_ds_encode(&q, req);
	KUNIT_ASSERT_EQ(test, n, 5U);
	for (i = 0; i < n; i++) {
		u64 want = vqs[i] == 8 ? BIT_OF(CTRL) :
			   vqs[i] & 1 ? BIT_OF(TX_GSO) :
			   BIT_OF(RX_BASIC) | BIT_OF(RX_CSUM);

		KUNIT_EXPECT_EQ(test, le16_to_cpu(req[i].vq), vqs[i]);
		KUNIT_EXPECT_EQ(test, le64_to_cpu(req[i].groups), want);
		KUNIT_EXPECT_EQ(test, req[i].reserved[0] | req[i].reserved[1] |
				req[i].reserved[2], 0);
	}
	/* 2 x (RX basic 6 + csum 4 counters, TX gso 6) + control 2 */
	KUNIT_EXPECT_EQ(test, vnet_ds_reply_len(&q),
			(size_t)(2 * (REC(6) + REC(4) + REC(6)) + REC(2)));

	/* Without the control queue, or without its group: no entry. */
	q.ctrl = false;
	KUNIT_EXPECT_EQ(test, vnet_ds_encode(&q, req), 4U);
	q.ctrl = true;
	q.caps &= ~BIT_OF(CTRL);
	KUNIT_EXPECT_EQ(test, vnet_ds_encode(&q, req), 4U);
	KUNIT_EXPECT_EQ(test, vnet_ds_reply_len(&q),
			(size_t)(2 * (REC(6) + REC(4) + REC(6))));
	q.caps = 0;
	KUNIT_EXPECT_EQ(test, vnet_ds_encode(&q, req), 0U);
	KUNIT_EXPECT_EQ(test, vnet_ds_reply_len(&q), (size_t)0);
}

#define CAPS_ALL	(VNET_DS_RX_GROUPS | VNET_DS_TX_GROUPS | BIT_OF(CTRL))

static void ds_parse_well_formed(struct kunit *test)
{
	struct vnet_ds_query q = {
		.caps = CAPS_ALL, .first_pair = 0, .pairs = 2, .ctrl = true,
		.ctrl_vq = 4,
	};
	struct vnet_ds_ctrs out[5] = {};
	struct vnet_ds_parse_result res;
	u8 buf[320];
	size_t len = 0;

	len = put_rec(buf, len, VNET_DS_RX_BASIC, 2, REC(6), 100);
	len = put_rec(buf, len, VNET_DS_RX_GSO, 2, REC(4), 200);
	len = put_rec(buf, len, VNET_DS_TX_BASIC, 1, REC(6), 300);
	len = put_rec(buf, len, VNET_DS_TX_GSO, 3, REC(6), 400);
	len = put_rec(buf, len, VNET_DS_TX_SPEED, 3, REC(2), 500);
	len = put_rec(buf, len, VNET_DS_CTRL, 4, REC(2), 600);
	KUNIT_ASSERT_LE(test, len, sizeof(buf));

	vnet_ds_parse(&q, buf, len, out, &res);
	KUNIT_EXPECT_TRUE(test, vnet_ds_parse_ok(&res));
	KUNIT_EXPECT_EQ(test, res.records, 6U);
	/* receiveq 1 (slot 2): basic from its first counter on, then gso */
	KUNIT_EXPECT_EQ(test, out[2].v[VNET_DS_RX_NOTIFICATIONS], 100ULL);
	KUNIT_EXPECT_EQ(test, out[2].v[VNET_DS_RX_PACKETS], 101ULL);
	KUNIT_EXPECT_EQ(test, out[2].v[VNET_DS_RX_DROP_OVERRUNS], 105ULL);
	KUNIT_EXPECT_EQ(test, out[2].v[VNET_DS_RX_CSUM_VALID], 0ULL);
	KUNIT_EXPECT_EQ(test, out[2].v[VNET_DS_RX_GSO_PACKETS], 200ULL);
	KUNIT_EXPECT_EQ(test, out[2].v[VNET_DS_RX_GSO_BYTES_COALESCED], 203ULL);
	/* transmitq 0 (slot 1), transmitq 1 (slot 3) */
	KUNIT_EXPECT_EQ(test, out[1].v[VNET_DS_TX_BYTES], 302ULL);
	KUNIT_EXPECT_EQ(test, out[1].v[VNET_DS_TX_DROP_MALFORMED], 305ULL);
	KUNIT_EXPECT_EQ(test, out[3].v[VNET_DS_TX_GSO_PACKETS], 400ULL);
	KUNIT_EXPECT_EQ(test, out[3].v[VNET_DS_TX_GSO_BYTES_NOSEG], 405ULL);
	KUNIT_EXPECT_EQ(test, out[3].v[VNET_DS_TX_RATELIMIT_BYTES], 501ULL);
	KUNIT_EXPECT_EQ(test, out[4].v[VNET_DS_CTRL_COMMANDS], 600ULL);
	KUNIT_EXPECT_EQ(test, out[4].v[VNET_DS_CTRL_OK], 601ULL);
	/* receiveq 0 had no record: untouched */
	KUNIT_EXPECT_EQ(test, out[0].v[VNET_DS_RX_PACKETS], 0ULL);
}

/* Pairs 2..3 of a bigger device: slots are relative to the first pair. */
static void ds_parse_offset_pairs(struct kunit *test)
{
	struct vnet_ds_query q = {
		.caps = BIT_OF(RX_BASIC) | BIT_OF(TX_BASIC), .first_pair = 2,
		.pairs = 2,
	};
	struct vnet_ds_ctrs out[5] = {};
	struct vnet_ds_parse_result res;
	u8 buf[256];
	size_t len = 0;

	len = put_rec(buf, len, VNET_DS_RX_BASIC, 4, REC(6), 10);
	len = put_rec(buf, len, VNET_DS_TX_BASIC, 7, REC(6), 20);
	vnet_ds_parse(&q, buf, len, out, &res);
	KUNIT_EXPECT_TRUE(test, vnet_ds_parse_ok(&res));
	KUNIT_EXPECT_EQ(test, out[0].v[VNET_DS_RX_NOTIFICATIONS], 10ULL);
	KUNIT_EXPECT_EQ(test, out[3].v[VNET_DS_TX_NOTIFICATIONS], 20ULL);
}

/* A group we do not know is stepped over by its size; the rest counts. */
static void ds_parse_unknown_type(struct kunit *test)
{
	struct vnet_ds_query q = { .caps = CAPS_ALL, .pairs = 1 };
	struct vnet_ds_ctrs out[3] = {};
	struct vnet_ds_parse_result res;
	u8 buf[256];
	size_t len = 0;

	len = put_rec(buf, len, 9, 0, REC(3), 1);
	len = put_rec(buf, len, 255, 1, REC(1), 1);
	len = put_rec(buf, len, VNET_DS_RX_BASIC, 0, REC(6), 70);
	vnet_ds_parse(&q, buf, len, out, &res);
	KUNIT_EXPECT_FALSE(test, vnet_ds_parse_ok(&res));
	KUNIT_EXPECT_EQ(test, res.bad_type, 2U);
	KUNIT_EXPECT_EQ(test, res.records, 1U);
	KUNIT_EXPECT_FALSE(test, res.truncated);
	KUNIT_EXPECT_EQ(test, out[0].v[VNET_DS_RX_NOTIFICATIONS], 70ULL);
}

/* Known groups on the wrong queue, or not asked for: skipped. */
static void ds_parse_unrequested_type(struct kunit *test)
{
	struct vnet_ds_query q = {
		.caps = BIT_OF(RX_BASIC) | BIT_OF(TX_BASIC), .pairs = 1,
		.ctrl = true, .ctrl_vq = 2,
	};
	struct vnet_ds_ctrs out[3] = {};
	struct vnet_ds_parse_result res;
	u8 buf[256];
	size_t len = 0;

	len = put_rec(buf, len, VNET_DS_TX_BASIC, 0, REC(6), 1);   /* on RX */
	len = put_rec(buf, len, VNET_DS_RX_CSUM, 0, REC(4), 1);    /* not asked */
	len = put_rec(buf, len, VNET_DS_CTRL, 2, REC(2), 1);       /* not asked */
	len = put_rec(buf, len, VNET_DS_RX_BASIC, 2, REC(6), 1);   /* on ctrl */
	vnet_ds_parse(&q, buf, len, out, &res);
	KUNIT_EXPECT_EQ(test, res.bad_type, 4U);
	KUNIT_EXPECT_EQ(test, res.records, 0U);
	KUNIT_EXPECT_EQ(test, out[0].v[VNET_DS_RX_NOTIFICATIONS], 0ULL);
	KUNIT_EXPECT_EQ(test, out[1].v[VNET_DS_TX_NOTIFICATIONS], 0ULL);
	KUNIT_EXPECT_EQ(test, out[2].v[VNET_DS_CTRL_COMMANDS], 0ULL);
}

/* A known group of the wrong size (longer or shorter) is skipped whole. */
static void ds_parse_size_mismatch(struct kunit *test)
{
	struct vnet_ds_query q = { .caps = CAPS_ALL, .pairs = 1 };
	struct vnet_ds_ctrs out[3] = {};
	struct vnet_ds_parse_result res;
	u8 buf[256];
	size_t len = 0;

	len = put_rec(buf, len, VNET_DS_RX_BASIC, 0, REC(7), 1);
	len = put_rec(buf, len, VNET_DS_TX_GSO, 1, REC(5), 1);
	len = put_rec(buf, len, VNET_DS_RX_CSUM, 0, REC(4) + 3, 1);
	len = put_rec(buf, len, VNET_DS_TX_BASIC, 1, REC(6), 40);
	vnet_ds_parse(&q, buf, len, out, &res);
	KUNIT_EXPECT_EQ(test, res.bad_size, 3U);
	KUNIT_EXPECT_EQ(test, res.records, 1U);
	KUNIT_EXPECT_FALSE(test, res.truncated);
	KUNIT_EXPECT_EQ(test, out[0].v[VNET_DS_RX_NOTIFICATIONS], 0ULL);
	KUNIT_EXPECT_EQ(test, out[0].v[VNET_DS_RX_CSUM_VALID], 0ULL);
	KUNIT_EXPECT_EQ(test, out[1].v[VNET_DS_TX_GSO_PACKETS], 0ULL);
	KUNIT_EXPECT_EQ(test, out[1].v[VNET_DS_TX_NOTIFICATIONS], 40ULL);
}

/* Queues outside the query, the control queue when not asked about. */
static void ds_parse_queue_out_of_range(struct kunit *test)
{
	struct vnet_ds_query q = {
		.caps = CAPS_ALL, .first_pair = 1, .pairs = 1, .ctrl_vq = 8,
	};
	struct vnet_ds_ctrs out[3] = {};
	struct vnet_ds_parse_result res;
	u8 buf[256];
	size_t len = 0;

	len = put_rec(buf, len, VNET_DS_RX_BASIC, 0, REC(6), 1);
	len = put_rec(buf, len, VNET_DS_TX_BASIC, 5, REC(6), 1);
	len = put_rec(buf, len, VNET_DS_RX_BASIC, 0xffff, REC(6), 1);
	len = put_rec(buf, len, VNET_DS_CTRL, 8, REC(2), 1);
	len = put_rec(buf, len, VNET_DS_TX_BASIC, 3, REC(6), 33);
	vnet_ds_parse(&q, buf, len, out, &res);
	KUNIT_EXPECT_EQ(test, res.bad_queue, 4U);
	KUNIT_EXPECT_EQ(test, res.records, 1U);
	KUNIT_EXPECT_EQ(test, out[0].v[VNET_DS_RX_NOTIFICATIONS], 0ULL);
	KUNIT_EXPECT_EQ(test, out[1].v[VNET_DS_TX_NOTIFICATIONS], 33ULL);
	KUNIT_EXPECT_EQ(test, out[2].v[VNET_DS_CTRL_COMMANDS], 0ULL);
}

/*
 * A reply cut inside a record: the records before it count, the cut one
 * is not read (its bytes past the end are poison that must not show).
 */
static void ds_parse_truncated(struct kunit *test)
{
	struct vnet_ds_query q = { .caps = CAPS_ALL, .pairs = 1 };
	struct vnet_ds_ctrs out[3] = {};
	struct vnet_ds_parse_result res;
	size_t len = 0, cut;
	u8 buf[256];

	len = put_rec(buf, len, VNET_DS_RX_BASIC, 0, REC(6), 5);
	cut = len;
	len = put_rec(buf, len, VNET_DS_TX_BASIC, 1, REC(6), 9);

	/* Inside the counters of the second record. */
	vnet_ds_parse(&q, buf, len - 8, out, &res);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	KUNIT_EXPECT_EQ(test, res.records, 1U);
	KUNIT_EXPECT_EQ(test, out[0].v[VNET_DS_RX_NOTIFICATIONS], 5ULL);
	KUNIT_EXPECT_EQ(test, out[1].v[VNET_DS_TX_NOTIFICATIONS], 0ULL);

	/* Inside its header. */
	vnet_ds_parse(&q, buf, cut + 5, out, &res);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	KUNIT_EXPECT_EQ(test, res.records, 1U);
	KUNIT_EXPECT_EQ(test, out[1].v[VNET_DS_TX_NOTIFICATIONS], 0ULL);

	/* Nothing at all is fine: no records, nothing wrong. */
	vnet_ds_parse(&q, buf, 0, out, &res);
	KUNIT_EXPECT_TRUE(test, vnet_ds_parse_ok(&res));
	KUNIT_EXPECT_EQ(test, res.records, 0U);
}

/* Sizes that cannot step forward (0, below a header) end the parse. */
static void ds_parse_bad_record_size(struct kunit *test)
{
	struct vnet_ds_query q = { .caps = CAPS_ALL, .pairs = 1 };
	struct vnet_ds_ctrs out[3] = {};
	struct vnet_ds_parse_result res;
	static const u16 sizes[] = { 0, 1, 7 };
	unsigned int i;
	u8 buf[128];

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		memset(buf, 0, sizeof(buf));
		put_rec(buf, 0, VNET_DS_RX_BASIC, 0, REC(6), 1);
		put_rec(buf, REC(6), VNET_DS_TX_BASIC, 1, REC(6), 1);
		/* the second record's size field, little endian */
		buf[REC(6) + 6] = sizes[i];
		buf[REC(6) + 7] = 0;
		vnet_ds_parse(&q, buf, 2 * REC(6), out, &res);
		KUNIT_EXPECT_TRUE(test, res.truncated);
		KUNIT_EXPECT_EQ(test, res.records, 1U);
	}
	/* A size beyond the reply, one record long. */
	put_rec(buf, 0, VNET_DS_RX_BASIC, 0, REC(6), 1);
	buf[6] = 0xf8;
	buf[7] = 0xff;
	vnet_ds_parse(&q, buf, REC(6), out, &res);
	KUNIT_EXPECT_TRUE(test, res.truncated);
	KUNIT_EXPECT_EQ(test, res.records, 0U);
}

static struct kunit_case vnet_dev_stats_cases[] = {
	KUNIT_CASE(ds_wire_layout),
	KUNIT_CASE(ds_caps_drop_unknown_groups),
	KUNIT_CASE(ds_encode_queue_set),
	KUNIT_CASE(ds_parse_well_formed),
	KUNIT_CASE(ds_parse_offset_pairs),
	KUNIT_CASE(ds_parse_unknown_type),
	KUNIT_CASE(ds_parse_unrequested_type),
	KUNIT_CASE(ds_parse_size_mismatch),
	KUNIT_CASE(ds_parse_queue_out_of_range),
	KUNIT_CASE(ds_parse_truncated),
	KUNIT_CASE(ds_parse_bad_record_size),
	{}
};

static struct kunit_suite vnet_dev_stats_suite = {
	.name = "vnet_dev_stats",
	.test_cases = vnet_dev_stats_cases,
};

kunit_test_suite(vnet_dev_stats_suite);
