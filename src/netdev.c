// SPDX-License-Identifier: GPL-2.0-only
/*
 * Network device operations: open/stop, receive filters, MAC address,
 * VLAN filter, offload switches, TX watchdog.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include "compat.h"
#include "policy/features.h"
#include "vnet.h"

static int vnet_open(struct net_device *dev)
{
	struct vnet *vi = netdev_priv(dev);

	vnet_pairs_start(vi);
	vnet_rss_settle(vi);
	return 0;
}

static int vnet_stop(struct net_device *dev)
{
	struct vnet *vi = netdev_priv(dev);
	/* After a failed restore the pairs are stopped and gone already. */
	bool had_pairs = vi->pairs_enabled;

	vnet_pairs_stop(vi);
	if (had_pairs)
		vnet_tx_drain_all(vi);
	return 0;
}

/*
 * Receive filters are programmed through the control queue, which may
 * sleep; ndo_set_rx_mode runs under the address lock, so it only
 * schedules the work.
 */
static void vnet_set_rx_mode(struct net_device *dev)
{
	struct vnet *vi = netdev_priv(dev);

	spin_lock_bh(&vi->work_lock);
	if (vi->rx_mode_enabled)
		schedule_work(&vi->rx_mode_work);
	spin_unlock_bh(&vi->work_lock);
}

void vnet_rx_mode_work(struct work_struct *work)
{
	struct vnet *vi = container_of(work, struct vnet, rx_mode_work);
	struct net_device *dev = vi->dev;
	unsigned int flags = READ_ONCE(dev->flags);

	if (!vnet_has(vi, VIRTIO_NET_F_CTRL_RX))
		return;
	if (vnet_ctrl_set_rx_flag(vi, VIRTIO_NET_CTRL_RX_PROMISC,
				  flags & IFF_PROMISC))
		netdev_warn(dev, "device refused to turn promiscuous mode %s\n",
			    flags & IFF_PROMISC ? "on" : "off");
	if (vnet_ctrl_set_rx_flag(vi, VIRTIO_NET_CTRL_RX_ALLMULTI,
				  flags & IFF_ALLMULTI))
		netdev_warn(dev, "device refused to turn all-multicast mode %s\n",
			    flags & IFF_ALLMULTI ? "on" : "off");
	if (vnet_ctrl_set_mac_table(vi, dev))
		netdev_warn(dev, "device refused the MAC filter table\n");
}

/* Allow or stop receive-filter updates; stopping waits for a running one. */
void vnet_rx_mode_enable(struct vnet *vi, bool on)
{
	spin_lock_bh(&vi->work_lock);
	vi->rx_mode_enabled = on;
	spin_unlock_bh(&vi->work_lock);
	if (on)
		vnet_set_rx_mode(vi->dev);
	else
		cancel_work_sync(&vi->rx_mode_work);
}

static int vnet_set_mac_address(struct net_device *dev, void *p)
{
	struct vnet *vi = netdev_priv(dev);
	struct sockaddr *addr = p;
	unsigned int i;
	int err;

	err = eth_prepare_mac_addr_change(dev, p);
	if (err)
		return err;

	if (vnet_has(vi, VIRTIO_NET_F_CTRL_MAC_ADDR)) {
		err = vnet_ctrl_set_mac(vi, addr->sa_data);
		if (err) {
			netdev_warn(dev, "device refused MAC address %pM\n",
				    addr->sa_data);
			return err;
		}
	} else if (!vnet_has(vi, VIRTIO_F_VERSION_1) &&
		   vnet_has(vi, VIRTIO_NET_F_MAC)) {
		/* Legacy devices take the address through config space. */
		for (i = 0; i < ETH_ALEN; i++)
			virtio_cwrite8(vi->vdev,
				       offsetof(struct virtio_net_config, mac) + i,
				       addr->sa_data[i]);
	}
	eth_commit_mac_addr_change(dev, p);
	return 0;
}

/*
 * The core has checked @mtu against min_mtu/max_mtu; an attached XDP
 * program may take smaller frames only (single-buffer programs a page).
 * No extack here: the refusal is logged.
 */
static int vnet_change_mtu(struct net_device *dev, int mtu)
{
	const char *why = vnet_xdp_check_new_mtu(netdev_priv(dev), mtu);

	if (why) {
		netdev_warn(dev, "MTU %d refused while XDP is attached: %s\n",
			    mtu, why);
		return -EINVAL;
	}
	WRITE_ONCE(dev->mtu, mtu);
	return 0;
}

static int vnet_vlan_add(struct net_device *dev, __be16 proto, u16 vid)
{
	struct vnet *vi = netdev_priv(dev);
	int err = vnet_ctrl_vlan(vi, vid, true);

	if (err) {
		netdev_warn(dev, "device refused to add VLAN %u\n", vid);
		return err;
	}
	set_bit(vid, vi->vlans);
	return 0;
}

static int vnet_vlan_kill(struct net_device *dev, __be16 proto, u16 vid)
{
	struct vnet *vi = netdev_priv(dev);
	int err = vnet_ctrl_vlan(vi, vid, false);

	if (err) {
		netdev_warn(dev, "device refused to remove VLAN %u\n", vid);
		return err;
	}
	clear_bit(vid, vi->vlans);
	return 0;
}

static int vnet_set_features(struct net_device *dev,
			     netdev_features_t features)
{
	struct vnet *vi = netdev_priv(dev);
	u64 offloads;
	int err;

	if (!((dev->features ^ features) & NETIF_F_GRO_HW))
		return vnet_rss_set_features(vi, features);
	/* XDP keeps guest offloads off while it is attached (xdp.c). */
	if (vnet_xdp_attached(vi))
		return -EBUSY;
	offloads = vnet_guest_offloads_for(features, vi->offloads_capable);
	err = vnet_ctrl_set_offloads(vi, offloads);
	if (err) {
		netdev_warn(dev, "device refused guest offloads %#llx\n",
			    offloads);
		return err;
	}
	vi->offloads = offloads;
	return vnet_rss_set_features(vi, features);
}

/*
 * The watchdog timer (softirq) found queue @txqueue stopped too long; it
 * holds tx_global_lock, not the queue's lock, and keeps the stack off the
 * queue meanwhile.  Count it (ethtool -S tx_timeouts, tx_errors) and
 * recover the queue (tx.c).
 */
static void vnet_tx_timeout(struct net_device *dev, unsigned int txqueue)
{
	struct netdev_queue *txq = netdev_get_tx_queue(dev, txqueue);
	struct vnet *vi = netdev_priv(dev);
	struct vnet_sq *sq = &vi->qp[txqueue].sq;

	atomic64_inc(&sq->timeouts);
	netdev_err(dev, "TX timeout on queue %u (%s): %u of %u descriptors free; notifying the device and reclaiming\n",
		   txqueue, sq->name, sq->vq->num_free,
		   virtqueue_get_vring_size(sq->vq));
	__netif_tx_lock(txq, smp_processor_id());
	vnet_tx_recover(sq);
	vnet_txq_unlock(sq, txq);
}

/*
 * Re-program what a device reset forgot: queue pairs, MAC address,
 * guest offloads, VLAN filters (receive filters follow through the
 * rx-mode work).  Called after restore, under RTNL.
 */
void vnet_replay_filters(struct vnet *vi)
{
	struct net_device *dev = vi->dev;
	unsigned int vid;

	if (vi->curr_pairs > 1 && vnet_ctrl_set_pairs(vi, vi->curr_pairs)) {
		vi->curr_pairs = 1;
		netif_set_real_num_tx_queues(dev, 1);
		netif_set_real_num_rx_queues(dev, 1);
	}
	vnet_rss_apply(vi);
	if (vnet_has(vi, VIRTIO_NET_F_CTRL_MAC_ADDR) &&
	    vnet_ctrl_set_mac(vi, dev->dev_addr))
		netdev_warn(dev, "device refused MAC address %pM\n",
			    dev->dev_addr);
	if (vi->offloads != vi->offloads_capable &&
	    vnet_ctrl_set_offloads(vi, vi->offloads))
		netdev_warn(dev, "device refused guest offloads\n");
	for_each_set_bit(vid, vi->vlans, VLAN_N_VID)
		if (vnet_ctrl_vlan(vi, vid, true))
			netdev_warn(dev, "device refused to add VLAN %u\n", vid);
	vnet_ctrl_dev_coal(vi, 0, vi->max_pairs);
}

/*
 * The device fills in the inner checksum of an encapsulated frame only
 * while it segments it (UDP tunnel GSO): any other such frame, and one
 * the stack is about to segment itself, is checksummed in software.
 */
static netdev_features_t vnet_features_check(struct sk_buff *skb,
					     struct net_device *dev,
					     netdev_features_t features)
{
	if (skb->encapsulation &&
	    (!skb_is_gso(skb) || netif_needs_gso(skb, features)))
		features &= ~NETIF_F_CSUM_MASK;
	return features;
}

const struct net_device_ops vnet_netdev_ops = {
	.ndo_open		= vnet_open,
	.ndo_stop		= vnet_stop,
	.ndo_start_xmit		= vnet_start_xmit,
	.ndo_validate_addr	= eth_validate_addr,
	.ndo_set_mac_address	= vnet_set_mac_address,
	.ndo_change_mtu		= vnet_change_mtu,
	.ndo_set_rx_mode	= vnet_set_rx_mode,
	.ndo_get_stats64	= vnet_get_stats64,
	.ndo_vlan_rx_add_vid	= vnet_vlan_add,
	.ndo_vlan_rx_kill_vid	= vnet_vlan_kill,
	.ndo_features_check	= vnet_features_check,
	.ndo_get_phys_port_name	= vnet_get_phys_port_name,
	.ndo_set_features	= vnet_set_features,
	.ndo_tx_timeout		= vnet_tx_timeout,
	.ndo_bpf		= vnet_bpf,
	.ndo_xdp_xmit		= vnet_xdp_xmit,
#if VNET_CAN_XSK
	.ndo_xsk_wakeup		= vnet_xsk_wakeup,
#endif
};
