// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-queue-pair timer: an hrtimer for the precise users, driven by
 * the deadline plan of policy/timer.c, and a timer-wheel timer for the
 * coarse users.
 *
 * The hrtimer expires in hard interrupt context.  A soft hrtimer would
 * let its handler take the TX queue lock outright, but it runs from the
 * softirq, and once softirq work has been handed to ksoftirqd (as a busy
 * guest does) it waits for that thread to be scheduled: held kicks were
 * measured waiting 4-30 ms for a 100 us tx-usecs that way.  The handlers
 * therefore only try the TX queue lock and retry shortly if it is busy
 * (see napi.c).  On PREEMPT_RT the kernel runs it as a soft timer anyway.
 * The timer-wheel timer runs in softirq context.
 *
 * Both are pinned: they expire on the CPU that armed them.  An RX
 * deferral is armed by the pair's poll and must schedule that NAPI on the
 * pair's CPU, and a poll that runs after an interrupt woke an idle CPU
 * still counts as idle to the kernel, which may move an unpinned timer
 * to a busy CPU (one whose next timer event comes earlier), and the poll
 * with it.  The TX users are armed by the sending CPU and flush from it.
 */
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include "compat.h"
#include "policy/clock.h"
#include "timer.h"

static bool vnet_timer_is_coarse(enum vnet_timer_user user)
{
	return VNET_TIMER_COARSE & BIT(user);
}

static void vnet_qp_timer_count_fires(struct vnet_qp_timer *t,
				      unsigned long expired)
{
	int u;

	for (u = 0; u < VNET_TIMER_USERS; u++)
		if (expired & BIT(u))
			t->fires[u]++;
}

/*
 * Program the hrtimer for the plan's window.  The plan is in the driver's
 * clock (vnet_now()), not the hrtimer's, so the expiry is given relative
 * to now.  Caller holds t->lock.
 */
static void vnet_qp_timer_program(struct vnet_qp_timer *t)
{
	u64 in = vnet_ns_since(t->plan.armed, vnet_now());

	hrtimer_start_range_ns(&t->timer, ns_to_ktime(in),
			       t->plan.armed_limit - t->plan.armed,
			       HRTIMER_MODE_REL_PINNED);
}

static enum hrtimer_restart vnet_qp_timer_expired(struct hrtimer *hrt)
{
	struct vnet_qp_timer *t = container_of(hrt, struct vnet_qp_timer,
					       timer);
	u64 limit[VNET_TIMER_USERS];
	unsigned long expired, flags;
	u64 now = vnet_now();
	int u;

	spin_lock_irqsave(&t->lock, flags);
	memcpy(limit, t->plan.limit, sizeof(limit));
	/*
	 * The hrtimer ran, so the soft expiry it was programmed for has
	 * passed, whatever this CPU's clock says: a window opened by a stamp
	 * from a CPU whose clock runs a little ahead is not put off again.
	 */
	expired = vnet_timer_plan_expire(&t->plan, max(now, t->plan.armed));
	vnet_qp_timer_count_fires(t, expired);
	for (u = 0; u < VNET_TIMER_USERS; u++) {
		if (!(expired & BIT(u)))
			continue;
		t->fired_limit[u] = limit[u];
		if ((s64)(now - limit[u]) > (s64)t->max_late[u])
			t->max_late[u] = now - limit[u];
	}
	/* Program the next deadline, if any; the handler may add earlier ones. */
	if (t->plan.armed && !t->stopped) {
		for (u = 0; u < VNET_TIMER_USERS; u++)
			if (t->plan.limit[u] == t->plan.armed_limit)
				break;
		if (u < VNET_TIMER_USERS)
			t->arms[u]++;
		vnet_qp_timer_program(t);
	}
	spin_unlock_irqrestore(&t->lock, flags);

	if (expired)
		t->fire(t, expired);
	return HRTIMER_NORESTART;
}

static void vnet_qp_timer_coarse_expired(struct timer_list *tl)
{
	struct vnet_qp_timer *t = container_of(tl, struct vnet_qp_timer,
					       coarse);
	unsigned long expired, flags;

	spin_lock_irqsave(&t->lock, flags);
	expired = t->coarse_pending;
	t->coarse_pending = 0;
	vnet_qp_timer_count_fires(t, expired);
	spin_unlock_irqrestore(&t->lock, flags);

	if (expired)
		t->fire(t, expired);
}

void vnet_qp_timer_init(struct vnet_qp_timer *t,
			void (*fire)(struct vnet_qp_timer *t,
				     unsigned long expired))
{
	memset(t, 0, sizeof(*t));
	spin_lock_init(&t->lock);
	t->fire = fire;
	t->stopped = true;
	vnet_hrtimer_setup(&t->timer, vnet_qp_timer_expired, CLOCK_MONOTONIC,
			   HRTIMER_MODE_REL_PINNED);
	timer_setup(&t->coarse, vnet_qp_timer_coarse_expired, TIMER_PINNED);
}

/* Allow requests again (queue pair enabled). */
void vnet_qp_timer_start(struct vnet_qp_timer *t)
{
	unsigned long flags;

	spin_lock_irqsave(&t->lock, flags);
	t->stopped = false;
	spin_unlock_irqrestore(&t->lock, flags);
}

/*
 * Refuse further requests, drop pending deadlines and wait for running
 * handlers to finish.  Callers flush whatever the deadlines stood for.
 */
void vnet_qp_timer_stop(struct vnet_qp_timer *t)
{
	unsigned long flags;

	spin_lock_irqsave(&t->lock, flags);
	t->stopped = true;
	memset(&t->plan, 0, sizeof(t->plan));
	t->coarse_pending = 0;
	spin_unlock_irqrestore(&t->lock, flags);
	hrtimer_cancel(&t->timer);
	timer_delete_sync(&t->coarse);
}

/*
 * Ask for @user's handler to run between @due and @limit (ns, the
 * driver's clock; coarse users: at the first tick after @limit).  A wide
 * window lets the handler ride on an interrupt that comes anyway (see
 * timer.h).  Returns false when the timer is stopped and the request
 * was dropped.
 */
bool vnet_qp_timer_request_at(struct vnet_qp_timer *t,
			      enum vnet_timer_user user, u64 due, u64 limit)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&t->lock, flags);
	ok = !t->stopped;
	if (ok && vnet_timer_is_coarse(user)) {
		u64 now = vnet_now();

		if (!(t->coarse_pending & BIT(user)))
			t->arms[user]++;
		t->coarse_pending |= BIT(user);
		timer_reduce(&t->coarse, jiffies + 1 +
			     nsecs_to_jiffies(vnet_ns_since(limit, now)));
	} else if (ok && vnet_timer_plan_request(&t->plan, user, due, limit)) {
		t->arms[user]++;
		vnet_qp_timer_program(t);
	}
	spin_unlock_irqrestore(&t->lock, flags);
	return ok;
}

/* The same, between @min_ns and @max_ns from now. */
bool vnet_qp_timer_request_window(struct vnet_qp_timer *t,
				  enum vnet_timer_user user,
				  u64 min_ns, u64 max_ns)
{
	u64 now = vnet_now();

	return vnet_qp_timer_request_at(t, user, now + min_ns, now + max_ns);
}

/* Ask for @user's handler to run @delay_ns from now. */
bool vnet_qp_timer_request(struct vnet_qp_timer *t, enum vnet_timer_user user,
			   u64 delay_ns)
{
	return vnet_qp_timer_request_window(t, user, delay_ns, delay_ns);
}

/* Forget @user's deadline; the timer itself is left to expire idle. */
void vnet_qp_timer_cancel(struct vnet_qp_timer *t, enum vnet_timer_user user)
{
	unsigned long flags;

	spin_lock_irqsave(&t->lock, flags);
	if (vnet_timer_is_coarse(user))
		t->coarse_pending &= ~BIT(user);
	else
		vnet_timer_plan_cancel(&t->plan, user);
	spin_unlock_irqrestore(&t->lock, flags);
}

bool vnet_qp_timer_pending(struct vnet_qp_timer *t, enum vnet_timer_user user)
{
	unsigned long flags;
	bool pending;

	spin_lock_irqsave(&t->lock, flags);
	if (vnet_timer_is_coarse(user))
		pending = t->coarse_pending & BIT(user);
	else
		pending = vnet_timer_plan_pending(&t->plan, user);
	spin_unlock_irqrestore(&t->lock, flags);
	return pending;
}

/*
 * If @user's deadline is still waiting although its window ended before
 * @now (the hrtimer is late), the end of that window; else 0.
 */
u64 vnet_qp_timer_overdue_limit(struct vnet_qp_timer *t,
				enum vnet_timer_user user, u64 now)
{
	unsigned long flags;
	u64 limit = 0;

	if (vnet_timer_is_coarse(user))
		return 0;
	spin_lock_irqsave(&t->lock, flags);
	if (vnet_timer_plan_pending(&t->plan, user) &&
	    (s64)(now - t->plan.limit[user]) > 0)
		limit = t->plan.limit[user];
	spin_unlock_irqrestore(&t->lock, flags);
	return limit;
}

/* Latest @user's deadline expired after its window ended (ns); reset. */
u64 vnet_qp_timer_max_late(struct vnet_qp_timer *t, enum vnet_timer_user user,
			   bool reset)
{
	unsigned long flags;
	u64 late;

	spin_lock_irqsave(&t->lock, flags);
	late = t->max_late[user];
	if (reset)
		t->max_late[user] = 0;
	spin_unlock_irqrestore(&t->lock, flags);
	return late;
}

void vnet_qp_timer_counts(struct vnet_qp_timer *t, enum vnet_timer_user user,
			  u64 *arms, u64 *fires)
{
	unsigned long flags;

	spin_lock_irqsave(&t->lock, flags);
	*arms = t->arms[user];
	*fires = t->fires[user];
	spin_unlock_irqrestore(&t->lock, flags);
}
