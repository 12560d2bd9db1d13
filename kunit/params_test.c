// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: module option parsing. */
#include <kunit/test.h>
#include <linux/errno.h>
#include "policy/params.h"

static void params_bool_values(struct kunit *test)
{
	bool b = false;

	KUNIT_EXPECT_EQ(test, vnet_parse_bool("1", &b), 0);
	KUNIT_EXPECT_TRUE(test, b);
	KUNIT_EXPECT_EQ(test, vnet_parse_bool("N", &b), 0);
	KUNIT_EXPECT_FALSE(test, b);
	KUNIT_EXPECT_EQ(test, vnet_parse_bool("on", &b), 0);
	KUNIT_EXPECT_TRUE(test, b);
	KUNIT_EXPECT_EQ(test, vnet_parse_bool("off", &b), 0);
	KUNIT_EXPECT_FALSE(test, b);
	/* A bare option name means "on". */
	KUNIT_EXPECT_EQ(test, vnet_parse_bool(NULL, &b), 0);
	KUNIT_EXPECT_TRUE(test, b);
}

static void params_bool_invalid_leaves_value(struct kunit *test)
{
	bool b = true;

	KUNIT_EXPECT_EQ(test, vnet_parse_bool("maybe", &b), -EINVAL);
	KUNIT_EXPECT_TRUE(test, b);
	KUNIT_EXPECT_EQ(test, vnet_parse_bool("", &b), -EINVAL);
	KUNIT_EXPECT_TRUE(test, b);
}

static void params_int_range(struct kunit *test)
{
	int v = 7;

	KUNIT_EXPECT_EQ(test, vnet_parse_int_range("64", 1, 64, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 64);
	KUNIT_EXPECT_EQ(test, vnet_parse_int_range("1", 1, 64, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 1);
	KUNIT_EXPECT_EQ(test, vnet_parse_int_range("0x10", 1, 64, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 16);
	KUNIT_EXPECT_EQ(test, vnet_parse_int_range("8\n", 1, 64, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 8);
}

static void params_int_invalid_leaves_value(struct kunit *test)
{
	int v = 7;

	KUNIT_EXPECT_EQ(test, vnet_parse_int_range("65", 1, 64, &v), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnet_parse_int_range("0", 1, 64, &v), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnet_parse_int_range("-1", 0, 64, &v), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnet_parse_int_range("abc", 0, 64, &v), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnet_parse_int_range("", 0, 64, &v), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnet_parse_int_range(NULL, 0, 64, &v), -EINVAL);
	KUNIT_EXPECT_EQ(test, vnet_parse_int_range("99999999999", 0, 64, &v),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, v, 7);
}

static struct kunit_case params_cases[] = {
	KUNIT_CASE(params_bool_values),
	KUNIT_CASE(params_bool_invalid_leaves_value),
	KUNIT_CASE(params_int_range),
	KUNIT_CASE(params_int_invalid_leaves_value),
	{}
};

static struct kunit_suite params_suite = {
	.name = "vnet_params",
	.test_cases = params_cases,
};

kunit_test_suite(params_suite);
