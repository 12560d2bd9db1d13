// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device-side notification coalescing commands (pure encoding).
 */
#include <linux/string.h>
#include <asm/byteorder.h>
#include "policy/coalesce.h"
#include "policy/dev_coalesce.h"

void vnet_coal_encode(struct vnet_coal_wire *w, u32 max_packets,
		      u32 max_usecs)
{
	w->max_packets = cpu_to_le32(max_packets);
	w->max_usecs = cpu_to_le32(max_usecs);
}

void vnet_coal_encode_vq(struct vnet_coal_vq_wire *w, u16 vqn,
			 u32 max_packets, u32 max_usecs)
{
	w->vqn = cpu_to_le16(vqn);
	w->reserved = 0;
	w->max_packets = cpu_to_le32(max_packets);
	w->max_usecs = cpu_to_le32(max_usecs);
}

/*
 * Split the RX moderation of a queue between the device and the guest
 * (see policy/dev_coalesce.h).  Fills what the device's RX and TX virtqueues are
 * programmed with; returns whether the guest still defers RX polls.
 */
bool vnet_dev_coal_split(const struct vnet_rx_coal *rx,
			 struct vnet_dev_coal_vq *dev_rx,
			 struct vnet_dev_coal_vq *dev_tx)
{
	dev_tx->max_packets = 0;
	dev_tx->max_usecs = 0;
	if (rx->adaptive) {
		dev_rx->max_packets = 0;
		dev_rx->max_usecs = 0;
		return true;
	}
	dev_rx->max_packets = rx->frames;
	dev_rx->max_usecs = rx->usecs;
	return false;
}
