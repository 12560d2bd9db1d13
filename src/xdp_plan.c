// SPDX-License-Identifier: GPL-2.0-only
/*
 * XDP decisions (pure): send queues, frame size, attach checks.
 */
#include <linux/kernel.h>
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include "xdp_plan.h"

/*
 * Pairs to enable for XDP alone: one per possible CPU if the device has
 * that many beyond the stack's, else none (the locked, shared mode).
 */
unsigned int vnet_xdp_dedicated_pairs(unsigned int max_pairs,
				      unsigned int stack_pairs,
				      unsigned int cpus)
{
	if (!cpus || stack_pairs > max_pairs || max_pairs - stack_pairs < cpus)
		return 0;
	return cpus;
}

/* The send queue pair CPU @cpu uses for XDP. */
unsigned int vnet_xdp_txq(unsigned int stack_pairs, unsigned int xdp_pairs,
			  unsigned int cpu)
{
	if (xdp_pairs)
		return stack_pairs + cpu % xdp_pairs;
	return stack_pairs ? cpu % stack_pairs : 0;
}

/*
 * Largest Ethernet frame (no virtio header) single-buffer XDP takes: a
 * page less the headroom XDP programs may grow into and the tailroom an
 * skb built around the buffer needs.
 */
unsigned int vnet_xdp_max_frame(unsigned int page_size,
				unsigned int headroom,
				unsigned int tailroom)
{
	if (headroom + tailroom >= page_size)
		return 0;
	return page_size - headroom - tailroom;
}

/*
 * Why a program cannot be attached, or NULL.  Big-packet chains are not
 * one buffer; frames of the MTU must fit a single buffer; and the device
 * must stop coalescing and checksum-offloading what it receives (XDP
 * sees whole, final frames), which only the control queue can ask for.
 */
const char *vnet_xdp_check_attach(enum vnet_xdp_layout layout,
				  unsigned int mtu, unsigned int max_frame,
				  bool guest_offloads_on, bool can_switch)
{
	if (layout == VNET_XDP_BIG)
		return "XDP needs mergeable or small receive buffers, not big packets";
	if (mtu + ETH_HLEN + VLAN_HLEN > max_frame)
		return "MTU too large for single-buffer XDP";
	if (guest_offloads_on && !can_switch)
		return "guest offloads are on and the device cannot turn them off";
	return NULL;
}
