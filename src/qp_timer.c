// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-queue-pair timer: an hrtimer in soft mode (its handler runs in
 * softirq context, so it may take the TX queue lock or schedule NAPI)
 * driven by the deadline plan of timer_plan.c.
 */
#include <linux/ktime.h>
#include "compat.h"
#include "qp_timer.h"

static enum hrtimer_restart vnet_qp_timer_expired(struct hrtimer *hrt)
{
	struct vnet_qp_timer *t = container_of(hrt, struct vnet_qp_timer,
					       timer);
	unsigned long expired;
	int u;

	spin_lock(&t->lock);
	expired = vnet_timer_plan_expire(&t->plan, ktime_get_ns());
	for (u = 0; u < VNET_TIMER_USERS; u++)
		if (expired & BIT(u))
			t->fires[u]++;
	/* Program the next deadline, if any; the handler may add earlier ones. */
	if (t->plan.armed && !t->stopped) {
		for (u = 0; u < VNET_TIMER_USERS; u++)
			if (t->plan.due[u] == t->plan.armed)
				break;
		if (u < VNET_TIMER_USERS)
			t->arms[u]++;
		hrtimer_start(&t->timer, ns_to_ktime(t->plan.armed),
			      HRTIMER_MODE_ABS_SOFT);
	}
	spin_unlock(&t->lock);

	if (expired)
		t->fire(t, expired);
	return HRTIMER_NORESTART;
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
			   HRTIMER_MODE_ABS_SOFT);
}

/* Allow requests again (queue pair enabled). */
void vnet_qp_timer_start(struct vnet_qp_timer *t)
{
	spin_lock_bh(&t->lock);
	t->stopped = false;
	spin_unlock_bh(&t->lock);
}

/*
 * Refuse further requests, drop pending deadlines and wait for a running
 * handler to finish.  Callers flush whatever the deadlines stood for.
 */
void vnet_qp_timer_stop(struct vnet_qp_timer *t)
{
	spin_lock_bh(&t->lock);
	t->stopped = true;
	memset(&t->plan, 0, sizeof(t->plan));
	spin_unlock_bh(&t->lock);
	hrtimer_cancel(&t->timer);
}

/* Ask for @user's handler to run @delay_ns from now. */
void vnet_qp_timer_request(struct vnet_qp_timer *t, enum vnet_timer_user user,
			   u64 delay_ns)
{
	spin_lock_bh(&t->lock);
	if (!t->stopped &&
	    vnet_timer_plan_request(&t->plan, user, ktime_get_ns() + delay_ns)) {
		t->arms[user]++;
		hrtimer_start(&t->timer, ns_to_ktime(t->plan.armed),
			      HRTIMER_MODE_ABS_SOFT);
	}
	spin_unlock_bh(&t->lock);
}

void vnet_qp_timer_cancel(struct vnet_qp_timer *t, enum vnet_timer_user user)
{
	spin_lock_bh(&t->lock);
	vnet_timer_plan_cancel(&t->plan, user);
	spin_unlock_bh(&t->lock);
}

bool vnet_qp_timer_pending(struct vnet_qp_timer *t, enum vnet_timer_user user)
{
	bool pending;

	spin_lock_bh(&t->lock);
	pending = vnet_timer_plan_pending(&t->plan, user);
	spin_unlock_bh(&t->lock);
	return pending;
}

void vnet_qp_timer_counts(struct vnet_qp_timer *t, enum vnet_timer_user user,
			  u64 *arms, u64 *fires)
{
	spin_lock_bh(&t->lock);
	*arms = t->arms[user];
	*fires = t->fires[user];
	spin_unlock_bh(&t->lock);
}
