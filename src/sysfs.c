// SPDX-License-Identifier: GPL-2.0-only
/*
 * Driver files in sysfs: /sys/class/net/<dev>/virtio_net/.
 *
 *   affinity   the queue pair placement in force: per pair of the last
 *              plan applied (the active pairs), the CPU its interrupts
 *              go to and the CPUs that transmit on it; empty while the
 *              device is frozen, "off" with irq_affinity=off
 *
 * and, as the in-tree driver has it, with mergeable receive buffers:
 * /sys/class/net/<dev>/queues/rx-<N>/virtio_net/mergeable_rx_buffer_size,
 * the size of the next buffer posted on that queue.
 */
#include <linux/device.h>
#include <linux/netdevice.h>
#include <linux/sysfs.h>
#include "compat.h"
#include "vnet.h"

static ssize_t affinity_show(struct device *d, struct device_attribute *attr,
			     char *buf)
{
	return vnet_affinity_show(netdev_priv(to_net_dev(d)), buf);
}
static DEVICE_ATTR_RO(affinity);

static struct attribute *vnet_attrs[] = {
	&dev_attr_affinity.attr,
	NULL,
};

static const struct attribute_group vnet_attr_group = {
	.name = "virtio_net",
	.attrs = vnet_attrs,
};

#ifdef CONFIG_SYSFS
static ssize_t mergeable_rx_buffer_size_show(struct netdev_rx_queue *queue,
					     char *buf)
{
	struct vnet *vi = netdev_priv(queue->dev);
	unsigned int i = get_netdev_rx_queue_index(queue);

	if (i >= vi->max_pairs)
		return -EINVAL;
	return sysfs_emit(buf, "%u\n", vnet_rx_mrg_len(&vi->qp[i].rq));
}

static struct rx_queue_attribute vnet_mrg_size_attr =
	__ATTR_RO(mergeable_rx_buffer_size);

static struct attribute *vnet_rx_queue_attrs[] = {
	&vnet_mrg_size_attr.attr,
	NULL,
};

static const struct attribute_group vnet_rx_queue_group = {
	.name = "virtio_net",
	.attrs = vnet_rx_queue_attrs,
};
#endif

/*
 * Before register_netdevice(), once the receive buffer layout is known:
 * slot 0 of the device groups is the one left to drivers.
 */
void vnet_sysfs_register(struct net_device *dev)
{
	struct vnet *vi = netdev_priv(dev);

	dev->sysfs_groups[0] = &vnet_attr_group;
#ifdef CONFIG_SYSFS
	if (vi->rx_mode == VNET_RX_MERGEABLE)
		dev->sysfs_rx_queue_group = &vnet_rx_queue_group;
#endif
}
