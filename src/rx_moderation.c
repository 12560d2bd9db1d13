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

enum vnet_rx_next vnet_rx_mod_decide(struct vnet_rx_mod_state *s,
				     const struct vnet_rx_mod_cfg *cfg,
				     int work_done, int budget, u64 *defer_ns)
{
	unsigned int work = max(work_done, 0);
	u32 threshold;

	if (work_done >= budget) {
		s->polls++;
		return VNET_RX_POLL_AGAIN;
	}
	s->polls = 0;

	if (cfg->adaptive)
		threshold = VNET_RX_MIN_BATCH;
	else
		threshold = max_t(u32, cfg->frames, 1);
	if (!cfg->usecs || work < threshold) {
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
