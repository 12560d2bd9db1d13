// SPDX-License-Identifier: GPL-2.0-only
/*
 * Standby for a faster device with the same MAC address
 * (VIRTIO_NET_F_STANDBY), through the kernel's net_failover.
 *
 * When the device offers the feature, net_failover creates a master
 * netdev (with our MAC) before ours is registered; ours becomes its
 * standby slave as it registers, and a primary device with the same MAC
 * (typically a passed-through VF, which the host plugs once the guest has
 * accepted the feature) becomes the other slave.  The master sends
 * through the primary while it is present and up, through us otherwise.
 * Users configure the master.  Ours names itself "sby" through
 * ndo_get_phys_port_name, so that udev can give it a telling name.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netdevice.h>
#include <net/net_failover.h>
#include "compat.h"
#include "vnet.h"

/* Before register_netdevice(), once the MAC address is known. */
int vnet_failover_probe(struct vnet *vi)
{
	struct failover *f;

	if (!vnet_has(vi, VIRTIO_NET_F_STANDBY))
		return 0;
	f = net_failover_create(vi->dev);
	if (IS_ERR(f)) {
		dev_err(&vi->vdev->dev, "creating the failover master failed: %ld\n",
			PTR_ERR(f));
		return PTR_ERR(f);
	}
	vi->failover = f;
	return 0;
}

/* After unregister_netdev(): the master goes, and the primary with it. */
void vnet_failover_remove(struct vnet *vi)
{
	net_failover_destroy(vi->failover);
	vi->failover = NULL;
}

int vnet_get_phys_port_name(struct net_device *dev, char *buf, size_t len)
{
	struct vnet *vi = netdev_priv(dev);

	if (!vnet_has(vi, VIRTIO_NET_F_STANDBY))
		return -EOPNOTSUPP;
	if (snprintf(buf, len, "sby") >= len)
		return -EOPNOTSUPP;
	return 0;
}
