# SPDX-License-Identifier: GPL-2.0-only
#
# kbuild fragment for tests/kunit.sh: the pure decision logic of the
# driver, built into a UML kernel together with its KUnit tests.

obj-$(CONFIG_VNET_KUNIT_TEST) += vnet_kunit.o

# Any compiler warning in the tests or the code they cover fails the run
# (the kernel's own -Wframe-larger-than limit included).
ccflags-y += -Werror

# Every pure policy, src/policy/<name>.c, with its test kunit/<name>_test.c
# (a policy without a test file fails the build).
VNET_POLICIES := $(basename $(notdir $(wildcard $(VNET_KUNIT_SRC)/src/policy/*.c)))

vnet_kunit-y := $(patsubst %,src/policy/%.o,$(VNET_POLICIES)) \
	$(patsubst %,kunit/%_test.o,$(VNET_POLICIES))
