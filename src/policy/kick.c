// SPDX-License-Identifier: GPL-2.0-only
/*
 * TX kick policy (pure).  See policy/kick.h for the rules.
 */
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/time64.h>
#include "policy/clock.h"
#include "policy/kick.h"

static u64 vnet_kick_window(const struct vnet_kick_cfg *cfg)
{
	return (u64)cfg->usecs * NSEC_PER_USEC;
}

/* The conversation window (see policy/kick.h). */
u32 vnet_kick_conv_usecs(const struct vnet_kick_cfg *cfg)
{
	return max_t(u32, cfg->usecs, VNET_KICK_CONV_USECS);
}

static u64 vnet_kick_conv_window(const struct vnet_kick_cfg *cfg)
{
	return (u64)vnet_kick_conv_usecs(cfg) * NSEC_PER_USEC;
}

static u32 vnet_kick_max_batch(const struct vnet_kick_cfg *cfg)
{
	return cfg->frames ? cfg->frames : VNET_KICK_MAX_BATCH;
}

/* Settings that never hold a packet beyond a burst of the stack. */
static bool vnet_kick_never_holds(const struct vnet_kick_cfg *cfg)
{
	return !cfg->usecs || cfg->frames == 1;
}

/*
 * How long the guest counts as answering after deciding on an answer: the
 * conversation window from when the device learns of it, which in fixed
 * mode (every packet held) may be tx-usecs after the decision.
 */
static u64 vnet_kick_answer_window(const struct vnet_kick_cfg *cfg)
{
	u64 window = vnet_kick_conv_window(cfg);

	if (!cfg->adaptive && !vnet_kick_never_holds(cfg))
		window += vnet_kick_window(cfg);
	return window;
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

/*
 * Set @in's bulk, large, stream and pure_ack for a TCP segment (see
 * policy/kick.h).  Without plain headers (an encapsulated segment) the
 * payload is unknown, and so whether data is queued behind it: a GSO
 * packet counts as bulk then.
 */
void vnet_kick_classify_tcp(const struct vnet_kick_seg *seg,
			    struct vnet_kick_in *in)
{
	in->bulk = false;
	in->large = false;
	in->stream = !seg->answering;
	in->pure_ack = seg->known && !seg->payload;
	if (in->pure_ack || seg->answering)
		return;
	if (!seg->known) {
		in->bulk = seg->gso;
		return;
	}
	in->bulk = seg->unsent > seg->payload;
	in->large = !in->bulk &&
		    (seg->gso || seg->payload >= VNET_KICK_BULK_LEN);
}

/*
 * Set @in's bulk, large, stream and pure_ack for a packet that is not a
 * full TCP socket's segment (see policy/kick.h): a GSO packet is large,
 * bulk only while its task does not sleep (vnet_kick_bulk()); anything
 * else is neither, a message of its own.
 */
void vnet_kick_classify_other(bool gso, struct vnet_kick_in *in)
{
	in->bulk = false;
	in->large = gso;
	in->stream = false;
	in->pure_ack = false;
}

void vnet_kick_init(struct vnet_kick_state *s, const struct vnet_kick_cfg *cfg)
{
	s->pending = 0;
	s->pending_bytes = 0;
	s->armed = false;
	s->poll = false;
	s->target = 1;
	s->skip = 0;
	s->backoff = 0;
	s->why = VNET_KICKED_UNHELD;
	/* Until measured: as if every unheld burst needed a notification. */
	s->notify_rate = VNET_KICK_RATE_ONE;
	s->sample_pkts = 0;
	s->sample_notifies = 0;
	s->flush_avg8 = VNET_KICK_MIN_BATCH * 8;
	s->first_ns = 0;
	s->batch_sender = 0;
	s->cost_ns = 0;
	memset(s->senders, 0, sizeof(s->senders));
	s->last_end_ns = 0;
	s->shared_until = 0;
	s->answer_until = 0;
	/* No history yet: as if bursts came a whole window apart. */
	s->gap_avg_ns = vnet_kick_window(cfg);
}

/*
 * Adaptive, a bulk burst while not holding: learn the burst rate,
 * and start holding once it promises a worthwhile batch per window (and
 * no back-off is running).
 */
static void vnet_kick_learn_gap(struct vnet_kick_state *s,
				const struct vnet_kick_cfg *cfg, u64 gap)
{
	u64 window = vnet_kick_window(cfg);
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

/* Hold up to @limit packets or the window, arming the timer once. */
static enum vnet_kick_action vnet_kick_hold(struct vnet_kick_state *s,
					    const struct vnet_kick_cfg *cfg,
					    u32 limit, u64 now)
{
	s->why = VNET_KICKED_COUNT;
	if (s->pending >= limit)
		return VNET_KICK_NOW;
	/* Overdue (a late timer): as if the timer had flushed. */
	s->why = VNET_KICKED_TIMER;
	if (vnet_ns_since(now, s->first_ns) >= vnet_kick_window(cfg))
		return VNET_KICK_NOW;
	if (s->armed)
		return VNET_KICK_HOLD;
	s->armed = true;
	return VNET_KICK_ARM;
}

/*
 * Whether @in's packet counts as bulk (see policy/kick.h): it is bulk;
 * or it is large, or a TCP segment of a stream whose socket sent bulk
 * within the window, and in both cases its task has not slept since the
 * socket's previous packet.  Never while its socket is spared
 * (vnet_kick_spare()).  A bulk packet's socket is remembered, replacing
 * the entry that expires first; a remembered socket's entry keeps the
 * latest wake stamp.
 */
static bool vnet_kick_bulk(struct vnet_kick_state *s,
			   const struct vnet_kick_cfg *cfg,
			   const struct vnet_kick_in *in)
{
	struct vnet_kick_sender *e, *slot = &s->senders[0];
	bool known, slept, live;

	if (!in->sender)
		return in->bulk || in->large;
	for (e = s->senders; e < s->senders + VNET_KICK_SENDERS; e++) {
		if (e->id == in->sender) {
			slot = e;
			break;
		}
		if ((s64)(e->until - slot->until) < 0)
			slot = e;
	}
	known = slot->id == in->sender;
	/* Not sent by a task, or no packet of one seen before: no sleep. */
	slept = known && in->wake && slot->wake && in->wake != slot->wake;
	live = known && (s64)(in->now - slot->until) < 0;
	if (known && (s64)(in->now - slot->spare_until) < 0) {
		if (in->wake)
			slot->wake = in->wake;
		return false;
	}
	if (in->bulk || (in->large && !slept)) {
		if (!known || in->wake)
			slot->wake = in->wake;
		slot->id = in->sender;
		slot->until = in->now + vnet_kick_window(cfg);
		return true;
	}
	if (known && in->wake)
		slot->wake = in->wake;
	return in->stream && live && !slept;
}

/*
 * Adaptive, a packet that is not held in a batch: sent from the receive
 * poll, it waits for that poll's end; otherwise it goes out now, with
 * whatever was held (not a failed batch: it was cut short).
 */
static enum vnet_kick_action vnet_kick_unheld(struct vnet_kick_state *s,
					      bool in_poll)
{
	if (in_poll) {
		s->poll = true;
		return VNET_KICK_POLL;
	}
	s->why = s->armed || s->poll ? VNET_KICKED_FORCED : VNET_KICKED_UNHELD;
	return VNET_KICK_NOW;
}

enum vnet_kick_action vnet_kick_decide(struct vnet_kick_state *s,
				       const struct vnet_kick_cfg *cfg,
				       const struct vnet_kick_in *in)
{
	bool bulk;
	u64 gap;

	if (!s->pending++)
		s->first_ns = in->now;
	s->pending_bytes = min_t(u64, (u64)s->pending_bytes + in->len, U32_MAX);

	s->why = VNET_KICKED_FORCED;
	if (in->urgent || in->queue_stopped)
		return VNET_KICK_NOW;
	/* The rest of the burst follows at once and will decide. */
	if (in->xmit_more)
		return VNET_KICK_HOLD;

	/* In every mode: the receive side reads answer_until (policy/kick.h). */
	bulk = vnet_kick_bulk(s, cfg, in);
	if (!bulk && !in->pure_ack)
		s->answer_until = in->now + vnet_kick_answer_window(cfg);

	if (vnet_kick_never_holds(cfg)) {
		s->why = VNET_KICKED_UNHELD;
		return VNET_KICK_NOW;
	}
	if (!cfg->adaptive)
		return vnet_kick_hold(s, cfg, cfg->frames ? cfg->frames : U32_MAX,
				      in->now);

	if (!bulk) {
		if (!in->pure_ack)
			s->shared_until = in->now + vnet_kick_window(cfg);
		return vnet_kick_unheld(s, in->in_poll);
	}
	/* Latency-bound traffic shares the queue: hold no bulk for now. */
	if ((s64)(in->now - s->shared_until) < 0)
		return vnet_kick_unheld(s, in->in_poll);

	/* A bulk burst ended; gap is the time since the previous one. */
	gap = vnet_ns_since(in->now, s->last_end_ns);
	s->last_end_ns = in->now;
	if (s->target <= 1) {
		/* Not holding yet: this one is not held, the next may be. */
		vnet_kick_learn_gap(s, cfg, gap);
		return vnet_kick_unheld(s, in->in_poll);
	}
	if (!s->batch_sender)
		s->batch_sender = in->sender;
	/* Nothing more comes from a sender that waits on the batch. */
	if (in->waits) {
		if (in->in_poll) {
			s->poll = true;
			return VNET_KICK_POLL;
		}
		s->why = in->window ? VNET_KICKED_WINDOW : VNET_KICKED_WAITED;
		return VNET_KICK_NOW;
	}
	return vnet_kick_hold(s, cfg, s->target, in->now);
}

/*
 * A notification took @ns of this vCPU's time (an exit on KVM, and more
 * where the device model is slow to take it): keep a moving average, for
 * ethtool -S.  A sample stretched by the host not running the vCPU counts
 * as one millisecond.
 */
void vnet_kick_cost(struct vnet_kick_state *s, u64 ns)
{
	ns = min_t(u64, ns, NSEC_PER_MSEC);
	s->cost_ns = s->cost_ns ? (7 * s->cost_ns + ns) / 8 : ns;
}

/*
 * The sk_pacing_shift that lets a TCP socket keep its usual allowance
 * plus tx-usecs of data below it (see policy/kick.h):
 * VNET_KICK_TCP_PACING_SHIFT when packets are never held.
 */
u8 vnet_kick_pacing_shift(const struct vnet_kick_cfg *cfg)
{
	u32 usecs = vnet_kick_never_holds(cfg) ? 0 : cfg->usecs;
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
	return s->first_ns + vnet_kick_window(cfg);
}

/*
 * A TCP segment with data was held: does the batch watch it for the
 * waiting rule (see policy/kick.h)?  @watching: the batch watches a
 * segment already, @same: of this segment's socket, @watched_eager: a
 * segment of that socket in the batch had an eager sender, @eager: this
 * one has.  The first such segment is watched, eager or not: the socket
 * may turn eager later in the batch, and only its first segment tells
 * what it has unacknowledged before the batch.  An eager socket's
 * segment takes over from another socket that has shown no eagerness,
 * whose batch would otherwise go to its timer.
 */
bool vnet_kick_watch(bool watching, bool same, bool watched_eager, bool eager)
{
	if (!watching)
		return true;
	return !same && eager && !watched_eager;
}

/*
 * Whether a TCP socket waits on a held batch whose first segment of it
 * starts at sequence number @first, as far as acknowledgments go (see
 * policy/kick.h): what it has unacknowledged before @first (from @una on)
 * is at most one full segment of @mss bytes, which its receiver may not
 * acknowledge before more comes.  Sequence numbers wrap; @una past @first
 * (the device took some held segments already) also counts.
 */
bool vnet_kick_unacked_before(u32 una, u32 first, u32 mss)
{
	return (s32)(first - una) <= (s32)mss;
}

/*
 * Whether a TCP segment that ends at sequence number @end leaves less than
 * one full segment of @mss bytes of the window its peer offers, which
 * ends at @wnd_end: its sender can send nothing more until an
 * acknowledgment (see policy/kick.h).  Sequence numbers wrap.
 */
bool vnet_kick_window_full(u32 end, u32 wnd_end, u32 mss)
{
	return (s32)(wnd_end - end) < (s32)mss;
}

/*
 * Whether TCP sends nothing more of a socket after the segment @r
 * describes until an acknowledgment comes (see policy/kick.h): what its
 * peer's window and its congestion window still allow, the smaller of the
 * two, is less than a full segment, or less than the share of a window
 * (the smaller one's tcp_tso_win_divisor-th, three segments without one)
 * below which TCP keeps a large segment back while it expects an
 * acknowledgment soon.  TCP sends anyway in loss recovery or when the
 * acknowledgment is late; the policy does not tell those apart and only
 * notifies earlier then.
 */
bool vnet_kick_tcp_defers(const struct vnet_kick_room *r)
{
	s32 wnd_left = (s32)(r->wnd_end - r->end);
	u64 room = max_t(s32, wnd_left, 0);
	u64 chunk;

	if (r->cwnd <= r->in_flight)
		return true;
	room = min_t(u64, room, (u64)(r->cwnd - r->in_flight) * r->mss);
	if (r->divisor)
		chunk = min_t(u64, r->snd_wnd, (u64)r->cwnd * r->mss) /
			r->divisor;
	else
		chunk = (u64)VNET_KICK_TSO_DEFER_SEGS * r->mss;
	return room < max_t(u64, r->mss, chunk);
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
	       (s64)(now - s->first_ns) >= (s64)vnet_kick_window(cfg);
}

/* The remembered entry of the held batch's first socket, if any. */
static struct vnet_kick_sender *vnet_kick_batch_entry(struct vnet_kick_state *s)
{
	struct vnet_kick_sender *e;

	if (!s->batch_sender)
		return NULL;
	for (e = s->senders; e < s->senders + VNET_KICK_SENDERS; e++)
		if (e->id == s->batch_sender)
			return e;
	return NULL;
}

/*
 * Adaptive: the held batch stopped the holding at @now (it yielded too
 * little).  If it carried fewer than VNET_KICK_SPARE_BYTES, its first
 * socket is spared: its packets are not held for
 * VNET_KICK_SPARE_WINDOWS windows, twice as long after each further
 * failed batch of it (see policy/kick.h).  Its entry is kept that long.
 */
static bool vnet_kick_spare(struct vnet_kick_state *s,
			    const struct vnet_kick_cfg *cfg, u64 now)
{
	struct vnet_kick_sender *e = vnet_kick_batch_entry(s);
	u64 span;

	if (!e || s->pending_bytes >= VNET_KICK_SPARE_BYTES)
		return false;
	span = vnet_kick_window(cfg) * VNET_KICK_SPARE_WINDOWS <<
	       min_t(u8, e->strikes, VNET_KICK_MAX_SPARES);
	if (e->strikes < VNET_KICK_MAX_SPARES)
		e->strikes++;
	e->spare_until = now + span;
	if ((s64)(e->until - e->spare_until) < 0)
		e->until = e->spare_until;
	return true;
}

/*
 * Adaptive: learn from how a held batch ended (see policy/kick.h).  True
 * when it spared its socket.
 */
static bool vnet_kick_learn_batch(struct vnet_kick_state *s,
				  const struct vnet_kick_cfg *cfg,
				  enum vnet_kick_reason why, u64 now)
{
	struct vnet_kick_sender *e;
	u32 min;

	if (why == VNET_KICKED_COUNT) {
		e = vnet_kick_batch_entry(s);
		if (e && e->strikes)
			e->strikes--;
		/*
		 * Filled before the deadline: try a bigger batch.  Whether
		 * the window really yields more shows when the timer flushes.
		 */
		s->backoff = 0;
		s->target = min_t(u32, s->target * 2, vnet_kick_max_batch(cfg));
		return false;
	}
	/* Ended by its timer, or by its sender waiting: what a window yields. */
	if (why != VNET_KICKED_TIMER && why != VNET_KICKED_WAITED &&
	    why != VNET_KICKED_WINDOW)
		return false;
	min = vnet_kick_min_batch(s);
	s->flush_avg8 = (3 * s->flush_avg8 + 8 * s->pending) / 4;
	if (s->flush_avg8 < 8 * min) {
		/* Not worth its timer: stop, and probe again ever later. */
		s->target = 1;
		s->skip = 1U << s->backoff;
		if (s->backoff < VNET_KICK_MAX_BACKOFF)
			s->backoff++;
		s->gap_avg_ns = vnet_kick_window(cfg);
		s->flush_avg8 = 8 * min;
		return vnet_kick_spare(s, cfg, now);
	}
	/* What a window yields: kick at that size next time, before the timer. */
	e = vnet_kick_batch_entry(s);
	if (e)
		e->strikes = 0;
	s->backoff = 0;
	s->target = clamp_t(u32, s->pending, min, vnet_kick_max_batch(cfg));
	return false;
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
 * and, in adaptive mode, learn from how a held batch ended.  True when
 * that spared the batch's socket (vnet_kick_spare()), for ethtool -S.
 */
bool vnet_kick_done(struct vnet_kick_state *s, const struct vnet_kick_cfg *cfg,
		    enum vnet_kick_reason why, u64 now)
{
	bool spared = false;

	if (s->pending && (s64)(now - s->first_ns) > (s64)s->max_hold_ns)
		s->max_hold_ns = now - s->first_ns;

	if (cfg->adaptive && s->pending && s->target > 1)
		spared = vnet_kick_learn_batch(s, cfg, why, now);
	s->batch_sender = 0;
	s->pending = 0;
	s->pending_bytes = 0;
	s->armed = false;
	s->poll = false;
	return spared;
}
