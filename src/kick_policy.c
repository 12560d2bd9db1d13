// SPDX-License-Identifier: GPL-2.0-only
/*
 * TX kick policy (pure).  See kick_policy.h for the rules.
 */
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/time64.h>
#include "kick_policy.h"

static u64 vnet_kick_window(const struct vnet_kick_cfg *cfg)
{
	return (u64)cfg->usecs * NSEC_PER_USEC;
}

static u32 vnet_kick_max_batch(const struct vnet_kick_cfg *cfg)
{
	return cfg->frames ? cfg->frames : VNET_KICK_MAX_BATCH;
}

/* Packets to gather before notifying; 1 means no holding at all. */
static u32 vnet_kick_limit(const struct vnet_kick_state *s,
			   const struct vnet_kick_cfg *cfg)
{
	if (!cfg->usecs || cfg->frames == 1)
		return 1;
	if (cfg->adaptive)
		return s->target;
	return cfg->frames ? cfg->frames : U32_MAX;
}

void vnet_kick_init(struct vnet_kick_state *s, const struct vnet_kick_cfg *cfg)
{
	s->pending = 0;
	s->armed = false;
	s->target = 1;
	s->why = VNET_KICKED_UNHELD;
	s->first_ns = 0;
	s->last_end_ns = 0;
}

enum vnet_kick_action vnet_kick_decide(struct vnet_kick_state *s,
				       const struct vnet_kick_cfg *cfg,
				       const struct vnet_kick_in *in)
{
	u64 window = vnet_kick_window(cfg);
	u64 gap;
	u32 limit;

	if (!s->pending++)
		s->first_ns = in->now;

	s->why = VNET_KICKED_FORCED;
	if (in->urgent || in->queue_stopped)
		return VNET_KICK_NOW;
	/* The rest of the burst follows at once and will decide. */
	if (in->xmit_more)
		return VNET_KICK_HOLD;

	/* A burst ended; gap is the time since the previous one ended. */
	gap = in->now - s->last_end_ns;
	s->last_end_ns = in->now;

	s->why = VNET_KICKED_UNHELD;
	limit = vnet_kick_limit(s, cfg);
	if (limit <= 1) {
		/*
		 * Not holding.  In adaptive mode, bursts closer together
		 * than a window's share of a worthwhile batch start holding
		 * from the next burst on.
		 */
		if (cfg->adaptive && cfg->usecs &&
		    gap * VNET_KICK_MIN_BATCH < window)
			s->target = min_t(u32, VNET_KICK_MIN_BATCH,
					  vnet_kick_max_batch(cfg));
		return VNET_KICK_NOW;
	}
	/* Adaptive: the first burst after a quiet spell goes out at once. */
	if (cfg->adaptive && !s->armed && gap >= window)
		return VNET_KICK_NOW;
	s->why = VNET_KICKED_COUNT;
	if (s->pending >= limit)
		return VNET_KICK_NOW;
	/* Overdue (a late timer): as if the timer had flushed. */
	s->why = VNET_KICKED_TIMER;
	if (in->now - s->first_ns >= window)
		return VNET_KICK_NOW;
	if (s->armed)
		return VNET_KICK_HOLD;
	s->armed = true;
	return VNET_KICK_ARM;
}

/* When the flush timer must notify the device: first packet + tx-usecs. */
u64 vnet_kick_deadline(const struct vnet_kick_state *s,
		       const struct vnet_kick_cfg *cfg)
{
	return s->first_ns + vnet_kick_window(cfg);
}

/*
 * The device was notified (or declined to be) at @now.  Record the wait
 * and, in adaptive mode, learn from how the batch ended: one that filled
 * before its deadline may grow, one the timer had to flush shows how many
 * packets a window really gathers.
 */
void vnet_kick_done(struct vnet_kick_state *s, const struct vnet_kick_cfg *cfg,
		    enum vnet_kick_reason why, u64 now)
{
	if (s->pending && now - s->first_ns > s->max_hold_ns)
		s->max_hold_ns = now - s->first_ns;

	if (cfg->adaptive && s->pending) {
		if (why == VNET_KICKED_COUNT && s->target > 1)
			s->target = min_t(u32, s->target * 2,
					  vnet_kick_max_batch(cfg));
		else if (why == VNET_KICKED_TIMER)
			s->target = s->pending < VNET_KICK_MIN_BATCH ?
				    1 : s->pending;
	}
	s->pending = 0;
	s->armed = false;
}
