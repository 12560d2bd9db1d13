// SPDX-License-Identifier: GPL-2.0-only
/*
 * RX moderation policy (pure).  See policy/rx_moderation.h for the rules.
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/time64.h>
#include "policy/clock.h"
#include "policy/rx_moderation.h"

/*
 * Adaptive: when the next poll's window opens (see policy/rx_moderation.h).
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

/* Bytes per packet, a moving average over the polls that found any. */
static void vnet_rx_note_len(struct vnet_rx_mod_state *s, unsigned int work,
			     u64 bytes)
{
	u32 len;

	if (!work)
		return;
	len = min_t(u64, div_u64(bytes, work), U32_MAX / 4);
	s->len_avg = s->len_avg ? (3 * s->len_avg + len) / 4 : len;
}

/*
 * Adaptive: the window of a bulk deferral (see policy/rx_moderation.h), given
 * that @work packets in @descs descriptors came in the last @span ns.
 * False when the queue is not receiving bulk or no window that holds a
 * tick fits.
 */
static bool vnet_rx_bulk_window(const struct vnet_rx_mod_state *s,
				const struct vnet_rx_mod_cfg *cfg,
				unsigned int work, u64 descs, u64 span,
				u64 *open, u64 *limit)
{
	u64 max = (u64)cfg->usecs_high * NSEC_PER_USEC;

	if (!max || !cfg->tick_ns || !work || !span ||
	    s->len_avg < VNET_RX_BULK_LEN)
		return false;
	if (cfg->ring)
		max = min(max, div64_u64(span * (cfg->ring / 2),
					 max(descs, 1ULL)));
	*open = max - min(cfg->tick_ns, max / 2);
	*limit = max;
	return *limit - *open >= cfg->tick_ns;
}

/* Adaptive, after a poll that followed an interrupt: start a deferral? */
static bool vnet_rx_after_irq(struct vnet_rx_mod_state *s, unsigned int work,
			      bool bulk)
{
	u32 w8 = min_t(u32, work, U32_MAX / 16) * 8;

	s->irq_yield8 = s->irq_yield8 ? (7 * s->irq_yield8 + w8) / 8 : w8;
	if (s->skip) {
		s->skip--;
		return false;
	}
	return work >= VNET_RX_MIN_BATCH || (bulk && work);
}

/*
 * Adaptive, after a deferred poll @elapsed ns after the deferral began:
 * did it save more than it cost?
 */
static bool vnet_rx_after_defer(struct vnet_rx_mod_state *s, unsigned int work,
				u64 elapsed)
{
	u64 yield8 = max_t(u32, s->irq_yield8, 8);
	/* It ran before its window closed: on the tick, at no exit. */
	bool free = s->free && elapsed < s->limit_ns;
	u64 need8;

	if (!free)
		need8 = VNET_RX_DEFER_GAIN * yield8;
	else if (s->bulk)
		need8 = 8;	/* a stream gains from any packet gathered */
	else
		need8 = yield8;	/* others pay in latency: what an irq brings */
	if ((u64)work * 8 >= need8) {
		s->backoff = 0;
		return true;
	}
	/* A stream that paused cost an empty poll on a tick, nothing more. */
	if (free && s->bulk)
		return false;
	s->skip = 1U << s->backoff;
	if (s->backoff < VNET_RX_MAX_BACKOFF)
		s->backoff++;
	return false;
}

enum vnet_rx_next vnet_rx_mod_decide(struct vnet_rx_mod_state *s,
				     const struct vnet_rx_mod_cfg *cfg,
				     const struct vnet_rx_poll *p,
				     u64 *defer_ns, u64 *defer_max_ns)
{
	unsigned int work = max(p->work, 0), small = p->small;
	u64 open = 0, limit = 0, elapsed = 0, now = p->now;
	u64 bytes = p->bytes, descs = p->descs;
	bool defer, bulk = false;

	if (p->work >= p->budget) {
		s->polls++;
		s->work += work;
		s->small += small;
		s->bytes += bytes;
		s->descs += descs;
		return VNET_RX_POLL_AGAIN;
	}
	/* Everything since the interrupt or the deferral counts. */
	work += s->work;
	small += s->small;
	bytes += s->bytes;
	descs += s->descs;
	s->polls = 0;
	s->work = 0;
	s->small = 0;
	s->bytes = 0;
	s->descs = 0;
	vnet_rx_note_len(s, work, bytes);

	if (!cfg->usecs) {
		defer = false;
	} else if (cfg->adaptive && (small || p->answering || p->fixed_rcv)) {
		/*
		 * Someone may be waiting for a small packet (a request, an
		 * answer), or for the guest's answer to a large one, or a
		 * sender for the acknowledgment that opens its window: its
		 * flow gets the next one's interrupt at once.
		 */
		defer = false;
	} else if (!cfg->adaptive) {
		defer = work >= max_t(u32, cfg->frames, 1);
	} else if (s->defer_ns) {
		elapsed = max(vnet_ns_since(now, s->start_ns), 1ULL);
		bulk = vnet_rx_bulk_window(s, cfg, work, descs, elapsed,
					   &open, &limit);
		defer = vnet_rx_after_defer(s, work, elapsed);
	} else {
		bulk = s->rearm_ns &&
		       vnet_rx_bulk_window(s, cfg, work, descs,
					   vnet_ns_since(now, s->rearm_ns),
					   &open, &limit);
		defer = vnet_rx_after_irq(s, work, bulk);
	}
	if (!defer) {
		s->defer_ns = 0;
		s->free = false;
		s->bulk = false;
		s->rearm_ns = max(now, 1ULL);
		return VNET_RX_REARM;
	}

	/* A bulk deferral has its window from vnet_rx_bulk_window(). */
	if (cfg->adaptive && !bulk) {
		open = vnet_rx_adaptive_defer(cfg, work, elapsed);
		limit = vnet_rx_adaptive_limit(cfg, work, elapsed, open);
	} else if (!cfg->adaptive) {
		open = (u64)cfg->usecs * NSEC_PER_USEC;
		limit = open;
	}
	s->defer_ns = open;
	s->start_ns = now;
	s->limit_ns = limit;
	s->free = cfg->tick_ns && limit - open >= cfg->tick_ns;
	s->bulk = bulk;
	*defer_ns = open;
	*defer_max_ns = limit;
	return VNET_RX_DEFER;
}
