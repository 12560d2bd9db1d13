// SPDX-License-Identifier: GPL-2.0-only
/*
 * Transmit path: header, scatter-gather mapping, ring space, kicks and
 * reclaim of completed buffers.
 *
 * When to notify the device is the kick policy's call (policy/kick.c),
 * when to take completed buffers back and whether to ask for a completion
 * interrupt the reclaim policy's (policy/reclaim.c); this file only
 * carries out their answers.  Both use the queue pair's timer: the kick
 * flush bounds how long a packet waits for its notification, the reclaim
 * deadline how long a completed buffer waits to be freed.
 *
 * Everything here runs under the TX queue lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netdevice.h>
#include <linux/netpoll.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/netfilter/nf_conntrack.h>
#include "compat.h"
#include "vnet.h"

static void vnet_sq_inc(struct vnet_sq *sq, u64_stats_t *ctr)
{
	u64_stats_update_begin(&sq->stats.syncp);
	u64_stats_inc(ctr);
	u64_stats_update_end(&sq->stats.syncp);
}

static struct netdev_queue *vnet_sq_txq(const struct vnet_sq *sq)
{
	return netdev_get_tx_queue(sq->qp->vi->dev, sq->qp->index);
}

/* Header storage for skbs whose headroom cannot take it. */
static struct virtio_net_hdr_mrg_rxbuf *vnet_skb_hdr(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(skb->cb) < VNET_HDR_TNL_LEN);
	return (struct virtio_net_hdr_mrg_rxbuf *)skb->cb;
}

/*
 * An AF_XDP socket in copy mode sends its frames as skbs: each returns to
 * the socket when its skb is freed, so it waits for the reclaim
 * (policy/reclaim.h).  Without TX NAPI skbs are orphaned before this is
 * asked.
 */
static bool vnet_tx_skb_waited(const struct sk_buff *skb)
{
	return skb->sk && skb->sk->sk_family == PF_XDP;
}

/*
 * What the transmit path reads of a TCP segment and its socket, once per
 * packet: the kick policy's classification and the release at send both
 * use it.  Racy reads of the socket: they only steer notifications and
 * memory accounting.
 */
struct vnet_tx_tcp {
	bool tcp;		/* sent by a full TCP socket (the fields below) */
	bool known;		/* plain TCP headers are set: @payload */
	/* the socket received data within the conversation window */
	bool answering;
	/* bytes after the TCP header; more than skb->len if they do not add up */
	unsigned int payload;
	/* written by the application and not sent, this segment's included */
	u32 unsent;
	/* the socket has Nagle's algorithm off (TCP_NODELAY) */
	bool nodelay;
	/* its application fixed the receive buffer (SO_RCVBUF) */
	bool rcv_fixed;
	/*
	 * its sender would rather a held batch went than wait on it: Nagle
	 * off, or a task that paces the socket (vnet_tx_sender_eager())
	 */
	bool eager;
	/* with @known: the segment's sequence number, the socket's oldest unacknowledged */
	u32 seq;
	u32 una;
	/* with @known: what limits the socket's next send */
	struct vnet_kick_room room;
};

/*
 * A TCP socket's own state may be read only when it is one: a raw socket
 * opened with IPPROTO_TCP has that protocol too, and a request or
 * time-wait socket is not a full one.
 */
static bool vnet_tx_sk_is_tcp(const struct sock *sk)
{
	return sk && sk_fullsock(sk) && sk->sk_type == SOCK_STREAM &&
	       sk->sk_protocol == IPPROTO_TCP &&
	       (sk->sk_family == AF_INET || sk->sk_family == AF_INET6);
}

/*
 * A sender other than TCP blocks on its send buffer and is woken when
 * half of it is free again: tell the reclaim policy when this packet's
 * socket has more than half out (policy/reclaim.h).  TCP has its own
 * limits, and an AF_XDP socket's frames are waited for anyway
 * (vnet_tx_skb_waited()).  Racy reads: they only steer the reclaim.
 */
static void vnet_tx_note_sndbuf(struct vnet_sq *sq, const struct sk_buff *skb,
				u64 now)
{
	const struct sock *sk = skb->sk;

	if (!sk || !sk_fullsock(sk) || vnet_tx_sk_is_tcp(sk) ||
	    vnet_tx_skb_waited(skb))
		return;
	if (vnet_reclaim_note_sndbuf(&sq->reclaim_cfg, &sq->reclaim,
				     sk_wmem_alloc_get(sk),
				     READ_ONCE(sk->sk_sndbuf), now))
		vnet_sq_inc(sq, &sq->stats.sndbuf_over_half);
}

/*
 * Fill @t for @skb; @window: the conversation window in jiffies
 * (policy/kick.h).  An answering socket received data within it.
 */
static void vnet_tx_tcp_read(const struct sk_buff *skb, u32 window,
			     struct vnet_tx_tcp *t)
{
	struct vnet_kick_room *r = &t->room;
	const struct sock *sk = skb->sk;
	const struct tcp_sock *tp;

	t->tcp = vnet_tx_sk_is_tcp(sk);
	if (!t->tcp)
		return;
	tp = tcp_sk(sk);
	t->answering = (u32)jiffies -
		       READ_ONCE(inet_csk(sk)->icsk_ack.lrcvtime) < window;
	t->unsent = READ_ONCE(tp->write_seq) - READ_ONCE(tp->snd_nxt);
	t->nodelay = tp->nonagle & TCP_NAGLE_OFF;
	t->rcv_fixed = sk->sk_userlocks & SOCK_RCVBUF_LOCK;
	t->known = !skb->encapsulation && skb_transport_header_was_set(skb);
	if (!t->known)
		return;
	t->payload = skb->len - skb_transport_offset(skb) - tcp_hdrlen(skb);
	t->seq = ntohl(tcp_hdr(skb)->seq);
	t->una = READ_ONCE(tp->snd_una);
	r->end = t->seq + t->payload;
	r->snd_wnd = READ_ONCE(tp->snd_wnd);
	r->wnd_end = t->una + r->snd_wnd;
	r->cwnd = vnet_tcp_snd_cwnd(tp);
	r->mss = READ_ONCE(tp->mss_cache);
	/*
	 * TCP counts a segment in flight when its transmit returns: one
	 * that comes straight from TCP is not counted yet, one that waited
	 * in a qdisc is.  Counting it here too can only overstate.
	 */
	r->in_flight = tcp_packets_in_flight(tp) +
		       max_t(u32, skb_shinfo(skb)->gso_segs, 1);
	r->divisor = READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_tso_win_divisor);
}

/*
 * Whether a TCP socket's sender would rather a held batch went than wait
 * on it (policy/kick.h): its application turned Nagle's algorithm off, or
 * its task paces it (sleeps between its writes, policy/reclaim.h).
 * @sender, @wake: the socket and the sending task's stamp as the kick
 * policy sees them (a zero stamp: no task sends).
 */
static bool vnet_tx_sender_eager(const struct vnet_sq *sq, bool nodelay,
				 u64 sender, u64 wake)
{
	return nodelay || vnet_reclaim_sender_paced(&sq->reclaim, sender, wake);
}

/*
 * Whether the sender of a TCP segment with data waits on the held batch
 * (policy/kick.h): the segment fills the window its peer offers; or the
 * sender has at most a full segment unacknowledged before the batch's
 * first segment of it and is eager (above) or left too little room to
 * send more.  That first segment is the watched one if the batch watches
 * this socket (vnet_tx_hold_note()); otherwise this segment stands for
 * it, which can only overstate what lies before the batch.  @window:
 * set when the windows tell, not eagerness.
 */
static bool vnet_tx_sender_waits(const struct vnet_sq *sq,
				 const struct sk_buff *skb,
				 const struct vnet_tx_tcp *t, bool *window)
{
	const struct vnet_kick_room *r = &t->room;
	u32 first;

	*window = false;
	if (!t->tcp || !t->known || !t->payload)
		return false;
	if (vnet_kick_window_full(r->end, r->wnd_end, r->mss)) {
		*window = true;
		return true;
	}
	first = skb->sk == sq->hold_sk ? sq->hold_seq : t->seq;
	if (!vnet_kick_unacked_before(t->una, first, r->mss))
		return false;
	if (t->eager)
		return true;
	*window = vnet_kick_tcp_defers(r);
	return *window;
}

/*
 * A packet was held: if it is a TCP segment with data, the batch may
 * watch it (vnet_kick_watch()): keep its socket (a reference) and
 * sequence number, so that the receive poll can tell when the socket
 * waits on the batch.
 *
 * The skb does not hold a reference to its socket: TCP's destructor
 * holds write memory only, which keeps the socket's memory but not the
 * socket.  A socket closed (or reset) while its segments waited in a
 * qdisc has no reference left, and taking one then would revive a socket
 * being freed (refcount_t: addition on 0).  Such a socket waits on
 * nothing: it is not watched.
 */
static void vnet_tx_hold_note(struct vnet_sq *sq, struct sk_buff *skb,
			      const struct vnet_tx_tcp *t)
{
	struct sock *old = sq->hold_sk;

	if (!t->tcp || !t->known || !t->payload || !skb->sk)
		return;
	if (!vnet_kick_watch(old, skb->sk == old, sq->hold_eager, t->eager)) {
		if (skb->sk == old && t->eager)
			WRITE_ONCE(sq->hold_eager, true);
		return;
	}
	if (!refcount_inc_not_zero(&skb->sk->sk_refcnt))
		return;
	sq->hold_seq = t->seq;
	WRITE_ONCE(sq->hold_sk, skb->sk);
	WRITE_ONCE(sq->hold_eager, t->eager);
	if (old)
		sock_put(old);
}

/* The held batch went out or was forgotten: let go of its socket. */
static void vnet_tx_hold_clear(struct vnet_sq *sq)
{
	struct sock *sk = sq->hold_sk;

	if (!sk)
		return;
	WRITE_ONCE(sq->hold_eager, false);
	WRITE_ONCE(sq->hold_sk, NULL);
	sock_put(sk);
}

/*
 * The last segment of an answer or of a paced message returns all but a
 * minimum skb's worth of its memory to its socket now (policy/reclaim.h).
 *
 * Nothing is assumed about who owns the skb at this point.  TCP's
 * destructor charged skb->truesize to the socket's write memory, but a
 * qdisc may have taken the skb over since (netem gives the memory back
 * at enqueue and leaves a destructor that holds a socket reference), and
 * so may anything else between the socket and the driver that orphans,
 * re-owns or clones it.  So the owner lets go the way it would at
 * completion (skb_orphan(): its own destructor, with the truesize it
 * knows), and the skb is then charged afresh to the same socket: a
 * minimum skb's worth, given back by sock_wfree() when it is freed.  The
 * new charge goes on first: the old owner may hold the last reference to
 * the socket, and a write-memory charge keeps it from being freed (the
 * socket's write memory is not zero while this skb still names it, by
 * its charge or by the reference the other owners hold).
 */
static void vnet_tx_release_at_send(struct vnet_sq *sq, struct sk_buff *skb,
				    const struct vnet_tx_tcp *t,
				    const struct vnet_kick_in *kin)
{
	const unsigned int keep = SKB_TRUESIZE(1);
	struct sock *sk = skb->sk;
	struct vnet_reclaim_seg seg;

	if (!t->tcp || !t->known || !t->payload || t->payload > skb->len)
		return;
	seg.sender = kin->sender;
	seg.wake = kin->wake;
	seg.answering = t->answering;
	seg.unsent = t->unsent;
	seg.payload = t->payload;
	/* asked for every segment with data: it notes the sender */
	if (!vnet_reclaim_release_at_send(&sq->reclaim_cfg, &sq->reclaim, &seg) ||
	    !skb->destructor || skb->truesize <= keep)
		return;
	refcount_add(keep, &sk->sk_wmem_alloc);
	skb_orphan(skb);
	skb->sk = sk;
	skb->destructor = sock_wfree;
	skb->truesize = keep;
	vnet_sq_inc(sq, &sq->stats.released_at_send);
}

/*
 * Free completed skbs and frames; @budget is non-zero only in NAPI
 * context.  With TX NAPI the byte queue limits learn of the completions
 * here.  Returns how many buffers came back.
 */
unsigned int vnet_tx_reclaim(struct vnet_sq *sq, int budget, u64 now)
{
	unsigned int len, frames = 0, packets = 0;
	u64 bytes = 0, frame_bytes = 0;
	struct sk_buff *skb;

	sq->reclaim.last_ns = now;
	while ((skb = virtqueue_get_buf(sq->vq, &len))) {
		/* XDP frames: no skb, no byte queue limits (xdp.c) */
		if (vnet_xdp_tx_done(sq, skb, &frame_bytes)) {
			frames++;
			continue;
		}
		if (unlikely(sq->reclaim.waited) && vnet_tx_skb_waited(skb))
			sq->reclaim.waited--;
		bytes += skb->len;
		packets++;
		napi_consume_skb(skb, budget);
	}
	if (VNET_CAN_XSK_TX && (sq->xsk_done || sq->xsk_lost))
		vnet_xsk_tx_completed(sq);
	if (!packets && !frames)
		return 0;

	if (packets && sq->use_napi)
		netdev_tx_completed_queue(vnet_sq_txq(sq), packets, bytes);
	/* The interface's totals count what XDP and AF_XDP sent too. */
	u64_stats_update_begin(&sq->stats.syncp);
	u64_stats_add(&sq->stats.packets, packets + frames);
	u64_stats_add(&sq->stats.bytes, bytes + frame_bytes);
	u64_stats_inc(&sq->stats.reclaim_batches);
	u64_stats_update_end(&sq->stats.syncp);
	return frames + packets;
}

/* A buffer detached unsent (reset, resize, removal): freed, not counted. */
void vnet_tx_free_buf(struct vnet_sq *sq, void *buf)
{
	if (!vnet_xdp_tx_done(sq, buf, NULL))
		dev_kfree_skb_any(buf);
}

/*
 * Buffers were freed outside completion: byte queue limits start over,
 * and none is waited for any more.
 */
void vnet_tx_reset_bql(struct vnet_sq *sq)
{
	sq->reclaim.waited = 0;
	if (sq->use_napi)
		netdev_tx_reset_queue(vnet_sq_txq(sq));
}

/*
 * A held batch goes out past its deadline, kicked by whatever got there
 * before the flush timer (a transmit, a poll, a full batch, a stopped
 * queue).  If the timer armed for it has not run although its window
 * ended, or ran and found the lock taken (flush_wanted), the timer is
 * late: record by how much, measured from when it was due, not from the
 * batch's deadline.  A batch whose timer was not armed, or armed too
 * late, records nothing or less, so its wait shows in max_hold_us as a
 * hold beyond tx-usecs that nothing excuses.  (The timer's own flush
 * records its lateness itself.)
 */
static void vnet_tx_note_late(struct vnet_sq *sq, u64 now)
{
	u64 due;

	if (!sq->kick.armed || !vnet_kick_overdue(&sq->kick, &sq->kick_cfg, now))
		return;
	/* Pairs with the release in vnet_qp_flush_fired(). */
	if (smp_load_acquire(&sq->flush_wanted))
		due = READ_ONCE(sq->flush_limit);
	else
		due = vnet_qp_timer_overdue_limit(&sq->qp->timer,
						  VNET_TIMER_TX_FLUSH, now);
	if (due)
		vnet_kick_flush_late(&sq->kick, due, now);
}

/*
 * Notify the device; every VNET_KICK_COST_SAMPLE-th notification is timed
 * for the kick policy (on KVM the time is the exit's).
 */
static bool vnet_tx_notify(struct vnet_sq *sq)
{
	u64 t0;
	bool ok;

	if (++sq->notify_seq % VNET_KICK_COST_SAMPLE)
		return virtqueue_notify(sq->vq);
	t0 = vnet_now();
	ok = virtqueue_notify(sq->vq);
	vnet_kick_cost(&sq->kick, vnet_now() - t0);
	return ok;
}

/* Notify the device of everything added so far, unless it opted out. */
static void vnet_tx_kick(struct vnet_sq *sq, enum vnet_kick_reason why,
			 u64 now)
{
	bool pending = sq->kick.pending;
	bool notify;

	vnet_tx_note_late(sq, now);
	notify = virtqueue_kick_prepare(sq->vq);

	u64_stats_update_begin(&sq->stats.syncp);
	if (notify) {
		if (vnet_tx_notify(sq))
			u64_stats_inc(&sq->stats.kicks);
	} else if (pending) {
		u64_stats_inc(&sq->stats.kicks_suppressed);
	}
	if (why == VNET_KICKED_TIMER)
		u64_stats_inc(&sq->stats.timer_flushes);
	else if (why == VNET_KICKED_POLL)
		u64_stats_inc(&sq->stats.poll_flushes);
	else if (why == VNET_KICKED_COUNT)
		u64_stats_inc(&sq->stats.batch_kicks);
	else if (why == VNET_KICKED_FORCED && pending)
		u64_stats_inc(&sq->stats.forced_kicks);
	else if (why == VNET_KICKED_WAITED)
		u64_stats_inc(&sq->stats.waiting_kicks);
	else if (why == VNET_KICKED_WINDOW)
		u64_stats_inc(&sq->stats.window_kicks);
	u64_stats_update_end(&sq->stats.syncp);

	/* A flush timer for this batch is no longer needed, nor its retry. */
	if (sq->kick.armed)
		vnet_qp_timer_cancel(&sq->qp->timer, VNET_TIMER_TX_FLUSH);
	if (unlikely(READ_ONCE(sq->flush_wanted)))
		WRITE_ONCE(sq->flush_wanted, false);
	vnet_kick_sample(&sq->kick, why, notify);
	if (vnet_kick_done(&sq->kick, &sq->kick_cfg, why, now))
		vnet_sq_inc(sq, &sq->stats.spared_senders);
	vnet_tx_hold_clear(sq);
}

/* Kick whatever is held back (teardown, reconfiguration, netpoll). */
void vnet_tx_flush(struct vnet_sq *sq)
{
	if (sq->kick.pending)
		vnet_tx_kick(sq, VNET_KICKED_FORCED, vnet_now());
}

/* Kick held packets that have waited their tx-usecs (any lock holder). */
void vnet_tx_flush_overdue(struct vnet_sq *sq, u64 now)
{
	if (vnet_kick_overdue(&sq->kick, &sq->kick_cfg, now))
		vnet_tx_kick(sq, VNET_KICKED_TIMER, now);
}

/*
 * The pair's receive poll ended on this CPU: notify the device of what it
 * sent (see policy/kick.h).  Only that poll's CPU marks packets so, and it
 * stopped marking them before it came here.  The acknowledgments it took
 * may have left the sender of a held batch waiting on it: notify that
 * batch too.
 */
void vnet_tx_poll_flush(struct vnet_sq *sq)
{
	struct netdev_queue *txq = vnet_sq_txq(sq);
	struct sock *sk;

	if (!READ_ONCE(sq->kick.poll) && !READ_ONCE(sq->hold_eager))
		return;
	__netif_tx_lock(txq, raw_smp_processor_id());
	sk = sq->hold_sk;
	if (sq->kick.poll && sq->kick.pending)
		vnet_tx_kick(sq, VNET_KICKED_POLL, vnet_now());
	else if (sk && sq->hold_eager && sq->kick.pending &&
		 vnet_kick_unacked_before(READ_ONCE(tcp_sk(sk)->snd_una),
					  sq->hold_seq,
					  READ_ONCE(tcp_sk(sk)->mss_cache)) &&
		 vnet_tx_sender_eager(sq, tcp_sk(sk)->nonagle & TCP_NAGLE_OFF,
				      (unsigned long)sk, 0))
		vnet_tx_kick(sq, VNET_KICKED_WAITED, vnet_now());
	vnet_txq_unlock(sq, txq);
}

/*
 * What the kick policy needs to know about @skb (see policy/kick.h): a
 * TCP segment is sorted by vnet_kick_classify_tcp() (bulk, large, part of
 * a stream, a pure acknowledgment); of anything else only a GSO packet is
 * large (vnet_kick_classify_other()).
 */
static void vnet_tx_classify(const struct sk_buff *skb,
			     const struct vnet_tx_tcp *t,
			     struct vnet_kick_in *kin)
{
	struct vnet_kick_seg seg;

	if (!t->tcp) {
		vnet_kick_classify_other(skb_is_gso(skb), kin);
		return;
	}
	/* Headers that do not add up: neither. */
	if (t->known && t->payload > skb->len) {
		vnet_kick_classify_other(false, kin);
		return;
	}
	seg.known = t->known;
	seg.gso = skb_is_gso(skb);
	seg.answering = t->answering;
	seg.payload = t->known ? t->payload : 0;
	seg.unsent = t->unsent;
	vnet_kick_classify_tcp(&seg, kin);
}

/*
 * The kick policy's view of the sending task (policy/kick.h): a stamp that
 * changes when the task sleeps (which task it is, and its count of
 * voluntary context switches); 0 in softirq or interrupt context, where
 * no task sends.
 */
static u64 vnet_tx_wake_stamp(void)
{
	if (!in_task())
		return 0;
	return (u64)task_pid_nr(current) << 32 | (u32)READ_ONCE(current->nvcsw);
}

/*
 * Move a device-wide time the receive polls read (vnet.h: answer_until,
 * fixed_rcv_until) to this queue's @until.  It is written only when
 * @until passes it, and then half a conversation window beyond, so that
 * queues busy on several CPUs do not bounce its cache line (a queue
 * writes it at most once per half window); the polls see the state for
 * the whole window after the last packet that set it, and for at most
 * half a window more.
 */
static void vnet_tx_note_until(const struct vnet_sq *sq, u64 *dev_until,
			       u64 until)
{
	u64 half = (u64)vnet_kick_conv_usecs(&sq->kick_cfg) * NSEC_PER_USEC / 2;

	if ((s64)(until - READ_ONCE(*dev_until)) > 0)
		WRITE_ONCE(*dev_until, until + half);
}

/*
 * Let the receive polls know whether the guest is answering: the kick
 * policy moves its answer window on every packet that is neither bulk
 * nor a pure acknowledgment, whatever the settings (policy/kick.h).
 */
static void vnet_tx_note_answer(struct vnet_sq *sq)
{
	vnet_tx_note_until(sq, &sq->qp->vi->answer_until,
			   sq->kick.answer_until);
}

/*
 * A pure acknowledgment of a TCP socket whose receive buffer its
 * application fixed (SO_RCVBUF): its window cannot grow, so its sender
 * can have no more than that window in flight, and a receive deferral
 * would stop it for the rest of the deferral (policy/rx_moderation.h).
 * The receive polls defer nothing for the conversation window after
 * the last one.
 */
static void vnet_tx_note_fixed_rcv(struct vnet_sq *sq,
				   const struct vnet_tx_tcp *t,
				   const struct vnet_kick_in *kin, u64 now)
{
	if (!t->rcv_fixed || !kin->pure_ack)
		return;
	vnet_tx_note_until(sq, &sq->qp->vi->fixed_rcv_until,
			   now + (u64)vnet_kick_conv_usecs(&sq->kick_cfg) *
				 NSEC_PER_USEC);
}

/*
 * The kick flush timer, due at @due, expired: the held packets have
 * waited enough.
 */
void vnet_tx_flush_timer(struct vnet_sq *sq, u64 due)
{
	u64 now = vnet_now();

	WRITE_ONCE(sq->flush_wanted, false);
	if (!sq->kick.pending)
		return;
	vnet_kick_flush_late(&sq->kick, due, now);
	vnet_tx_kick(sq, VNET_KICKED_TIMER, now);
}

/*
 * Make sure the reclaim deadline is pending.  It is a coarse user of the
 * pair's timer (see timer.h): it expires on a tick, costing no timer
 * exit of its own while the CPU is busy.
 */
void vnet_tx_reclaim_deadline(struct vnet_sq *sq)
{
	u64 due = vnet_reclaim_deadline(&sq->reclaim_cfg, &sq->reclaim);

	/* A due time already past expires on the next tick. */
	sq->reclaim.deadline_armed =
		vnet_qp_timer_request_at(&sq->qp->timer, VNET_TIMER_TX_RECLAIM,
					 due, due);
}

/*
 * The pair's timer was stopped (queue pair disabled) and dropped every
 * deadline: kick what is held and forget the deadlines, so that they are
 * asked for again once the pair runs.  Caller holds the TX queue lock.
 */
void vnet_tx_timer_stopped(struct vnet_sq *sq)
{
	vnet_tx_flush(sq);
	sq->kick.armed = false;
	sq->reclaim.deadline_armed = false;
}

/*
 * Ask for a completion interrupt.  If completions arrived meanwhile the
 * callback cannot be armed race-free: take them now (TX NAPI, or directly
 * without it).
 */
static void vnet_tx_want_irq(struct vnet_sq *sq)
{
	if (likely(virtqueue_enable_cb_delayed(sq->vq)))
		return;
	if (sq->use_napi)
		vnet_napi_schedule(&sq->napi, sq->vq);
}

/* Wake a queue the ring stopped once a worst-case packet fits again. */
void vnet_tx_wake_if_room(struct vnet_sq *sq, struct netdev_queue *txq)
{
	if (netif_tx_queue_stopped(txq) && !sq->paused &&
	    vnet_reclaim_room(sq->vq->num_free, VNET_TX_DESC_MAX)) {
		netif_tx_wake_queue(txq);
		vnet_sq_inc(sq, &sq->stats.wakes);
	}
}

/*
 * Make sure what the reclaim policy asked for after a reclaim is pending:
 * the completion interrupt, or the deadline.
 */
void vnet_tx_rearm(struct vnet_sq *sq, enum vnet_reclaim_next next)
{
	switch (next) {
	case VNET_RECLAIM_IRQ:
		vnet_tx_want_irq(sq);
		break;
	case VNET_RECLAIM_DEADLINE:
		if (!sq->reclaim.deadline_armed)
			vnet_tx_reclaim_deadline(sq);
		break;
	case VNET_RECLAIM_IDLE:
		break;
	}
}

/*
 * The reclaim deadline expired: free what is done, then make sure the
 * rest is not forgotten - by an interrupt if the queue has gone quiet, by
 * another deadline if it is still busy.
 */
void vnet_tx_reclaim_timer(struct vnet_sq *sq)
{
	struct netdev_queue *txq = vnet_sq_txq(sq);
	u64 now = vnet_now();

	sq->reclaim.deadline_armed = false;
	vnet_sq_inc(sq, &sq->stats.reclaim_deadlines);
	vnet_tx_flush_overdue(sq, now);
	vnet_tx_reclaim(sq, 0, now);
	vnet_tx_wake_if_room(sq, txq);
	vnet_tx_rearm(sq, vnet_reclaim_after(&sq->reclaim_cfg, &sq->reclaim,
					     vnet_sq_in_use(sq),
					     netif_xmit_stopped(txq),
					     sq->use_napi, now));
}

/*
 * The TX watchdog found the queue stopped for too long: whatever was to
 * wake it did not.  Notify the device again (a lost notification is the
 * one device-side cause the guest can repair), take back what is done
 * and wake the queue if a packet fits; if it stays stopped, ask again for
 * what wakes it: TX NAPI is polled (the poll arms the interrupt race-free
 * if it must), without TX NAPI the interrupt is armed.  Caller holds the
 * TX queue lock.
 */
void vnet_tx_recover(struct vnet_sq *sq)
{
	struct netdev_queue *txq = vnet_sq_txq(sq);
	u64 now = vnet_now();

	/* Ring being resized: vnet_tx_resume() restarts the queue. */
	if (sq->paused)
		return;
	vnet_tx_flush(sq);
	virtqueue_notify(sq->vq);
	vnet_tx_reclaim(sq, 0, now);
	vnet_tx_wake_if_room(sq, txq);
	if (netif_xmit_stopped(txq)) {
		if (sq->use_napi) {
			vnet_napi_schedule(&sq->napi, sq->vq);
		} else if (!virtqueue_enable_cb_delayed(sq->vq)) {
			vnet_tx_reclaim(sq, 0, now);
			vnet_tx_wake_if_room(sq, txq);
		}
	}
}

/* Derive the policies' views of the queue's coalescing settings. */
static void vnet_tx_apply_coal(struct vnet_sq *sq)
{
	sq->kick_cfg.frames = vnet_tx_frames(&sq->coal, sq->ring);
	sq->kick_cfg.usecs = sq->coal.usecs;
	sq->kick_cfg.adaptive = sq->coal.adaptive;
	vnet_kick_init(&sq->kick, &sq->kick_cfg);
	vnet_tx_hold_clear(sq);
	sq->pacing_shift = vnet_kick_pacing_shift(&sq->kick_cfg);
	/*
	 * The conversation window (vnet_tx_tcp_read()) in ticks, rounded up
	 * and one more: lrcvtime is in ticks.
	 */
	sq->kick_conv_jiffies = usecs_to_jiffies(vnet_kick_conv_usecs(&sq->kick_cfg)) + 1;
	sq->reclaim_cfg.frames = vnet_tx_irq_frames(&sq->coal, sq->ring);
	sq->reclaim_cfg.usecs = sq->coal.irq_usecs;
	/* Delayed reclaim runs with completion interrupts off. */
	if (sq->use_napi && vnet_reclaim_delayed(&sq->reclaim_cfg))
		virtqueue_disable_cb(sq->vq);
	else if (sq->use_napi)
		virtqueue_enable_cb(sq->vq);
}

/* A new virtqueue (probe, restore, resize): fresh state, same settings. */
void vnet_tx_setup(struct vnet_sq *sq)
{
	sq->ring = virtqueue_get_vring_size(sq->vq);
	memset(&sq->reclaim, 0, sizeof(sq->reclaim));
	sq->irq_seen = false;
	vnet_tx_apply_coal(sq);
}

/* New coalescing settings; caller holds the TX queue lock. */
void vnet_tx_set_coal(struct vnet_sq *sq, const struct vnet_tx_coal *c)
{
	/* Packets held under the old settings go out now. */
	vnet_tx_flush(sq);
	/* max_hold_us reports the longest hold under the current settings. */
	sq->kick.max_hold_ns = 0;
	sq->kick.max_late_ns = 0;
	vnet_qp_timer_max_late(&sq->qp->timer, VNET_TIMER_TX_FLUSH, true);
	sq->coal = *c;
	vnet_tx_apply_coal(sq);
	if (sq->use_napi && vnet_reclaim_delayed(&sq->reclaim_cfg) &&
	    vnet_sq_in_use(sq) && !sq->reclaim.deadline_armed)
		vnet_tx_reclaim_deadline(sq);
}

static int vnet_tx_map(struct vnet_sq *sq, struct sk_buff *skb)
{
	struct vnet *vi = sq->qp->vi;
	unsigned int hdr_len = vi->hdr_len;
	struct virtio_net_hdr_mrg_rxbuf *hdr;
	bool push;
	int n;

	/*
	 * Put the header right in front of the frame when the device accepts
	 * header and data in one descriptor and the headroom is ours, aligned
	 * and large enough; otherwise it goes in its own descriptor.
	 */
	push = vi->any_header_sg &&
	       IS_ALIGNED((unsigned long)skb->data, __alignof__(*hdr)) &&
	       !skb_header_cloned(skb) && skb_headroom(skb) >= hdr_len;
	hdr = push ? (struct virtio_net_hdr_mrg_rxbuf *)(skb->data - hdr_len) :
		     vnet_skb_hdr(skb);

	/*
	 * num_buffers and the hash report fields are unused on transmit;
	 * the UDP tunnel offsets are filled in for tunnel GSO frames only.
	 */
	if (hdr_len > sizeof(hdr->hdr))
		memset((u8 *)hdr + sizeof(hdr->hdr), 0,
		       hdr_len - sizeof(hdr->hdr));
	if (vnet_hdr_from_skb(skb, hdr, vi->tx_tnl, vi->little_endian))
		return -EPROTO;

	sg_init_table(sq->sg, skb_shinfo(skb)->nr_frags + (push ? 1 : 2));
	if (push) {
		__skb_push(skb, hdr_len);
		n = skb_to_sgvec(skb, sq->sg, 0, skb->len);
		__skb_pull(skb, hdr_len);
		if (n < 0)
			return n;
	} else {
		sg_set_buf(sq->sg, hdr, hdr_len);
		n = skb_to_sgvec(skb, sq->sg + 1, 0, skb->len);
		if (n < 0)
			return n;
		n++;
	}
	return virtqueue_add_outbuf(sq->vq, sq->sg, n, skb, GFP_ATOMIC);
}

/*
 * Stock reclaim arms the completion interrupt at the end of each burst;
 * completions that raced with arming it are taken right away.
 */
static void vnet_tx_stock_burst_end(struct vnet_sq *sq, u64 now)
{
	while (unlikely(!virtqueue_enable_cb_delayed(sq->vq))) {
		virtqueue_disable_cb(sq->vq);
		vnet_tx_reclaim(sq, 0, now);
	}
}

/* The stack ended a burst: make sure its completions will be reclaimed. */
static void vnet_tx_burst_end(struct vnet_sq *sq, u64 now)
{
	switch (vnet_reclaim_at_burst_end(&sq->reclaim_cfg, &sq->reclaim,
					  vnet_sq_in_use(sq), sq->use_napi,
					  now)) {
	case VNET_RECLAIM_IRQ:
		vnet_tx_stock_burst_end(sq, now);
		break;
	case VNET_RECLAIM_DEADLINE:
		vnet_tx_reclaim_deadline(sq);
		break;
	case VNET_RECLAIM_IDLE:
		break;
	}
}

/*
 * The queue is stopped: something must wake it, the completion interrupt.
 * Without TX NAPI, completions that raced with arming it may restart the
 * queue at once.
 */
static void vnet_tx_wake_source(struct vnet_sq *sq, struct netdev_queue *txq,
				u64 now)
{
	if (sq->use_napi) {
		vnet_tx_want_irq(sq);
		return;
	}
	if (unlikely(!virtqueue_enable_cb_delayed(sq->vq))) {
		vnet_tx_reclaim(sq, 0, now);
		if (vnet_reclaim_room(sq->vq->num_free, VNET_TX_DESC_MAX)) {
			virtqueue_disable_cb(sq->vq);
			netif_tx_wake_queue(txq);
			vnet_sq_inc(sq, &sq->stats.wakes);
		}
	}
}

/*
 * The queue runs again after a pause (ring resize, fewer queue pairs).
 * What the buffers still with the device need (the deadline, or the
 * interrupt in stock mode) is asked for again, since a deadline that
 * expired during the pause did nothing; and the queue is woken only if a
 * worst-case packet fits, else the completion interrupt wakes it.
 * Caller holds the TX queue lock.
 */
void vnet_tx_resumed(struct vnet_sq *sq, struct netdev_queue *txq)
{
	u64 now = vnet_now();

	vnet_tx_burst_end(sq, now);
	if (vnet_reclaim_room(sq->vq->num_free, VNET_TX_DESC_MAX))
		netif_tx_wake_queue(txq);
	else
		vnet_tx_wake_source(sq, txq, now);
}

/*
 * XDP frames go into the ring (xdp.c), on a queue of their own or the
 * stack's: take back what is done by the same rule as transmit does,
 * before adding @n frames (also when they would not fit).
 */
void vnet_tx_xdp_reclaim(struct vnet_sq *sq, unsigned int n, u64 now)
{
	if (vnet_reclaim_on_xmit(&sq->reclaim_cfg, &sq->reclaim,
				 vnet_sq_in_use(sq), now) ||
	    sq->vq->num_free < n)
		vnet_tx_reclaim(sq, 0, now);
}

/* XDP frames were added: make sure they will be reclaimed in time. */
void vnet_tx_xdp_sent(struct vnet_sq *sq, u64 now)
{
	enum vnet_reclaim_next next;

	sq->reclaim.last_xmit_ns = now;
	next = vnet_reclaim_xdp_sent(&sq->reclaim_cfg, &sq->reclaim,
				     vnet_sq_in_use(sq), sq->use_napi, now);
	if (next == VNET_RECLAIM_IRQ)
		vnet_tx_stock_burst_end(sq, now);
	else
		vnet_tx_rearm(sq, next);
}

/* The ring or the byte queue limit stopped the queue. */
static void vnet_tx_stopped(struct vnet_sq *sq, struct netdev_queue *txq,
			    u64 now)
{
	vnet_sq_inc(sq, &sq->stats.stops);
	vnet_tx_wake_source(sq, txq, now);
}

netdev_tx_t vnet_start_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct vnet *vi = netdev_priv(dev);
	unsigned int qi = skb_get_queue_mapping(skb);
	struct netdev_queue *txq = netdev_get_tx_queue(dev, qi);
	struct vnet_sq *sq = &vi->qp[qi].sq;
	bool more = netdev_xmit_more();
	u64 now = vnet_now();
	struct vnet_kick_in kin = {};
	struct vnet_tx_tcp tcp = {};
	enum vnet_kick_action action;
	unsigned int len = skb->len;
	/* A software transmit timestamp is wanted: see below. */
	bool stamp = skb_shinfo(skb)->tx_flags & SKBTX_SW_TSTAMP;
	u64 deadline;
	int err;

	if (unlikely(sq->paused)) {
		/* Ring being resized: the stack requeues this skb. */
		netif_tx_stop_queue(txq);
		vnet_tx_flush_wanted(sq);
		return NETDEV_TX_BUSY;
	}

	/* Without TX NAPI the skb is orphaned below: nobody waits on it. */
	if (sq->use_napi)
		vnet_tx_note_sndbuf(sq, skb, now);
	if (vnet_reclaim_on_xmit(&sq->reclaim_cfg, &sq->reclaim,
				 vnet_sq_in_use(sq), now)) {
		if (sq->use_napi && !vnet_reclaim_delayed(&sq->reclaim_cfg))
			virtqueue_disable_cb(sq->vq);
		vnet_tx_reclaim(sq, 0, now);
	}

	err = vnet_tx_map(sq, skb);
	if (unlikely(err == -ENOSPC)) {
		/*
		 * The queue stops whenever a worst-case packet no longer fits,
		 * so whoever woke it did so too early: the stack keeps the
		 * packet, the queue waits for completions to make room.
		 */
		netif_tx_stop_queue(txq);
		vnet_tx_stopped(sq, txq, now);
		vnet_tx_flush(sq);
		vnet_tx_flush_wanted(sq);
		return NETDEV_TX_BUSY;
	}
	if (unlikely(err)) {
		vnet_sq_inc(sq, &sq->stats.drops);
		net_warn_ratelimited("%s: TX queue %u: dropped a packet: %d\n",
				     dev->name, qi, err);
		dev_kfree_skb_any(skb);
		/* Packets added before this one still need their kick and reclaim. */
		if (!more) {
			vnet_tx_flush(sq);
			vnet_tx_burst_end(sq, now);
		}
		vnet_tx_flush_wanted(sq);
		return NETDEV_TX_OK;
	}
	sq->reclaim.last_xmit_ns = now;
	/*
	 * The packet is in the ring; the device is notified right after (a
	 * timestamped packet is never held, see the kick below), so the
	 * stamp marks when the device learns of it.  Before skb_orphan():
	 * it goes to the socket.
	 */
	skb_tx_timestamp(skb);
	/*
	 * Before the skb may be orphaned below.  In every mode: the kick
	 * policy keeps the conversation window for the receive side even
	 * when it never holds a packet (policy/kick.h).
	 */
	vnet_tx_tcp_read(skb, sq->kick_conv_jiffies, &tcp);
	vnet_tx_classify(skb, &tcp, &kin);
	kin.sender = skb->sk && sk_fullsock(skb->sk) ? (unsigned long)skb->sk : 0;
	kin.wake = vnet_tx_wake_stamp();
	tcp.eager = tcp.tcp &&
		    vnet_tx_sender_eager(sq, tcp.nodelay, kin.sender, kin.wake);
	kin.waits = vnet_tx_sender_waits(sq, skb, &tcp, &kin.window);
	/* TCP Small Queues must allow for the hold (see policy/kick.h). */
	if (skb->sk && sq->pacing_shift < VNET_KICK_TCP_PACING_SHIFT)
		sk_pacing_shift_update(skb->sk, sq->pacing_shift);

	if (sq->use_napi) {
		netdev_tx_sent_queue(txq, len);
		if (vnet_tx_skb_waited(skb))
			sq->reclaim.waited++;
		else
			vnet_tx_release_at_send(sq, skb, &tcp, &kin);
	} else {
		/* Without completion interrupts, sockets must not wait for them. */
		skb_orphan(skb);
		nf_reset_ct(skb);
	}

	if (!vnet_reclaim_room(sq->vq->num_free, VNET_TX_DESC_MAX))
		netif_tx_stop_queue(txq);
	if (netif_xmit_stopped(txq))
		vnet_tx_stopped(sq, txq, now);

	kin.now = now;
	kin.len = len;
	kin.xmit_more = more;
	kin.queue_stopped = netif_xmit_stopped(txq);
	kin.urgent = netpoll_tx_running(dev) || stamp;
	kin.in_poll = READ_ONCE(sq->qp->rq.poll_cpu) == raw_smp_processor_id();
	action = vnet_kick_decide(&sq->kick, &sq->kick_cfg, &kin);
	vnet_tx_note_answer(sq);
	vnet_tx_note_fixed_rcv(sq, &tcp, &kin, now);
	switch (action) {
	case VNET_KICK_NOW:
		vnet_tx_kick(sq, sq->kick.why, now);
		break;
	case VNET_KICK_ARM:
		/*
		 * The flush may come in the second half of the hold window:
		 * when a tick falls there, the flush costs no timer exit.
		 * Absolute times: this transmit may have taken a while since
		 * @now (a reclaim, a vCPU the host did not run).
		 */
		deadline = vnet_kick_deadline(&sq->kick, &sq->kick_cfg);
		if (!vnet_qp_timer_request_at(&sq->qp->timer,
					      VNET_TIMER_TX_FLUSH,
					      deadline - (deadline - now) / 2,
					      deadline)) {
			/* Pair being disabled: nothing would flush later. */
			vnet_tx_kick(sq, VNET_KICKED_FORCED, now);
			break;
		}
		fallthrough;
	case VNET_KICK_HOLD:
	case VNET_KICK_POLL:
		if (!more)
			vnet_sq_inc(sq, &sq->stats.kicks_held);
		if (sq->kick.pending)
			vnet_tx_hold_note(sq, skb, &tcp);
		break;
	}

	if (!more)
		vnet_tx_burst_end(sq, now);
	vnet_tx_flush_wanted(sq);
	return NETDEV_TX_OK;
}
