// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device-side notification coalescing commands (pure encoding).
 */
#include <linux/string.h>
#include <asm/byteorder.h>
#include "dev_coal.h"

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
