/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Device-side notification coalescing (VIRTIO_NET_F_NOTF_COAL, and per
 * virtqueue with VIRTIO_NET_F_VQ_NOTF_COAL): encoding of the control
 * commands, pure so that KUnit can check the wire format.
 *
 * How device and guest moderation combine (vnet_dev_coal_split()):
 *  - RX, adaptive-rx on: the device is asked to interrupt at once and the
 *    guest's adaptive deferral does the moderation, since only the guest
 *    sees the load (idle flows keep their immediate interrupt);
 *  - RX, adaptive-rx off: rx-frames/rx-usecs go to the device, which
 *    delays its interrupt without costing the guest a timer, and the
 *    guest stops deferring;
 *  - TX: completion interrupts are only asked for when needed (queue
 *    stopped, reclaim deadline on a quiet queue), so the device is asked
 *    to deliver them at once; kick coalescing and delayed reclaim stay in
 *    the guest.
 * A device with NOTF_COAL but not VQ_NOTF_COAL takes one setting for all
 * queues, programmed from the device-wide ethtool -C settings; per-queue
 * RX settings then stay in the guest (it keeps deferring on its own).
 * QEMU 7.2 offers neither feature: this path is covered by KUnit only and
 * untested on a device.
 */
#ifndef VNET_DEV_COAL_H
#define VNET_DEV_COAL_H

#include <linux/types.h>

/* Command 6 of the control queue and its subcommands (virtio 1.3). */
#define VNET_CTRL_NOTF_COAL		6
#define VNET_CTRL_NOTF_COAL_TX_SET	0
#define VNET_CTRL_NOTF_COAL_RX_SET	1
#define VNET_CTRL_NOTF_COAL_VQ_SET	2

/* TX_SET and RX_SET payload: packets first, then microseconds. */
struct vnet_coal_wire {
	__le32 max_packets;
	__le32 max_usecs;
} __packed;

/* VQ_SET payload: the virtqueue, then the same pair of limits. */
struct vnet_coal_vq_wire {
	__le16 vqn;
	__le16 reserved;
	__le32 max_packets;
	__le32 max_usecs;
} __packed;

/* What the device is programmed with for one RX or TX virtqueue. */
struct vnet_dev_coal_vq {
	u32 max_packets;
	u32 max_usecs;
};

struct vnet_rx_coal;

bool vnet_dev_coal_split(const struct vnet_rx_coal *rx,
			 struct vnet_dev_coal_vq *dev_rx,
			 struct vnet_dev_coal_vq *dev_tx);

void vnet_coal_encode(struct vnet_coal_wire *w, u32 max_packets,
		      u32 max_usecs);
void vnet_coal_encode_vq(struct vnet_coal_vq_wire *w, u16 vqn,
			 u32 max_packets, u32 max_usecs);

#endif /* VNET_DEV_COAL_H */
