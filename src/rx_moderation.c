// SPDX-License-Identifier: GPL-2.0-only
/*
 * RX moderation policy (pure).  See rx_moderation.h for the rules.
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/time64.h>
#include "rx_moderation.h"

static u64 vnet_rx_adaptive_defer(const struct vnet_rx_mod_state *s,
				  const struct vnet_rx_mod_cfg *cfg,
				  unsigned int work)
{
	u64 max = (u64)cfg->usecs * NSEC_PER_USEC;
	u64 min = max / VNET_RX_MIN_DEFER_DIV;
	u32 aim = max_t(u32, cfg->frames, VNET_RX_MIN_BATCH);
	u64 d;

	/* After an interrupt there is no rate yet: the longest deferral. */
	if (!s->defer_ns)
		return max;
	/* @work packets arrived during the last deferral: scale to @aim. */
	d = div_u64(s->defer_ns * aim, work);
	return clamp(d, min, max);
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

	if ((u64)work * 8 >= VNET_RX_DEFER_GAIN * yield8) {
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
				     int work_done, int budget, u64 *defer_ns)
{
	unsigned int work = max(work_done, 0);
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

	if (!cfg->usecs)
		defer = false;
	else if (!cfg->adaptive)
		defer = work >= max_t(u32, cfg->frames, 1);
	else if (s->defer_ns)
		defer = vnet_rx_after_defer(s, work);
	else
		defer = vnet_rx_after_irq(s, work);
	if (!defer) {
		s->defer_ns = 0;
		return VNET_RX_REARM;
	}

	if (cfg->adaptive)
		s->defer_ns = vnet_rx_adaptive_defer(s, cfg, work);
	else
		s->defer_ns = (u64)cfg->usecs * NSEC_PER_USEC;
	*defer_ns = s->defer_ns;
	return VNET_RX_DEFER;
}
