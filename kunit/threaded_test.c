// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: receive livelock verdicts and the threaded NAPI trials. */
#include <kunit/test.h>
#include <linux/time64.h>
#include "policy/threaded.h"

#define MS(x)	((u64)(x) * NSEC_PER_MSEC)

/*
 * A 100 ms window on 2 CPUs, idle @idle_pct % of it on average, a packet
 * per interrupt.
 */
static enum vnet_thr_verdict judge(u64 irqs, u64 busy, unsigned int idle_pct)
{
	struct vnet_thr_window w = {
		.ns = MS(100), .irqs = irqs, .busy = busy, .packets = irqs,
		.idle_ns = MS(2 * idle_pct), .cpus = 2,
	};
	struct vnet_thr_cfg cfg;

	vnet_thr_cfg_default(&cfg);
	return vnet_thr_judge(&cfg, &w);
}

static void thr_judge_measured(struct kunit *test)
{
	/* 100 ms of the measured loads (policy/threaded.c) */
	/* ol-udp-30000: every interrupt cuts into a task, one CPU idles */
	KUNIT_EXPECT_EQ(test, judge(1150, 1150, 45), VNET_THR_CANDIDATE);
	/* ol-udp-10000: 92% */
	KUNIT_EXPECT_EQ(test, judge(940, 865, 40), VNET_THR_CANDIDATE);
	/* rr-tcp-1 and ol-udp-3000: the CPU is idle when they come */
	KUNIT_EXPECT_EQ(test, judge(470, 31, 90), VNET_THR_CALM);
	KUNIT_EXPECT_EQ(test, judge(320, 26, 90), VNET_THR_CALM);
	/* rr-tcp-128: 87%; tx-256x4: 100% but no CPU ever idles */
	KUNIT_EXPECT_EQ(test, judge(230, 200, 10), VNET_THR_BUSY);
	KUNIT_EXPECT_EQ(test, judge(55, 55, 0), VNET_THR_BUSY);
	/* rr-tcp-32: 72% */
	KUNIT_EXPECT_EQ(test, judge(370, 266, 20), VNET_THR_BUSY);
	/* threaded ol-udp-10000 keeps 77%: busy, not calm */
	KUNIT_EXPECT_EQ(test, judge(340, 262, 45), VNET_THR_BUSY);
}

static void thr_judge_bounds(struct kunit *test)
{
	struct vnet_thr_window w = { .ns = MS(100), .irqs = 100, .busy = 100,
				     .idle_ns = MS(100), .cpus = 0 };
	struct vnet_thr_cfg cfg;

	/* too few interrupts for a verdict, enough to be heard */
	KUNIT_EXPECT_EQ(test, judge(49, 49, 50), VNET_THR_NONE);
	KUNIT_EXPECT_EQ(test, judge(50, 45, 50), VNET_THR_CANDIDATE);
	KUNIT_EXPECT_EQ(test, judge(50, 44, 50), VNET_THR_BUSY);
	/*
	 * traffic gone: calm, whatever the few interrupts found; below 13
	 * (a quarter of 50, rounded up), as docs/design.md says
	 */
	KUNIT_EXPECT_EQ(test, judge(11, 11, 50), VNET_THR_CALM);
	KUNIT_EXPECT_EQ(test, judge(12, 12, 50), VNET_THR_CALM);
	KUNIT_EXPECT_EQ(test, judge(13, 13, 50), VNET_THR_NONE);
	KUNIT_EXPECT_EQ(test, judge(0, 0, 0), VNET_THR_CALM);
	/* the calm share: below 50%, with the CPUs half idle */
	KUNIT_EXPECT_EQ(test, judge(100, 49, 50), VNET_THR_CALM);
	KUNIT_EXPECT_EQ(test, judge(100, 50, 50), VNET_THR_BUSY);
	KUNIT_EXPECT_EQ(test, judge(100, 10, 49), VNET_THR_BUSY);
	/* a flood in threaded mode: the threads took the work elsewhere */
	KUNIT_EXPECT_EQ(test, judge(300, 120, 30), VNET_THR_BUSY);
	/* room elsewhere: 20% idle on average */
	KUNIT_EXPECT_EQ(test, judge(100, 100, 20), VNET_THR_CANDIDATE);
	KUNIT_EXPECT_EQ(test, judge(100, 100, 19), VNET_THR_BUSY);
	/* idle time unknown (no CPUs counted): never a candidate */
	vnet_thr_cfg_default(&cfg);
	KUNIT_EXPECT_EQ(test, vnet_thr_judge(&cfg, &w), VNET_THR_BUSY);
	/* packets without interrupts: a poll that keeps them off, no verdict */
	w.irqs = 3;
	w.busy = 3;
	w.packets = 5000;
	KUNIT_EXPECT_EQ(test, vnet_thr_judge(&cfg, &w), VNET_THR_NONE);
	w.packets = 11;
	KUNIT_EXPECT_EQ(test, vnet_thr_judge(&cfg, &w), VNET_THR_CALM);
	w.irqs = 100;
	w.busy = 100;
	/* the rate: bytes per second */
	w.bytes = 1000;
	KUNIT_EXPECT_EQ(test, vnet_thr_rate(&w), 10000ULL);
	w.ns = 0;
	KUNIT_EXPECT_EQ(test, vnet_thr_rate(&w), 0ULL);
}

struct thr_run {
	struct vnet_thr_cfg cfg;
	struct vnet_thr_state s;
	u64 t;
	unsigned int changes;
};

/* @n windows of 100 ms with verdict @v and rate @rate; returns the changes. */
static unsigned int feed(struct thr_run *r, unsigned int n,
			 enum vnet_thr_verdict v, u64 rate)
{
	unsigned int c = 0;

	while (n--) {
		r->t += MS(100);
		c += vnet_thr_step(&r->cfg, &r->s, v, rate, r->t);
	}
	return c;
}

static void thr_run_init(struct thr_run *r)
{
	memset(r, 0, sizeof(*r));
	vnet_thr_cfg_default(&r->cfg);
	r->t = MS(1000);
}

/* A trial kept at twice the candidates' rate: threaded mode, hold 4 s. */
static void thr_run_kept(struct kunit *test, struct thr_run *r)
{
	thr_run_init(r);
	feed(r, 3, VNET_THR_CANDIDATE, 1000);
	feed(r, 4, VNET_THR_BUSY, 2000);
	KUNIT_ASSERT_EQ(test, r->s.phase, VNET_THR_THREADED);
}

static void thr_trial_kept(struct kunit *test)
{
	struct thr_run r;

	thr_run_init(&r);
	/* two candidates, a busy window: the row starts over */
	KUNIT_EXPECT_EQ(test, feed(&r, 2, VNET_THR_CANDIDATE, 1000), 0U);
	KUNIT_EXPECT_EQ(test, feed(&r, 1, VNET_THR_BUSY, 1000), 0U);
	/* a window without a verdict neither counts nor breaks the row */
	KUNIT_EXPECT_EQ(test, feed(&r, 2, VNET_THR_CANDIDATE, 1000), 0U);
	KUNIT_EXPECT_EQ(test, feed(&r, 1, VNET_THR_NONE, 1000), 0U);
	KUNIT_EXPECT_EQ(test, feed(&r, 1, VNET_THR_CANDIDATE, 1000), 1U);
	KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_TRY_THREADED);
	KUNIT_EXPECT_TRUE(test, vnet_thr_on(&r.s));
	KUNIT_EXPECT_EQ(test, r.s.ref, 1000ULL);
	/* every candidate window counted, the busy and empty ones not */
	KUNIT_EXPECT_EQ(test, r.s.livelock_windows, 5ULL);
	/* the settling window does not count; three measured at 1.8x */
	KUNIT_EXPECT_EQ(test, feed(&r, 1, VNET_THR_BUSY, 100), 0U);
	KUNIT_EXPECT_EQ(test, feed(&r, 3, VNET_THR_BUSY, 1800), 0U);
	KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_THREADED);
	KUNIT_EXPECT_EQ(test, r.s.hold_ms, 4000U);
	/* kept through busy windows until the hold ends: a softirq trial */
	KUNIT_EXPECT_EQ(test, feed(&r, 39, VNET_THR_BUSY, 1800), 0U);
	KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_THREADED);
	/* first threaded mode's rate of now, still threaded */
	KUNIT_EXPECT_EQ(test, feed(&r, 1, VNET_THR_BUSY, 1800), 0U);
	KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_REF_THREADED);
	KUNIT_EXPECT_TRUE(test, vnet_thr_on(&r.s));
	KUNIT_EXPECT_EQ(test, feed(&r, 2, VNET_THR_BUSY, 1800), 0U);
	KUNIT_EXPECT_EQ(test, feed(&r, 1, VNET_THR_BUSY, 1800), 1U);
	KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_TRY_SOFTIRQ);
	KUNIT_EXPECT_EQ(test, r.s.ref, 1800ULL);
	/* softirq is slower again: threaded back, hold doubled */
	KUNIT_EXPECT_EQ(test, feed(&r, 4, VNET_THR_CANDIDATE, 1000), 1U);
	KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_THREADED);
	KUNIT_EXPECT_EQ(test, r.s.hold_ms, 8000U);
	KUNIT_EXPECT_EQ(test, r.s.trials, 2ULL);
	KUNIT_EXPECT_EQ(test, r.s.switches, 3ULL);
	/* three calm windows in a row end it, a busy one in between resets */
	KUNIT_EXPECT_EQ(test, feed(&r, 2, VNET_THR_CALM, 10), 0U);
	KUNIT_EXPECT_EQ(test, feed(&r, 1, VNET_THR_BUSY, 10), 0U);
	KUNIT_EXPECT_EQ(test, feed(&r, 2, VNET_THR_CALM, 10), 0U);
	KUNIT_EXPECT_EQ(test, feed(&r, 1, VNET_THR_CALM, 10), 1U);
	KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_SOFTIRQ);
	/* and the next livelock is tried at once */
	KUNIT_EXPECT_EQ(test, feed(&r, 3, VNET_THR_CANDIDATE, 1000), 1U);
}

static void thr_trial_fails(struct kunit *test)
{
	u32 backoff[] = { 2000, 4000, 8000, 16000, 32000, 64000, 64000 };
	struct thr_run r;
	unsigned int i;

	thr_run_init(&r);
	for (i = 0; i < ARRAY_SIZE(backoff); i++) {
		/* threaded mode only 5% better: not kept */
		KUNIT_EXPECT_EQ(test, feed(&r, 3, VNET_THR_CANDIDATE, 1000), 1U);
		KUNIT_EXPECT_EQ(test, feed(&r, 4, VNET_THR_CANDIDATE, 1050), 1U);
		KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_SOFTIRQ);
		KUNIT_EXPECT_EQ(test, r.s.backoff_ms, backoff[i]);
		/* no new trial before the backoff has passed */
		KUNIT_EXPECT_EQ(test, feed(&r, backoff[i] / 100 - 1,
					   VNET_THR_CANDIDATE, 1000), 0U);
		KUNIT_EXPECT_FALSE(test, vnet_thr_on(&r.s));
	}
	/* a trial that wins resets the backoff */
	KUNIT_EXPECT_EQ(test, feed(&r, 3, VNET_THR_CANDIDATE, 1000), 1U);
	KUNIT_EXPECT_EQ(test, feed(&r, 4, VNET_THR_CANDIDATE, 1100), 0U);
	KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_THREADED);
	KUNIT_EXPECT_EQ(test, r.s.backoff_ms, 0U);
}

static void thr_softirq_trial_wins(struct kunit *test)
{
	struct thr_run r;

	thr_run_kept(test, &r);
	/* the load changes while threaded: the comparison follows it */
	feed(&r, 39, VNET_THR_BUSY, 1000);
	KUNIT_EXPECT_EQ(test, feed(&r, 4, VNET_THR_BUSY, 1000), 1U);
	KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_TRY_SOFTIRQ);
	/* softirq mode not quite as good: threaded again, hold doubled */
	KUNIT_EXPECT_EQ(test, feed(&r, 4, VNET_THR_CANDIDATE, 990), 1U);
	KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_THREADED);
	KUNIT_EXPECT_EQ(test, r.s.hold_ms, 8000U);
	/* next time softirq mode does better: it stays */
	feed(&r, 79, VNET_THR_BUSY, 1000);
	KUNIT_EXPECT_EQ(test, feed(&r, 4, VNET_THR_BUSY, 1000), 1U);
	KUNIT_EXPECT_EQ(test, feed(&r, 4, VNET_THR_CANDIDATE, 1010), 0U);
	KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_SOFTIRQ);
	/* and the next trial of threaded mode waits the shortest backoff */
	KUNIT_EXPECT_EQ(test, feed(&r, 19, VNET_THR_CANDIDATE, 1010), 0U);
	KUNIT_EXPECT_EQ(test, feed(&r, 3, VNET_THR_CANDIDATE, 1010), 1U);
}

/*
 * A flood kept threaded mode; just before the hold ends it gives way to
 * one closed-loop flow, which softirq mode serves better: the trial must
 * compare with threaded mode's rate on the loop, not on the flood.
 */
static void thr_softirq_trial_after_change(struct kunit *test)
{
	struct thr_run r;

	thr_run_kept(test, &r);
	feed(&r, 38, VNET_THR_BUSY, 2000);
	/* the loop, threaded; the hold ends in its second window */
	KUNIT_EXPECT_EQ(test, feed(&r, 5, VNET_THR_BUSY, 300), 1U);
	KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_TRY_SOFTIRQ);
	KUNIT_EXPECT_EQ(test, r.s.ref, 300ULL);
	/* softirq mode serves the loop better than threaded: it stays */
	KUNIT_EXPECT_EQ(test, feed(&r, 4, VNET_THR_BUSY, 400), 0U);
	KUNIT_EXPECT_EQ(test, r.s.phase, VNET_THR_SOFTIRQ);
}

static struct kunit_case thr_cases[] = {
	KUNIT_CASE(thr_judge_measured),
	KUNIT_CASE(thr_judge_bounds),
	KUNIT_CASE(thr_trial_kept),
	KUNIT_CASE(thr_trial_fails),
	KUNIT_CASE(thr_softirq_trial_wins),
	KUNIT_CASE(thr_softirq_trial_after_change),
	{}
};

static struct kunit_suite thr_suite = {
	.name = "vnet_threaded",
	.test_cases = thr_cases,
};

kunit_test_suite(thr_suite);
