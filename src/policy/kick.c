// SPDX-License-Identifier: GPL-2.0-only
/*
 * TX kick policy (pure).  See policy/kick.h for the rules.
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/time64.h>
#include "policy/kick.h"

static u64 vnet_kick_window(const struct vnet_kick_cfg *cfg)
{
	return (u64)cfg->usecs * NSEC_PER_USEC;
}

static u32 vnet_kick_max_batch(const struct vnet_kick_cfg *cfg)
{
	return cfg->frames ? cfg->frames : VNET_KICK_MAX_BATCH;
}

/*
 * Smallest batch worth holding for: it must cost fewer exits per packet
 * (its notification plus the flush timer's arm and interrupt) than its
 * packets would cost unheld, at the rate of notifications the device's
 * event index leaves unheld packets (often well below one per packet: a
 * device still busy with earlier packets does not want to be told).
 * Above the largest batch when holding cannot pay.
 */
static u32 vnet_kick_min_batch(const struct vnet_kick_state *s)
{
	u32 rate = max_t(u32, s->notify_rate, 1);
	u32 need = DIV_ROUND_UP((1 + VNET_KICK_BATCH_EXITS) * VNET_KICK_RATE_ONE,
				rate);

	return max_t(u32, need, VNET_KICK_MIN_BATCH);
}

/* Adaptive: the timer-flushed batches were bulk data (policy/kick.h). */
static bool vnet_kick_bulk(const struct vnet_kick_state *s)
{
	return s->len_avg > VNET_KICK_BULK_LEN;
}

/* Longest the batch starting now may be held (see policy/kick.h). */
static u64 vnet_kick_hold(const struct vnet_kick_state *s,
			  const struct vnet_kick_cfg *cfg)
{
	u64 window = vnet_kick_window(cfg);

	return cfg->adaptive && !vnet_kick_bulk(s) ? window / 2 : window;
}

/* Longest a packet may be held, in us: 0 when settings never hold. */
static u32 vnet_kick_limit_usecs(const struct vnet_kick_cfg *cfg)
{
	return cfg->frames == 1 ? 0 : cfg->usecs;
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
	s->skip = 0;
	s->backoff = 0;
	s->nogrow = 0;
	s->why = VNET_KICKED_UNHELD;
	/* Until measured: as if every unheld burst needed a notification. */
	s->notify_rate = VNET_KICK_RATE_ONE;
	s->sample_pkts = 0;
	s->sample_notifies = 0;
	s->flush_avg8 = VNET_KICK_MIN_BATCH * 8;
	s->len_avg = 0;
	s->first_ns = 0;
	s->hold_ns = vnet_kick_hold(s, cfg);
	s->last_add_ns = 0;
	s->last_end_ns = 0;
	/* No history yet: as if bursts came a whole window apart. */
	s->gap_avg_ns = s->hold_ns;
}

/*
 * Adaptive, not holding: learn the burst rate, and start holding once it
 * promises a worthwhile batch per window (and no back-off is running).
 */
static void vnet_kick_learn_gap(struct vnet_kick_state *s,
				const struct vnet_kick_cfg *cfg, u64 gap)
{
	u64 window = vnet_kick_hold(s, cfg);
	u32 min;

	/* Gaps beyond a window say the same thing: no batch. */
	gap = min(gap, window);
	s->gap_avg_ns = (3 * s->gap_avg_ns + gap) / 4;
	if (s->skip) {
		s->skip--;
		return;
	}
	min = vnet_kick_min_batch(s);
	if (min <= vnet_kick_max_batch(cfg) && s->gap_avg_ns * min < window)
		s->target = min;
}

enum vnet_kick_action vnet_kick_decide(struct vnet_kick_state *s,
				       const struct vnet_kick_cfg *cfg,
				       const struct vnet_kick_in *in)
{
	u64 window = vnet_kick_hold(s, cfg);
	u64 gap;
	u32 limit;

	if (!s->pending++) {
		s->first_ns = in->now;
		s->bytes = 0;
		s->hold_ns = vnet_kick_hold(s, cfg);
	}
	s->bytes += in->len;
	s->last_add_ns = in->now;

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
		if (cfg->adaptive && cfg->usecs)
			vnet_kick_learn_gap(s, cfg, gap);
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
	if (in->now - s->first_ns >= s->hold_ns)
		return VNET_KICK_NOW;
	if (s->armed)
		return VNET_KICK_HOLD;
	s->armed = true;
	return VNET_KICK_ARM;
}

/*
 * The sk_pacing_shift that lets a TCP socket keep its usual allowance
 * plus tx-usecs of data below it (see policy/kick.h):
 * VNET_KICK_TCP_PACING_SHIFT when packets are never held.
 */
u8 vnet_kick_pacing_shift(const struct vnet_kick_cfg *cfg)
{
	u32 usecs = vnet_kick_limit_usecs(cfg);
	u32 want = (USEC_PER_SEC >> VNET_KICK_TCP_PACING_SHIFT) + usecs;
	u8 shift = VNET_KICK_TCP_PACING_SHIFT;

	/* 2^-shift seconds: 976 us at 10, 1953 us at 9 ... */
	while (usecs && shift > 1 && (USEC_PER_SEC >> shift) < want)
		shift--;
	return shift;
}

/* When the flush timer must notify the device: first packet + tx-usecs. */
u64 vnet_kick_deadline(const struct vnet_kick_state *s,
		       const struct vnet_kick_cfg *cfg)
{
	return s->first_ns + s->hold_ns;
}

/*
 * A held batch goes out at @now, its flush timer was due at @due: record
 * how late that is.  It tells a long hold due to the timer's own latency
 * (a vCPU the host did not run) from one the policy caused.
 */
void vnet_kick_flush_late(struct vnet_kick_state *s, u64 due, u64 now)
{
	if (s->pending && (s64)(now - due) > (s64)s->max_late_ns)
		s->max_late_ns = now - due;
}

/* Whether held packets have waited their tx-usecs at @now. */
bool vnet_kick_overdue(const struct vnet_kick_state *s,
		       const struct vnet_kick_cfg *cfg, u64 now)
{
	return s->pending &&
	       (s64)(now - s->first_ns) >= (s64)s->hold_ns;
}

/* Adaptive: learn from how a held batch ended (see policy/kick.h). */
static void vnet_kick_learn_batch(struct vnet_kick_state *s,
				  const struct vnet_kick_cfg *cfg,
				  enum vnet_kick_reason why, u64 now)
{
	u64 window = vnet_kick_hold(s, cfg);
	u32 min, len;

	if (why == VNET_KICKED_COUNT) {
		s->backoff = 0;
		if (s->nogrow) {
			s->nogrow--;
			return;
		}
		/*
		 * Filled before the deadline: try a bigger batch.  Whether
		 * the window really yields more shows when the timer flushes.
		 */
		s->target = min_t(u32, s->target * 2, vnet_kick_max_batch(cfg));
		return;
	}
	if (why != VNET_KICKED_TIMER)
		return;
	/* First window: its own size; then a moving average. */
	len = div_u64(s->bytes, s->pending);
	s->len_avg = s->len_avg ? (3 * s->len_avg + len) / 4 : len;
	min = vnet_kick_min_batch(s);
	s->flush_avg8 = (3 * s->flush_avg8 + 8 * s->pending) / 4;
	if (s->flush_avg8 < 8 * min) {
		/* Not worth its timer: stop, and probe again ever later. */
		s->target = 1;
		s->skip = 1U << s->backoff;
		if (s->backoff < VNET_KICK_MAX_BACKOFF)
			s->backoff++;
		s->gap_avg_ns = window;
		s->flush_avg8 = 8 * min;
		return;
	}
	s->backoff = 0;
	/* Bulk data: the whole window pays, keep gathering to the limit. */
	if (vnet_kick_bulk(s)) {
		s->target = vnet_kick_max_batch(cfg);
		s->nogrow = 0;
		return;
	}
	s->target = min_t(u32, s->pending, vnet_kick_max_batch(cfg));
	/* The senders ran out early in the window: kick at this size. */
	if ((s->last_add_ns - s->first_ns) * 2 < s->hold_ns)
		s->nogrow = VNET_KICK_NOGROW;
}

/*
 * Adaptive: an unheld burst of s->pending packets went out, and the
 * device wanted a notification for it (@notified) or not.  Keeps the
 * rate vnet_kick_min_batch() weighs holding against.  Call before
 * vnet_kick_done().
 */
void vnet_kick_sample(struct vnet_kick_state *s, enum vnet_kick_reason why,
		      bool notified)
{
	u32 rate;

	if (why != VNET_KICKED_UNHELD || !s->pending)
		return;
	s->sample_pkts += s->pending;
	s->sample_notifies += notified;
	if (s->sample_pkts < VNET_KICK_RATE_SAMPLE)
		return;
	rate = s->sample_notifies * VNET_KICK_RATE_ONE / s->sample_pkts;
	s->notify_rate = (s->notify_rate + rate) / 2;
	s->sample_pkts = 0;
	s->sample_notifies = 0;
}

/*
 * The device was notified (or declined to be) at @now.  Record the wait
 * and, in adaptive mode, learn from how a held batch ended.
 */
void vnet_kick_done(struct vnet_kick_state *s, const struct vnet_kick_cfg *cfg,
		    enum vnet_kick_reason why, u64 now)
{
	if (s->pending && (s64)(now - s->first_ns) > (s64)s->max_hold_ns)
		s->max_hold_ns = now - s->first_ns;

	if (cfg->adaptive && s->pending && s->target > 1)
		vnet_kick_learn_batch(s, cfg, why, now);
	/*
	 * A quiet spell is measured from the last packet or notification:
	 * a stream whose senders waited for a held batch to go out (its
	 * acknowledgements) has not been idle since its last packet.
	 */
	if (s->pending && (s64)(now - s->last_end_ns) > 0)
		s->last_end_ns = now;
	s->pending = 0;
	s->armed = false;
}
