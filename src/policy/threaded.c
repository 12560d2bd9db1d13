// SPDX-License-Identifier: GPL-2.0-only
/*
 * Receive livelock and the threaded NAPI trials (pure; see
 * policy/threaded.h).
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/time64.h>
#include "policy/clock.h"
#include "policy/threaded.h"

/*
 * Measured on 6.1 under TCG, 2 vCPUs (docs/investigations/
 * 2026-11-28-overload.md): the loads threaded NAPI helps had 92-100% of
 * their receive interrupts cut into a task, the loads it harms found the
 * CPU idle (6-8%) or had both CPUs busy; in threaded mode the loads it
 * helps kept 77-95%, or less where the threads took the work off the CPU
 * the interrupts come to (so calm also wants the CPUs half idle: a single
 * request/response flow leaves them 60-70% idle, a flood 30% at most).
 * A trial costs settle + measure windows (0.4 s).
 */
void vnet_thr_cfg_default(struct vnet_thr_cfg *cfg)
{
	*cfg = (struct vnet_thr_cfg) {
		.window_ns = 100 * NSEC_PER_MSEC,
		.min_irqs = 50,
		.busy_pct_on = 90,
		.busy_pct_off = 50,
		.idle_pct = 20,
		.idle_calm_pct = 50,
		.gain_pct = 10,
		.on_windows = 3,
		.off_windows = 3,
		.settle_windows = 1,
		.measure_windows = 3,
		.hold_min_ms = 4000,
		.hold_max_ms = 64000,
		.backoff_min_ms = 2000,
		.backoff_max_ms = 64000,
	};
}

enum vnet_thr_verdict vnet_thr_judge(const struct vnet_thr_cfg *cfg,
				     const struct vnet_thr_window *w)
{
	u64 gone = DIV_ROUND_UP(cfg->min_irqs, 4);

	if (w->irqs < gone)
		return w->packets < gone ? VNET_THR_CALM : VNET_THR_NONE;
	if (w->busy * 100 < w->irqs * cfg->busy_pct_off &&
	    w->idle_ns * 100 >= w->ns * w->cpus * cfg->idle_calm_pct && w->cpus)
		return VNET_THR_CALM;
	if (w->irqs < cfg->min_irqs)
		return VNET_THR_NONE;
	if (w->busy * 100 >= w->irqs * cfg->busy_pct_on &&
	    w->idle_ns * 100 >= w->ns * w->cpus * cfg->idle_pct && w->cpus)
		return VNET_THR_CANDIDATE;
	return VNET_THR_BUSY;
}

u64 vnet_thr_rate(const struct vnet_thr_window *w)
{
	return w->ns ? mul_u64_u64_div_u64(w->bytes, NSEC_PER_SEC, w->ns) : 0;
}

static void vnet_thr_enter(struct vnet_thr_state *s, enum vnet_thr_phase p,
			   u64 now)
{
	s->phase = p;
	s->n = 0;
	s->acc = 0;
	s->since = now;
}

/* A trial's window; true once its rate (acc / measure_windows) is known. */
static bool vnet_thr_trial_window(const struct vnet_thr_cfg *cfg,
				  struct vnet_thr_state *s, u64 rate)
{
	if (++s->n <= cfg->settle_windows)
		return false;
	s->acc += rate;
	return s->n >= cfg->settle_windows + cfg->measure_windows;
}

/* Is rate @a better than @b by gain_pct? */
static bool vnet_thr_better(const struct vnet_thr_cfg *cfg, u64 a, u64 b)
{
	return a > b && a * 100 >= b * (100 + cfg->gain_pct);
}

/*
 * One more window toward a trial's reference: once @count are in, their
 * mean is the rate to beat and the trial (phase @trial) begins.
 */
static void vnet_thr_ref_window(struct vnet_thr_state *s, u64 rate, u8 count,
				enum vnet_thr_phase trial, u64 now)
{
	s->acc += rate;
	if (++s->n < count)
		return;
	s->ref = div_u64(s->acc, s->n);
	s->trials++;
	vnet_thr_enter(s, trial, now);
}

static void vnet_thr_softirq(struct vnet_thr_state *s, u64 now, u32 wait_ms)
{
	vnet_thr_enter(s, VNET_THR_SOFTIRQ, now);
	s->not_before = now + (u64)wait_ms * NSEC_PER_MSEC;
}

bool vnet_thr_step(const struct vnet_thr_cfg *cfg, struct vnet_thr_state *s,
		   enum vnet_thr_verdict v, u64 rate, u64 now)
{
	bool was = vnet_thr_on(s);
	u64 r;

	if (v == VNET_THR_CANDIDATE)
		s->livelock_windows++;
	switch (s->phase) {
	case VNET_THR_SOFTIRQ:
		if (v != VNET_THR_CANDIDATE || (s64)(now - s->not_before) < 0) {
			if (v != VNET_THR_NONE) {
				s->n = 0;
				s->acc = 0;
			}
			break;
		}
		vnet_thr_ref_window(s, rate, cfg->on_windows,
				    VNET_THR_TRY_THREADED, now);
		break;
	case VNET_THR_TRY_THREADED:
		if (!vnet_thr_trial_window(cfg, s, rate))
			break;
		r = div_u64(s->acc, cfg->measure_windows);
		if (vnet_thr_better(cfg, r, s->ref)) {
			s->hold_ms = cfg->hold_min_ms;
			s->backoff_ms = 0;
			vnet_thr_enter(s, VNET_THR_THREADED, now);
		} else {
			s->backoff_ms = s->backoff_ms ?
					min(s->backoff_ms * 2, cfg->backoff_max_ms) :
					cfg->backoff_min_ms;
			vnet_thr_softirq(s, now, s->backoff_ms);
		}
		break;
	case VNET_THR_THREADED:
		if (v == VNET_THR_CALM && ++s->n >= cfg->off_windows) {
			vnet_thr_softirq(s, now, 0);
			break;
		}
		if (v != VNET_THR_CALM && v != VNET_THR_NONE)
			s->n = 0;
		if (vnet_ns_since(now, s->since) >=
		    (u64)s->hold_ms * NSEC_PER_MSEC)
			vnet_thr_enter(s, VNET_THR_REF_THREADED, now);
		break;
	case VNET_THR_REF_THREADED:
		/*
		 * What threaded mode does on the traffic of now, not on the
		 * traffic it was kept for: a flood that gave way to a closed
		 * loop would otherwise hold threaded mode on a rate the loop
		 * never reaches in either mode.
		 */
		vnet_thr_ref_window(s, rate, cfg->measure_windows,
				    VNET_THR_TRY_SOFTIRQ, now);
		break;
	case VNET_THR_TRY_SOFTIRQ:
		if (!vnet_thr_trial_window(cfg, s, rate))
			break;
		r = div_u64(s->acc, cfg->measure_windows);
		/*
		 * Softirq mode has to win to stay: a livelocked guest can have
		 * good moments (receive work spilling into ksoftirqd), and a
		 * trial that lands in one would otherwise end threaded mode.
		 */
		if (s->ref >= r) {
			s->hold_ms = min(s->hold_ms * 2, cfg->hold_max_ms);
			vnet_thr_enter(s, VNET_THR_THREADED, now);
		} else {
			vnet_thr_softirq(s, now, cfg->backoff_min_ms);
		}
		break;
	}
	if (vnet_thr_on(s) == was)
		return false;
	s->switches++;
	return true;
}
