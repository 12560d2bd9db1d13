/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Receive buffer arithmetic and validation of what the device hands back.
 *
 * The device is not trusted: every used length and buffer count it reports
 * is checked here before the driver touches the data.  All functions are
 * pure so that KUnit can feed them crafted values.
 */
#ifndef VNET_RX_BUF_H
#define VNET_RX_BUF_H

#include <linux/bits.h>
#include <linux/types.h>

/* Largest Ethernet frame a small buffer holds: header + VLAN tag + 1500. */
#define VNET_GOOD_FRAME_LEN	1518
/*
 * Frames up to this size are copied into a skb head of their own, and it
 * is the room asked for such a head; the allocator may give more, and
 * vnet_rx_copy_len() uses all it gave.
 */
#define VNET_COPY_LEN		128
/* Space for the virtio-net header at the start of a big-packet chain. */
#define VNET_BIG_HDR_PAD	32

/* Driver context stored with each buffer: its true size and headroom. */
#define VNET_CTX_SIZE_BITS	22

static inline void *vnet_rx_ctx(unsigned int truesize, unsigned int headroom)
{
	return (void *)(unsigned long)((headroom << VNET_CTX_SIZE_BITS) |
				       truesize);
}

static inline unsigned int vnet_rx_ctx_truesize(const void *ctx)
{
	return (unsigned long)ctx & ((1UL << VNET_CTX_SIZE_BITS) - 1);
}

static inline unsigned int vnet_rx_ctx_headroom(const void *ctx)
{
	return (unsigned long)ctx >> VNET_CTX_SIZE_BITS;
}

/*
 * What the negotiated features allow a receive header to announce
 * (vnet_rx_hdr_allowed() builds the mask, vnet_rx_check_hdr() uses it).
 */
#define VNET_RX_ALLOW_CSUM	BIT(0)	/* GUEST_CSUM: flags may be set */
#define VNET_RX_ALLOW_TCPV4	BIT(1)	/* GUEST_TSO4 */
#define VNET_RX_ALLOW_TCPV6	BIT(2)	/* GUEST_TSO6 */
#define VNET_RX_ALLOW_UDP	BIT(3)	/* GUEST_UFO */
#define VNET_RX_ALLOW_ECN	BIT(4)	/* GUEST_ECN */
#define VNET_RX_ALLOW_UDP_L4	BIT(5)	/* GUEST_USO4 or GUEST_USO6 */
#define VNET_RX_ALLOW_TNL	BIT(6)	/* GUEST_UDP_TUNNEL_GSO */
#define VNET_RX_ALLOW_TNL_CSUM	BIT(7)	/* GUEST_UDP_TUNNEL_GSO_CSUM */

/* GSO type of USO frames, newer than some supported kernels' headers. */
#define VNET_HDR_GSO_UDP_L4	5

/*
 * UDP tunnel GSO (also newer than most headers): GSO type bits telling
 * the outer IP version, added to the inner packet's GSO type, and a flag
 * saying the outer UDP checksum is to be filled in (or, with DATA_VALID,
 * was checked too).
 */
#define VNET_HDR_GSO_UDP_TUNNEL_IPV4	0x20
#define VNET_HDR_GSO_UDP_TUNNEL_IPV6	0x40
#define VNET_HDR_GSO_UDP_TUNNEL		(VNET_HDR_GSO_UDP_TUNNEL_IPV4 | \
					 VNET_HDR_GSO_UDP_TUNNEL_IPV6)
#define VNET_HDR_F_UDP_TUNNEL_CSUM	8

/* The fields of a receive header, in CPU byte order. */
struct vnet_rx_hdr_fields {
	u8 flags;
	u8 gso_type;
	u16 gso_size;
	u16 csum_start;
	u16 csum_offset;
	/* UDP tunnel GSO only: the outer UDP and the inner IP header. */
	u16 outer_th_offset;
	u16 inner_nh_offset;
};

enum vnet_rx_verdict {
	VNET_RX_OK,
	VNET_RX_BAD_LEN,	/* used length outside the buffer */
	VNET_RX_BAD_HDR,	/* header fields that cannot be right */
};

unsigned int vnet_hdr_len(bool mrg_rxbuf, bool version_1);
unsigned int vnet_max_rx_frame(bool guest_gso, unsigned int mtu);
unsigned int vnet_big_pages(bool guest_gso, unsigned int mtu,
			    unsigned int page_size);
unsigned int vnet_big_capacity(unsigned int pages, unsigned int page_size);
unsigned int vnet_mrg_min_len(unsigned int hdr_len, unsigned int max_frame,
			      unsigned int ring_size);
unsigned int vnet_mrg_buf_len(unsigned int avg_len, unsigned int min_len,
			      unsigned int hdr_len, unsigned int max_len,
			      unsigned int align);
unsigned int vnet_rx_copy_len(unsigned int len, unsigned int room);
bool vnet_rx_build_fits(unsigned int used, unsigned int capacity,
			unsigned int tail);
unsigned int vnet_rx_min_posted(unsigned int hdr_len, unsigned int max_frame,
				unsigned int buf_len);
bool vnet_rx_refill_due(unsigned int num_free, unsigned int ring,
			unsigned int budget, unsigned int min_posted);
enum vnet_rx_verdict vnet_rx_check_first(unsigned int used,
					 unsigned int hdr_len,
					 unsigned int capacity);
enum vnet_rx_verdict vnet_rx_check_more(unsigned int used,
					unsigned int capacity);
enum vnet_rx_verdict vnet_rx_check_num_buffers(unsigned int num,
					       unsigned int ring_size);
enum vnet_rx_verdict vnet_rx_check_frame(unsigned int len,
					 unsigned int max_frame);
u32 vnet_rx_hdr_allowed(u64 vfeatures);
u32 vnet_rx_tnl_allowed(u64 vfeatures_hi);
enum vnet_rx_verdict vnet_rx_check_hdr(const struct vnet_rx_hdr_fields *h,
				       unsigned int len, u32 allowed,
				       const char **why);

#endif /* VNET_RX_BUF_H */
