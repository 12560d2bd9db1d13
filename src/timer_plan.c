// SPDX-License-Identifier: GPL-2.0-only
/*
 * Deadline bookkeeping for the shared per-queue-pair timer (pure).
 *
 * Rules:
 *  - a user that already waits keeps its earlier deadline: asking again
 *    for a later time changes nothing, so a batch arms the timer once;
 *  - the hrtimer is reprogrammed only when the new deadline is earlier
 *    than the one programmed (or nothing is programmed);
 *  - cancelling never reprograms: if the timer fires with nothing due it
 *    costs one idle expiry, the same as cancelling would cost.
 */
#include <linux/bitops.h>
#include "qp_timer.h"

static u64 vnet_timer_plan_earliest(const struct vnet_timer_plan *p)
{
	u64 best = 0;
	int u;

	for (u = 0; u < VNET_TIMER_USERS; u++)
		if (p->due[u] && (!best || p->due[u] < best))
			best = p->due[u];
	return best;
}

/*
 * Record that @user wants to run at @due (ns, non-zero).  Returns true
 * when the caller must program the timer for p->armed.
 */
bool vnet_timer_plan_request(struct vnet_timer_plan *p,
			     enum vnet_timer_user user, u64 due)
{
	if (!due)
		due = 1;
	if (p->due[user] && p->due[user] <= due)
		return false;
	p->due[user] = due;
	if (p->armed && p->armed <= due)
		return false;
	p->armed = due;
	return true;
}

/* Forget @user's deadline.  Returns true when no user is waiting. */
bool vnet_timer_plan_cancel(struct vnet_timer_plan *p,
			    enum vnet_timer_user user)
{
	p->due[user] = 0;
	return !vnet_timer_plan_earliest(p);
}

bool vnet_timer_plan_pending(const struct vnet_timer_plan *p,
			     enum vnet_timer_user user)
{
	return p->due[user] != 0;
}

/*
 * The programmed expiry has passed at @now: clear and return (as a bit
 * mask) the users that are due, and leave in p->armed the next deadline
 * to program, or 0 when nothing is left.
 */
unsigned long vnet_timer_plan_expire(struct vnet_timer_plan *p, u64 now)
{
	unsigned long mask = 0;
	int u;

	for (u = 0; u < VNET_TIMER_USERS; u++) {
		if (p->due[u] && p->due[u] <= now) {
			p->due[u] = 0;
			mask |= BIT(u);
		}
	}
	p->armed = vnet_timer_plan_earliest(p);
	return mask;
}
