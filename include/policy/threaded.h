/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Receive livelock and threaded NAPI (module option auto_threaded).
 *
 * Receive work runs in softirq context on the CPU its interrupt came to,
 * in place of whatever task that CPU was running.  When a flood keeps
 * interrupting a CPU's task, that task (often the very server the packets
 * are for) gets little of its CPU while another CPU may idle: a receive
 * livelock, in which most packets are dropped at the socket after the
 * guest paid for them.  Threaded NAPI moves the polls into kernel threads
 * the scheduler can place and share, which ends it; but it costs every
 * packet a thread wake-up, which a single request/response flow pays in
 * latency (measured: -34 to -44% transactions).  Whether it helps is not
 * guessed from a signature: it is tried and measured, like the kernel's
 * net_dim steps and measures.
 *
 * The device's traffic is judged in windows of window_ns:
 *  - a candidate: at least min_irqs receive interrupts, at least
 *    busy_pct_on % of them came while the CPU ran a task (not the idle
 *    loop), and the CPUs were idle at least idle_pct % of the window on
 *    average (there is room to move the receive work to);
 *  - calm: fewer than busy_pct_off % of the interrupts found a task and
 *    the CPUs were idle at least idle_calm_pct % of the window (they have
 *    room, also where the interrupts come), or fewer than a quarter of
 *    min_irqs (rounded up: 13 of 50) interrupts and packets received (the
 *    traffic has gone);
 *  - busy: anything else with min_irqs interrupts; none below that (also
 *    when packets come without interrupts: a poll that keeps finding work
 *    keeps its interrupt off, as threaded polls under a flood do).
 * Its rate is the bytes received and sent per second.
 *
 * Softirq mode: after on_windows candidate windows in a row, threaded
 * mode is tried: one window to settle, measure_windows measured.  It is
 * kept if the rate grew by gain_pct % over the candidate windows'; else
 * softirq mode comes back and the next trial waits backoff (doubling from
 * backoff_min_ms to backoff_max_ms with each failed trial).
 * Threaded mode: off_windows calm windows in a row end it; otherwise
 * after a hold threaded mode's rate is measured over measure_windows
 * windows and softirq mode is tried the same way, staying only if it did
 * better than that; else threaded mode comes back, with the next hold
 * twice as long (hold_min_ms to hold_max_ms).  So a
 * load that only looked like a livelock pays one trial per backoff, and
 * a real one a trial per hold.
 */
#ifndef VNET_POLICY_THREADED_H
#define VNET_POLICY_THREADED_H

#include <linux/types.h>

struct vnet_thr_cfg {
	u64 window_ns;
	u32 min_irqs;
	u8 busy_pct_on;
	u8 busy_pct_off;
	u8 idle_pct;
	u8 idle_calm_pct;
	u8 gain_pct;
	u8 on_windows;
	u8 off_windows;
	u8 settle_windows;
	u8 measure_windows;
	u32 hold_min_ms;
	u32 hold_max_ms;
	u32 backoff_min_ms;
	u32 backoff_max_ms;
};

/* The defaults (why each: src/policy/threaded.c, docs/design.md section 7). */
void vnet_thr_cfg_default(struct vnet_thr_cfg *cfg);

/*
 * One window of the device: its length; receive interrupts, of them those
 * that found a task running; packets received; bytes received and sent;
 * the online CPUs' idle time summed, and how many there were.
 */
struct vnet_thr_window {
	u64 ns;
	u64 irqs;
	u64 busy;
	u64 packets;
	u64 bytes;
	u64 idle_ns;
	u32 cpus;
};

enum vnet_thr_verdict {
	VNET_THR_NONE,
	VNET_THR_CANDIDATE,
	VNET_THR_BUSY,
	VNET_THR_CALM,
};

enum vnet_thr_verdict vnet_thr_judge(const struct vnet_thr_cfg *cfg,
				     const struct vnet_thr_window *w);
/* Bytes per second of @w. */
u64 vnet_thr_rate(const struct vnet_thr_window *w);

enum vnet_thr_phase {
	VNET_THR_SOFTIRQ,
	VNET_THR_TRY_THREADED,
	VNET_THR_THREADED,
	VNET_THR_REF_THREADED,	/* threaded, the rate a softirq trial must beat */
	VNET_THR_TRY_SOFTIRQ,
};

/* The device's state; zeroed = softirq mode, nothing learnt. */
struct vnet_thr_state {
	enum vnet_thr_phase phase;
	u8 n;		/* windows in a row (softirq, threaded) or of the trial */
	u64 acc;	/* rates summed over those windows */
	u64 ref;	/* the rate the trial is compared with */
	u32 hold_ms;
	u32 backoff_ms;
	u64 since;	/* when the phase began */
	u64 not_before;	/* no trial of threaded mode before this */
	u64 trials;
	u64 switches;
	u64 livelock_windows;	/* windows judged VNET_THR_CANDIDATE */
};

/* Threaded NAPI wanted in this phase? */
static inline bool vnet_thr_on(const struct vnet_thr_state *s)
{
	return s->phase == VNET_THR_TRY_THREADED ||
	       s->phase == VNET_THR_THREADED ||
	       s->phase == VNET_THR_REF_THREADED;
}

/* A window's verdict and rate at @now; true when vnet_thr_on() changed. */
bool vnet_thr_step(const struct vnet_thr_cfg *cfg, struct vnet_thr_state *s,
		   enum vnet_thr_verdict v, u64 rate, u64 now);

#endif /* VNET_POLICY_THREADED_H */
