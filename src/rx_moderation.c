// SPDX-License-Identifier: GPL-2.0-only
/*
 * RX moderation policy (pure).  See rx_moderation.h for the rules.
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/time64.h>
#include "rx_moderation.h"

/*
 * Adaptive: when the next poll's window opens (see rx_moderation.h).
 * @elapsed is how long the last deferral took (0 after an interrupt).
 */
static u64 vnet_rx_adaptive_defer(const struct vnet_rx_mod_cfg *cfg,
				  unsigned int work, u64 elapsed)
{
	u64 max = (u64)cfg->usecs * NSEC_PER_USEC;
	u64 min = max / VNET_RX_MIN_DEFER_DIV;
	u32 aim = max_t(u32, cfg->frames, VNET_RX_MIN_BATCH);
	u64 d;

	/* After an interrupt there is no rate yet: a quarter of rx-usecs. */
	if (!elapsed)
		return max / 4;
	/* @work packets arrived during the last deferral: scale to @aim. */
	d = div_u64(elapsed * aim, max(work, 1U));
	return clamp(d, min, max);
}

/* Adaptive: when the window closes, at the latest. */
static u64 vnet_rx_adaptive_limit(const struct vnet_rx_mod_cfg *cfg,
				  unsigned int work, u64 elapsed, u64 open)
{
	u64 limit = (u64)cfg->usecs * NSEC_PER_USEC;

	/* Half the ring at the last deferral's rate. */
	if (cfg->ring && elapsed && work)
		limit = min(limit, div_u64(elapsed * (cfg->ring / 2), work));
	return max(limit, open);
}

/* Adaptive, after a poll that followed an interrupt: start a deferral? */
static bool vnet_rx_after_irq(struct vnet_rx_mod_state *s, unsigned int work)
{
	u32 w8 = min_t(u32, work, U32_MAX / 16) * 8;

	s->irq_yield8 = s->irq_yield8 ? (7 * s->irq_yield8 + w8) / 8 : w8;
	if (s->skip) {
		s->skip--;
		return false;
	}
	return work >= VNET_RX_MIN_BATCH;
}

/* Adaptive, after a deferred poll: did it save more than its timer cost? */
static bool vnet_rx_after_defer(struct vnet_rx_mod_state *s, unsigned int work)
{
	u64 yield8 = max_t(u32, s->irq_yield8, 8);
	u32 gain = s->free ? 1 : VNET_RX_DEFER_GAIN;

	if ((u64)work * 8 >= gain * yield8) {
		s->backoff = 0;
		return true;
	}
	s->skip = 1U << s->backoff;
	if (s->backoff < VNET_RX_MAX_BACKOFF)
		s->backoff++;
	return false;
}

enum vnet_rx_next vnet_rx_mod_decide(struct vnet_rx_mod_state *s,
				     const struct vnet_rx_mod_cfg *cfg,
				     int work_done, int budget, u64 now,
				     u64 *defer_ns, u64 *defer_max_ns)
{
	unsigned int work = max(work_done, 0);
	u64 open, limit, elapsed = 0;
	bool defer;

	if (work_done >= budget) {
		s->polls++;
		s->work += work;
		return VNET_RX_POLL_AGAIN;
	}
	/* Everything since the interrupt or the deferral counts. */
	work += s->work;
	s->polls = 0;
	s->work = 0;

	if (!cfg->usecs) {
		defer = false;
	} else if (!cfg->adaptive) {
		defer = work >= max_t(u32, cfg->frames, 1);
	} else if (s->defer_ns) {
		elapsed = max(now - s->start_ns, 1ULL);
		defer = vnet_rx_after_defer(s, work);
	} else {
		defer = vnet_rx_after_irq(s, work);
	}
	if (!defer) {
		s->defer_ns = 0;
		s->free = false;
		return VNET_RX_REARM;
	}

	if (cfg->adaptive) {
		open = vnet_rx_adaptive_defer(cfg, work, elapsed);
		limit = vnet_rx_adaptive_limit(cfg, work, elapsed, open);
	} else {
		open = (u64)cfg->usecs * NSEC_PER_USEC;
		limit = open;
	}
	s->defer_ns = open;
	s->start_ns = now;
	s->free = cfg->tick_ns && limit - open >= cfg->tick_ns;
	*defer_ns = open;
	*defer_max_ns = limit;
	return VNET_RX_DEFER;
}
