/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Device statistics (VIRTIO_NET_F_DEVICE_STATS, virtio 1.3): the wire
 * format of the control commands, the request for a set of queues and the
 * parsing of the device's reply.  Pure, so that KUnit can check both.
 *
 * The feature is a device ABI: these definitions are our own, so the
 * driver uses it on every kernel, also where the kernel's uapi header
 * predates it (before 6.10).
 *
 * A GET names virtqueues (2n receiveq n, 2n + 1 transmitq n, the control
 * queue last) and, for each, the statistic groups wanted.  The reply is a
 * sequence of records, each a header (group, virtqueue, size in bytes
 * including the header) followed by the group's 64-bit counters.  Nothing
 * in a reply is trusted: a record of a group not asked for that queue,
 * of the wrong size or for a queue not asked about is skipped and
 * counted; a record that does not fit ends the parse.  A record repeated
 * for the same queue and group overwrites the earlier one.
 */
#ifndef VNET_DEV_STATS_H
#define VNET_DEV_STATS_H

#include <linux/types.h>

#define VNET_F_DEVICE_STATS		50

/* Command 8 of the control queue and its subcommands. */
#define VNET_CTRL_STATS			8
#define VNET_CTRL_STATS_QUERY		0	/* which groups: a __le64 mask */
#define VNET_CTRL_STATS_GET		1

/*
 * Statistic groups.  A group's bit in the capability and request masks is
 * 1 << its number, and the number is the type of its reply records.
 */
enum vnet_ds_group {
	VNET_DS_RX_BASIC = 0,
	VNET_DS_RX_CSUM = 1,
	VNET_DS_RX_GSO = 2,
	VNET_DS_RX_SPEED = 3,
	VNET_DS_TX_BASIC = 16,
	VNET_DS_TX_CSUM = 17,
	VNET_DS_TX_GSO = 18,
	VNET_DS_TX_SPEED = 19,
	VNET_DS_CTRL = 32,
};

#define VNET_DS_BIT(g)		(1ULL << (g))
#define VNET_DS_RX_GROUPS	(VNET_DS_BIT(VNET_DS_RX_BASIC) |	\
				 VNET_DS_BIT(VNET_DS_RX_CSUM) |		\
				 VNET_DS_BIT(VNET_DS_RX_GSO) |		\
				 VNET_DS_BIT(VNET_DS_RX_SPEED))
#define VNET_DS_TX_GROUPS	(VNET_DS_BIT(VNET_DS_TX_BASIC) |	\
				 VNET_DS_BIT(VNET_DS_TX_CSUM) |		\
				 VNET_DS_BIT(VNET_DS_TX_GSO) |		\
				 VNET_DS_BIT(VNET_DS_TX_SPEED))
#define VNET_DS_CTRL_GROUPS	VNET_DS_BIT(VNET_DS_CTRL)
#define VNET_DS_KNOWN		(VNET_DS_RX_GROUPS | VNET_DS_TX_GROUPS | \
				 VNET_DS_CTRL_GROUPS)

/* QUERY reply: the groups the device keeps. */
struct vnet_ds_caps_wire {
	__le64 groups;
} __packed;

/* One entry of a GET request. */
struct vnet_ds_req_wire {
	__le16 vq;
	__le16 reserved[3];
	__le64 groups;
} __packed;

/* Header of each reply record. */
struct vnet_ds_hdr_wire {
	u8 type;
	u8 reserved;
	__le16 vq;
	__le16 reserved1;
	__le16 size;
} __packed;

/*
 * Counters, by their place in the group's record.  Each queue keeps all
 * of them in one array of VNET_DS_QUEUE_CTRS: a group's counters start at
 * its first index (vnet_ds_group_info()).
 */
enum vnet_ds_rx_ctr {
	VNET_DS_RX_NOTIFICATIONS, VNET_DS_RX_PACKETS, VNET_DS_RX_BYTES,
	VNET_DS_RX_INTERRUPTS, VNET_DS_RX_DROPS, VNET_DS_RX_DROP_OVERRUNS,
	VNET_DS_RX_CSUM_VALID, VNET_DS_RX_NEEDS_CSUM, VNET_DS_RX_CSUM_NONE,
	VNET_DS_RX_CSUM_BAD,
	VNET_DS_RX_GSO_PACKETS, VNET_DS_RX_GSO_BYTES,
	VNET_DS_RX_GSO_PACKETS_COALESCED, VNET_DS_RX_GSO_BYTES_COALESCED,
	VNET_DS_RX_RATELIMIT_PACKETS, VNET_DS_RX_RATELIMIT_BYTES,
	VNET_DS_RX_CTRS
};

enum vnet_ds_tx_ctr {
	VNET_DS_TX_NOTIFICATIONS, VNET_DS_TX_PACKETS, VNET_DS_TX_BYTES,
	VNET_DS_TX_INTERRUPTS, VNET_DS_TX_DROPS, VNET_DS_TX_DROP_MALFORMED,
	VNET_DS_TX_CSUM_NONE, VNET_DS_TX_NEEDS_CSUM,
	VNET_DS_TX_GSO_PACKETS, VNET_DS_TX_GSO_BYTES,
	VNET_DS_TX_GSO_SEGMENTS, VNET_DS_TX_GSO_SEGMENTS_BYTES,
	VNET_DS_TX_GSO_PACKETS_NOSEG, VNET_DS_TX_GSO_BYTES_NOSEG,
	VNET_DS_TX_RATELIMIT_PACKETS, VNET_DS_TX_RATELIMIT_BYTES,
	VNET_DS_TX_CTRS
};

enum vnet_ds_ctrl_ctr {
	VNET_DS_CTRL_COMMANDS, VNET_DS_CTRL_OK, VNET_DS_CTRL_CTRS
};

#define VNET_DS_QUEUE_CTRS	16

/* The counters of one queue (or of the control queue). */
struct vnet_ds_ctrs {
	u64 v[VNET_DS_QUEUE_CTRS];
};

/* A group's place: which queues have it, where its counters go. */
enum vnet_ds_kind { VNET_DS_KIND_RX, VNET_DS_KIND_TX, VNET_DS_KIND_CTRL };

struct vnet_ds_group_info {
	enum vnet_ds_kind kind;
	u8 first;	/* index of its first counter in the queue's array */
	u8 count;	/* counters in its record */
};

/*
 * The queues one GET asks about: pairs [first_pair, first_pair + pairs)
 * and, with @ctrl, the control queue (virtqueue @ctrl_vq), each for the
 * groups of @caps that apply to it.
 */
struct vnet_ds_query {
	u64 caps;
	u16 first_pair;
	u16 pairs;
	bool ctrl;
	u16 ctrl_vq;
};

/*
 * Where parsed counters go: @out holds those of receiveq first_pair + i
 * at [2i], of transmitq first_pair + i at [2i + 1], of the control queue
 * at [2 * pairs] (vnet_ds_out_slots() in all).
 */
struct vnet_ds_parse_result {
	unsigned int records;		/* applied */
	unsigned int bad_type;		/* unknown group, or not asked for */
	unsigned int bad_size;		/* known group, wrong record size */
	unsigned int bad_queue;		/* virtqueue not asked about */
	bool truncated;			/* a record ran past the reply */
};

bool vnet_ds_group_info(unsigned int group, struct vnet_ds_group_info *gi);
u64 vnet_ds_caps_decode(const struct vnet_ds_caps_wire *w);
unsigned int vnet_ds_req_entries(const struct vnet_ds_query *q);
unsigned int vnet_ds_encode(const struct vnet_ds_query *q,
			    struct vnet_ds_req_wire *req);
size_t vnet_ds_reply_len(const struct vnet_ds_query *q);
unsigned int vnet_ds_out_slots(const struct vnet_ds_query *q);
void vnet_ds_parse(const struct vnet_ds_query *q, const void *reply,
		   size_t len, struct vnet_ds_ctrs *out,
		   struct vnet_ds_parse_result *res);
bool vnet_ds_parse_ok(const struct vnet_ds_parse_result *res);

#endif /* VNET_DEV_STATS_H */
