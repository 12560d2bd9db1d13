/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Receive-side scaling and hash report (VIRTIO_NET_F_RSS,
 * VIRTIO_NET_F_HASH_REPORT): the pure part.
 *
 *  - what the driver uses of the limits the device advertises;
 *  - indirection tables: the default spread and the check of one a user
 *    gives through ethtool -X;
 *  - ethtool's per-flow hash fields (ethtool -n/-N rx-flow-hash) against
 *    virtio hash types, which are shared between flows: IPv4 hashing on
 *    the addresses applies to every IPv4 packet that no more specific
 *    type (TCPv4, UDPv4) covers, likewise for IPv6;
 *  - the wire format of VIRTIO_NET_CTRL_MQ_RSS_CONFIG and _HASH_CONFIG;
 *  - what a reported hash type means for the skb and for XDP programs.
 *
 * Everything is a function of its arguments, for KUnit.
 */
#ifndef VNET_RSS_H
#define VNET_RSS_H

#include <linux/types.h>
#include <linux/skbuff.h>
#include <uapi/linux/virtio_net.h>

/*
 * Hash types the driver programs.  The IPv6 extension-header variants
 * (_EX) are left out: ethtool has no way to name them.
 */
#define VNET_RSS_TYPES_IPV4	(VIRTIO_NET_RSS_HASH_TYPE_IPv4 |	\
				 VIRTIO_NET_RSS_HASH_TYPE_TCPv4 |	\
				 VIRTIO_NET_RSS_HASH_TYPE_UDPv4)
#define VNET_RSS_TYPES_IPV6	(VIRTIO_NET_RSS_HASH_TYPE_IPv6 |	\
				 VIRTIO_NET_RSS_HASH_TYPE_TCPv6 |	\
				 VIRTIO_NET_RSS_HASH_TYPE_UDPv6)
#define VNET_RSS_TYPES_KNOWN	(VNET_RSS_TYPES_IPV4 | VNET_RSS_TYPES_IPV6)

/* Largest indirection table the driver programs, in entries. */
#define VNET_RSS_TABLE_MAX	1024

/* What the driver uses of the device's advertised limits. */
struct vnet_rss_limits {
	u16 table_len;	/* entries, a power of two; 0: hash report only */
	u8 key_len;	/* bytes of Toeplitz key */
	u32 types;	/* hash types the device and the driver both know */
};

int vnet_rss_limits(bool rss, u16 dev_table_max, u8 dev_key_max,
		    u32 dev_types, struct vnet_rss_limits *out,
		    const char **why);

void vnet_rss_fill_table(u16 *table, unsigned int len, unsigned int pairs);
bool vnet_rss_table_ok(const u32 *indir, unsigned int len,
		       unsigned int pairs);

u64 vnet_rss_flow_fields(u32 types, u32 flow_type);
int vnet_rss_set_flow_fields(u32 types, u32 supported, u32 flow_type,
			     u64 fields, u32 *out);
u32 vnet_rss_types_to_program(bool steering, bool rxhash, u32 types);

/*
 * One command for the device.  With a table (table_len > 0) it is
 * RSS_CONFIG: steering by the table, @max_tx_vq transmit queues in use.
 * Without, it is HASH_CONFIG: hashes are only reported; the same layout
 * with the steering fields reserved.
 */
struct vnet_rss_cmd {
	u32 types;
	const u16 *table;
	u16 table_len;
	u16 unclassified;
	u16 max_tx_vq;
	const u8 *key;
	u8 key_len;
};

size_t vnet_rss_cmd_size(u16 table_len, u8 key_len);
size_t vnet_rss_encode(u8 *buf, const struct vnet_rss_cmd *c);

enum pkt_hash_types vnet_rss_report_level(u16 report);

/*
 * The kind of hash an XDP program is told it got (bpf_xdp_metadata_rx_hash,
 * enum xdp_rss_hash_type of 6.5+).  The values are part of what BPF
 * programs see, so they cannot change; xdp.c checks them against the
 * kernel's where it has them.
 */
#define VNET_XDP_RSS_L3_IPV4	BIT(0)
#define VNET_XDP_RSS_L3_IPV6	BIT(1)
#define VNET_XDP_RSS_L3_DYNHDR	BIT(2)	/* options or extension headers */
#define VNET_XDP_RSS_L4		BIT(3)
#define VNET_XDP_RSS_L4_TCP	BIT(4)
#define VNET_XDP_RSS_L4_UDP	BIT(5)

u32 vnet_rss_report_xdp_type(u16 report);

#endif /* VNET_RSS_H */
