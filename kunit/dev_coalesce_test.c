// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: wire format of the device coalescing commands. */
#include <kunit/test.h>
#include "policy/coalesce.h"
#include "policy/dev_coalesce.h"

static void devcoal_global_layout(struct kunit *test)
{
	static const u8 want[8] = {
		0x20, 0x00, 0x00, 0x00,		/* 32 packets, little endian */
		0x10, 0x27, 0x00, 0x00,		/* 10000 us */
	};
	struct vnet_coal_wire w;

	KUNIT_EXPECT_EQ(test, sizeof(w), 8UL);
	vnet_coal_encode(&w, 32, 10000);
	KUNIT_EXPECT_EQ(test, memcmp(&w, want, sizeof(want)), 0);
}

static void devcoal_vq_layout(struct kunit *test)
{
	static const u8 want[12] = {
		0x05, 0x00,			/* vq 5 (transmitq 2) */
		0x00, 0x00,			/* reserved */
		0x01, 0x00, 0x01, 0x00,		/* 65537 packets */
		0x64, 0x00, 0x00, 0x00,		/* 100 us */
	};
	struct vnet_coal_vq_wire w;

	KUNIT_EXPECT_EQ(test, sizeof(w), 12UL);
	memset(&w, 0xff, sizeof(w));
	vnet_coal_encode_vq(&w, 5, 65537, 100);
	KUNIT_EXPECT_EQ(test, memcmp(&w, want, sizeof(want)), 0);
}

static void devcoal_command_numbers(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, VNET_CTRL_NOTF_COAL, 6);
	KUNIT_EXPECT_EQ(test, VNET_CTRL_NOTF_COAL_TX_SET, 0);
	KUNIT_EXPECT_EQ(test, VNET_CTRL_NOTF_COAL_RX_SET, 1);
	KUNIT_EXPECT_EQ(test, VNET_CTRL_NOTF_COAL_VQ_SET, 2);
}

/* Adaptive RX stays in the guest; the device interrupts at once. */
static void devcoal_split_adaptive(struct kunit *test)
{
	struct vnet_rx_coal rc = { .usecs = 100, .frames = 32, .adaptive = true };
	struct vnet_dev_coal_vq rx = { 7, 7 }, tx = { 7, 7 };

	KUNIT_EXPECT_TRUE(test, vnet_dev_coal_split(&rc, &rx, &tx));
	KUNIT_EXPECT_EQ(test, rx.max_packets, 0U);
	KUNIT_EXPECT_EQ(test, rx.max_usecs, 0U);
	KUNIT_EXPECT_EQ(test, tx.max_packets, 0U);
	KUNIT_EXPECT_EQ(test, tx.max_usecs, 0U);
}

/* Fixed RX goes to the device, and the guest stops deferring. */
static void devcoal_split_fixed(struct kunit *test)
{
	struct vnet_rx_coal rc = { .usecs = 250, .frames = 16 };
	struct vnet_dev_coal_vq rx, tx = { 7, 7 };

	KUNIT_EXPECT_FALSE(test, vnet_dev_coal_split(&rc, &rx, &tx));
	KUNIT_EXPECT_EQ(test, rx.max_packets, 16U);
	KUNIT_EXPECT_EQ(test, rx.max_usecs, 250U);
	KUNIT_EXPECT_EQ(test, tx.max_usecs, 0U);
}

static struct kunit_case dev_coal_cases[] = {
	KUNIT_CASE(devcoal_split_adaptive),
	KUNIT_CASE(devcoal_split_fixed),
	KUNIT_CASE(devcoal_global_layout),
	KUNIT_CASE(devcoal_vq_layout),
	KUNIT_CASE(devcoal_command_numbers),
	{}
};

static struct kunit_suite dev_coal_suite = {
	.name = "vnet_dev_coal",
	.test_cases = dev_coal_cases,
};

kunit_test_suite(dev_coal_suite);
