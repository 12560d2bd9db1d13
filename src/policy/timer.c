// SPDX-License-Identifier: GPL-2.0-only
/*
 * Deadline bookkeeping for a per-queue-pair timer (pure).
 *
 * Rules:
 *  - each user waits in a window [due, limit]: it may run from due on and
 *    must run by limit;
 *  - a user that already waits keeps its earlier window: asking again
 *    for a later one changes nothing, so a batch arms the timer once;
 *  - the hrtimer is programmed with the earliest due as its soft expiry
 *    and the earliest limit as its hard expiry; it is only reprogrammed
 *    when a request needs an earlier hard expiry (or nothing is armed);
 *  - cancelling never reprograms: if the timer fires with nothing due it
 *    costs one idle expiry, the same as cancelling would cost.
 */
#include <linux/bitops.h>
#include <linux/minmax.h>
#include "timer.h"

static void vnet_timer_plan_rearm(struct vnet_timer_plan *p)
{
	int u;

	p->armed = 0;
	p->armed_limit = 0;
	for (u = 0; u < VNET_TIMER_USERS; u++) {
		if (!p->due[u])
			continue;
		if (!p->armed || p->due[u] < p->armed)
			p->armed = p->due[u];
		if (!p->armed_limit || p->limit[u] < p->armed_limit)
			p->armed_limit = p->limit[u];
	}
}

/*
 * Record that @user wants to run in [@due, @limit] (ns; due 0 counts as
 * 1, a limit before due as due).  Returns true when the caller must
 * program the timer for [p->armed, p->armed_limit].
 */
bool vnet_timer_plan_request(struct vnet_timer_plan *p,
			     enum vnet_timer_user user, u64 due, u64 limit)
{
	if (!due)
		due = 1;
	limit = max(limit, due);
	if (p->due[user] && p->limit[user] <= limit)
		return false;
	p->due[user] = due;
	p->limit[user] = limit;
	/* The programmed expiry comes by this limit: it will hand over. */
	if (p->armed && p->armed_limit <= limit)
		return false;
	p->armed = p->armed ? min(p->armed, due) : due;
	p->armed_limit = limit;
	return true;
}

/* Forget @user's window.  Returns true when no user is waiting. */
bool vnet_timer_plan_cancel(struct vnet_timer_plan *p,
			    enum vnet_timer_user user)
{
	int u;

	p->due[user] = 0;
	p->limit[user] = 0;
	for (u = 0; u < VNET_TIMER_USERS; u++)
		if (p->due[u])
			return false;
	return true;
}

bool vnet_timer_plan_pending(const struct vnet_timer_plan *p,
			     enum vnet_timer_user user)
{
	return p->due[user] != 0;
}

/*
 * The programmed timer fired at @now: clear and return (as a bit mask)
 * the users whose window has opened, and leave in p->armed/armed_limit
 * the window to program next, or 0 when nothing is left.
 */
unsigned long vnet_timer_plan_expire(struct vnet_timer_plan *p, u64 now)
{
	unsigned long mask = 0;
	int u;

	for (u = 0; u < VNET_TIMER_USERS; u++) {
		if (p->due[u] && p->due[u] <= now) {
			p->due[u] = 0;
			p->limit[u] = 0;
			mask |= BIT(u);
		}
	}
	vnet_timer_plan_rearm(p);
	return mask;
}
