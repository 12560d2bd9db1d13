// SPDX-License-Identifier: GPL-2.0-only
/*
 * Receive buffer sizing and validation (pure).
 */
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/skbuff.h>
#include <uapi/linux/virtio_net.h>
#include "policy/features.h"
#include "policy/rx.h"

/* Largest frame a guest-GSO device may hand us: 64 KiB plus L2 headers. */
#define VNET_MAX_GSO_FRAME	(65535 + ETH_HLEN + VLAN_HLEN)

/*
 * Both directions carry the same header.  Modern (VERSION_1) devices and
 * legacy devices with mergeable buffers use the form with num_buffers.
 */
unsigned int vnet_hdr_len(bool mrg_rxbuf, bool version_1)
{
	if (mrg_rxbuf || version_1)
		return sizeof(struct virtio_net_hdr_mrg_rxbuf);
	return sizeof(struct virtio_net_hdr);
}

/*
 * Largest frame the device may place in receive buffers: a 64 KiB GSO
 * frame when the device may coalesce, else one frame of the MTU (never
 * less than a standard Ethernet frame).
 */
unsigned int vnet_max_rx_frame(bool guest_gso, unsigned int mtu)
{
	if (guest_gso)
		return VNET_MAX_GSO_FRAME;
	return max_t(unsigned int, mtu, ETH_DATA_LEN) + ETH_HLEN + VLAN_HLEN;
}

/* Data bytes a chain of @pages pages holds after the header pad. */
unsigned int vnet_big_capacity(unsigned int pages, unsigned int page_size)
{
	return pages * page_size - VNET_BIG_HDR_PAD;
}

/* Pages per big-packet buffer: room for the largest frame. */
unsigned int vnet_big_pages(bool guest_gso, unsigned int mtu,
			    unsigned int page_size)
{
	return DIV_ROUND_UP(vnet_max_rx_frame(guest_gso, mtu) +
			    VNET_BIG_HDR_PAD, page_size);
}

/*
 * Smallest mergeable buffer: a ring full of buffers must be able to hold
 * the largest frame the device may send, and no buffer is smaller than a
 * standard Ethernet frame.
 */
unsigned int vnet_mrg_min_len(unsigned int hdr_len, unsigned int max_frame,
			      unsigned int ring_size)
{
	unsigned int len;

	if (!ring_size)
		ring_size = 1;
	len = DIV_ROUND_UP(hdr_len + max_frame, ring_size);
	return max_t(unsigned int, len, VNET_GOOD_FRAME_LEN);
}

/*
 * Fewest posted buffers of at least @buf_len bytes each that together
 * hold the largest frame the device may send (@hdr_len + @max_frame).
 */
unsigned int vnet_rx_min_posted(unsigned int hdr_len, unsigned int max_frame,
				unsigned int buf_len)
{
	return DIV_ROUND_UP(hdr_len + max_frame, max(buf_len, 1U));
}

/*
 * Whether a poll that leaves @num_free of @ring descriptors free must
 * refill.  Refills come in batches, one kick each: once half of what a
 * poll of @budget may take is free.  Sooner when fewer than @min_posted
 * buffers are left: a device that cannot fit the largest frame into the
 * posted buffers waits for more, which only a poll adds, and with nothing
 * received no poll comes, so receiving would stop for good.
 */
bool vnet_rx_refill_due(unsigned int num_free, unsigned int ring,
			unsigned int budget, unsigned int min_posted)
{
	if (num_free > min(budget, ring) / 2)
		return true;
	return num_free && ring - num_free < min_posted;
}

/*
 * Size of the next mergeable buffer from the running average of frame
 * lengths: never below @min_len, never above @max_len in total, rounded
 * up to @align (a power of two) so buffers do not share cache lines.
 */
unsigned int vnet_mrg_buf_len(unsigned int avg_len, unsigned int min_len,
			      unsigned int hdr_len, unsigned int max_len,
			      unsigned int align)
{
	unsigned int data;

	if (min_len + hdr_len > max_len)
		min_len = max_len - hdr_len;
	data = clamp_t(unsigned int, avg_len, min_len, max_len - hdr_len);
	return ALIGN(hdr_len + data, align);
}

/*
 * Bytes of a received frame (@len, from its Ethernet header on) copied into
 * a skb head with @room bytes of tailroom: all of them when they fit, else
 * the Ethernet header alone and the rest is attached as fragments.
 */
unsigned int vnet_rx_copy_len(unsigned int len, unsigned int room)
{
	return len <= room ? len : ETH_HLEN;
}

/*
 * Whether a frame using @used bytes of its @capacity-byte buffer leaves the
 * @tail bytes a skb built around the buffer keeps at its end.
 */
bool vnet_rx_build_fits(unsigned int used, unsigned int capacity,
			unsigned int tail)
{
	return used <= capacity && capacity - used >= tail;
}

/* First (or only) buffer of a frame: header plus an Ethernet header. */
enum vnet_rx_verdict vnet_rx_check_first(unsigned int used,
					 unsigned int hdr_len,
					 unsigned int capacity)
{
	if (used < hdr_len + ETH_HLEN || used > capacity)
		return VNET_RX_BAD_LEN;
	return VNET_RX_OK;
}

/* Further buffers of a mergeable frame. */
enum vnet_rx_verdict vnet_rx_check_more(unsigned int used,
					unsigned int capacity)
{
	return used > capacity ? VNET_RX_BAD_LEN : VNET_RX_OK;
}

/* num_buffers of a mergeable header: at least one, at most a ring. */
enum vnet_rx_verdict vnet_rx_check_num_buffers(unsigned int num,
					       unsigned int ring_size)
{
	if (!num || num > ring_size)
		return VNET_RX_BAD_HDR;
	return VNET_RX_OK;
}

/*
 * A whole frame (without the virtio-net header) against the largest the
 * device may send: mergeable buffers are not bounded by one buffer's
 * capacity, only by the ring.
 */
enum vnet_rx_verdict vnet_rx_check_frame(unsigned int len,
					 unsigned int max_frame)
{
	return len > max_frame ? VNET_RX_BAD_LEN : VNET_RX_OK;
}

/* Header contents the device may use, from the negotiated features. */
u32 vnet_rx_hdr_allowed(u64 vfeatures)
{
	static const struct {
		unsigned int feature;
		u32 allow;
	} map[] = {
		{ VIRTIO_NET_F_GUEST_CSUM, VNET_RX_ALLOW_CSUM },
		{ VIRTIO_NET_F_GUEST_TSO4, VNET_RX_ALLOW_TCPV4 },
		{ VIRTIO_NET_F_GUEST_TSO6, VNET_RX_ALLOW_TCPV6 },
		{ VIRTIO_NET_F_GUEST_UFO, VNET_RX_ALLOW_UDP },
		{ VIRTIO_NET_F_GUEST_ECN, VNET_RX_ALLOW_ECN },
		{ VNET_F_GUEST_USO4, VNET_RX_ALLOW_UDP_L4 },
		{ VNET_F_GUEST_USO6, VNET_RX_ALLOW_UDP_L4 },
	};
	u32 allowed = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(map); i++)
		if (vfeatures & (1ULL << map[i].feature))
			allowed |= map[i].allow;
	return allowed;
}

/* What the UDP tunnel GSO features allow (@vfeatures_hi: bits 64 on). */
u32 vnet_rx_tnl_allowed(u64 vfeatures_hi)
{
	u32 allowed = 0;

	if (vfeatures_hi & VNET_HI_BIT(VNET_F_GUEST_UDP_TUNNEL_GSO))
		allowed |= VNET_RX_ALLOW_TNL;
	if (vfeatures_hi & VNET_HI_BIT(VNET_F_GUEST_UDP_TUNNEL_GSO_CSUM))
		allowed |= VNET_RX_ALLOW_TNL_CSUM;
	return allowed;
}

static unsigned int vnet_ip_min(bool v6)
{
	return v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
}

/*
 * A UDP tunnel GSO header (@type: the inner GSO type): one outer IP
 * version, an inner TCP or USO packet whose partial checksum
 * (csum_start) locates the inner transport header, and headers that
 * follow each other at least their minimal sizes apart: Ethernet, outer
 * IP, outer UDP at outer_th_offset, inner IP at inner_nh_offset, inner
 * transport at csum_start.  The tunnel (e.g. VXLAN) header and the
 * inner Ethernet header lie between the outer UDP and the inner IP one.
 */
static enum vnet_rx_verdict vnet_rx_check_tnl(const struct vnet_rx_hdr_fields *h,
					      u8 type, u32 allowed,
					      const char **why)
{
	u8 tnl = h->gso_type & VNET_HDR_GSO_UDP_TUNNEL;

	if (!(allowed & VNET_RX_ALLOW_TNL)) {
		*why = "UDP tunnel GSO not negotiated";
		return VNET_RX_BAD_HDR;
	}
	if (tnl == VNET_HDR_GSO_UDP_TUNNEL) {
		*why = "UDP tunnel over both IPv4 and IPv6";
		return VNET_RX_BAD_HDR;
	}
	if (type != VIRTIO_NET_HDR_GSO_TCPV4 &&
	    type != VIRTIO_NET_HDR_GSO_TCPV6 && type != VNET_HDR_GSO_UDP_L4) {
		*why = "UDP tunnel GSO of neither TCP nor USO";
		return VNET_RX_BAD_HDR;
	}
	if (!(h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) ||
	    h->flags & VIRTIO_NET_HDR_F_DATA_VALID) {
		*why = "UDP tunnel GSO without a partial checksum";
		return VNET_RX_BAD_HDR;
	}
	if (h->outer_th_offset < ETH_HLEN +
	    vnet_ip_min(tnl == VNET_HDR_GSO_UDP_TUNNEL_IPV6) ||
	    h->inner_nh_offset < h->outer_th_offset + sizeof(struct udphdr) ||
	    h->csum_start < h->inner_nh_offset +
	    vnet_ip_min(type == VIRTIO_NET_HDR_GSO_TCPV6)) {
		*why = "UDP tunnel header offsets out of order";
		return VNET_RX_BAD_HDR;
	}
	return VNET_RX_OK;
}

/*
 * The header of a @len-byte frame (virtio-net header excluded).  Checked
 * here rather than left to the kernel's header conversion, whose checks
 * differ between the supported kernels: flags and GSO types the features
 * do not allow, a GSO frame without a segment size, a checksum whose
 * position lies outside the frame or inside the Ethernet header, and UDP
 * tunnel fields that do not describe a tunnel (vnet_rx_check_tnl()).
 */
enum vnet_rx_verdict vnet_rx_check_hdr(const struct vnet_rx_hdr_fields *h,
				       unsigned int len, u32 allowed,
				       const char **why)
{
	u8 known = VIRTIO_NET_HDR_F_NEEDS_CSUM | VIRTIO_NET_HDR_F_DATA_VALID;
	u8 type = h->gso_type & ~(VIRTIO_NET_HDR_GSO_ECN |
				  VNET_HDR_GSO_UDP_TUNNEL);
	enum vnet_rx_verdict v;
	u32 need;

	if (allowed & VNET_RX_ALLOW_TNL_CSUM)
		known |= VNET_HDR_F_UDP_TUNNEL_CSUM;
	if (h->flags & ~known) {
		*why = h->flags & ~known & VNET_HDR_F_UDP_TUNNEL_CSUM ?
		       "UDP tunnel checksum flag not negotiated" :
		       "unknown flags";
		return VNET_RX_BAD_HDR;
	}
	if (h->flags && !(allowed & VNET_RX_ALLOW_CSUM)) {
		*why = "checksum flags without GUEST_CSUM";
		return VNET_RX_BAD_HDR;
	}
	if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM &&
	    (h->csum_start < ETH_HLEN ||
	     (u32)h->csum_start + h->csum_offset + sizeof(__sum16) > len)) {
		*why = "checksum position outside the frame";
		return VNET_RX_BAD_HDR;
	}

	switch (type) {
	case VIRTIO_NET_HDR_GSO_NONE:
		need = 0;
		break;
	case VIRTIO_NET_HDR_GSO_TCPV4:
		need = VNET_RX_ALLOW_TCPV4;
		break;
	case VIRTIO_NET_HDR_GSO_TCPV6:
		need = VNET_RX_ALLOW_TCPV6;
		break;
	case VIRTIO_NET_HDR_GSO_UDP:
		need = VNET_RX_ALLOW_UDP;
		break;
	case VNET_HDR_GSO_UDP_L4:
		need = VNET_RX_ALLOW_UDP_L4;
		break;
	default:
		*why = "unknown GSO type";
		return VNET_RX_BAD_HDR;
	}
	if (h->gso_type & VIRTIO_NET_HDR_GSO_ECN) {
		if (type != VIRTIO_NET_HDR_GSO_TCPV4 &&
		    type != VIRTIO_NET_HDR_GSO_TCPV6) {
			*why = "ECN on a frame that is not TCP GSO";
			return VNET_RX_BAD_HDR;
		}
		need |= VNET_RX_ALLOW_ECN;
	}
	if ((allowed & need) != need) {
		*why = "GSO type not negotiated";
		return VNET_RX_BAD_HDR;
	}
	if (h->gso_type & VNET_HDR_GSO_UDP_TUNNEL) {
		v = vnet_rx_check_tnl(h, type, allowed, why);
		if (v)
			return v;
	}
	if (type != VIRTIO_NET_HDR_GSO_NONE &&
	    (!h->gso_size || h->gso_size == GSO_BY_FRAGS)) {
		*why = "GSO segment size 0 or reserved";
		return VNET_RX_BAD_HDR;
	}
	return VNET_RX_OK;
}
