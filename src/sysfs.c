// SPDX-License-Identifier: GPL-2.0-only
/*
 * Driver files in sysfs: /sys/class/net/<dev>/virtio_net/.
 *
 *   affinity   the queue pair placement in force: per pair of the last
 *              plan applied (the active pairs), the CPU its interrupts
 *              go to and the CPUs that transmit on it; empty while the
 *              device is frozen, "off" with irq_affinity=off
 */
#include <linux/device.h>
#include <linux/netdevice.h>
#include <linux/sysfs.h>
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

/* Before register_netdevice(): slot 0 is the one left to drivers. */
void vnet_sysfs_register(struct net_device *dev)
{
	dev->sysfs_groups[0] = &vnet_attr_group;
}
