// SPDX-License-Identifier: GPL-2.0-only
/*
 * Transmit path: header, scatter-gather mapping, ring space, kicks.
 *
 * When to notify the device is the kick policy's call (kick_policy.c),
 * when to take completed buffers back the reclaim policy's
 * (reclaim_policy.c); this file only carries out their answers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netdevice.h>
#include <linux/netpoll.h>
#include <linux/skbuff.h>
#include <net/netfilter/nf_conntrack.h>
#include "compat.h"
#include "vnet.h"

/* Header storage for skbs whose headroom cannot take it. */
static struct virtio_net_hdr_mrg_rxbuf *vnet_skb_hdr(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct virtio_net_hdr_mrg_rxbuf) >
		     sizeof(skb->cb));
	return (struct virtio_net_hdr_mrg_rxbuf *)skb->cb;
}

/* Free completed skbs; @budget is non-zero only in NAPI context. */
unsigned int vnet_tx_reclaim(struct vnet_sq *sq, int budget)
{
	unsigned int len, packets = 0;
	struct sk_buff *skb;
	u64 bytes = 0;

	while ((skb = virtqueue_get_buf(sq->vq, &len))) {
		bytes += skb->len;
		packets++;
		napi_consume_skb(skb, budget);
	}
	if (!packets)
		return 0;

	u64_stats_update_begin(&sq->stats.syncp);
	u64_stats_add(&sq->stats.packets, packets);
	u64_stats_add(&sq->stats.bytes, bytes);
	u64_stats_update_end(&sq->stats.syncp);
	return packets;
}

void vnet_tx_free_buf(struct vnet_sq *sq, void *buf)
{
	dev_kfree_skb_any(buf);
}

/* Notify the device of everything added so far, unless it opted out. */
static void vnet_tx_kick(struct vnet_sq *sq)
{
	bool pending = sq->kick.pending;
	bool notify = virtqueue_kick_prepare(sq->vq);

	u64_stats_update_begin(&sq->stats.syncp);
	if (notify) {
		if (virtqueue_notify(sq->vq))
			u64_stats_inc(&sq->stats.kicks);
	} else if (pending) {
		u64_stats_inc(&sq->stats.kicks_suppressed);
	}
	u64_stats_update_end(&sq->stats.syncp);
	vnet_kick_done(&sq->kick);
}

/* Kick whatever is held back.  Caller holds the TX queue lock. */
void vnet_tx_flush(struct vnet_sq *sq)
{
	if (sq->kick.pending)
		vnet_tx_kick(sq);
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

	if (virtio_net_hdr_from_skb(skb, &hdr->hdr, vi->little_endian, false, 0))
		return -EPROTO;
	if (hdr_len == sizeof(*hdr))
		hdr->num_buffers = 0;

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

/* Take back completions before adding; maybe ask for an interrupt. */
static void vnet_tx_reclaim_xmit(struct vnet_sq *sq, bool more)
{
	struct vnet_reclaim_in in = {
		.num_free = sq->vq->num_free,
		.ring_size = virtqueue_get_vring_size(sq->vq),
		.use_napi = sq->use_napi,
		.batch_end = !more,
	};
	struct vnet_reclaim_out out;

	vnet_reclaim_on_xmit(&in, &out);
	if (!out.reclaim)
		return;
	do {
		if (sq->use_napi)
			virtqueue_disable_cb(sq->vq);
		vnet_tx_reclaim(sq, 0);
	} while (out.arm_irq && unlikely(!virtqueue_enable_cb_delayed(sq->vq)));
}

/*
 * Stop the queue while a worst-case skb might not fit, and make sure
 * something will wake it: a completion interrupt, or (without TX NAPI)
 * completions that arrived meanwhile.
 */
static void vnet_tx_check_room(struct vnet_sq *sq, struct netdev_queue *txq)
{
	if (vnet_reclaim_room(sq->vq->num_free, VNET_TX_DESC_MAX))
		return;

	netif_tx_stop_queue(txq);
	u64_stats_update_begin(&sq->stats.syncp);
	u64_stats_inc(&sq->stats.stops);
	u64_stats_update_end(&sq->stats.syncp);

	if (sq->use_napi) {
		if (unlikely(!virtqueue_enable_cb_delayed(sq->vq)))
			vnet_napi_schedule(&sq->napi, sq->vq);
	} else if (unlikely(!virtqueue_enable_cb_delayed(sq->vq))) {
		vnet_tx_reclaim(sq, 0);
		if (vnet_reclaim_room(sq->vq->num_free, VNET_TX_DESC_MAX)) {
			netif_tx_start_queue(txq);
			virtqueue_disable_cb(sq->vq);
			u64_stats_update_begin(&sq->stats.syncp);
			u64_stats_inc(&sq->stats.wakes);
			u64_stats_update_end(&sq->stats.syncp);
		}
	}
}

netdev_tx_t vnet_start_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct vnet *vi = netdev_priv(dev);
	unsigned int qi = skb_get_queue_mapping(skb);
	struct netdev_queue *txq = netdev_get_tx_queue(dev, qi);
	struct vnet_sq *sq = &vi->qp[qi].sq;
	bool more = netdev_xmit_more();
	struct vnet_kick_in kin;
	int err;

	if (unlikely(sq->paused)) {
		/* Ring being resized: the stack requeues this skb. */
		netif_tx_stop_queue(txq);
		return NETDEV_TX_BUSY;
	}

	vnet_tx_reclaim_xmit(sq, more);

	err = vnet_tx_map(sq, skb);
	if (unlikely(err)) {
		u64_stats_update_begin(&sq->stats.syncp);
		u64_stats_inc(&sq->stats.drops);
		u64_stats_update_end(&sq->stats.syncp);
		net_warn_ratelimited("%s: TX queue %u: dropped a packet: %d\n",
				     dev->name, qi, err);
		dev_kfree_skb_any(skb);
		/* Still notify for packets added before this one. */
		if (!more)
			vnet_tx_flush(sq);
		return NETDEV_TX_OK;
	}

	/* Without completion interrupts, sockets must not wait for them. */
	if (!sq->use_napi) {
		skb_orphan(skb);
		nf_reset_ct(skb);
	}

	vnet_tx_check_room(sq, txq);

	kin.xmit_more = more;
	kin.queue_stopped = netif_xmit_stopped(txq);
	kin.urgent = netpoll_tx_running(dev);
	if (vnet_kick_decide(&sq->kick, &kin) == VNET_KICK_NOW)
		vnet_tx_kick(sq);
	return NETDEV_TX_OK;
}
