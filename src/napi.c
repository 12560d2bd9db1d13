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
#include "compat.h"
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

	vnet_irq_count(&qp->rq.irq);
	vnet_napi_schedule(&qp->rq.napi, vq);
}

void vnet_tx_done(struct virtqueue *vq)
{
	struct vnet_qp *qp = vnet_vq_to_qp(vq);
	struct vnet_sq *sq = &qp->sq;

	vnet_irq_count(&sq->irq);
	if (sq->use_napi) {
		vnet_napi_schedule(&sq->napi, vq);
		return;
	}
	/* Without TX NAPI the interrupt only means: room in the ring. */
	virtqueue_disable_cb(vq);
	if (!READ_ONCE(sq->paused))
		netif_wake_subqueue(qp->vi->dev, qp->index);
}

static void vnet_sq_wake_if_room(struct vnet_sq *sq, struct netdev_queue *txq)
{
	if (netif_tx_queue_stopped(txq) && !sq->paused &&
	    vnet_reclaim_room(sq->vq->num_free, VNET_TX_DESC_MAX)) {
		netif_tx_wake_queue(txq);
		u64_stats_update_begin(&sq->stats.syncp);
		u64_stats_inc(&sq->stats.wakes);
		u64_stats_update_end(&sq->stats.syncp);
	}
}

/*
 * The RX poll of a pair also takes back that pair's TX completions, so
 * one interrupt serves both directions when traffic flows both ways.
 */
static void vnet_poll_cleantx(struct vnet_qp *qp, int budget)
{
	struct vnet_sq *sq = &qp->sq;
	struct netdev_queue *txq;

	if (!sq->use_napi)
		return;
	txq = netdev_get_tx_queue(qp->vi->dev, qp->index);
	if (!__netif_tx_trylock(txq))
		return;
	if (!sq->paused) {
		vnet_tx_reclaim(sq, budget);
		vnet_sq_wake_if_room(sq, txq);
	}
	__netif_tx_unlock(txq);
}

int vnet_poll_rx(struct napi_struct *napi, int budget)
{
	struct vnet_rq *rq = container_of(napi, struct vnet_rq, napi);
	int done;

	vnet_poll_cleantx(rq->qp, budget);
	done = vnet_rx_receive(rq, budget);

	u64_stats_update_begin(&rq->stats.syncp);
	u64_stats_inc(&rq->stats.napi_polls);
	u64_stats_update_end(&rq->stats.syncp);

	if (vnet_rx_mod_decide(&rq->mod, done, budget) == VNET_RX_REARM &&
	    vnet_napi_complete(napi, rq->vq, done)) {
		u64_stats_update_begin(&rq->stats.syncp);
		u64_stats_inc(&rq->stats.rearms);
		u64_stats_update_end(&rq->stats.syncp);
	}
	return done;
}

int vnet_poll_tx(struct napi_struct *napi, int budget)
{
	struct vnet_sq *sq = container_of(napi, struct vnet_sq, napi);
	struct vnet_qp *qp = sq->qp;
	struct netdev_queue *txq = netdev_get_tx_queue(qp->vi->dev, qp->index);
	unsigned int opaque;
	bool done;

	__netif_tx_lock(txq, raw_smp_processor_id());
	u64_stats_update_begin(&sq->stats.syncp);
	u64_stats_inc(&sq->stats.napi_polls);
	u64_stats_update_end(&sq->stats.syncp);

	virtqueue_disable_cb(sq->vq);
	vnet_tx_reclaim(sq, budget);
	vnet_sq_wake_if_room(sq, txq);

	/* Same race-free re-arm as vnet_napi_complete(), under the lock. */
	opaque = virtqueue_enable_cb_prepare(sq->vq);
	done = napi_complete_done(napi, 0);
	if (!done)
		virtqueue_disable_cb(sq->vq);
	__netif_tx_unlock(txq);

	if (done && unlikely(virtqueue_poll(sq->vq, opaque)) &&
	    napi_schedule_prep(napi)) {
		__netif_tx_lock(txq, raw_smp_processor_id());
		virtqueue_disable_cb(sq->vq);
		__netif_tx_unlock(txq);
		__napi_schedule(napi);
	}
	return 0;
}

/*
 * The pair's timer expired for the users in @expired.  Runs in softirq
 * context (soft hrtimer), so it may take the TX queue lock.
 */
void vnet_qp_timer_fired(struct vnet_qp_timer *t, unsigned long expired)
{
	struct vnet_qp *qp = container_of(t, struct vnet_qp, timer);
	struct netdev_queue *txq = netdev_get_tx_queue(qp->vi->dev, qp->index);

	if (expired & BIT(VNET_TIMER_TX_FLUSH)) {
		__netif_tx_lock(txq, smp_processor_id());
		vnet_tx_flush(&qp->sq);
		__netif_tx_unlock(txq);
	}
	if ((expired & BIT(VNET_TIMER_TX_RECLAIM)) && qp->sq.use_napi)
		vnet_napi_schedule(&qp->sq.napi, qp->sq.vq);
	if (expired & BIT(VNET_TIMER_RX_POLL))
		vnet_napi_schedule(&qp->rq.napi, qp->rq.vq);
}
