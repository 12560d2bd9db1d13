// SPDX-License-Identifier: GPL-2.0-only
/*
 * Queue pairs: allocation, virtqueue discovery and teardown, enabling
 * and disabling a pair, deferred refill, and the number of active pairs.
 *
 * Queue pair state (NAPI, timer, counters) lives from probe to remove;
 * virtqueues are re-created across freeze/restore.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irqdesc.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include "compat.h"
#include "vnet.h"

int vnet_qps_alloc(struct vnet *vi)
{
	unsigned int i;

	vi->qp = kcalloc(vi->max_pairs, sizeof(*vi->qp), GFP_KERNEL);
	if (!vi->qp)
		return -ENOMEM;

	for (i = 0; i < vi->max_pairs; i++) {
		struct vnet_qp *qp = &vi->qp[i];

		qp->vi = vi;
		qp->index = i;
		qp->rq.qp = qp;
		qp->rq.poll_cpu = -1;
		qp->sq.qp = qp;
		qp->sq.use_napi = vnet_opts.napi_tx;
		atomic64_set(&qp->sq.timeouts, 0);
		snprintf(qp->rq.name, sizeof(qp->rq.name), "input.%u", i);
		snprintf(qp->sq.name, sizeof(qp->sq.name), "output.%u", i);
		u64_stats_init(&qp->rq.stats.syncp);
		u64_stats_init(&qp->rq.irq.syncp);
		u64_stats_init(&qp->sq.stats.syncp);
		u64_stats_init(&qp->sq.irq.syncp);
		sg_init_table(qp->rq.sg, ARRAY_SIZE(qp->rq.sg));
		sg_init_table(qp->sq.sg, ARRAY_SIZE(qp->sq.sg));
		vnet_napi_add_rx(vi->dev, &qp->rq.napi, vnet_poll_rx,
				 vi->napi_weight, i);
		if (qp->sq.use_napi) {
			vnet_napi_add_tx(vi->dev, &qp->sq.napi, vnet_poll_tx,
					 vi->napi_weight);
			vnet_set_bql_floor(netdev_get_tx_queue(vi->dev, i),
					   VNET_RECLAIM_BQL_FLOOR);
		}
		vnet_qp_timer_init(&qp->timer, vnet_qp_timer_fired);
		vnet_qp_timer_init(&qp->rx_timer, vnet_qp_rx_timer_fired);
	}
	return 0;
}

void vnet_qps_free(struct vnet *vi)
{
	unsigned int i;

	if (!vi->qp)
		return;
	for (i = 0; i < vi->max_pairs; i++) {
		vnet_qp_timer_stop(&vi->qp[i].timer);
		vnet_qp_timer_stop(&vi->qp[i].rx_timer);
		netif_napi_del(&vi->qp[i].rq.napi);
		if (vi->qp[i].sq.use_napi)
			netif_napi_del(&vi->qp[i].sq.napi);
	}
	/* NAPI instances may still be referenced until a grace period ends. */
	synchronize_net();
	kfree(vi->qp);
	vi->qp = NULL;
}

/*
 * The IRQ of a virtqueue whose interrupt is its own: virtio-pci requests
 * one MSI-X vector per virtqueue, with the virtqueue as the handler's
 * cookie, when the device has enough vectors.  Returns -1 where the
 * virtqueue shares its interrupt (fewer vectors, INTx) or the transport
 * is not PCI: no NAPI then has an IRQ of its own to report.
 */
static int vnet_vq_irq(struct vnet *vi, struct virtqueue *vq)
{
	struct device *parent = vi->vdev->dev.parent;
	struct pci_dev *pdev;
	int v, n, irq;

	if (!VNET_CAN_NAPI_IRQ || !parent || !dev_is_pci(parent))
		return -1;
	pdev = to_pci_dev(parent);
	if (!pdev->msix_enabled)
		return -1;
	n = pci_msix_vec_count(pdev);
	for (v = 0; v < n; v++) {
		struct irq_data *data;
		struct irq_desc *desc;
		unsigned long flags;
		bool ours;

		irq = pci_irq_vector(pdev, v);
		if (irq < 0)
			break;
		data = irq_get_irq_data(irq);
		if (!data)
			continue;
		desc = irq_data_to_desc(data);
		raw_spin_lock_irqsave(&desc->lock, flags);
		ours = desc->action && !desc->action->next &&
		       desc->action->dev_id == vq;
		raw_spin_unlock_irqrestore(&desc->lock, flags);
		if (ours)
			return irq;
	}
	return -1;
}

/*
 * Link each NAPI to the IRQ that schedules it (netlink napi-get shows it),
 * or unlink them all before the virtqueues and their IRQs go.
 */
static void vnet_napi_link_irqs(struct vnet *vi, bool link)
{
	unsigned int i;

	for (i = 0; i < vi->max_pairs; i++) {
		struct vnet_qp *qp = &vi->qp[i];

		vnet_napi_set_irq(&qp->rq.napi,
				  link ? vnet_vq_irq(vi, qp->rq.vq) : -1);
		if (qp->sq.use_napi)
			vnet_napi_set_irq(&qp->sq.napi,
					  link ? vnet_vq_irq(vi, qp->sq.vq) : -1);
	}
}

/* Find all virtqueues: receiveq N = 2N, transmitq N = 2N + 1, control. */
int vnet_vqs_init(struct vnet *vi)
{
	unsigned int n = 2 * vi->max_pairs + (vi->has_cvq ? 1 : 0);
	vq_callback_t **callbacks;
	struct virtqueue **vqs;
	const char **names;
	bool *ctx;
	unsigned int i;
	int err = -ENOMEM;

	vqs = kcalloc(n, sizeof(*vqs), GFP_KERNEL);
	callbacks = kcalloc(n, sizeof(*callbacks), GFP_KERNEL);
	names = kcalloc(n, sizeof(*names), GFP_KERNEL);
	ctx = kcalloc(n, sizeof(*ctx), GFP_KERNEL);
	if (!vqs || !callbacks || !names || !ctx)
		goto out;

	for (i = 0; i < vi->max_pairs; i++) {
		callbacks[2 * i] = vnet_rx_done;
		callbacks[2 * i + 1] = vnet_tx_done;
		names[2 * i] = vi->qp[i].rq.name;
		names[2 * i + 1] = vi->qp[i].sq.name;
		/*
		 * Small and mergeable buffers carry their size as context.
		 * Big-packet chains do not, which leaves the ring free to use
		 * indirect descriptors for them.
		 */
		ctx[2 * i] = vi->rx_mode != VNET_RX_BIG;
	}
	if (vi->has_cvq)
		names[n - 1] = "control";

	err = vnet_find_vqs(vi->vdev, n, vqs, callbacks, names, ctx);
	if (err)
		goto out;

	for (i = 0; i < vi->max_pairs; i++) {
		vi->qp[i].rq.vq = vqs[2 * i];
		vi->qp[i].sq.vq = vqs[2 * i + 1];
		vnet_rx_setup(vi, &vi->qp[i].rq);
		vnet_tx_setup(&vi->qp[i].sq);
	}
	vi->cvq = vi->has_cvq ? vqs[n - 1] : NULL;
	vnet_napi_link_irqs(vi, true);
out:
	kfree(ctx);
	kfree(names);
	kfree(callbacks);
	kfree(vqs);
	return err;
}

/*
 * Reset the device and release every buffer and virtqueue.  Safe to call
 * when the virtqueues are already gone (a restore that failed): then it
 * only resets the device, which remove must leave reset.
 */
void vnet_vqs_teardown(struct vnet *vi)
{
	unsigned int i;
	void *buf;

	/* Wait for a command in flight; later ones find no queue. */
	mutex_lock(&vi->ctrl_lock);
	vi->cvq = NULL;
	mutex_unlock(&vi->ctrl_lock);

	vnet_reset_device(vi->vdev);
	/*
	 * The reset waited for running virtqueue callbacks (virtio-pci
	 * synchronizes its vectors) and no new one comes.  Without TX NAPI a
	 * completion callback wakes its queue; one that found the device
	 * still present may have done so after the caller stopped the
	 * queues.  Stop them again, waiting for a transmit in progress,
	 * before the buffers and virtqueues go.
	 */
	netif_tx_disable(vi->dev);
	if (!vi->qp[0].rq.vq)
		return;
	for (i = 0; i < vi->max_pairs; i++) {
		struct vnet_qp *qp = &vi->qp[i];

		while ((buf = virtqueue_detach_unused_buf(qp->sq.vq)))
			vnet_tx_free_buf(&qp->sq, buf);
		vnet_tx_reset_bql(&qp->sq);
		while ((buf = virtqueue_detach_unused_buf(qp->rq.vq)))
			vnet_rx_free_buf(&qp->rq, buf);
		vnet_rx_free_pages(&qp->rq);
	}
	vnet_napi_link_irqs(vi, false);
	vi->vdev->config->del_vqs(vi->vdev);
	for (i = 0; i < vi->max_pairs; i++) {
		vi->qp[i].rq.vq = NULL;
		vi->qp[i].sq.vq = NULL;
	}
}

void vnet_qp_enable(struct vnet *vi, unsigned int i)
{
	struct vnet_qp *qp = &vi->qp[i];

	vnet_qp_timer_start(&qp->timer);
	vnet_qp_timer_start(&qp->rx_timer);
	vnet_napi_enable(&qp->rq.napi, qp->rq.vq);
	vnet_queue_set_napi(vi->dev, i, true, &qp->rq.napi);
	if (qp->sq.use_napi) {
		vnet_napi_enable(&qp->sq.napi, qp->sq.vq);
		vnet_queue_set_napi(vi->dev, i, false, &qp->sq.napi);
	}
}

/*
 * Hand nothing more to pair @i's send queue: kick what is held back, stop
 * the queue and mark it paused, so that neither the stack, XDP nor a
 * completion restarts it before vnet_tx_resume().
 */
void vnet_tx_pause(struct vnet *vi, unsigned int i)
{
	struct netdev_queue *txq = netdev_get_tx_queue(vi->dev, i);
	struct vnet_sq *sq = &vi->qp[i].sq;

	__netif_tx_lock_bh(txq);
	vnet_tx_flush(sq);
	sq->paused = true;
	netif_tx_stop_queue(txq);
	vnet_txq_unlock_bh(sq, txq);
}

void vnet_tx_resume(struct vnet *vi, unsigned int i)
{
	struct netdev_queue *txq = netdev_get_tx_queue(vi->dev, i);

	__netif_tx_lock_bh(txq);
	vi->qp[i].sq.paused = false;
	vnet_tx_resumed(&vi->qp[i].sq, txq);
	vnet_txq_unlock_bh(&vi->qp[i].sq, txq);
}

/*
 * Take back what the device finished on pair @i; returns what is left to
 * wait for (nothing once the virtqueue is broken: a device that went away
 * finishes nothing more).
 */
static unsigned int vnet_tx_drain(struct vnet *vi, unsigned int i)
{
	struct netdev_queue *txq = netdev_get_tx_queue(vi->dev, i);
	struct vnet_sq *sq = &vi->qp[i].sq;
	unsigned int left;

	__netif_tx_lock_bh(txq);
	vnet_tx_reclaim(sq, 0, vnet_now());
	left = virtqueue_is_broken(sq->vq) ? 0 : vnet_sq_in_use(sq);
	vnet_txq_unlock_bh(sq, txq);
	return left;
}

void vnet_qp_disable(struct vnet *vi, unsigned int i)
{
	struct netdev_queue *txq = netdev_get_tx_queue(vi->dev, i);
	struct vnet_qp *qp = &vi->qp[i];

	vnet_qp_timer_stop(&qp->timer);
	vnet_qp_timer_stop(&qp->rx_timer);
	__netif_tx_lock_bh(txq);
	vnet_tx_timer_stopped(&qp->sq);
	vnet_txq_unlock_bh(&qp->sq, txq);
	if (qp->sq.use_napi) {
		vnet_queue_set_napi(vi->dev, i, false, NULL);
		napi_disable(&qp->sq.napi);
	}
	vnet_queue_set_napi(vi->dev, i, true, NULL);
	napi_disable(&qp->rq.napi);
}

/*
 * Deferred refill.  The work disables each active pair's RX NAPI while it
 * fills the ring, so it may only run while every pair's NAPI is enabled:
 * napi_disable() on an instance that is already off waits until someone
 * enables it, and where napi_disable() takes the device's instance lock
 * (6.15 on), it waits holding the lock that napi_enable() needs.  Refill
 * is therefore enabled after the pairs and disabled before them, and
 * stays disabled while ethtool -G has pairs stopped.  A refill asked for
 * meanwhile is remembered and runs when refill is enabled again.
 */
static void vnet_refill_request(struct vnet *vi, unsigned long delay)
{
	spin_lock_bh(&vi->work_lock);
	if (vi->refill_enabled)
		schedule_delayed_work(&vi->refill, delay);
	else
		vi->refill_missed = true;
	spin_unlock_bh(&vi->work_lock);
}

/* Every pair's NAPI is enabled: allow refill; @now: run it at once. */
void vnet_refill_enable(struct vnet *vi, bool now)
{
	spin_lock_bh(&vi->work_lock);
	vi->refill_enabled = true;
	if (now || vi->refill_missed)
		schedule_delayed_work(&vi->refill, 0);
	vi->refill_missed = false;
	spin_unlock_bh(&vi->work_lock);
}

/* Stop refill and wait for a running one; a pending one is remembered. */
void vnet_refill_disable(struct vnet *vi)
{
	spin_lock_bh(&vi->work_lock);
	vi->refill_enabled = false;
	spin_unlock_bh(&vi->work_lock);
	if (cancel_delayed_work_sync(&vi->refill)) {
		spin_lock_bh(&vi->work_lock);
		vi->refill_missed = true;
		spin_unlock_bh(&vi->work_lock);
	}
}

void vnet_rx_schedule_refill(struct vnet *vi)
{
	vnet_refill_request(vi, 0);
}

/*
 * Refill from process context, where allocations may sleep.  Scheduled
 * when a ring could not be refilled in NAPI; retried until it succeeds,
 * so a ring never stays empty because memory was short once.
 */
void vnet_refill_work(struct work_struct *work)
{
	struct vnet *vi = container_of(work, struct vnet, refill.work);
	unsigned int i;
	bool ok;

	for (i = 0; i < READ_ONCE(vi->curr_pairs); i++) {
		struct vnet_rq *rq = &vi->qp[i].rq;

		napi_disable(&rq->napi);
		ok = vnet_rx_fill(rq, GFP_KERNEL);
		vnet_napi_enable(&rq->napi, rq->vq);

		if (!ok)
			vnet_refill_request(vi, HZ / 2);
	}
}

/*
 * Bring every pair up (open, restore): fill the active pairs' rings while
 * their NAPI is still off, enable NAPI and timers, and only then allow
 * the deferred refill and a threaded-mode switch.  Caller holds RTNL.
 */
void vnet_pairs_start(struct vnet *vi)
{
	bool refill = false;
	unsigned int i;

	ASSERT_RTNL();
	for (i = 0; i < vi->max_pairs; i++) {
		if (i < vi->curr_pairs && !vnet_rx_fill(&vi->qp[i].rq, GFP_KERNEL))
			refill = true;
		vnet_qp_enable(vi, i);
	}
	vi->pairs_enabled = true;
	vnet_refill_enable(vi, refill);
	vnet_thr_resume(vi);
}

/*
 * Stop every pair (stop, freeze): refill first, then NAPI and timers.
 * Pairs that are already stopped (a failed restore) are left alone.
 * Caller holds RTNL.
 */
void vnet_pairs_stop(struct vnet *vi)
{
	unsigned int i;

	ASSERT_RTNL();
	vnet_refill_disable(vi);
	if (!vi->pairs_enabled)
		return;
	for (i = 0; i < vi->max_pairs; i++)
		vnet_qp_disable(vi, i);
	vi->pairs_enabled = false;
}

/*
 * Longest wait for the device to finish the packets of the send queues
 * that a smaller pair count disables.  QEMU's userspace device (7.2 and
 * the versions before it) stops a send queue that is disabled while its
 * flush is scheduled, and only resumes it when the pair is enabled again:
 * packets left there would keep their sockets' memory, and TCP does not
 * retransmit a segment whose original is still queued, so a flow would
 * stall for as long as the pair stays off.  Those queues therefore get
 * nothing more, and the device finishes what they have, before it is
 * told of the new count.  It normally takes well under a millisecond.
 * The same wait bounds the drain of every send queue at ifdown.
 */
#define VNET_TX_DRAIN_MS	1000

static void vnet_tx_drain_pairs(struct vnet *vi, unsigned int first,
				unsigned int last)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(VNET_TX_DRAIN_MS);
	unsigned int i = first, left;

	while (i < last) {
		left = vnet_tx_drain(vi, i);
		if (!left) {
			i++;
		} else if (time_after(jiffies, deadline)) {
			netdev_warn(vi->dev, "TX queue %u: the device still holds %u descriptors after %u ms; going on without them\n",
				    i, left, VNET_TX_DRAIN_MS);
			i++;
		} else {
			usleep_range(100, 200);
		}
	}
}

/*
 * The interface went down (its pairs are stopped): take back what the
 * device finishes, so that sockets and XDP frames' pages (a redirecting
 * NIC's pool may be waiting for them) are not held while it stays down.
 * Caller holds RTNL.
 */
void vnet_tx_drain_all(struct vnet *vi)
{
	ASSERT_RTNL();
	vnet_tx_drain_pairs(vi, 0, vi->max_pairs);
}

/* Change the number of active queue pairs.  Caller holds RTNL. */
int vnet_set_pairs(struct vnet *vi, u16 pairs)
{
	u16 old = vi->curr_pairs;
	unsigned int i;
	int err;

	ASSERT_RTNL();
	for (i = pairs; i < old; i++)
		vnet_tx_pause(vi, i);
	vnet_tx_drain_pairs(vi, pairs, old);
	err = vnet_ctrl_set_pairs(vi, pairs);
	if (!err) {
		WRITE_ONCE(vi->curr_pairs, pairs);
		netif_set_real_num_tx_queues(vi->dev, pairs);
		netif_set_real_num_rx_queues(vi->dev, pairs);
		if (pairs > old && netif_running(vi->dev))
			vnet_rx_schedule_refill(vi);
	}
	/* Disabled queues are ready for when the pairs come back. */
	for (i = pairs; i < old; i++)
		vnet_tx_resume(vi, i);
	return err;
}
