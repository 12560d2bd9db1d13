// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: TX reclaim policy. */
#include <kunit/test.h>
#include "reclaim_policy.h"

static void reclaim_every_xmit(struct kunit *test)
{
	struct vnet_reclaim_in in = { .num_free = 200, .ring_size = 256 };
	struct vnet_reclaim_out out;

	vnet_reclaim_on_xmit(&in, &out);
	KUNIT_EXPECT_TRUE(test, out.reclaim);
}

/* Completion interrupts are asked for at the end of a burst, with NAPI. */
static void reclaim_irq_at_batch_end(struct kunit *test)
{
	struct vnet_reclaim_in in = { .num_free = 10, .ring_size = 256 };
	struct vnet_reclaim_out out;

	in.use_napi = true;
	in.batch_end = false;
	vnet_reclaim_on_xmit(&in, &out);
	KUNIT_EXPECT_FALSE(test, out.arm_irq);

	in.batch_end = true;
	vnet_reclaim_on_xmit(&in, &out);
	KUNIT_EXPECT_TRUE(test, out.arm_irq);

	in.use_napi = false;
	vnet_reclaim_on_xmit(&in, &out);
	KUNIT_EXPECT_FALSE(test, out.arm_irq);
}

static void reclaim_room_edges(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_room(19, 19));
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_room(18, 19));
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_room(0, 1));
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_room(0, 0));
}

static struct kunit_case reclaim_policy_cases[] = {
	KUNIT_CASE(reclaim_every_xmit),
	KUNIT_CASE(reclaim_irq_at_batch_end),
	KUNIT_CASE(reclaim_room_edges),
	{}
};

static struct kunit_suite reclaim_policy_suite = {
	.name = "vnet_reclaim_policy",
	.test_cases = reclaim_policy_cases,
};

kunit_test_suite(reclaim_policy_suite);
