/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Time in the policies.  Every "now" they are given comes from the
 * driver's clock, vnet_now() (timer.h), whose readings on different CPUs
 * may disagree a little: a stamp taken by another CPU (a transmit on
 * one, the timer or the poll on another) may lie a little ahead of this
 * CPU's now.  Such a stamp means no time has passed, never nearly 2^64 ns.
 */
#ifndef VNET_POLICY_CLOCK_H
#define VNET_POLICY_CLOCK_H

#include <linux/types.h>

/* Nanoseconds from @then to @now; zero if @then is not before @now. */
static inline u64 vnet_ns_since(u64 now, u64 then)
{
	return (s64)(now - then) > 0 ? now - then : 0;
}

#endif /* VNET_POLICY_CLOCK_H */
