// SPDX-License-Identifier: GPL-2.0-only
/*
 * ethtool operations: driver info, channels, ring sizes, link settings,
 * statistics.  Invalid requests are refused with -EINVAL and a message:
 * through extack where the kernel's callback has one, else in the log.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ethtool.h>
#include <linux/log2.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include "compat.h"
#include "vnet.h"

/* Smallest ring -G accepts: a worst-case skb or big-packet chain fits. */
#define VNET_RING_MIN	32

/*
 * Report a refused request where the user will see it: in the extack
 * when the caller has one, else in the kernel log.
 */
#define vnet_refuse(dev, extack, msg) do {				\
	struct netlink_ext_ack __local = {};				\
	struct netlink_ext_ack *__ack = (extack) ? : &__local;		\
									\
	NL_SET_ERR_MSG_MOD(__ack, msg);					\
	if (__ack == &__local)						\
		netdev_err(dev, "%s\n", __local._msg);			\
} while (0)

static void vnet_get_drvinfo(struct net_device *dev,
			     struct ethtool_drvinfo *info)
{
	struct vnet *vi = netdev_priv(dev);

	strscpy(info->driver, KBUILD_MODNAME, sizeof(info->driver));
	strscpy(info->version, VNET_VERSION, sizeof(info->version));
	strscpy(info->bus_info, virtio_bus_name(vi->vdev),
		sizeof(info->bus_info));
}

static void vnet_get_channels(struct net_device *dev,
			      struct ethtool_channels *ch)
{
	struct vnet *vi = netdev_priv(dev);

	ch->max_combined = vi->max_pairs;
	/* Pairs enabled for XDP only are not the stack's channels. */
	ch->combined_count = vi->curr_pairs - vi->xdp_pairs;
}

static int vnet_set_channels(struct net_device *dev,
			     struct ethtool_channels *ch)
{
	struct vnet *vi = netdev_priv(dev);
	unsigned int pairs = ch->combined_count;
	int err;

	if (ch->rx_count || ch->tx_count || ch->other_count) {
		vnet_refuse(dev, NULL,
			    "only combined channels (queue pairs) can be set");
		return -EINVAL;
	}
	if (vnet_xdp_attached(vi)) {
		vnet_refuse(dev, NULL,
			    "channels cannot change while an XDP program is attached");
		return -EBUSY;
	}
	if (pairs < 1 || pairs > vi->max_pairs) {
		netdev_err(dev, "combined channels must be 1..%u, not %u\n",
			   vi->max_pairs, pairs);
		return -EINVAL;
	}
	if (pairs == vi->curr_pairs)
		return 0;
	err = vnet_set_pairs(vi, pairs);
	if (!err)
		vnet_affinity_update();
	return err;
}

static void vnet_get_ringparam(VNET_RINGPARAM_ARGS)
{
	struct vnet *vi = netdev_priv(dev);

	ring->rx_max_pending = vnet_vq_max_size(vi->qp[0].rq.vq);
	ring->tx_max_pending = vnet_vq_max_size(vi->qp[0].sq.vq);
	ring->rx_pending = virtqueue_get_vring_size(vi->qp[0].rq.vq);
	ring->tx_pending = virtqueue_get_vring_size(vi->qp[0].sq.vq);
}

static void vnet_rx_recycle(struct virtqueue *vq, void *buf)
{
	vnet_rx_free_buf(&vnet_vq_to_qp(vq)->rq, buf);
}

static void vnet_tx_recycle(struct virtqueue *vq, void *buf)
{
	vnet_tx_free_buf(&vnet_vq_to_qp(vq)->sq, buf);
}

/*
 * Resize the rings of one pair that change.  A ring being resized is left
 * alone meanwhile: for RX the pair's RX NAPI is off (and with it the RX
 * poll's TX reclaim); for TX its NAPI is off and the queue stopped and
 * marked paused, so that neither the stack, XDP, a timer nor an interrupt
 * touches it.  A ring that keeps its size is not touched at all (an RX
 * resize leaves transmission running).  The caller keeps the deferred
 * refill disabled, since it would disable this pair's RX NAPI too.
 */
static int vnet_resize_pair(struct vnet *vi, struct vnet_qp *qp,
			    u32 rx, u32 tx)
{
	struct netdev_queue *txq = netdev_get_tx_queue(vi->dev, qp->index);
	bool do_rx = rx != virtqueue_get_vring_size(qp->rq.vq);
	bool do_tx = tx != virtqueue_get_vring_size(qp->sq.vq);
	bool running = vi->pairs_enabled;
	bool tx_napi = running && do_tx && qp->sq.use_napi;
	int err = 0, err2 = 0;

	if (running && do_rx)
		napi_disable(&qp->rq.napi);
	if (tx_napi)
		napi_disable(&qp->sq.napi);

	if (do_rx) {
		err = vnet_vq_resize(qp->rq.vq, rx, vnet_rx_recycle);
		vnet_rx_setup(vi, &qp->rq);
	}
	if (do_tx) {
		vnet_tx_pause(vi, qp->index);
		err2 = vnet_vq_resize(qp->sq.vq, tx, vnet_tx_recycle);
		/* Recycled skbs never completed: byte queue limits start over. */
		vnet_tx_reset_bql(&qp->sq);
		__netif_tx_lock_bh(txq);
		vnet_tx_setup(&qp->sq);
		vnet_txq_unlock_bh(&qp->sq, txq);
		vnet_tx_resume(vi, qp->index);
	}

	if (running && do_rx) {
		if (qp->index < vi->curr_pairs && !vnet_rx_fill(&qp->rq, GFP_KERNEL))
			vnet_rx_schedule_refill(vi);
		vnet_napi_enable(&qp->rq.napi, qp->rq.vq);
	}
	if (tx_napi)
		vnet_napi_enable(&qp->sq.napi, qp->sq.vq);
	return err ? err : err2;
}

static int vnet_set_ringparam(VNET_RINGPARAM_ARGS)
{
	struct netlink_ext_ack *ack = VNET_RINGPARAM_EXTACK;
	struct vnet *vi = netdev_priv(dev);
	unsigned int i;
	int err = 0;

	if (ring->rx_mini_pending || ring->rx_jumbo_pending) {
		vnet_refuse(dev, ack, "only rx and tx ring sizes can be set");
		return -EINVAL;
	}
	if (ring->rx_pending == virtqueue_get_vring_size(vi->qp[0].rq.vq) &&
	    ring->tx_pending == virtqueue_get_vring_size(vi->qp[0].sq.vq))
		return 0;
	if (!VNET_CAN_RESIZE) {
		vnet_refuse(dev, ack,
			    "ring resize needs kernel 6.0 or later (virtqueue_resize)");
		return -EOPNOTSUPP;
	}
	if (!vnet_has(vi, VIRTIO_F_RING_RESET)) {
		vnet_refuse(dev, ack,
			    "the device cannot reset single queues (VIRTIO_F_RING_RESET), so rings cannot be resized");
		return -EOPNOTSUPP;
	}
	if (ring->rx_pending > vnet_vq_max_size(vi->qp[0].rq.vq) ||
	    ring->tx_pending > vnet_vq_max_size(vi->qp[0].sq.vq)) {
		vnet_refuse(dev, ack, "ring size above the device's maximum");
		return -EINVAL;
	}
	if (ring->rx_pending < VNET_RING_MIN || ring->tx_pending < VNET_RING_MIN) {
		vnet_refuse(dev, ack, "ring sizes must be at least 32");
		return -EINVAL;
	}
	if (!vnet_has(vi, VIRTIO_F_RING_PACKED) &&
	    (!is_power_of_2(ring->rx_pending) ||
	     !is_power_of_2(ring->tx_pending))) {
		vnet_refuse(dev, ack, "ring sizes must be powers of two");
		return -EINVAL;
	}

	/* Frame counts that would exceed the new rings could never be met. */
	for (i = 0; i < vi->max_pairs; i++) {
		const char *why;

		if (vnet_tx_coal_check(&vi->qp[i].sq.coal, ring->tx_pending,
				       &why) ||
		    vnet_rx_coal_check(&vi->qp[i].rq.coal, ring->rx_pending,
				       &why)) {
			vnet_refuse(dev, ack,
				    "coalescing frame counts exceed the new ring size: lower tx-frames, tx-frames-irq or rx-frames first");
			return -EINVAL;
		}
	}

	if (vi->pairs_enabled)
		vnet_refill_disable(vi);

	for (i = 0; i < vi->max_pairs; i++) {
		err = vnet_resize_pair(vi, &vi->qp[i], ring->rx_pending,
				       ring->tx_pending);
		if (err) {
			netdev_err(dev, "resizing the rings of pair %u failed: %d\n",
				   i, err);
			break;
		}
	}
	if (vi->pairs_enabled)
		vnet_refill_enable(vi, false);
	return err;
}

static int vnet_get_link_ksettings(struct net_device *dev,
				   struct ethtool_link_ksettings *cmd)
{
	struct vnet *vi = netdev_priv(dev);

	cmd->base.speed = vi->speed;
	cmd->base.duplex = vi->duplex;
	cmd->base.port = PORT_OTHER;
	return 0;
}

/* Speed and duplex are only reported; a user may set what is reported. */
static int vnet_set_link_ksettings(struct net_device *dev,
				   const struct ethtool_link_ksettings *cmd)
{
	struct vnet *vi = netdev_priv(dev);

	return ethtool_virtdev_set_link_ksettings(dev, cmd, &vi->speed,
						  &vi->duplex);
}

#define VNET_RX_COAL_PARAMS	(ETHTOOL_COALESCE_RX_USECS |		\
				 ETHTOOL_COALESCE_RX_MAX_FRAMES |	\
				 ETHTOOL_COALESCE_USE_ADAPTIVE_RX |	\
				 ETHTOOL_COALESCE_RX_USECS_HIGH)
#define VNET_TX_COAL_PARAMS	(ETHTOOL_COALESCE_TX_USECS |		\
				 ETHTOOL_COALESCE_TX_MAX_FRAMES |	\
				 ETHTOOL_COALESCE_TX_USECS_IRQ |	\
				 ETHTOOL_COALESCE_TX_MAX_FRAMES_IRQ |	\
				 ETHTOOL_COALESCE_USE_ADAPTIVE_TX)
#if VNET_HAVE_TX_AGGR
#define VNET_TX_AGGR_PARAMS	(ETHTOOL_COALESCE_TX_AGGR_MAX_FRAMES |	\
				 ETHTOOL_COALESCE_TX_AGGR_TIME_USECS)
#else
#define VNET_TX_AGGR_PARAMS	0
#endif

static void vnet_coal_to_ec(const struct vnet_qp *qp,
			    struct ethtool_coalesce *ec)
{
	const struct vnet_tx_coal *c = &qp->sq.coal;
	const struct vnet_sq *sq = &qp->sq;

	ec->rx_coalesce_usecs = qp->rq.coal.usecs;
	ec->rx_max_coalesced_frames = qp->rq.coal.frames;
	ec->use_adaptive_rx_coalesce = qp->rq.coal.adaptive;
	ec->rx_coalesce_usecs_high = qp->rq.coal.usecs_high;

	ec->tx_max_coalesced_frames =
		vnet_tx_frames(c, virtqueue_get_vring_size(sq->vq));
	ec->tx_coalesce_usecs = c->usecs;
	ec->use_adaptive_tx_coalesce = c->adaptive;
	ec->tx_max_coalesced_frames_irq =
		vnet_tx_irq_frames(c, virtqueue_get_vring_size(sq->vq));
	ec->tx_coalesce_usecs_irq = c->irq_usecs;
}

static void vnet_ec_to_coal(const struct ethtool_coalesce *ec,
			    struct vnet_tx_coal *c, struct vnet_rx_coal *rc)
{
	rc->usecs = ec->rx_coalesce_usecs;
	rc->frames = ec->rx_max_coalesced_frames;
	rc->adaptive = ec->use_adaptive_rx_coalesce;
	rc->usecs_high = ec->rx_coalesce_usecs_high;
	c->frames = ec->tx_max_coalesced_frames;
	c->frames_auto = false;
	c->usecs = ec->tx_coalesce_usecs;
	c->adaptive = ec->use_adaptive_tx_coalesce;
	c->irq_frames = ec->tx_max_coalesced_frames_irq;
	c->irq_usecs = ec->tx_coalesce_usecs_irq;
}

/* Check the settings against every pair in [first, last), then apply. */
static int vnet_apply_coal(struct net_device *dev, unsigned int first,
			   unsigned int last, const struct vnet_tx_coal *c,
			   const struct vnet_rx_coal *rc,
			   struct netlink_ext_ack *extack)
{
	struct vnet *vi = netdev_priv(dev);
	const char *why;
	unsigned int i;

	for (i = first; i < last; i++) {
		if (vnet_tx_coal_check(c, virtqueue_get_vring_size(vi->qp[i].sq.vq),
				       &why) ||
		    vnet_rx_coal_check(rc, virtqueue_get_vring_size(vi->qp[i].rq.vq),
				       &why)) {
			vnet_extack_msg(extack, why);
			netdev_err(dev, "coalescing: %s\n", why);
			return -EINVAL;
		}
	}
	for (i = first; i < last; i++) {
		struct netdev_queue *txq = netdev_get_tx_queue(dev, i);

		__netif_tx_lock_bh(txq);
		vnet_tx_set_coal(&vi->qp[i].sq, c);
		vnet_txq_unlock_bh(&vi->qp[i].sq, txq);
		vnet_rx_set_coal(&vi->qp[i].rq, rc);
	}
	return vnet_ctrl_dev_coal(vi, first, last);
}

static int vnet_get_coalesce(VNET_COALESCE_ARGS)
{
	struct vnet *vi = netdev_priv(dev);

	vnet_coal_to_ec(&vi->qp[0], ec);
#if VNET_HAVE_TX_AGGR
	kec->tx_aggr_max_frames = ec->tx_max_coalesced_frames;
	kec->tx_aggr_time_usecs = ec->tx_coalesce_usecs;
#endif
	return 0;
}

/* Settings for every queue pair. */
static int vnet_set_coalesce(VNET_COALESCE_ARGS)
{
	struct netlink_ext_ack *ack = VNET_COALESCE_EXTACK;
	struct vnet *vi = netdev_priv(dev);
	const struct vnet_tx_coal *cur = &vi->qp[0].sq.coal;
	unsigned int ring = virtqueue_get_vring_size(vi->qp[0].sq.vq);
	struct vnet_rx_coal rc, old_rx;
	struct vnet_tx_coal c, old_tx;
	int err;

	vnet_ec_to_coal(ec, &c, &rc);
#if VNET_HAVE_TX_AGGR
	/*
	 * tx-aggr-max-frames/-time-usecs are the same settings as
	 * tx-frames/tx-usecs: take whichever of a pair the user changed
	 * from what -c reported.
	 */
	{
		u32 frames = vnet_tx_frames(cur, ring);

		if (kec->tx_aggr_max_frames != frames) {
			if (c.frames != frames &&
			    c.frames != kec->tx_aggr_max_frames) {
				vnet_refuse(dev, ack,
					    "tx-frames and tx-aggr-max-frames are one setting: give one value");
				return -EINVAL;
			}
			c.frames = kec->tx_aggr_max_frames;
		}
		if (kec->tx_aggr_time_usecs != cur->usecs) {
			if (c.usecs != cur->usecs &&
			    c.usecs != kec->tx_aggr_time_usecs) {
				vnet_refuse(dev, ack,
					    "tx-usecs and tx-aggr-time-usecs are one setting: give one value");
				return -EINVAL;
			}
			c.usecs = kec->tx_aggr_time_usecs;
		}
	}
#endif
	/* What -c showed for pair 0, written back, changes nothing. */
	vnet_tx_coal_keep(&c, cur, ring);
	/*
	 * The device-wide settings, which a device without per-queue
	 * coalescing commands is programmed with; kept on failure.
	 */
	old_tx = vi->tx_coal;
	old_rx = vi->rx_coal;
	vi->tx_coal = c;
	vi->rx_coal = rc;
	err = vnet_apply_coal(dev, 0, vi->max_pairs, &c, &rc, ack);
	if (err) {
		vi->tx_coal = old_tx;
		vi->rx_coal = old_rx;
	}
	return err;
}

static int vnet_get_per_queue_coalesce(struct net_device *dev, u32 queue,
				       struct ethtool_coalesce *ec)
{
	struct vnet *vi = netdev_priv(dev);

	if (queue >= vi->max_pairs)
		return -EINVAL;
	vnet_coal_to_ec(&vi->qp[queue], ec);
	return 0;
}

static int vnet_set_per_queue_coalesce(struct net_device *dev, u32 queue,
				       struct ethtool_coalesce *ec)
{
	struct vnet *vi = netdev_priv(dev);
	struct vnet_rx_coal rc;
	struct vnet_tx_coal c;

	if (queue >= vi->max_pairs) {
		netdev_err(dev, "coalescing: no queue %u (the device has %u)\n",
			   queue, vi->max_pairs);
		return -EINVAL;
	}
	vnet_ec_to_coal(ec, &c, &rc);
	vnet_tx_coal_keep(&c, &vi->qp[queue].sq.coal,
			  virtqueue_get_vring_size(vi->qp[queue].sq.vq));
	return vnet_apply_coal(dev, queue, queue + 1, &c, &rc, NULL);
}

static int vnet_get_sset_count(struct net_device *dev, int sset)
{
	return sset == ETH_SS_STATS ?
	       vnet_stats_count(netdev_priv(dev)) : -EOPNOTSUPP;
}

static void vnet_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	if (sset == ETH_SS_STATS)
		vnet_stats_strings(netdev_priv(dev), data);
}

static void vnet_get_ethtool_stats(struct net_device *dev,
				   struct ethtool_stats *stats, u64 *data)
{
	vnet_stats_values(netdev_priv(dev), data);
}

const struct ethtool_ops vnet_ethtool_ops = {
	.supported_coalesce_params = VNET_RX_COAL_PARAMS | VNET_TX_COAL_PARAMS |
				     VNET_TX_AGGR_PARAMS,
	.get_drvinfo		= vnet_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_ts_info		= ethtool_op_get_ts_info,
	.get_channels		= vnet_get_channels,
	.set_channels		= vnet_set_channels,
	.get_ringparam		= vnet_get_ringparam,
	.set_ringparam		= vnet_set_ringparam,
	.get_link_ksettings	= vnet_get_link_ksettings,
	.set_link_ksettings	= vnet_set_link_ksettings,
	.get_coalesce		= vnet_get_coalesce,
	.set_coalesce		= vnet_set_coalesce,
	.get_per_queue_coalesce	= vnet_get_per_queue_coalesce,
	.set_per_queue_coalesce	= vnet_set_per_queue_coalesce,
	.get_sset_count		= vnet_get_sset_count,
	.get_strings		= vnet_get_strings,
	.get_ethtool_stats	= vnet_get_ethtool_stats,
	VNET_RSS_ETHTOOL_OPS
};
