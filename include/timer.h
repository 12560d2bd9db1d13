/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A queue pair's timer, for the features that need to act later:
 * flushing held-back TX kicks, a TX reclaim deadline and deferred RX
 * polling.  Each such feature is a "user" with its own deadline.  A pair
 * has two: one for its transmit users, armed by whichever CPU sends on
 * the pair, and one for the RX deferral, armed only by the pair's poll
 * (timers are pinned to the arming CPU, and the deferred poll must run
 * on the pair's CPU).
 *
 * Precise users (kick flush, RX deferral) use an hrtimer.  Each asks
 * for a window: the earliest time it may run and the latest it must.
 * The hrtimer is programmed with the earliest window start as its soft
 * expiry and the earliest window end as its hard expiry, and only
 * reprogrammed when a request needs an earlier hard expiry.  Every
 * hrtimer that programs the interrupt timer costs the guest a timer arm
 * and a timer interrupt (two VM exits, often a third to put the tick
 * back); one whose window holds the next scheduler tick costs nothing:
 * the kernel only reprograms for the earliest hard expiry, and the tick's
 * interrupt runs every timer whose soft expiry has passed.  A window
 * wider than the tick period therefore rides on the tick whenever the CPU
 * is busy enough to have one.
 *
 * Coarse users (the reclaim deadline, a backstop that only matters once
 * a queue has gone quiet) ride on the timer wheel instead: their expiry
 * is rounded up to the next tick, and while a CPU is busy the tick's own
 * interrupt runs them, so they cost no exit of their own.
 *
 * The plan is pure bookkeeping (no timer, no locking) so that KUnit can
 * test it; timer.c wraps it around an hrtimer.
 */
#ifndef VNET_QP_TIMER_H
#define VNET_QP_TIMER_H

#include <linux/types.h>
#include <linux/hrtimer.h>
#include <linux/timer.h>
#include <linux/bits.h>
#include <linux/spinlock.h>
#include <linux/sched/clock.h>

/*
 * The driver's clock (ns), read several times per packet.  It is
 * sched_clock(): the TSC or the hypervisor's paravirtual clock, read
 * without leaving the guest.  ktime_get_ns() reads the clocksource, and
 * where that is an emulated device (hpet or acpi_pm: a guest under TCG,
 * or one on KVM whose TSC the kernel does not trust) every read is an
 * exit.  Not local_clock(): where the kernel finds the TSC unstable (TCG
 * guests always do) it keeps each CPU's clock within a tick of the
 * clocksource, so while a tick is late (the host did not run the vCPU)
 * it stands still; timers programmed from it then fire late by as much,
 * and times measured with it are off by as much.  Stamps taken on different
 * CPUs may disagree a little: they are compared with vnet_ns_since() or
 * as signed differences (policy/clock.h), and the hrtimer is programmed
 * relative to it.
 */
static inline u64 vnet_now(void)
{
	return sched_clock();
}

enum vnet_timer_user {
	VNET_TIMER_TX_FLUSH,	/* kick TX descriptors held back */
	VNET_TIMER_TX_RECLAIM,	/* reclaim completed TX buffers (coarse) */
	VNET_TIMER_RX_POLL,	/* poll RX again while interrupts stay off */
	VNET_TIMER_USERS,
};

/* Users served by the timer wheel, at tick granularity. */
#define VNET_TIMER_COARSE	BIT(VNET_TIMER_TX_RECLAIM)

struct vnet_timer_plan {
	u64 due[VNET_TIMER_USERS];	/* ns, window start; 0: not requested */
	u64 limit[VNET_TIMER_USERS];	/* ns, window end */
	u64 armed;			/* soft expiry programmed; 0: idle */
	u64 armed_limit;		/* hard expiry programmed */
};

bool vnet_timer_plan_request(struct vnet_timer_plan *p,
			     enum vnet_timer_user user, u64 due, u64 limit);
bool vnet_timer_plan_cancel(struct vnet_timer_plan *p,
			    enum vnet_timer_user user);
unsigned long vnet_timer_plan_expire(struct vnet_timer_plan *p, u64 now);
bool vnet_timer_plan_pending(const struct vnet_timer_plan *p,
			     enum vnet_timer_user user);

struct vnet_qp_timer {
	struct hrtimer timer;
	struct timer_list coarse;
	/*
	 * Protects everything below.  Taken with interrupts off: requests
	 * come from netpoll too, which transmits with interrupts disabled.
	 */
	spinlock_t lock;
	struct vnet_timer_plan plan;	/* precise users */
	unsigned long coarse_pending;	/* coarse users waiting, as bits */
	bool stopped;
	void (*fire)(struct vnet_qp_timer *t, unsigned long expired);
	/* Times the hrtimer was programmed, by the user that caused it. */
	u64 arms[VNET_TIMER_USERS];
	/* Times each user's deadline expired and its handler ran. */
	u64 fires[VNET_TIMER_USERS];
	/*
	 * End of the window of each user's last expiry (ns): its handler
	 * may read its own entry to learn how late the timer ran.
	 */
	u64 fired_limit[VNET_TIMER_USERS];
	/* Latest each user's deadline expired after its window ended (ns). */
	u64 max_late[VNET_TIMER_USERS];
};

void vnet_qp_timer_init(struct vnet_qp_timer *t,
			void (*fire)(struct vnet_qp_timer *t,
				     unsigned long expired));
void vnet_qp_timer_start(struct vnet_qp_timer *t);
void vnet_qp_timer_stop(struct vnet_qp_timer *t);
bool vnet_qp_timer_request(struct vnet_qp_timer *t, enum vnet_timer_user user,
			   u64 delay_ns);
bool vnet_qp_timer_request_at(struct vnet_qp_timer *t,
			      enum vnet_timer_user user, u64 due, u64 limit);
bool vnet_qp_timer_request_window(struct vnet_qp_timer *t,
				  enum vnet_timer_user user,
				  u64 min_ns, u64 max_ns);
void vnet_qp_timer_cancel(struct vnet_qp_timer *t, enum vnet_timer_user user);
bool vnet_qp_timer_pending(struct vnet_qp_timer *t, enum vnet_timer_user user);
u64 vnet_qp_timer_max_late(struct vnet_qp_timer *t, enum vnet_timer_user user,
			   bool reset);
u64 vnet_qp_timer_overdue_limit(struct vnet_qp_timer *t,
				enum vnet_timer_user user, u64 now);
void vnet_qp_timer_counts(struct vnet_qp_timer *t, enum vnet_timer_user user,
			  u64 *arms, u64 *fires);

#endif /* VNET_QP_TIMER_H */
