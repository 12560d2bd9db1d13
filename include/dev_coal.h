/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Device-side notification coalescing (VIRTIO_NET_F_NOTF_COAL, and per
 * virtqueue with VIRTIO_NET_F_VQ_NOTF_COAL): encoding of the control
 * commands, pure so that KUnit can check the wire format.
 *
 * How device and guest moderation combine: a device that coalesces its
 * own interrupts delays them without costing the guest a timer, so when
 * it offers the feature rx-usecs/rx-frames are programmed into the device
 * and the guest stops deferring RX polls; tx-usecs-irq/tx-frames-irq
 * become the device's TX completion moderation, while kick coalescing
 * and delayed reclaim stay in the guest.  QEMU 7.2 offers neither
 * feature: this path is covered by KUnit only and untested on a device.
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

void vnet_coal_encode(struct vnet_coal_wire *w, u32 max_packets,
		      u32 max_usecs);
void vnet_coal_encode_vq(struct vnet_coal_vq_wire *w, u16 vqn,
			 u32 max_packets, u32 max_usecs);

#endif /* VNET_DEV_COAL_H */
