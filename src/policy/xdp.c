// SPDX-License-Identifier: GPL-2.0-only
/*
 * XDP decisions (pure): send queues, frame size, attach checks.
 */
#include <linux/kernel.h>
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include "policy/xdp.h"

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
 * Largest frame (no virtio header) a multi-buffer program takes: the
 * first buffer and MAX_SKB_FRAGS fragments, where every buffer holds at
 * least @min_buf bytes of the frame but the first may need two slots (a
 * buffer posted without XDP headroom is copied, as much as fits, into a
 * page of its own, and its rest becomes a fragment).
 */
unsigned int vnet_xdp_max_frags_frame(unsigned int max_frags,
				      unsigned int min_buf)
{
	return max_frags * min_buf;
}

/*
 * Why frames of @mtu cannot run through a program, or NULL.  Only
 * mergeable buffers spread a frame over several buffers, so only there
 * does a program loaded for fragments (@frags) raise the limit.
 */
const char *vnet_xdp_check_mtu(enum vnet_xdp_layout layout, unsigned int mtu,
			       bool frags, const struct vnet_xdp_limits *lim)
{
	unsigned int frame = mtu + ETH_HLEN + VLAN_HLEN;

	if (frags && layout == VNET_XDP_MERGEABLE) {
		if (frame > lim->frags)
			return "MTU too large for multi-buffer XDP";
		return NULL;
	}
	if (frame > lim->single)
		return "MTU too large for single-buffer XDP (xdp.frags programs take more)";
	return NULL;
}

/*
 * Why a program cannot be attached, or NULL.  Big-packet chains are not
 * mergeable buffers; frames of the MTU must fit what the program takes;
 * and the device must stop coalescing and checksum-offloading what it
 * receives (XDP sees whole, final frames), which only the control queue
 * can ask for.
 */
const char *vnet_xdp_check_attach(enum vnet_xdp_layout layout,
				  unsigned int mtu, bool frags,
				  const struct vnet_xdp_limits *lim,
				  bool guest_offloads_on, bool can_switch)
{
	const char *why;

	if (layout == VNET_XDP_BIG)
		return "XDP needs mergeable or small receive buffers, not big packets";
	why = vnet_xdp_check_mtu(layout, mtu, frags, lim);
	if (why)
		return why;
	if (guest_offloads_on && !can_switch)
		return "guest offloads are on and the device cannot turn them off";
	return NULL;
}
