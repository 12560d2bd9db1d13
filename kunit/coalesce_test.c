// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: validation of coalescing settings (ethtool -C, module options). */
#include <kunit/test.h>
#include <linux/errno.h>
#include "policy/coalesce.h"

static int check(u32 frames, u32 usecs, u32 irq_frames, u32 irq_usecs)
{
	struct vnet_tx_coal c = {
		.frames = frames, .usecs = usecs,
		.irq_frames = irq_frames, .irq_usecs = irq_usecs,
	};
	const char *why = NULL;
	int err = vnet_tx_coal_check(&c, 256, &why);

	/* Every refusal says why. */
	if (err && !why)
		return -EFAULT;
	return err;
}

static void coal_defaults_valid(struct kunit *test)
{
	struct vnet_tx_coal c;
	const char *why;

	vnet_tx_coal_default(&c);
	KUNIT_EXPECT_EQ(test, vnet_tx_coal_check(&c, 256, &why), 0);
	KUNIT_EXPECT_EQ(test, vnet_tx_coal_check(&c, 64, &why), 0);
}

/* frames > 1 with usecs 0 could hold a packet forever. */
static void coal_refuses_unbounded_hold(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, check(2, 0, 0, 1000), -EINVAL);
	KUNIT_EXPECT_EQ(test, check(32, 0, 0, 1000), -EINVAL);
	KUNIT_EXPECT_EQ(test, check(1, 0, 0, 1000), 0);
	KUNIT_EXPECT_EQ(test, check(0, 0, 0, 1000), 0);
	KUNIT_EXPECT_EQ(test, check(0, 50, 0, 1000), 0);
}

static void coal_bounds(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, check(256, 100, 0, 1000), 0);
	KUNIT_EXPECT_EQ(test, check(257, 100, 0, 1000), -EINVAL);
	KUNIT_EXPECT_EQ(test, check(32, VNET_TX_USECS_MAX, 0, 1000), 0);
	KUNIT_EXPECT_EQ(test, check(32, VNET_TX_USECS_MAX + 1, 0, 1000), -EINVAL);
	KUNIT_EXPECT_EQ(test, check(32, 100, 256, 1000), 0);
	KUNIT_EXPECT_EQ(test, check(32, 100, 257, 1000), -EINVAL);
	KUNIT_EXPECT_EQ(test, check(32, 100, 0, VNET_TX_IRQ_USECS_MAX), 0);
	KUNIT_EXPECT_EQ(test, check(32, 100, 0, VNET_TX_IRQ_USECS_MAX + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, check(32, 100, 0, 0), 0);
}

static void coal_irq_frames_auto(struct kunit *test)
{
	struct vnet_tx_coal c = { .irq_frames = 0 };

	KUNIT_EXPECT_EQ(test, vnet_tx_irq_frames(&c, 256), 128U);
	KUNIT_EXPECT_EQ(test, vnet_tx_irq_frames(&c, 1), 1U);
	c.irq_frames = 20;
	KUNIT_EXPECT_EQ(test, vnet_tx_irq_frames(&c, 256), 20U);
}

static void coal_rx_bounds(struct kunit *test)
{
	struct vnet_rx_coal c;
	const char *why;

	vnet_rx_coal_default(&c);
	KUNIT_EXPECT_EQ(test, vnet_rx_coal_check(&c, 256, &why), 0);
	c.usecs = VNET_RX_USECS_MAX + 1;
	KUNIT_EXPECT_EQ(test, vnet_rx_coal_check(&c, 256, &why), -EINVAL);
	c.usecs = 0;
	c.frames = 257;
	KUNIT_EXPECT_EQ(test, vnet_rx_coal_check(&c, 256, &why), -EINVAL);
	c.frames = 256;
	KUNIT_EXPECT_EQ(test, vnet_rx_coal_check(&c, 256, &why), 0);
	c.usecs_high = VNET_RX_USECS_MAX + 1;
	KUNIT_EXPECT_EQ(test, vnet_rx_coal_check(&c, 256, &why), -EINVAL);
	KUNIT_EXPECT_STREQ(test, why, "rx-usecs-high must be at most 10000");
	c.usecs_high = VNET_RX_USECS_MAX;
	KUNIT_EXPECT_EQ(test, vnet_rx_coal_check(&c, 256, &why), 0);
}

/* The default tx-frames follows the ring; a value a user set does not. */
static void coal_frames_follow_ring(struct kunit *test)
{
	struct vnet_tx_coal c;
	const char *why;

	vnet_tx_coal_default(&c);
	KUNIT_EXPECT_EQ(test, vnet_tx_frames(&c, 256), 64U);
	KUNIT_EXPECT_EQ(test, vnet_tx_frames(&c, 32), 32U);
	KUNIT_EXPECT_EQ(test, vnet_tx_coal_check(&c, 32, &why), 0);
	c.frames_auto = false;
	KUNIT_EXPECT_EQ(test, vnet_tx_frames(&c, 32), 64U);
	KUNIT_EXPECT_EQ(test, vnet_tx_coal_check(&c, 32, &why), -EINVAL);
}

/*
 * ethtool -C with what ethtool -c reported changes nothing: automatic
 * settings stay automatic (and a smaller ring is still accepted); other
 * numbers are the user's.
 */
static void coal_round_trip(struct kunit *test)
{
	struct vnet_tx_coal cur, req;
	const char *why;

	vnet_tx_coal_default(&cur);
	req = cur;
	req.frames = vnet_tx_frames(&cur, 256);		/* 64, as -c shows */
	req.irq_frames = vnet_tx_irq_frames(&cur, 256);	/* 128 */
	req.frames_auto = false;			/* as from ethtool */
	vnet_tx_coal_keep(&req, &cur, 256);
	KUNIT_EXPECT_TRUE(test, req.frames_auto);
	KUNIT_EXPECT_EQ(test, req.irq_frames, 0U);
	KUNIT_EXPECT_EQ(test, vnet_tx_coal_check(&req, 32, &why), 0);
	KUNIT_EXPECT_EQ(test, vnet_tx_frames(&req, 32), 32U);
	KUNIT_EXPECT_EQ(test, vnet_tx_irq_frames(&req, 32), 16U);

	/* on a 32-entry ring -c shows 32 and 16: still automatic */
	cur = req;
	req.frames = 32;
	req.irq_frames = 16;
	vnet_tx_coal_keep(&req, &cur, 32);
	KUNIT_EXPECT_TRUE(test, req.frames_auto);
	KUNIT_EXPECT_EQ(test, vnet_tx_frames(&req, 256), 64U);
	KUNIT_EXPECT_EQ(test, req.irq_frames, 0U);

	/* other numbers are kept as given and pin the ring size */
	req.frames = 48;
	req.irq_frames = 40;
	vnet_tx_coal_keep(&req, &cur, 256);
	KUNIT_EXPECT_FALSE(test, req.frames_auto);
	KUNIT_EXPECT_EQ(test, req.frames, 48U);
	KUNIT_EXPECT_EQ(test, req.irq_frames, 40U);
	KUNIT_EXPECT_EQ(test, vnet_tx_coal_check(&req, 32, &why), -EINVAL);
	/* ... and written back they stay */
	cur = req;
	vnet_tx_coal_keep(&req, &cur, 256);
	KUNIT_EXPECT_FALSE(test, req.frames_auto);
	KUNIT_EXPECT_EQ(test, req.frames, 48U);
	KUNIT_EXPECT_EQ(test, req.irq_frames, 40U);
	/* tx-frames-irq 0 is half the ring again */
	req.irq_frames = 0;
	vnet_tx_coal_keep(&req, &cur, 256);
	KUNIT_EXPECT_EQ(test, req.irq_frames, 0U);
}

static struct kunit_case coal_cases[] = {
	KUNIT_CASE(coal_defaults_valid),
	KUNIT_CASE(coal_refuses_unbounded_hold),
	KUNIT_CASE(coal_bounds),
	KUNIT_CASE(coal_irq_frames_auto),
	KUNIT_CASE(coal_rx_bounds),
	KUNIT_CASE(coal_frames_follow_ring),
	KUNIT_CASE(coal_round_trip),
	{}
};

static struct kunit_suite coal_suite = {
	.name = "vnet_coal",
	.test_cases = coal_cases,
};

kunit_test_suite(coal_suite);
