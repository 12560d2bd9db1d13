// SPDX-License-Identifier: GPL-2.0-only
/*
 * TX reclaim policy (pure).  See policy/reclaim.h for the rules.
 */
#include <linux/hash.h>
#include <linux/time64.h>
#include "policy/clock.h"
#include "policy/reclaim.h"

/*
 * Whether the task sending @seg slept within its socket's last
 * VNET_RECLAIM_PACED_RUN segments sent by a task (a publisher woken late
 * writes a few messages in one go); notes @seg's stamp for the next one.
 * A segment sent from softirq (TCP Small Queues, an acknowledgment
 * letting more out) has no task: it neither sleeps nor counts.  A socket
 * not seen before has not been seen to sleep.
 */
static bool vnet_reclaim_paced(struct vnet_reclaim_state *s,
			       const struct vnet_reclaim_seg *seg)
{
	struct vnet_reclaim_sender *e;

	if (!seg->sender || !seg->wake)
		return false;
	e = &s->senders[hash_64(seg->sender, VNET_RECLAIM_SENDERS_BITS)];
	if (e->id != seg->sender)
		e->run = VNET_RECLAIM_PACED_RUN;
	else if (e->wake != seg->wake)
		e->run = 0;
	else if (e->run < VNET_RECLAIM_PACED_RUN)
		e->run++;
	e->id = seg->sender;
	e->wake = seg->wake;
	return e->run < VNET_RECLAIM_PACED_RUN;
}

/*
 * Whether @sender (a socket, as in vnet_reclaim_seg) is paced by its
 * task, as far as the senders table knows, without noting anything: its
 * task slept within its last VNET_RECLAIM_PACED_RUN segments sent by a
 * task, or @wake (the stamp of a task sending now; 0: none) shows a sleep
 * since the latest.  The kick policy asks it (policy/kick.h): such a
 * sender waiting on a held batch has nothing more to give it.
 */
bool vnet_reclaim_sender_paced(const struct vnet_reclaim_state *s, u64 sender,
			       u64 wake)
{
	const struct vnet_reclaim_sender *e;

	if (!sender)
		return false;
	e = &s->senders[hash_64(sender, VNET_RECLAIM_SENDERS_BITS)];
	if (e->id != sender)
		return false;
	if (wake && e->wake != wake)
		return true;
	return e->run < VNET_RECLAIM_PACED_RUN;
}

/*
 * Does a TCP segment with data give its socket its memory back when sent
 * (policy/reclaim.h)?  When it ends what its application wrote so far
 * (nothing unsent behind its payload) and its socket is in a
 * conversation or its task slept within its last few segments.  Only
 * with delayed reclaim; in stock mode the completion interrupt frees it
 * soon enough.  Every segment with data notes its task's stamp, in stock
 * mode too (the kick policy asks vnet_reclaim_sender_paced() whatever the
 * reclaim does), so call it for each (under the queue's lock).
 */
bool vnet_reclaim_release_at_send(const struct vnet_reclaim_cfg *cfg,
				  struct vnet_reclaim_state *s,
				  const struct vnet_reclaim_seg *seg)
{
	bool paced = vnet_reclaim_paced(s, seg);

	if (!vnet_reclaim_delayed(cfg))
		return false;
	return (seg->answering || paced) && seg->unsent <= seg->payload;
}

/*
 * A packet of a socket other than TCP's, with @wmem bytes of its @sndbuf
 * not yet freed (this packet's included), is handed to the device at
 * @now: past half of it, the socket may block on its next send and wait
 * for half to come back, so the queue reclaims as stock for tx-usecs-irq
 * (policy/reclaim.h).  Returns whether it was past half.
 */
bool vnet_reclaim_note_sndbuf(const struct vnet_reclaim_cfg *cfg,
			      struct vnet_reclaim_state *s, u32 wmem,
			      u32 sndbuf, u64 now)
{
	if (!vnet_reclaim_delayed(cfg) || (u64)wmem * 2 <= sndbuf)
		return false;
	s->full_until = now + (u64)cfg->usecs * NSEC_PER_USEC;
	return true;
}

/* Within tx-usecs-irq of a packet whose socket's buffer was over half out. */
static bool vnet_reclaim_sndbuf_full(const struct vnet_reclaim_state *s,
				     u64 now)
{
	return (s64)(now - s->full_until) < 0;
}

/*
 * On transmit: take completed buffers back now?  Always in stock mode and
 * while a sender waits for some or a send buffer was over half out
 * (policy/reclaim.h).
 */
bool vnet_reclaim_on_xmit(const struct vnet_reclaim_cfg *cfg,
			  const struct vnet_reclaim_state *s,
			  unsigned int in_use, u64 now)
{
	if (!vnet_reclaim_delayed(cfg) || s->waited)
		return true;
	if (!in_use)
		return false;
	return in_use >= cfg->frames || vnet_reclaim_sndbuf_full(s, now) ||
	       vnet_ns_since(now, s->last_ns) >= (u64)cfg->usecs * NSEC_PER_USEC;
}

/*
 * A burst of packets was handed to the device.  Stock behaviour asks for
 * an interrupt once most of them are done (with TX NAPI), and so does
 * delayed reclaim while a send buffer was over half out; otherwise it
 * only makes sure a deadline is pending while buffers are in use.
 */
enum vnet_reclaim_next vnet_reclaim_at_burst_end(const struct vnet_reclaim_cfg *cfg,
						 const struct vnet_reclaim_state *s,
						 unsigned int in_use,
						 bool use_napi, u64 now)
{
	if (!use_napi)
		return VNET_RECLAIM_IDLE;
	if (!vnet_reclaim_delayed(cfg) ||
	    (in_use && vnet_reclaim_sndbuf_full(s, now)))
		return VNET_RECLAIM_IRQ;
	if (in_use && !s->deadline_armed)
		return VNET_RECLAIM_DEADLINE;
	return VNET_RECLAIM_IDLE;
}

/*
 * XDP frames were added.  They pin pages (of a redirecting NIC's pool,
 * say) until they are freed, so they need a reclaim within tx-usecs-irq
 * like a socket's skbs, also without TX NAPI: there the interrupt frees
 * nothing, so it is the deadline (see vnet_reclaim_after()).
 */
enum vnet_reclaim_next vnet_reclaim_xdp_sent(const struct vnet_reclaim_cfg *cfg,
					     const struct vnet_reclaim_state *s,
					     unsigned int in_use,
					     bool use_napi, u64 now)
{
	if (use_napi)
		return vnet_reclaim_at_burst_end(cfg, s, in_use, true, now);
	if (in_use && !s->deadline_armed)
		return VNET_RECLAIM_DEADLINE;
	return VNET_RECLAIM_IDLE;
}

/*
 * After a reclaim by the deadline or by TX NAPI: a stopped queue needs an
 * interrupt to be woken; buffers left with the device of a queue that has
 * been quiet for tx-usecs-irq need one too (nobody else will come by), and
 * so do those of a sender whose buffer was over half out (it may be
 * blocked on them); a busy queue only needs the deadline to stay armed.
 * Without TX NAPI the interrupt only wakes the queue and reclaims nothing,
 * and only XDP frames arm the deadline (skbs are orphaned): it repeats
 * while buffers are with the device.
 */
enum vnet_reclaim_next vnet_reclaim_after(const struct vnet_reclaim_cfg *cfg,
					  const struct vnet_reclaim_state *s,
					  unsigned int in_use,
					  bool queue_stopped, bool use_napi,
					  u64 now)
{
	if (!use_napi)
		return in_use ? VNET_RECLAIM_DEADLINE : VNET_RECLAIM_IDLE;
	if (queue_stopped || !vnet_reclaim_delayed(cfg))
		return VNET_RECLAIM_IRQ;
	if (!in_use)
		return VNET_RECLAIM_IDLE;
	if (vnet_reclaim_sndbuf_full(s, now) ||
	    vnet_ns_since(now, s->last_xmit_ns) >=
	    (u64)cfg->usecs * NSEC_PER_USEC)
		return VNET_RECLAIM_IRQ;
	return VNET_RECLAIM_DEADLINE;
}

/* When the reclaim deadline is due: tx-usecs-irq after the last packet. */
u64 vnet_reclaim_deadline(const struct vnet_reclaim_cfg *cfg,
			  const struct vnet_reclaim_state *s)
{
	return s->last_xmit_ns + (u64)cfg->usecs * NSEC_PER_USEC;
}
