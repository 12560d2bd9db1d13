/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * XDP decisions (pure, tested with KUnit): which send queues carry XDP
 * frames, how large a frame single- and multi-buffer XDP can take, whether
 * a program can be attached at all or an MTU set under one, and how XDP
 * frames are told apart from skbs in a send queue.
 *
 * Send queues: XDP_TX and ndo_xdp_xmit run on any CPU, in softirq
 * context.  When the device has a spare queue pair for every possible
 * CPU, those pairs are enabled while a program is attached and CPU n
 * sends on pair "stack pairs + n" alone; otherwise CPU n shares stack
 * pair n % stack pairs with the stack, under that queue's lock.  Either
 * way the queue lock is taken (uncontended for a dedicated pair), since
 * ring resizing and teardown serialize on it.
 */
#ifndef VNET_XDP_PLAN_H
#define VNET_XDP_PLAN_H

#include <linux/types.h>

/* Receive buffer layouts, as in enum vnet_rx_mode (vnet.h). */
enum vnet_xdp_layout {
	VNET_XDP_SMALL,
	VNET_XDP_BIG,
	VNET_XDP_MERGEABLE,
};

unsigned int vnet_xdp_dedicated_pairs(unsigned int max_pairs,
				      unsigned int stack_pairs,
				      unsigned int cpus);
unsigned int vnet_xdp_txq(unsigned int stack_pairs, unsigned int xdp_pairs,
			  unsigned int cpu);
unsigned int vnet_xdp_max_frame(unsigned int page_size,
				unsigned int headroom,
				unsigned int tailroom);
unsigned int vnet_xdp_max_frags_frame(unsigned int max_frags,
				      unsigned int min_buf);

/* Largest Ethernet frames XDP takes, by the kind of program. */
struct vnet_xdp_limits {
	unsigned int single;	/* one buffer: vnet_xdp_max_frame() */
	unsigned int frags;	/* mergeable buffers, xdp.frags programs */
};

const char *vnet_xdp_check_mtu(enum vnet_xdp_layout layout, unsigned int mtu,
			       bool frags, const struct vnet_xdp_limits *lim);
const char *vnet_xdp_check_attach(enum vnet_xdp_layout layout,
				  unsigned int mtu, bool frags,
				  const struct vnet_xdp_limits *lim,
				  bool guest_offloads_on, bool can_switch);

/* A send queue token is an skb, or an xdp_frame with the low bit set. */
#define VNET_XDP_TOKEN	0x1UL

static inline void *vnet_xdp_to_token(void *frame)
{
	return (void *)((unsigned long)frame | VNET_XDP_TOKEN);
}

static inline bool vnet_xdp_is_token(const void *ptr)
{
	return (unsigned long)ptr & VNET_XDP_TOKEN;
}

static inline void *vnet_xdp_from_token(void *ptr)
{
	return (void *)((unsigned long)ptr & ~VNET_XDP_TOKEN);
}

/*
 * An AF_XDP socket's frame (xsk.c) is not a pointer at all: its length
 * shifted past two flag bits, the second one set.  Pointers to skbs have
 * both low bits clear.
 */
#define VNET_XSK_TOKEN	0x2UL
#define VNET_XSK_SHIFT	2

static inline void *vnet_xsk_to_token(u32 len)
{
	return (void *)(((unsigned long)len << VNET_XSK_SHIFT) | VNET_XSK_TOKEN);
}

static inline bool vnet_xsk_is_token(const void *ptr)
{
	return ((unsigned long)ptr & (VNET_XSK_TOKEN | VNET_XDP_TOKEN)) ==
	       VNET_XSK_TOKEN;
}

static inline u32 vnet_xsk_token_len(const void *ptr)
{
	return (unsigned long)ptr >> VNET_XSK_SHIFT;
}

#endif /* VNET_XDP_PLAN_H */
