// SPDX-License-Identifier: GPL-2.0-only
/*
 * RSS and hash report decisions and command encoding (pure).
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/string.h>
#include <uapi/linux/ethtool.h>
#include <asm/byteorder.h>
#include "policy/rss.h"

#define VNET_RXH_ADDRS	(RXH_IP_SRC | RXH_IP_DST)
#define VNET_RXH_PORTS	(RXH_L4_B_0_1 | RXH_L4_B_2_3)

/*
 * The limits the driver works with.  The table is the largest power of
 * two the device allows (the spec wants a power of two; a device that
 * advertises another length still gets a valid one), capped so that a
 * device cannot make us allocate without bound; a device that hashes
 * nothing we can name, or offers no key, is not used for hashing.
 */
int vnet_rss_limits(bool rss, u16 dev_table_max, u8 dev_key_max,
		    u32 dev_types, struct vnet_rss_limits *out,
		    const char **why)
{
	memset(out, 0, sizeof(*out));
	if (rss && !dev_table_max) {
		*why = "RSS offered with no indirection table";
		return -EINVAL;
	}
	if (!dev_key_max) {
		*why = "no hash key";
		return -EINVAL;
	}
	if (!(dev_types & VNET_RSS_TYPES_KNOWN)) {
		*why = "no supported hash type the driver knows";
		return -EINVAL;
	}
	if (rss)
		out->table_len = min_t(unsigned int, VNET_RSS_TABLE_MAX,
				       rounddown_pow_of_two(dev_table_max));
	out->key_len = dev_key_max;
	out->types = dev_types & VNET_RSS_TYPES_KNOWN;
	return 0;
}

/* The default table: queue pairs in turn, each as often as the others. */
void vnet_rss_fill_table(u16 *table, unsigned int len, unsigned int pairs)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		table[i] = pairs ? i % pairs : 0;
}

/* A table from ethtool -X may only name active queue pairs. */
bool vnet_rss_table_ok(const u32 *indir, unsigned int len,
		       unsigned int pairs)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		if (indir[i] >= pairs)
			return false;
	return true;
}

static u32 vnet_rss_flow_bits(u32 flow_type, u32 *ip, u32 *l4)
{
	switch (flow_type & ~(FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS)) {
	case TCP_V4_FLOW:
		*ip = VIRTIO_NET_RSS_HASH_TYPE_IPv4;
		*l4 = VIRTIO_NET_RSS_HASH_TYPE_TCPv4;
		return 1;
	case UDP_V4_FLOW:
		*ip = VIRTIO_NET_RSS_HASH_TYPE_IPv4;
		*l4 = VIRTIO_NET_RSS_HASH_TYPE_UDPv4;
		return 1;
	case TCP_V6_FLOW:
		*ip = VIRTIO_NET_RSS_HASH_TYPE_IPv6;
		*l4 = VIRTIO_NET_RSS_HASH_TYPE_TCPv6;
		return 1;
	case UDP_V6_FLOW:
		*ip = VIRTIO_NET_RSS_HASH_TYPE_IPv6;
		*l4 = VIRTIO_NET_RSS_HASH_TYPE_UDPv6;
		return 1;
	case IPV4_FLOW:
	case SCTP_V4_FLOW:
	case AH_ESP_V4_FLOW:
	case AH_V4_FLOW:
	case ESP_V4_FLOW:
		*ip = VIRTIO_NET_RSS_HASH_TYPE_IPv4;
		*l4 = 0;
		return 1;
	case IPV6_FLOW:
	case SCTP_V6_FLOW:
	case AH_ESP_V6_FLOW:
	case AH_V6_FLOW:
	case ESP_V6_FLOW:
		*ip = VIRTIO_NET_RSS_HASH_TYPE_IPv6;
		*l4 = 0;
		return 1;
	}
	return 0;
}

/* Header fields hashed for packets of @flow_type (ethtool -n). */
u64 vnet_rss_flow_fields(u32 types, u32 flow_type)
{
	u32 ip, l4;

	if (!vnet_rss_flow_bits(flow_type, &ip, &l4))
		return 0;
	if (l4 && (types & l4))
		return VNET_RXH_ADDRS | VNET_RXH_PORTS;
	if (types & ip)
		return VNET_RXH_ADDRS;
	return 0;
}

/*
 * New hash types for ethtool -N rx-flow-hash @flow_type @fields.
 *
 * TCP and UDP flows take addresses and ports (their own type), addresses
 * only (their own type off, the IP type on) or nothing (both off); the IP
 * flows take addresses or nothing.  Since the IP type is shared, changing
 * it shows in every flow of that IP version that hashes by addresses
 * only.  Other flow types and field sets are refused, as are types the
 * device cannot hash.
 */
int vnet_rss_set_flow_fields(u32 types, u32 supported, u32 flow_type,
			     u64 fields, u32 *out)
{
	u32 flow = flow_type & ~(FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS);
	u32 ip, l4;

	if (flow != TCP_V4_FLOW && flow != UDP_V4_FLOW &&
	    flow != TCP_V6_FLOW && flow != UDP_V6_FLOW &&
	    flow != IPV4_FLOW && flow != IPV6_FLOW)
		return -EOPNOTSUPP;
	vnet_rss_flow_bits(flow, &ip, &l4);

	if (fields == (VNET_RXH_ADDRS | VNET_RXH_PORTS) && l4)
		types |= ip | l4;
	else if (fields == VNET_RXH_ADDRS)
		types = (types & ~l4) | ip;
	else if (!fields)
		types &= ~(ip | l4);
	else
		return -EINVAL;

	if (types & ~supported)
		return -EINVAL;
	*out = types;
	return 0;
}

/*
 * Hash types to give the device.  A steering device needs them whatever
 * the netdev's rxhash setting (the table would see only queue 0); a
 * device that only reports hashes is told to stop when rxhash is off.
 */
u32 vnet_rss_types_to_program(bool steering, bool rxhash, u32 types)
{
	return steering || rxhash ? types : 0;
}

/* Bytes of the command: RSS_CONFIG with a table, HASH_CONFIG without. */
size_t vnet_rss_cmd_size(u16 table_len, u8 key_len)
{
	/* hash_types, then mask + unclassified + table, or four reserved */
	size_t n = sizeof(__le32);

	if (table_len)
		n += 2 * sizeof(__le16) + table_len * sizeof(__le16) +
		     sizeof(__le16);
	else
		n += 4 * sizeof(__le16);
	return n + 1 + key_len;
}

static u8 *vnet_put_le16(u8 *p, u16 v)
{
	__le16 w = cpu_to_le16(v);

	memcpy(p, &w, sizeof(w));
	return p + sizeof(w);
}

/* Encode @c into @buf (vnet_rss_cmd_size() bytes); returns the length. */
size_t vnet_rss_encode(u8 *buf, const struct vnet_rss_cmd *c)
{
	__le32 types = cpu_to_le32(c->types);
	u8 *p = buf;
	unsigned int i;

	memcpy(p, &types, sizeof(types));
	p += sizeof(types);
	if (c->table_len) {
		p = vnet_put_le16(p, c->table_len - 1);
		p = vnet_put_le16(p, c->unclassified);
		for (i = 0; i < c->table_len; i++)
			p = vnet_put_le16(p, c->table[i]);
		p = vnet_put_le16(p, c->max_tx_vq);
	} else {
		memset(p, 0, 4 * sizeof(__le16));
		p += 4 * sizeof(__le16);
	}
	*p++ = c->key_len;
	memcpy(p, c->key, c->key_len);
	p += c->key_len;
	return p - buf;
}

/* How much of the packet a reported hash covers. */
enum pkt_hash_types vnet_rss_report_level(u16 report)
{
	switch (report) {
	case VIRTIO_NET_HASH_REPORT_TCPv4:
	case VIRTIO_NET_HASH_REPORT_UDPv4:
	case VIRTIO_NET_HASH_REPORT_TCPv6:
	case VIRTIO_NET_HASH_REPORT_UDPv6:
	case VIRTIO_NET_HASH_REPORT_TCPv6_EX:
	case VIRTIO_NET_HASH_REPORT_UDPv6_EX:
		return PKT_HASH_TYPE_L4;
	case VIRTIO_NET_HASH_REPORT_IPv4:
	case VIRTIO_NET_HASH_REPORT_IPv6:
	case VIRTIO_NET_HASH_REPORT_IPv6_EX:
		return PKT_HASH_TYPE_L3;
	default:
		return PKT_HASH_TYPE_NONE;
	}
}

/* The same report as the XDP hash type (VNET_XDP_RSS_* bits). */
u32 vnet_rss_report_xdp_type(u16 report)
{
	u32 l3, l4 = 0;

	switch (report) {
	case VIRTIO_NET_HASH_REPORT_IPv4:
	case VIRTIO_NET_HASH_REPORT_TCPv4:
	case VIRTIO_NET_HASH_REPORT_UDPv4:
		l3 = VNET_XDP_RSS_L3_IPV4;
		break;
	case VIRTIO_NET_HASH_REPORT_IPv6:
	case VIRTIO_NET_HASH_REPORT_TCPv6:
	case VIRTIO_NET_HASH_REPORT_UDPv6:
		l3 = VNET_XDP_RSS_L3_IPV6;
		break;
	case VIRTIO_NET_HASH_REPORT_IPv6_EX:
	case VIRTIO_NET_HASH_REPORT_TCPv6_EX:
	case VIRTIO_NET_HASH_REPORT_UDPv6_EX:
		l3 = VNET_XDP_RSS_L3_IPV6 | VNET_XDP_RSS_L3_DYNHDR;
		break;
	default:
		return 0;
	}
	switch (report) {
	case VIRTIO_NET_HASH_REPORT_TCPv4:
	case VIRTIO_NET_HASH_REPORT_TCPv6:
	case VIRTIO_NET_HASH_REPORT_TCPv6_EX:
		l4 = VNET_XDP_RSS_L4 | VNET_XDP_RSS_L4_TCP;
		break;
	case VIRTIO_NET_HASH_REPORT_UDPv4:
	case VIRTIO_NET_HASH_REPORT_UDPv6:
	case VIRTIO_NET_HASH_REPORT_UDPv6_EX:
		l4 = VNET_XDP_RSS_L4 | VNET_XDP_RSS_L4_UDP;
		break;
	}
	return l3 | l4;
}
