// SPDX-License-Identifier: GPL-2.0-only
/*
 * AF_XDP zero-copy: a socket's buffer pool bound to one queue pair.
 *
 * Receive.  While a pool is bound, the pair's receive ring holds only
 * the pool's buffers, posted already DMA-mapped by the pool.  Each one is
 * offered to the device with the virtio-net header just before the frame
 * data, in the pool's headroom, so a frame lands where the socket expects
 * it.  The attached program (xdp.c) runs on frames of one buffer; what it
 * redirects to the socket's XSKMAP stays in place, what it passes (and
 * every frame without a program) is copied into an skb and the buffer
 * goes back to the pool.  Frames spread over several mergeable buffers
 * (GSO, with guest offloads on) are passed only.
 *
 * Transmit.  Frames from the socket's TX ring go into the pair's send
 * queue next to the stack's skbs, behind one zeroed header the driver
 * maps once (no offloads), from the pair's TX NAPI poll, which also runs
 * when the socket wakes the queue (ndo_xsk_wakeup).  Their tokens carry
 * the length only (policy/xdp.h); reclaim tells the pool how many
 * completed.
 *
 * Binding and unbinding swap the receive buffers with a reset of that one
 * virtqueue (VIRTIO_F_RING_RESET), as ring resizing does; unbinding also
 * resets the send queue, so that the device holds none of the socket's
 * frames when the pool goes.  The pool's DMA mapping needs the device to
 * use the DMA API (VIRTIO_F_ACCESS_PLATFORM).  All of it runs under RTNL.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/filter.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/xdp.h>
#include <net/xdp_sock_drv.h>
#include "compat.h"
#include "vnet.h"

#if VNET_CAN_XSK

/* --- receive --- */

/*
 * Post the pool's buffers until the ring is full or the pool has none
 * left.  False asks for a retry from the refill work: the pool ran dry
 * and the socket does not use need_wakeup to tell us when it refilled.
 */
bool vnet_xsk_fill(struct vnet_rq *rq, struct xsk_buff_pool *pool, gfp_t gfp)
{
	struct vnet *vi = rq->qp->vi;
	unsigned int len = xsk_pool_get_rx_frame_size(pool) + vi->hdr_len;
	struct xdp_buff *xdp;
	unsigned int added = 0;
	bool empty = false;

	while (rq->vq->num_free) {
		xdp = xsk_buff_alloc(pool);
		if (!xdp) {
			empty = true;
			break;
		}
		sg_init_table(rq->sg, 1);
		sg_dma_address(rq->sg) = xsk_buff_xdp_get_dma(xdp) - vi->hdr_len;
		sg_dma_len(rq->sg) = len;
		if (virtqueue_add_inbuf_premapped(rq->vq, rq->sg, 1, xdp, NULL,
						  gfp) < 0) {
			xsk_buff_free(xdp);
			break;
		}
		added++;
	}
	if (!empty) {
		if (added && xsk_uses_need_wakeup(pool))
			xsk_clear_rx_need_wakeup(pool);
		return true;
	}
	vnet_rq_stat_inc(rq, &rq->stats.xsk_fill_empty);
	if (xsk_uses_need_wakeup(pool)) {
		/* the socket wakes the queue once it gave buffers */
		xsk_set_rx_need_wakeup(pool);
		return true;
	}
	return added > 0;
}

/* Give back @n further buffers of a frame that is being dropped. */
static void vnet_xsk_rx_drain(struct vnet_rq *rq, unsigned int n)
{
	struct xdp_buff *xdp;
	unsigned int len;

	while (n--) {
		xdp = virtqueue_get_buf(rq->vq, &len);
		if (!xdp)
			break;
		xsk_buff_free(xdp);
	}
}

/* Drop a frame: its buffer @xdp and the @left buffers it continues in. */
static void vnet_xsk_rx_drop(struct vnet_rq *rq, struct xdp_buff *xdp,
			     unsigned int left)
{
	xsk_buff_free(xdp);
	vnet_xsk_rx_drain(rq, left);
}

/*
 * An skb with a copy of the frame that starts in @xdp and continues in
 * @left further buffers of at most @cap bytes each; every buffer goes
 * back to the pool.
 */
static struct sk_buff *vnet_xsk_rx_skb(struct vnet_rq *rq,
				       struct xdp_buff *xdp, unsigned int left,
				       unsigned int cap)
{
	unsigned int meta = xdp->data - xdp->data_meta;
	unsigned int len = xdp->data_end - xdp->data_meta;
	struct sk_buff *skb, *curr;
	struct page *page;
	void *frag;

	skb = napi_alloc_skb(&rq->napi, len);
	if (unlikely(!skb)) {
		vnet_rq_stat_inc(rq, &rq->stats.drop_nomem);
		vnet_xsk_rx_drop(rq, xdp, left);
		return NULL;
	}
	skb_put_data(skb, xdp->data_meta, len);
	if (meta) {
		__skb_pull(skb, meta);
		skb_metadata_set(skb, meta);
	}
	xsk_buff_free(xdp);

	curr = skb;
	while (left) {
		left--;
		xdp = virtqueue_get_buf(rq->vq, &len);
		if (unlikely(!xdp)) {
			vnet_rx_bad(rq, &rq->stats.drop_bad_hdr,
				    "missing buffers", left + 1);
			goto drop;
		}
		if (vnet_rx_check_more(len, cap)) {
			vnet_rx_bad(rq, &rq->stats.drop_bad_len, "bad length",
				    len);
			vnet_xsk_rx_drop(rq, xdp, left);
			goto drop;
		}
		/* Further buffers have no header: data from the start. */
		xsk_buff_dma_sync_for_cpu(xdp);
		vnet_vq_sync_for_cpu(rq->vq, xsk_buff_xdp_get_dma(xdp) -
				     rq->qp->vi->hdr_len, rq->qp->vi->hdr_len);
		frag = len ? napi_alloc_frag(len) : NULL;
		if (len && unlikely(!frag)) {
			vnet_rq_stat_inc(rq, &rq->stats.drop_nomem);
			vnet_xsk_rx_drop(rq, xdp, left);
			goto drop;
		}
		if (frag)
			memcpy(frag, (u8 *)xdp->data - rq->qp->vi->hdr_len,
			       len);
		xsk_buff_free(xdp);
		if (!frag)
			continue;
		page = virt_to_head_page(frag);
		if (!vnet_rx_append(NULL, skb, &curr, page,
				    (u8 *)frag - (u8 *)page_address(page), len,
				    len)) {
			vnet_rq_stat_inc(rq, &rq->stats.drop_nomem);
			put_page(page);
			vnet_xsk_rx_drain(rq, left);
			goto drop;
		}
	}
	return skb;
drop:
	dev_kfree_skb(skb);
	return NULL;
}

/*
 * The attached program's verdict on a frame of one buffer.  Returns true
 * when the frame was consumed, false for XDP_PASS.
 */
static bool vnet_xsk_rx_prog(struct vnet_rq *rq, struct bpf_prog *prog,
			     struct xdp_buff *xdp, const union vnet_rx_hdr *hdr)
{
	u32 act;

	/* the hash report goes in the pool buffer's private area */
	XSK_CHECK_PRIV_TYPE(struct vnet_xdp_buff);
	if (vnet_xdp_hdr_offloaded(rq, hdr)) {
		xsk_buff_free(xdp);
		return true;
	}
	vnet_xdp_buff_hash(rq->qp->vi, xdp, hdr);
	act = bpf_prog_run_xdp(prog, xdp);
	vnet_rq_stat_inc(rq, &rq->stats.xdp_packets);
	switch (vnet_xdp_act(rq, prog, xdp, act)) {
	case VNET_XDP_PASS:
		return false;
	case VNET_XDP_DROP:
		xsk_buff_free(xdp);
		break;
	case VNET_XDP_DONE:
		break;
	}
	return true;
}

/* One used buffer of a zero-copy queue, and those its frame continues in. */
void vnet_xsk_rx_one(struct vnet_rq *rq, struct xsk_buff_pool *pool,
		     struct xdp_buff *xdp, unsigned int len, u64 *bytes)
{
	struct vnet *vi = rq->qp->vi;
	unsigned int cap = xsk_pool_get_rx_frame_size(pool) + vi->hdr_len;
	unsigned int left = 0, dlen;
	union vnet_rx_hdr hdr;
	struct bpf_prog *prog;
	struct sk_buff *skb;
	u64 ignored = 0;

	if (len < vi->hdr_len) {
		/* Not even a header: num_buffers is unknown, drop just this. */
		vnet_rx_bad(rq, &rq->stats.drop_bad_len, "bad length", len);
		xsk_buff_free(xdp);
		return;
	}
	vnet_vq_sync_for_cpu(rq->vq, xsk_buff_xdp_get_dma(xdp) - vi->hdr_len,
			     vi->hdr_len);
	memcpy(&hdr, (u8 *)xdp->data - vi->hdr_len, vi->hdr_len);
	if (vi->rx_mode == VNET_RX_MERGEABLE) {
		left = virtio16_to_cpu(vi->vdev, hdr.mrg.num_buffers);
		if (vnet_rx_check_num_buffers(left,
					      virtqueue_get_vring_size(rq->vq))) {
			vnet_rx_bad(rq, &rq->stats.drop_bad_hdr,
				    "bad num_buffers", left);
			xsk_buff_free(xdp);
			return;
		}
		left--;
	}
	/*
	 * Longer than the buffer (a malformed device): the frame is dropped
	 * with the buffers it continues in, which would otherwise be taken
	 * for frames of their own, their data read as headers.
	 */
	if (vnet_rx_check_first(len, vi->hdr_len, cap)) {
		vnet_rx_bad(rq, &rq->stats.drop_bad_len, "bad length", len);
		vnet_xsk_rx_drop(rq, xdp, left);
		return;
	}
	dlen = len - vi->hdr_len;
	xsk_buff_set_size(xdp, dlen);
	xsk_buff_dma_sync_for_cpu(xdp);

	u64_stats_update_begin(&rq->stats.syncp);
	u64_stats_inc(&rq->stats.xsk_packets);
	u64_stats_add(&rq->stats.xsk_bytes, dlen);
	u64_stats_update_end(&rq->stats.syncp);

	rcu_read_lock();
	prog = rcu_dereference(vi->xdp_prog);
	if (prog && left) {
		rcu_read_unlock();
		vnet_rx_bad(rq, &rq->stats.drop_bad_len,
			    "frame too long for XDP", len);
		vnet_xsk_rx_drop(rq, xdp, left);
		return;
	}
	if (prog) {
		*bytes += dlen;
		if (vnet_xsk_rx_prog(rq, prog, xdp, &hdr)) {
			rcu_read_unlock();
			return;
		}
		/* counted above already */
		bytes = &ignored;
	}
	rcu_read_unlock();

	skb = vnet_xsk_rx_skb(rq, xdp, left, cap);
	if (skb)
		vnet_rx_deliver(rq, skb, &hdr, bytes);
}

/* --- transmit --- */

#if VNET_CAN_XSK_TX
/*
 * Complete to the pool the frames found done, and the lost ones once
 * nothing queued before them is left; returns how many.
 */
static unsigned int vnet_xsk_give_back(struct vnet_sq *sq)
{
	unsigned int n = sq->xsk_done;

	sq->reclaim.waited -= min(sq->reclaim.waited, sq->xsk_done);
	sq->xsk_done = 0;
	if (!sq->xsk_inflight) {
		n += sq->xsk_lost;
		sq->xsk_lost = 0;
	}
	if (sq->xsk_pool && n)
		xsk_tx_completed(sq->xsk_pool, n);
	return sq->xsk_pool ? n : 0;
}

/*
 * Send what the socket queued, at most @budget frames; under the TX
 * queue lock, from the TX NAPI poll.  Returns how many were sent.
 */
unsigned int vnet_xsk_xmit(struct vnet_sq *sq, unsigned int budget)
{
	struct xsk_buff_pool *pool = sq->xsk_pool;
	struct vnet *vi = sq->qp->vi;
	unsigned int n, i, sent = 0;
	struct xdp_desc *desc;
	bool notified = false;
	u64 bytes = 0;
	dma_addr_t addr;

	/* Frames the pool released unsent wait for those before them. */
	if (!pool || sq->paused || sq->xsk_lost)
		return 0;
	/* a header and the frame: two descriptors without indirect ones */
	n = xsk_tx_peek_release_desc_batch(pool, min(budget,
						     sq->vq->num_free / 2));
	for (i = 0; i < n; i++) {
		desc = &pool->tx_descs[i];
		addr = xsk_buff_raw_get_dma(pool, desc->addr);
		xsk_buff_raw_dma_sync_for_device(pool, addr, desc->len);
		sg_init_table(sq->sg, 2);
		sg_dma_address(&sq->sg[0]) = sq->xsk_hdr_dma;
		sg_dma_len(&sq->sg[0]) = vi->hdr_len;
		sg_dma_address(&sq->sg[1]) = addr;
		sg_dma_len(&sq->sg[1]) = desc->len;
		if (virtqueue_add_outbuf_premapped(sq->vq, sq->sg, 2,
						   vnet_xsk_to_token(desc->len),
						   GFP_ATOMIC) < 0)
			break;
		bytes += desc->len;
		sent++;
	}
	/* The socket waits for them (policy/reclaim.h). */
	sq->reclaim.waited += sent;
	sq->xsk_inflight += sent;
	/*
	 * Frames released but not queued are lost.  The pool completes in
	 * release order, so they are given back only after every frame
	 * queued before them: completing them now would give the socket
	 * back frames the device has still to read.
	 */
	if (sent < n) {
		sq->xsk_lost = n - sent;
		vnet_xsk_give_back(sq);
		u64_stats_update_begin(&sq->stats.syncp);
		u64_stats_add(&sq->stats.xsk_tx_drops, n - sent);
		u64_stats_update_end(&sq->stats.syncp);
	}
	if (sent) {
		if (virtqueue_kick_prepare(sq->vq))
			notified = virtqueue_notify(sq->vq);
		txq_trans_cond_update(netdev_get_tx_queue(vi->dev,
							  sq->qp->index));
		vnet_tx_xdp_sent(sq, vnet_now());
	}
	if (xsk_uses_need_wakeup(pool))
		xsk_set_tx_need_wakeup(pool);

	u64_stats_update_begin(&sq->stats.syncp);
	u64_stats_add(&sq->stats.xsk_packets, sent);
	u64_stats_add(&sq->stats.xsk_bytes, bytes);
	if (notified)
		u64_stats_inc(&sq->stats.kicks);
	u64_stats_update_end(&sq->stats.syncp);
	return sent;
}

/*
 * Reclaim (tx.c) took back some of the socket's frames: give them back,
 * and have TX NAPI send what the socket queued meanwhile (the completion
 * may have come from the RX poll or a timer, with no TX interrupt to
 * come).
 */
void vnet_xsk_tx_completed(struct vnet_sq *sq)
{
	if (vnet_xsk_give_back(sq) &&
	    !napi_if_scheduled_mark_missed(&sq->napi))
		vnet_napi_schedule(&sq->napi, sq->vq);
}
#endif

int vnet_xsk_wakeup(struct net_device *dev, u32 qid, u32 flags)
{
	struct vnet *vi = netdev_priv(dev);
	struct vnet_qp *qp;

	if (!netif_running(dev))
		return -ENETDOWN;
	if (qid >= READ_ONCE(vi->curr_pairs))
		return -EINVAL;
	qp = &vi->qp[qid];
	if (!READ_ONCE(qp->rq.xsk_pool))
		return -ENXIO;
	atomic64_inc(&qp->rq.xsk_wakeups);

	local_bh_disable();
	if ((flags & XDP_WAKEUP_RX) &&
	    !napi_if_scheduled_mark_missed(&qp->rq.napi))
		vnet_napi_schedule(&qp->rq.napi, qp->rq.vq);
	if (VNET_CAN_XSK_TX && (flags & XDP_WAKEUP_TX) &&
	    !napi_if_scheduled_mark_missed(&qp->sq.napi))
		vnet_napi_schedule(&qp->sq.napi, qp->sq.vq);
	local_bh_enable();
	return 0;
}

/* --- bind, unbind --- */

static void vnet_xsk_rx_recycle(struct virtqueue *vq, void *buf)
{
	vnet_rx_free_buf(&vnet_vq_to_qp(vq)->rq, buf);
}

/*
 * Swap the buffers of @rq's ring for @pool's (NULL: back to pages) with
 * a reset of the virtqueue, its NAPI off meanwhile.  The ring is refilled
 * at once while the pairs run, else when they start.
 */
static int vnet_xsk_rq_swap(struct vnet *vi, struct vnet_rq *rq,
			    struct xsk_buff_pool *pool)
{
	bool running = vi->pairs_enabled;
	int err;

	if (running) {
		vnet_refill_disable(vi);
		napi_disable(&rq->napi);
	}
	err = virtqueue_reset(rq->vq, vnet_xsk_rx_recycle, NULL);
	if (err)
		netdev_err(vi->dev, "AF_XDP: resetting %s failed: %d\n",
			   rq->name, err);
	else
		WRITE_ONCE(rq->xsk_pool, pool);
	if (running) {
		if (rq->qp->index < vi->curr_pairs &&
		    !vnet_rx_fill(rq, GFP_KERNEL))
			vnet_rx_schedule_refill(vi);
		vnet_napi_enable(&rq->napi, rq->vq);
		vnet_refill_enable(vi, false);
	}
	return err;
}

#if VNET_CAN_XSK_TX
static void vnet_xsk_tx_recycle(struct virtqueue *vq, void *buf)
{
	vnet_tx_free_buf(&vnet_vq_to_qp(vq)->sq, buf);
}

/*
 * Bind (@pool) or unbind (NULL) the send queue.  Unbinding resets it:
 * the socket's frames the device still holds are dropped with the
 * stack's packets queued there, which the stack sends again.
 */
static int vnet_xsk_sq_set(struct vnet *vi, struct vnet_sq *sq,
			   struct xsk_buff_pool *pool)
{
	struct netdev_queue *txq = netdev_get_tx_queue(vi->dev, sq->qp->index);
	bool tx_napi = vi->pairs_enabled;
	int err = 0;

	if (tx_napi)
		napi_disable(&sq->napi);
	vnet_tx_pause(vi, sq->qp->index);
	if (!pool) {
		err = virtqueue_reset(sq->vq, vnet_xsk_tx_recycle, NULL);
		if (err)
			netdev_err(vi->dev, "AF_XDP: resetting %s failed: %d\n",
				   sq->name, err);
		vnet_tx_reset_bql(sq);
	}
	__netif_tx_lock_bh(txq);
	sq->xsk_pool = pool;
	sq->xsk_inflight = 0;
	sq->xsk_done = 0;
	sq->xsk_lost = 0;
	vnet_txq_unlock_bh(sq, txq);
	vnet_tx_resume(vi, sq->qp->index);
	if (tx_napi)
		vnet_napi_enable(&sq->napi, sq->vq);
	return err;
}

/*
 * The shared header of the socket's frames: zero, mapped for the device
 * the way the pool's frames are (the DMA API on the virtqueues' DMA
 * device, vnet_xsk_check()).  Not through the virtqueue: the mapping
 * must be undone at unbind also when the virtqueues are gone (a restore
 * that failed), and the device outlives them.
 */
static int vnet_xsk_hdr_map(struct vnet *vi, struct vnet_sq *sq)
{
	struct device *dma = virtqueue_dma_dev(sq->vq);

	sq->xsk_hdr = kzalloc(vi->hdr_len, GFP_KERNEL);
	if (!sq->xsk_hdr)
		return -ENOMEM;
	sq->xsk_hdr_dma = dma_map_single(dma, sq->xsk_hdr, vi->hdr_len,
					 DMA_TO_DEVICE);
	if (dma_mapping_error(dma, sq->xsk_hdr_dma)) {
		kfree(sq->xsk_hdr);
		sq->xsk_hdr = NULL;
		return -ENOMEM;
	}
	sq->xsk_hdr_dev = dma;
	return 0;
}

static void vnet_xsk_hdr_unmap(struct vnet *vi, struct vnet_sq *sq)
{
	if (!sq->xsk_hdr)
		return;
	dma_unmap_single(sq->xsk_hdr_dev, sq->xsk_hdr_dma, vi->hdr_len,
			 DMA_TO_DEVICE);
	kfree(sq->xsk_hdr);
	sq->xsk_hdr = NULL;
	sq->xsk_hdr_dev = NULL;
}
#else
static int vnet_xsk_sq_set(struct vnet *vi, struct vnet_sq *sq,
			   struct xsk_buff_pool *pool)
{
	return 0;
}

static int vnet_xsk_hdr_map(struct vnet *vi, struct vnet_sq *sq)
{
	return 0;
}

static void vnet_xsk_hdr_unmap(struct vnet *vi, struct vnet_sq *sq)
{
}
#endif

/* Why @pool cannot be bound to pair @qid, or NULL. */
static const char *vnet_xsk_check(struct vnet *vi, struct xsk_buff_pool *pool,
				  u16 qid, int *err)
{
	struct vnet_qp *qp;
	struct device *dma;

	*err = -EINVAL;
	if (qid >= vi->curr_pairs)
		return "no such active queue pair";
	qp = &vi->qp[qid];
	*err = -EOPNOTSUPP;
	if (!vnet_has(vi, VIRTIO_F_RING_RESET))
		return "the device cannot reset one queue (VIRTIO_F_RING_RESET)";
	if (vi->rx_mode == VNET_RX_BIG)
		return "not with big-packet receive buffers (no mergeable ones)";
	if (VNET_CAN_XSK_TX && !qp->sq.use_napi)
		return "transmission needs TX NAPI (module option napi_tx=1)";
	*err = -ENODEV;
	if (!qp->rq.vq)
		return "the device has no virtqueues (its restore failed)";
	*err = -EINVAL;
	if (qp->rq.xsk_pool)
		return "a pool is bound to this queue pair already";
	if (vi->hdr_len > xsk_pool_get_headroom(pool))
		return "the pool's headroom cannot take the virtio-net header";
	if (vi->rx_mode == VNET_RX_SMALL &&
	    xsk_pool_get_rx_frame_size(pool) < VNET_GOOD_FRAME_LEN)
		return "the pool's frames are shorter than an Ethernet frame";
	*err = -EOPNOTSUPP;
	dma = virtqueue_dma_dev(qp->rq.vq);
	if (!dma || dma != virtqueue_dma_dev(qp->sq.vq))
		return "no DMA API for the device (VIRTIO_F_ACCESS_PLATFORM)";
	return NULL;
}

static int vnet_xsk_enable(struct vnet *vi, struct xsk_buff_pool *pool,
			   u16 qid)
{
	struct vnet_qp *qp = &vi->qp[qid];
	struct vnet_rq *rq = &qp->rq;
	const char *why;
	int err;

	why = vnet_xsk_check(vi, pool, qid, &err);
	if (why) {
		netdev_warn(vi->dev, "AF_XDP zero-copy on queue %u refused: %s\n",
			    qid, why);
		return err;
	}
	err = vnet_xsk_hdr_map(vi, &qp->sq);
	if (err)
		return err;
	err = xsk_pool_dma_map(pool, virtqueue_dma_dev(rq->vq), 0);
	if (err)
		goto unmap_hdr;
	err = vnet_xdp_rxq_reg(&rq->xsk_rxq, vi->dev, qid, rq->napi.napi_id);
	if (err)
		goto unmap_pool;
	err = xdp_rxq_info_reg_mem_model(&rq->xsk_rxq, MEM_TYPE_XSK_BUFF_POOL,
					 NULL);
	if (err)
		goto unreg;
	xsk_pool_set_rxq_info(pool, &rq->xsk_rxq);

	err = vnet_xsk_rq_swap(vi, rq, pool);
	if (err)
		goto unreg;
	vnet_xsk_sq_set(vi, &qp->sq, pool);
	return 0;

unreg:
	xdp_rxq_info_unreg(&rq->xsk_rxq);
unmap_pool:
	xsk_pool_dma_unmap(pool, 0);
unmap_hdr:
	vnet_xsk_hdr_unmap(vi, &qp->sq);
	return err;
}

/*
 * Unbind: also while the interface is down, the pairs disabled, or with
 * the device detached (no virtqueues: then only the state and the
 * mappings go).
 */
static int vnet_xsk_disable(struct vnet *vi, u16 qid)
{
	struct vnet_qp *qp;
	struct xsk_buff_pool *pool;
	int err = 0;

	if (qid >= vi->max_pairs)
		return -EINVAL;
	qp = &vi->qp[qid];
	pool = qp->rq.xsk_pool;
	if (!pool)
		return -EINVAL;
	if (qp->rq.vq) {
		err = vnet_xsk_sq_set(vi, &qp->sq, NULL);
		err = vnet_xsk_rq_swap(vi, &qp->rq, NULL) ? : err;
	}
	vnet_xsk_hdr_unmap(vi, &qp->sq);
	/*
	 * The core frees the pool after this, whatever we return.  A ring
	 * whose reset failed (logged; only a broken device fails it) still
	 * holds the pool's buffers, and nothing takes them back.
	 */
	WRITE_ONCE(qp->rq.xsk_pool, NULL);
	qp->sq.xsk_pool = NULL;
	xdp_rxq_info_unreg(&qp->rq.xsk_rxq);
	xsk_pool_dma_unmap(pool, 0);
	return err;
}

int vnet_xsk_pool_setup(struct vnet *vi, struct xsk_buff_pool *pool, u16 qid)
{
	ASSERT_RTNL();
	if (pool)
		return vnet_xsk_enable(vi, pool, qid);
	return vnet_xsk_disable(vi, qid);
}

#endif /* VNET_CAN_XSK */
