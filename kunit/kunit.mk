# SPDX-License-Identifier: GPL-2.0-only
#
# kbuild fragment for scripts/kunit.sh: the pure decision logic of the
# driver, built into a UML kernel together with its KUnit tests.

obj-$(CONFIG_VNET_KUNIT_TEST) += vnet_kunit.o

# Any compiler warning in the tests or the code they cover fails the run
# (the kernel's own -Wframe-larger-than limit included).
ccflags-y += -Werror

vnet_kunit-y := \
	src/timer_plan.o	kunit/timer_plan_test.o \
	src/kick_policy.o	kunit/kick_policy_test.o \
	src/reclaim_policy.o	kunit/reclaim_policy_test.o \
	src/rx_moderation.o	kunit/rx_moderation_test.o \
	src/rx_buf.o		kunit/rx_buf_test.o kunit/rx_hdr_test.o \
	src/features.o		kunit/features_test.o \
	src/coal.o		kunit/coal_test.o \
	src/dev_coal.o		kunit/dev_coal_test.o \
	src/affinity_plan.o	kunit/affinity_plan_test.o \
	src/params.o		kunit/params_test.o \
	src/rss_cfg.o		kunit/rss_test.o \
	src/xdp_plan.o		kunit/xdp_plan_test.o
