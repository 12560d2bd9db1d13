// SPDX-License-Identifier: GPL-2.0-only
/*
 * The virtio device: feature negotiation, probe and remove, config space
 * (link, announce, speed), freeze and restore.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/virtio_config.h>
#include "compat.h"
#include "policy/features.h"
#include "vnet.h"

static void vnet_update_speed(struct vnet *vi)
{
	u32 speed;
	u8 duplex;

	if (!vnet_has(vi, VIRTIO_NET_F_SPEED_DUPLEX))
		return;
	virtio_cread_le(vi->vdev, struct virtio_net_config, speed, &speed);
	vi->speed = ethtool_validate_speed(speed) ? speed : SPEED_UNKNOWN;
	virtio_cread_le(vi->vdev, struct virtio_net_config, duplex, &duplex);
	vi->duplex = ethtool_validate_duplex(duplex) ? duplex : DUPLEX_UNKNOWN;
}

/* Config space changed (or probe wants the first reading): link, announce. */
static void vnet_config_work(struct work_struct *work)
{
	struct vnet *vi = container_of(work, struct vnet, config_work);
	struct net_device *dev = vi->dev;
	u16 v;

	if (!vnet_has(vi, VIRTIO_NET_F_STATUS)) {
		/* No link status: the link stays up, its speed may change. */
		vnet_update_speed(vi);
		return;
	}
	v = virtio_cread16(vi->vdev, offsetof(struct virtio_net_config, status));

	if (v & VIRTIO_NET_S_ANNOUNCE) {
		netdev_notify_peers(dev);
		if (vnet_ctrl_announce_ack(vi))
			netdev_warn(dev, "device refused the announce acknowledgment\n");
	}

	v &= VIRTIO_NET_S_LINK_UP;
	if (vi->status == v)
		return;
	vi->status = v;
	if (v) {
		vnet_update_speed(vi);
		netif_carrier_on(dev);
		netif_tx_wake_all_queues(dev);
	} else {
		netif_carrier_off(dev);
		netif_tx_stop_all_queues(dev);
	}
}

/*
 * First reading of the link (probe, restore).  With VIRTIO_NET_F_STATUS
 * the config work reads it; the unknown state makes it report whatever
 * it finds.  Without, the link is up, and speed and duplex, if the device
 * reports them, are read here.
 */
static void vnet_link_start(struct vnet *vi)
{
	if (vnet_has(vi, VIRTIO_NET_F_STATUS)) {
		vi->status = VNET_LINK_UNKNOWN;
		schedule_work(&vi->config_work);
		return;
	}
	vi->status = VIRTIO_NET_S_LINK_UP;
	vnet_update_speed(vi);
	netif_carrier_on(vi->dev);
}

static void vnet_config_changed(struct virtio_device *vdev)
{
	struct vnet *vi = vdev->priv;

	schedule_work(&vi->config_work);
}

/*
 * Runs before features are final: drop offered features we cannot use
 * (instead of refusing the device) and an MTU below the minimum.
 */
static int vnet_validate(struct virtio_device *vdev)
{
	u64 drop;
	int bit;

	if (!vdev->config->get) {
		dev_err(&vdev->dev, "config space cannot be read\n");
		return -EINVAL;
	}

	drop = vnet_unusable_features(vdev->features);
	for (bit = 0; bit < 64; bit++) {
		if (!(drop & VNET_BIT(bit)))
			continue;
		dev_warn(&vdev->dev, "ignoring feature %d: it needs one the device did not offer\n",
			 bit);
		__virtio_clear_bit(vdev, bit);
	}

	drop = vnet_tnl_unusable_features(vdev->features,
					  vnet_features_hi(vdev));
	for (bit = 0; VNET_CAN_UDP_TUNNEL && bit < 64; bit++) {
		if (!(drop & VNET_BIT(bit)))
			continue;
		dev_warn(&vdev->dev, "ignoring feature %d: it needs one the device did not offer\n",
			 64 + bit);
		__virtio_clear_bit(vdev, 64 + bit);
	}

	/* USO needs the kernel to know the UDP_L4 header type (compat.h). */
	if (!VNET_CAN_USO) {
		__virtio_clear_bit(vdev, VNET_F_GUEST_USO4);
		__virtio_clear_bit(vdev, VNET_F_GUEST_USO6);
		__virtio_clear_bit(vdev, VNET_F_HOST_USO);
	}

	if (virtio_has_feature(vdev, VIRTIO_NET_F_MTU) &&
	    virtio_cread16(vdev, offsetof(struct virtio_net_config, mtu)) <
	    ETH_MIN_MTU) {
		dev_warn(&vdev->dev, "ignoring the device MTU: below %d\n",
			 ETH_MIN_MTU);
		__virtio_clear_bit(vdev, VIRTIO_NET_F_MTU);
	}
	return 0;
}

static u16 vnet_read_max_pairs(struct virtio_device *vdev)
{
	u16 n;

	if (!virtio_has_feature(vdev, VIRTIO_NET_F_MQ))
		return 1;
	n = virtio_cread16(vdev, offsetof(struct virtio_net_config,
					  max_virtqueue_pairs));
	if (n < VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MIN ||
	    n > VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MAX) {
		dev_warn(&vdev->dev, "device reports %u queue pairs; using one\n",
			 n);
		return 1;
	}
	return n;
}

/*
 * Coalescing from the module options, checked against the rings now that
 * they are known; a combination that does not hold falls back to the
 * defaults, with a warning naming the options.
 */
static void vnet_probe_coal(struct vnet *vi)
{
	struct vnet_tx_coal tc = {
		.frames = vnet_opts.tx_frames,
		.usecs = vnet_opts.tx_usecs,
		.adaptive = vnet_opts.adaptive_tx,
		.irq_frames = vnet_opts.tx_frames_irq,
		.irq_usecs = vnet_opts.tx_usecs_irq,
	};
	struct vnet_rx_coal rc = {
		.usecs = vnet_opts.rx_usecs,
		.frames = vnet_opts.rx_frames,
		.adaptive = vnet_opts.adaptive_rx,
		.usecs_high = vnet_opts.rx_usecs_high,
	};
	unsigned int ring = virtqueue_get_vring_size(vi->qp[0].sq.vq);
	const char *why;
	unsigned int i;

	/* The default batch follows the ring, unasked (policy/coalesce.h). */
	tc.frames_auto = tc.frames == VNET_TX_FRAMES_DEFAULT;
	if (vnet_tx_coal_check(&tc, ring, &why)) {
		dev_warn(&vi->vdev->dev,
			 "options tx_frames=%u tx_usecs=%u tx_frames_irq=%u tx_usecs_irq=%u: %s; using the defaults\n",
			 tc.frames, tc.usecs, tc.irq_frames, tc.irq_usecs, why);
		vnet_tx_coal_default(&tc);
	}
	if (vnet_rx_coal_check(&rc, virtqueue_get_vring_size(vi->qp[0].rq.vq),
			       &why)) {
		dev_warn(&vi->vdev->dev,
			 "options rx_usecs=%u rx_frames=%u rx_usecs_high=%u: %s; using the defaults\n",
			 rc.usecs, rc.frames, rc.usecs_high, why);
		vnet_rx_coal_default(&rc);
	}
	vi->tx_coal = tc;
	vi->rx_coal = rc;
	for (i = 0; i < vi->max_pairs; i++) {
		vi->qp[i].sq.coal = tc;
		vnet_tx_setup(&vi->qp[i].sq);
		vnet_rx_set_coal(&vi->qp[i].rq, &rc);
	}
}

static const char * const vnet_rx_mode_names[] = {
	[VNET_RX_SMALL] = "small",
	[VNET_RX_BIG] = "big",
	[VNET_RX_MERGEABLE] = "mergeable",
};

/* Header, buffer layout and MTU range from the negotiated features. */
static int vnet_setup_layout(struct vnet *vi)
{
	struct virtio_device *vdev = vi->vdev;
	struct net_device *dev = vi->dev;
	unsigned int mtu = ETH_DATA_LEN;

	vi->hdr_len = vnet_hdr_len(vnet_has(vi, VIRTIO_NET_F_MRG_RXBUF),
				   vnet_has(vi, VIRTIO_F_VERSION_1));
	/* A hash report makes the header longer, in both directions. */
	if (vnet_has(vi, VIRTIO_NET_F_HASH_REPORT))
		vi->hdr_len = sizeof(struct virtio_net_hdr_v1_hash);
	/* ... and UDP tunnel GSO, either way, longer still. */
	vi->rx_tnl = vnet_features_hi(vdev) &
		     VNET_HI_BIT(VNET_F_GUEST_UDP_TUNNEL_GSO);
	vi->rx_tnl_csum = vnet_features_hi(vdev) &
			  VNET_HI_BIT(VNET_F_GUEST_UDP_TUNNEL_GSO_CSUM);
	vi->tx_tnl = vnet_features_hi(vdev) &
		     VNET_HI_BIT(VNET_F_HOST_UDP_TUNNEL_GSO);
	if (vi->rx_tnl || vi->tx_tnl)
		vi->hdr_len = VNET_HDR_TNL_LEN;
	vi->any_header_sg = vnet_has(vi, VIRTIO_F_ANY_LAYOUT) ||
			    vnet_has(vi, VIRTIO_F_VERSION_1);
	vi->little_endian = virtio_is_little_endian(vdev);
	vi->guest_gso = vnet_guest_gso(vdev->features);
	vi->rx_hdr_allowed = vnet_rx_hdr_allowed(vdev->features) |
			     vnet_rx_tnl_allowed(vnet_features_hi(vdev));
	vi->has_cvq = vnet_has(vi, VIRTIO_NET_F_CTRL_VQ);
	vi->dev_coal = vnet_has(vi, VNET_F_NOTF_COAL) ||
		       vnet_has(vi, VNET_F_VQ_NOTF_COAL);

	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = ETH_MAX_MTU;
	if (vnet_has(vi, VIRTIO_NET_F_MTU)) {
		mtu = virtio_cread16(vdev, offsetof(struct virtio_net_config,
						    mtu));
		if (mtu < ETH_MIN_MTU) {
			dev_err(&vdev->dev, "device MTU changed to %u\n", mtu);
			return -EINVAL;
		}
		dev->mtu = mtu;
		dev->max_mtu = mtu;
	}

	if (vnet_has(vi, VIRTIO_NET_F_MRG_RXBUF)) {
		vi->rx_mode = VNET_RX_MERGEABLE;
	} else if (vi->guest_gso || mtu > ETH_DATA_LEN) {
		vi->rx_mode = VNET_RX_BIG;
		vi->big_pages = min_t(unsigned int, MAX_SKB_FRAGS,
				      vnet_big_pages(vi->guest_gso, mtu,
						     PAGE_SIZE));
	} else {
		/*
		 * One 1518-byte buffer per frame: larger MTUs cannot work,
		 * nor can one above the device's (mtu is that or 1500 here).
		 */
		vi->rx_mode = VNET_RX_SMALL;
		dev->max_mtu = min_t(unsigned int, mtu, ETH_DATA_LEN);
	}

	if (vi->any_header_sg)
		dev->needed_headroom = vi->hdr_len;
	return 0;
}

static void vnet_setup_netdev(struct vnet *vi)
{
	struct virtio_device *vdev = vi->vdev;
	struct net_device *dev = vi->dev;
	struct vnet_netdev_features nf;
	u8 addr[ETH_ALEN];

	dev->netdev_ops = &vnet_netdev_ops;
	dev->ethtool_ops = &vnet_ethtool_ops;
	dev->priv_flags |= IFF_UNICAST_FLT | IFF_LIVE_ADDR_CHANGE;
	SET_NETDEV_DEV(dev, &vdev->dev);
	vnet_stats_register_qstats(dev);
	vnet_sysfs_register(dev);

	vnet_pick_netdev_features(vdev->features, vnet_opts.csum,
				  vnet_opts.gso, &nf);
	vnet_pick_tnl_features(vnet_features_hi(vdev), vnet_opts.gso, &nf);
	dev->features = nf.features;
	dev->hw_features = nf.hw_features;
	dev->hw_enc_features = nf.hw_enc_features;
	dev->vlan_features = nf.features;

	if (vnet_has(vi, VIRTIO_NET_F_MAC)) {
		virtio_cread_bytes(vdev, offsetof(struct virtio_net_config, mac),
				   addr, ETH_ALEN);
		eth_hw_addr_set(dev, addr);
	} else {
		eth_hw_addr_random(dev);
		dev_info(&vdev->dev, "no MAC address from the device, using random %pM\n",
			 dev->dev_addr);
	}

	vi->speed = SPEED_UNKNOWN;
	vi->duplex = DUPLEX_UNKNOWN;
	vi->offloads_capable = vnet_guest_offloads_capable(vdev->features) |
			       vnet_tnl_guest_offloads(vnet_features_hi(vdev));
	vi->offloads = vi->offloads_capable;
}

static int vnet_probe(struct virtio_device *vdev)
{
	u16 max_pairs = vnet_read_max_pairs(vdev);
	struct net_device *dev;
	struct vnet *vi;
	int err;

	dev = alloc_etherdev_mq(sizeof(*vi), max_pairs);
	if (!dev)
		return -ENOMEM;
	vi = netdev_priv(dev);
	vi->dev = dev;
	vi->vdev = vdev;
	vdev->priv = vi;
	vi->max_pairs = max_pairs;
	vi->napi_weight = vnet_opts.napi_weight;
	mutex_init(&vi->ctrl_lock);
	spin_lock_init(&vi->work_lock);
	INIT_DELAYED_WORK(&vi->refill, vnet_refill_work);
	INIT_WORK(&vi->rx_mode_work, vnet_rx_mode_work);
	INIT_WORK(&vi->config_work, vnet_config_work);
	vnet_thr_init(vi);

	err = vnet_setup_layout(vi);
	if (err)
		goto free_netdev;
	vnet_setup_netdev(vi);

	vi->ctrl = kzalloc(sizeof(*vi->ctrl), GFP_KERNEL);
	if (!vi->ctrl) {
		err = -ENOMEM;
		goto free_netdev;
	}
	err = vnet_qps_alloc(vi);
	if (err)
		goto free_ctrl;
	err = vnet_affinity_alloc(vi);
	if (err)
		goto free_qps;
	err = vnet_vqs_init(vi);
	if (err)
		goto free_qps;
	/* Probe to remove: buffers go back to them across freeze/restore. */
	err = vnet_rx_pools_create(vi);
	if (err)
		goto free_vqs;
	vnet_probe_coal(vi);

	vi->curr_pairs = vnet_default_pairs(max_pairs, num_online_cpus(),
					    vnet_opts.max_queue_pairs);
	netif_set_real_num_tx_queues(dev, vi->curr_pairs);
	netif_set_real_num_rx_queues(dev, vi->curr_pairs);
	err = vnet_rss_probe(vi);
	if (err)
		goto free_vqs;
	err = vnet_failover_probe(vi);
	if (err)
		goto free_vqs;
	vnet_xdp_probe(vi);

	/* Hold RTNL so ndo_open cannot run before the device is ready. */
	rtnl_lock();
	err = register_netdevice(dev);
	if (err) {
		rtnl_unlock();
		dev_err(&vdev->dev, "registering the network device failed: %d\n",
			err);
		goto free_vqs;
	}
	virtio_device_ready(vdev);

	if (vi->curr_pairs > 1 && vnet_ctrl_set_pairs(vi, vi->curr_pairs)) {
		vi->curr_pairs = 1;
		netif_set_real_num_tx_queues(dev, 1);
		netif_set_real_num_rx_queues(dev, 1);
	}
	vnet_rss_apply(vi);
	/* The device should learn a MAC address it did not choose. */
	if (!vnet_has(vi, VIRTIO_NET_F_MAC) &&
	    vnet_has(vi, VIRTIO_NET_F_CTRL_MAC_ADDR) &&
	    vnet_ctrl_set_mac(vi, dev->dev_addr))
		netdev_warn(dev, "device refused MAC address %pM\n",
			    dev->dev_addr);
	vnet_rx_mode_enable(vi, true);
	vnet_ctrl_dev_coal(vi, 0, vi->max_pairs);
	vnet_dev_stats_probe(vi);
	rtnl_unlock();

	/* Link changes may still be held back by a driver bound before. */
	vnet_config_driver_enable(vdev);
	netif_carrier_off(dev);
	vnet_link_start(vi);

	vnet_affinity_start(vi);
	vnet_thr_start(vi);

	netdev_info(dev, "virtio-net-dkms %s: %u of %u queue pairs, %s receive buffers%s, MTU %u..%u\n",
		    VNET_VERSION, vi->curr_pairs, max_pairs,
		    vnet_rx_mode_names[vi->rx_mode],
		    vi->qp[0].rq.pp ? " from page pools" : "", dev->min_mtu,
		    dev->max_mtu);
	return 0;

free_vqs:
	vnet_failover_remove(vi);
	vnet_rss_free(vi);
	vnet_vqs_teardown(vi);
	vnet_rx_pools_destroy(vi);
free_qps:
	vnet_affinity_free(vi);
	vnet_qps_free(vi);
free_ctrl:
	kfree(vi->ctrl);
free_netdev:
	free_netdev(dev);
	return err;
}

static void vnet_remove(struct virtio_device *vdev)
{
	struct vnet *vi = vdev->priv;

	cancel_work_sync(&vi->config_work);
	vnet_thr_stop(vi);
	vnet_affinity_stop(vi, true);
	unregister_netdev(vi->dev);
	vnet_failover_remove(vi);
	vnet_rss_stop(vi);
	vnet_rx_mode_enable(vi, false);
	vnet_vqs_teardown(vi);
	vnet_rx_pools_destroy(vi);
	vnet_affinity_free(vi);
	vnet_qps_free(vi);
	vnet_rss_free(vi);
	kfree(vi->ctrl);
	free_netdev(vi->dev);
}

/*
 * Stop everything that uses the virtqueues and delete them.  Also right
 * after a failed restore, when they are gone already.
 */
static void __maybe_unused vnet_quiesce(struct vnet *vi)
{
	struct net_device *dev = vi->dev;

	cancel_work_sync(&vi->config_work);
	vnet_rx_mode_enable(vi, false);
	vnet_affinity_stop(vi, false);

	rtnl_lock();
	netif_tx_lock_bh(dev);
	netif_device_detach(dev);
	netif_tx_unlock_bh(dev);
	vnet_pairs_stop(vi);
	/*
	 * A poll that was still running when the device was detached may
	 * have woken a queue it reclaimed room in: stop them again now that
	 * the pairs are stopped (else a TCP timer transmits into a deleted
	 * virtqueue).  Polls and timers are off now; without TX NAPI the
	 * completion callback, which still runs until the reset, wakes
	 * nothing on a detached device, and the teardown stops the queues
	 * once more after the reset for one that checked just before.
	 */
	netif_tx_disable(dev);
	rtnl_unlock();
	vnet_rss_stop(vi);
	vnet_vqs_teardown(vi);
}

static int __maybe_unused vnet_freeze(struct virtio_device *vdev)
{
	vnet_quiesce(vdev->priv);
	return 0;
}

static int __maybe_unused vnet_restore(struct virtio_device *vdev)
{
	struct vnet *vi = vdev->priv;
	struct net_device *dev = vi->dev;
	int err;

	/*
	 * On failure nothing needs undoing: since freeze the pairs are
	 * stopped, the virtqueues gone and the interface detached, a state
	 * that remove (and another freeze) handle.
	 */
	err = vnet_vqs_init(vi);
	if (err) {
		dev_err(&vdev->dev, "restore failed (%d): no virtqueues, the interface stays detached\n",
			err);
		return err;
	}
	virtio_device_ready(vdev);

	rtnl_lock();
	if (netif_running(dev))
		vnet_pairs_start(vi);
	vnet_replay_filters(vi);
	netif_tx_lock_bh(dev);
	netif_device_attach(dev);
	netif_tx_unlock_bh(dev);
	rtnl_unlock();

	vnet_rx_mode_enable(vi, true);
	vnet_affinity_start(vi);
	vnet_link_start(vi);
	return 0;
}

static const struct virtio_device_id vnet_id_table[] = {
	{ VIRTIO_ID_NET, VIRTIO_DEV_ANY_ID },
	{ 0 },
};
MODULE_DEVICE_TABLE(virtio, vnet_id_table);

/*
 * Features we negotiate.  The first two are only for legacy (pre-1.0)
 * devices, the last ones (above bit 63, compat.h) only for modern ones:
 * each table is a slice of this list.
 */
static unsigned int vnet_features[] = {
	/* legacy only */
	VIRTIO_NET_F_GSO, VIRTIO_F_ANY_LAYOUT,
	/* both */
	VIRTIO_NET_F_CSUM, VIRTIO_NET_F_GUEST_CSUM,
	VIRTIO_NET_F_MAC, VIRTIO_NET_F_MTU,
	VIRTIO_NET_F_HOST_TSO4, VIRTIO_NET_F_HOST_TSO6,
	VIRTIO_NET_F_HOST_ECN, VIRTIO_NET_F_HOST_UFO,
	VIRTIO_NET_F_GUEST_TSO4, VIRTIO_NET_F_GUEST_TSO6,
	VIRTIO_NET_F_GUEST_ECN, VIRTIO_NET_F_GUEST_UFO,
	VIRTIO_NET_F_MRG_RXBUF, VIRTIO_NET_F_STATUS,
	VIRTIO_NET_F_CTRL_VQ, VIRTIO_NET_F_CTRL_RX,
	VIRTIO_NET_F_CTRL_VLAN, VIRTIO_NET_F_GUEST_ANNOUNCE,
	VIRTIO_NET_F_MQ, VIRTIO_NET_F_CTRL_MAC_ADDR,
	VIRTIO_NET_F_CTRL_GUEST_OFFLOADS, VIRTIO_NET_F_SPEED_DUPLEX,
	VNET_F_NOTF_COAL, VNET_F_VQ_NOTF_COAL, VNET_F_DEVICE_STATS,
	VIRTIO_NET_F_RSS, VIRTIO_NET_F_HASH_REPORT,
	VNET_F_GUEST_USO4, VNET_F_GUEST_USO6, VNET_F_HOST_USO,
	VIRTIO_NET_F_STANDBY,
#if VNET_CAN_UDP_TUNNEL
	/* modern only */
	VNET_F_GUEST_UDP_TUNNEL_GSO, VNET_F_GUEST_UDP_TUNNEL_GSO_CSUM,
	VNET_F_HOST_UDP_TUNNEL_GSO, VNET_F_HOST_UDP_TUNNEL_GSO_CSUM,
#endif
};

#define VNET_LEGACY_ONLY	2
#define VNET_MODERN_ONLY	(VNET_CAN_UDP_TUNNEL ? 4 : 0)

struct virtio_driver vnet_driver = {
	.feature_table		= vnet_features + VNET_LEGACY_ONLY,
	.feature_table_size	= ARRAY_SIZE(vnet_features) - VNET_LEGACY_ONLY,
	.feature_table_legacy	= vnet_features,
	.feature_table_size_legacy = ARRAY_SIZE(vnet_features) - VNET_MODERN_ONLY,
	.driver.name		= KBUILD_MODNAME,
	.driver.owner		= THIS_MODULE,
	.id_table		= vnet_id_table,
	.validate		= vnet_validate,
	.probe			= vnet_probe,
	.remove			= vnet_remove,
	.config_changed		= vnet_config_changed,
#ifdef CONFIG_PM_SLEEP
	.freeze			= vnet_freeze,
	.restore		= vnet_restore,
#endif
};
