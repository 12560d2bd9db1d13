// SPDX-License-Identifier: GPL-2.0-only
/*
 * Interrupt callbacks and NAPI poll loops.
 *
 * A virtqueue interrupt only schedules NAPI and turns the virtqueue's
 * callbacks off; the poll does the work and decides, through the
 * moderation policy, when to turn them back on.  Re-arming follows the
 * race-free order: prepare the callback, complete NAPI, then check for
 * buffers that slipped in meanwhile and poll again if there are some.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netdevice.h>
#include <linux/sched.h>
#include "compat.h"
#include "policy/clock.h"
#include "vnet.h"

static void vnet_irq_count(struct vnet_irq_stats *s)
{
	u64_stats_update_begin(&s->syncp);
	u64_stats_inc(&s->interrupts);
	u64_stats_update_end(&s->syncp);
}

void vnet_napi_schedule(struct napi_struct *napi, struct virtqueue *vq)
{
	if (napi_schedule_prep(napi)) {
		virtqueue_disable_cb(vq);
		__napi_schedule(napi);
	}
}

/* Enable NAPI and poll once, for buffers used while it was off. */
void vnet_napi_enable(struct napi_struct *napi, struct virtqueue *vq)
{
	napi_enable(napi);
	local_bh_disable();
	vnet_napi_schedule(napi, vq);
	local_bh_enable();
}

/*
 * Complete a poll that did @done units of work.  Returns true when the
 * interrupt was re-enabled; false when the core keeps the NAPI instance
 * (busy polling, deferred hard interrupts) and callbacks stay off.
 */
static bool vnet_napi_complete(struct napi_struct *napi, struct virtqueue *vq,
			       int done)
{
	unsigned int opaque = virtqueue_enable_cb_prepare(vq);

	if (napi_complete_done(napi, done)) {
		if (unlikely(virtqueue_poll(vq, opaque)))
			vnet_napi_schedule(napi, vq);
		return true;
	}
	virtqueue_disable_cb(vq);
	return false;
}

void vnet_rx_done(struct virtqueue *vq)
{
	struct vnet_qp *qp = vnet_vq_to_qp(vq);
	struct vnet_irq_stats *s = &qp->rq.irq;

	/* Whether it cut into a task: see policy/threaded.h. */
	u64_stats_update_begin(&s->syncp);
	u64_stats_inc(&s->interrupts);
	if (!is_idle_task(current))
		u64_stats_inc(&s->interrupted_task);
	u64_stats_update_end(&s->syncp);
	vnet_napi_schedule(&qp->rq.napi, vq);
}

void vnet_tx_done(struct virtqueue *vq)
{
	struct vnet_qp *qp = vnet_vq_to_qp(vq);
	struct vnet_sq *sq = &qp->sq;

	vnet_irq_count(&sq->irq);
	if (sq->use_napi) {
		WRITE_ONCE(sq->irq_seen, true);
		vnet_napi_schedule(&sq->napi, vq);
		return;
	}
	/*
	 * Without TX NAPI the interrupt only means: room in the ring.  Not
	 * for a ring being resized (vnet_tx_resume() restarts it), nor on a
	 * device detached for freeze or after a failed restore: its queues
	 * stay stopped until restore attaches it (see vnet_vqs_teardown()).
	 */
	virtqueue_disable_cb(vq);
	if (!READ_ONCE(sq->paused) && netif_device_present(qp->vi->dev))
		netif_wake_subqueue(qp->vi->dev, qp->index);
}

/*
 * The RX poll of a pair also takes back that pair's TX completions, so
 * one interrupt serves both directions when traffic flows both ways.
 */
static u64 vnet_poll_cleantx(struct vnet_qp *qp, int budget)
{
	struct vnet_sq *sq = &qp->sq;
	struct netdev_queue *txq;
	u64 now = 0;

	if (!sq->use_napi)
		return 0;
	txq = netdev_get_tx_queue(qp->vi->dev, qp->index);
	if (!__netif_tx_trylock(txq))
		return 0;
	if (!sq->paused) {
		/* After the lock: packets added meanwhile are not newer. */
		now = vnet_now();
		vnet_tx_flush_overdue(sq, now);
		if (vnet_sq_in_use(sq)) {
			vnet_tx_reclaim(sq, budget, now);
			vnet_tx_wake_if_room(sq, txq);
		}
	}
	vnet_txq_unlock(sq, txq);
	return now;
}

int vnet_poll_rx(struct napi_struct *napi, int budget)
{
	struct vnet_rq *rq = container_of(napi, struct vnet_rq, napi);
	struct vnet_rx_poll poll = { .budget = budget };
	u64 defer_ns = 0, defer_max_ns = 0;
	enum vnet_rx_next next;
	u64 start;
	int done;

	/* The poll's time starts with the TX cleaning's clock reading. */
	start = vnet_poll_cleantx(rq->qp, budget);
	/* netpoll (budget 0, interrupts off) wants TX completions only */
	if (!budget)
		return 0;
	if (!start)
		start = vnet_now();
	/*
	 * What the stack sends on this pair while the poll runs here
	 * (acknowledgments, answers made in softirq context) is notified
	 * once, at the end (vnet_tx_poll_flush()).
	 */
	WRITE_ONCE(rq->poll_cpu, raw_smp_processor_id());
	vnet_rx_receive(rq, &poll);
	done = poll.work;

	poll.now = vnet_now();
	poll.answering = (s64)(poll.now -
			       READ_ONCE(rq->qp->vi->answer_until)) < 0;
	poll.fixed_rcv = (s64)(poll.now -
			       READ_ONCE(rq->qp->vi->fixed_rcv_until)) < 0;
	u64_stats_update_begin(&rq->stats.syncp);
	u64_stats_inc(&rq->stats.napi_polls);
	u64_stats_add(&rq->stats.poll_ns, vnet_ns_since(poll.now, start));
	if (poll.fixed_rcv)
		u64_stats_inc(&rq->stats.fixed_rcvbuf);
	u64_stats_update_end(&rq->stats.syncp);
	vnet_thr_poll(rq->qp->vi, poll.now);

	if (vnet_napi_core_defers(napi)) {
		/*
		 * The core's deferral (defer-hard-irqs with gro-flush-timeout)
		 * replaces ours: it keeps the instance after a poll with work
		 * and polls again itself.  Ours would add a deferral when the
		 * core lets go, and learn from polls it did not schedule.
		 */
		memset(&rq->mod, 0, sizeof(rq->mod));
		next = done >= budget ? VNET_RX_POLL_AGAIN : VNET_RX_REARM;
	} else {
		next = vnet_rx_mod_decide(&rq->mod, &rq->mod_cfg, &poll,
					  &defer_ns, &defer_max_ns);
	}
	switch (next) {
	case VNET_RX_POLL_AGAIN:
		break;
	case VNET_RX_REARM:
		if (vnet_napi_complete(napi, rq->vq, done)) {
			u64_stats_update_begin(&rq->stats.syncp);
			u64_stats_inc(&rq->stats.rearms);
			u64_stats_update_end(&rq->stats.syncp);
		}
		break;
	case VNET_RX_DEFER:
		/*
		 * The interrupt stays off; the pair's timer polls again.  If
		 * the core keeps the instance (busy polling, deferred hard
		 * interrupts), it polls again itself.
		 */
		if (napi_complete_done(napi, done)) {
			vnet_qp_timer_request_window(&rq->qp->rx_timer,
						     VNET_TIMER_RX_POLL,
						     defer_ns, defer_max_ns);
			u64_stats_update_begin(&rq->stats.syncp);
			u64_stats_inc(&rq->stats.deferrals);
			u64_stats_update_end(&rq->stats.syncp);
		}
		break;
	}
	/* After napi_complete_done(): its GRO flush may have sent more. */
	WRITE_ONCE(rq->poll_cpu, -1);
	vnet_tx_poll_flush(&rq->qp->sq);
	return done;
}

int vnet_poll_tx(struct napi_struct *napi, int budget)
{
	struct vnet_sq *sq = container_of(napi, struct vnet_sq, napi);
	struct vnet_qp *qp = sq->qp;
	struct netdev_queue *txq = netdev_get_tx_queue(qp->vi->dev, qp->index);
	enum vnet_reclaim_next next;
	bool irq, done, rearm = false;
	unsigned int opaque = 0;
	u64 now;

	/*
	 * netpoll polls with budget 0, interrupts off, possibly from a printk
	 * in a hard interrupt that came while this CPU held the queue lock
	 * (in vnet_start_xmit): waiting for the lock there would never end.
	 * It only tries; the lock holder leaves the queue its wake-up source,
	 * and a NAPI instance that was scheduled stays scheduled.
	 */
	if (!budget) {
		if (!__netif_tx_trylock(txq))
			return 0;
	} else {
		__netif_tx_lock(txq, raw_smp_processor_id());
	}
	/* After the lock: packets added meanwhile must not be newer than now. */
	now = vnet_now();
	irq = READ_ONCE(sq->irq_seen);
	WRITE_ONCE(sq->irq_seen, false);

	virtqueue_disable_cb(sq->vq);
	vnet_tx_flush_overdue(sq, now);
	u64_stats_update_begin(&sq->stats.syncp);
	u64_stats_inc(&sq->stats.napi_polls);
	u64_stats_update_end(&sq->stats.syncp);
	if (!vnet_tx_reclaim(sq, budget, now) && irq) {
		u64_stats_update_begin(&sq->stats.syncp);
		u64_stats_inc(&sq->stats.irq_empty);
		u64_stats_update_end(&sq->stats.syncp);
	}
	vnet_tx_wake_if_room(sq, txq);
	/* An AF_XDP socket with more to send keeps the poll going. */
	if (VNET_CAN_XSK_TX && budget && sq->xsk_pool &&
	    vnet_xsk_xmit(sq, budget) >= budget) {
		vnet_txq_unlock(sq, txq);
		return budget;
	}

	/*
	 * Re-enable the completion interrupt only if the reclaim policy wants
	 * one (stopped queue, quiet queue with buffers still out, stock
	 * mode); then with the race-free order of vnet_napi_complete().
	 */
	next = vnet_reclaim_after(&sq->reclaim_cfg, &sq->reclaim,
				  vnet_sq_in_use(sq), netif_xmit_stopped(txq),
				  true, now);
	if (!budget) {
		/*
		 * netpoll polls every instance, scheduled or not, and
		 * napi_complete_done() refuses while it owns one: no later
		 * poll is promised.  Leave the queue what the policy asks
		 * for, as a completed poll would (a stopped queue otherwise
		 * keeps neither interrupt nor deadline, and nothing wakes it).
		 */
		vnet_tx_rearm(sq, next);
		vnet_txq_unlock(sq, txq);
		return 0;
	}
	if (next == VNET_RECLAIM_IRQ)
		opaque = virtqueue_enable_cb_prepare(sq->vq);
	done = napi_complete_done(napi, 0);
	if (!done)
		virtqueue_disable_cb(sq->vq);
	else if (next == VNET_RECLAIM_DEADLINE && !sq->reclaim.deadline_armed)
		vnet_tx_reclaim_deadline(sq);
	vnet_txq_unlock(sq, txq);

	if (done && next == VNET_RECLAIM_IRQ &&
	    unlikely(virtqueue_poll(sq->vq, opaque)) && napi_schedule_prep(napi)) {
		__netif_tx_lock(txq, raw_smp_processor_id());
		virtqueue_disable_cb(sq->vq);
		vnet_txq_unlock(sq, txq);
		rearm = true;
	}
	if (rearm)
		__napi_schedule(napi);
	return 0;
}

/* Backstop retry when a flush found the TX queue lock taken. */
#define VNET_FLUSH_RETRY_MIN_NS	(20 * NSEC_PER_USEC)

/*
 * Hard interrupt context: the TX queue lock may only be tried.  When it
 * is taken, flush_wanted asks the holder (transmit, reclaim, the RX poll's
 * TX cleanup: each checks it before letting go) to kick; a retry a quarter
 * of tx-usecs later covers a holder that had already looked.  Retrying
 * sooner would only interrupt the holder again before it could finish.
 */
static void vnet_qp_flush_fired(struct vnet_qp *qp)
{
	struct netdev_queue *txq = netdev_get_tx_queue(qp->vi->dev, qp->index);
	u64 due = qp->timer.fired_limit[VNET_TIMER_TX_FLUSH];
	struct vnet_sq *sq = &qp->sq;

	if (!__netif_tx_trylock(txq)) {
		u64 retry = (u64)READ_ONCE(sq->kick_cfg.usecs) * NSEC_PER_USEC / 4;

		/* A retry keeps the first due time: lateness counts from it. */
		if (!READ_ONCE(sq->flush_wanted)) {
			WRITE_ONCE(sq->flush_limit, due);
			/* flush_limit before the flag: see vnet_tx_flush_wanted() */
			smp_store_release(&sq->flush_wanted, true);
		}
		vnet_qp_timer_request(&qp->timer, VNET_TIMER_TX_FLUSH,
				      max_t(u64, retry, VNET_FLUSH_RETRY_MIN_NS));
		return;
	}
	if (!sq->paused)
		vnet_tx_flush_timer(sq, READ_ONCE(sq->flush_wanted) ?
				    READ_ONCE(sq->flush_limit) : due);
	vnet_txq_unlock(sq, txq);
}

/*
 * The pair's transmit timer expired for the users in @expired: the kick
 * flush from the hrtimer in hard interrupt context, the reclaim deadline
 * from the timer wheel in softirq context.
 */
void vnet_qp_timer_fired(struct vnet_qp_timer *t, unsigned long expired)
{
	struct vnet_qp *qp = container_of(t, struct vnet_qp, timer);
	struct netdev_queue *txq = netdev_get_tx_queue(qp->vi->dev, qp->index);

	if (expired & BIT(VNET_TIMER_TX_FLUSH))
		vnet_qp_flush_fired(qp);
	if (expired & BIT(VNET_TIMER_TX_RECLAIM)) {
		__netif_tx_lock(txq, smp_processor_id());
		if (!qp->sq.paused)
			vnet_tx_reclaim_timer(&qp->sq);
		else	/* ring off limits: the resume asks again */
			qp->sq.reclaim.deadline_armed = false;
		vnet_txq_unlock(&qp->sq, txq);
	}
}

/*
 * The receive deferral ended (hard interrupt context, on the pair's CPU:
 * only its poll arms this timer): poll again.
 */
void vnet_qp_rx_timer_fired(struct vnet_qp_timer *t, unsigned long expired)
{
	struct vnet_qp *qp = container_of(t, struct vnet_qp, rx_timer);

	if (expired & BIT(VNET_TIMER_RX_POLL))
		vnet_napi_schedule(&qp->rq.napi, qp->rq.vq);
}
