// SPDX-License-Identifier: GPL-2.0-only
/*
 * Receive buffer sizing and validation (pure).
 */
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <uapi/linux/virtio_net.h>
#include "rx_buf.h"

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
