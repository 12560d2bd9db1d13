// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device statistics: request encoding and reply parsing (pure; see
 * policy/dev_stats.h).
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <asm/byteorder.h>
#include "policy/dev_stats.h"

/* Each group's counters, in record order, and where they are kept. */
bool vnet_ds_group_info(unsigned int group, struct vnet_ds_group_info *gi)
{
	switch (group) {
	case VNET_DS_RX_BASIC:
		*gi = (struct vnet_ds_group_info){ VNET_DS_KIND_RX,
			VNET_DS_RX_NOTIFICATIONS, 6 };
		return true;
	case VNET_DS_RX_CSUM:
		*gi = (struct vnet_ds_group_info){ VNET_DS_KIND_RX,
			VNET_DS_RX_CSUM_VALID, 4 };
		return true;
	case VNET_DS_RX_GSO:
		*gi = (struct vnet_ds_group_info){ VNET_DS_KIND_RX,
			VNET_DS_RX_GSO_PACKETS, 4 };
		return true;
	case VNET_DS_RX_SPEED:
		*gi = (struct vnet_ds_group_info){ VNET_DS_KIND_RX,
			VNET_DS_RX_RATELIMIT_PACKETS, 2 };
		return true;
	case VNET_DS_TX_BASIC:
		*gi = (struct vnet_ds_group_info){ VNET_DS_KIND_TX,
			VNET_DS_TX_NOTIFICATIONS, 6 };
		return true;
	case VNET_DS_TX_CSUM:
		*gi = (struct vnet_ds_group_info){ VNET_DS_KIND_TX,
			VNET_DS_TX_CSUM_NONE, 2 };
		return true;
	case VNET_DS_TX_GSO:
		*gi = (struct vnet_ds_group_info){ VNET_DS_KIND_TX,
			VNET_DS_TX_GSO_PACKETS, 6 };
		return true;
	case VNET_DS_TX_SPEED:
		*gi = (struct vnet_ds_group_info){ VNET_DS_KIND_TX,
			VNET_DS_TX_RATELIMIT_PACKETS, 2 };
		return true;
	case VNET_DS_CTRL:
		*gi = (struct vnet_ds_group_info){ VNET_DS_KIND_CTRL,
			VNET_DS_CTRL_COMMANDS, 2 };
		return true;
	}
	return false;
}

/* The groups a QUERY reply announces, without those we do not know. */
u64 vnet_ds_caps_decode(const struct vnet_ds_caps_wire *w)
{
	return le64_to_cpu(w->groups) & VNET_DS_KNOWN;
}

static u64 vnet_ds_groups_of(const struct vnet_ds_query *q,
			     enum vnet_ds_kind kind)
{
	switch (kind) {
	case VNET_DS_KIND_RX:
		return q->caps & VNET_DS_RX_GROUPS;
	case VNET_DS_KIND_TX:
		return q->caps & VNET_DS_TX_GROUPS;
	default:
		return q->ctrl ? q->caps & VNET_DS_CTRL_GROUPS : 0;
	}
}

/* Bytes of reply records for one queue of @kind. */
static size_t vnet_ds_kind_len(const struct vnet_ds_query *q,
			       enum vnet_ds_kind kind)
{
	u64 groups = vnet_ds_groups_of(q, kind);
	struct vnet_ds_group_info gi;
	size_t len = 0;
	unsigned int g;

	for (g = 0; g < 64; g++)
		if ((groups & VNET_DS_BIT(g)) && vnet_ds_group_info(g, &gi))
			len += sizeof(struct vnet_ds_hdr_wire) +
			       gi.count * sizeof(__le64);
	return len;
}

/* Request entries a GET for @q takes at most (vnet_ds_encode()). */
unsigned int vnet_ds_req_entries(const struct vnet_ds_query *q)
{
	return 2 * q->pairs + (q->ctrl ? 1 : 0);
}

static void vnet_ds_put_req(struct vnet_ds_req_wire *e, u16 vq, u64 groups)
{
	memset(e, 0, sizeof(*e));
	e->vq = cpu_to_le16(vq);
	e->groups = cpu_to_le64(groups);
}

/*
 * Fill the GET request for @q into @req (vnet_ds_req_entries() entries):
 * each queue with at least one group to ask for, receiveq before transmitq
 * of a pair, the control queue last.  Returns the entries used.
 */
unsigned int vnet_ds_encode(const struct vnet_ds_query *q,
			    struct vnet_ds_req_wire *req)
{
	u64 rx = vnet_ds_groups_of(q, VNET_DS_KIND_RX);
	u64 tx = vnet_ds_groups_of(q, VNET_DS_KIND_TX);
	u64 ctrl = vnet_ds_groups_of(q, VNET_DS_KIND_CTRL);
	unsigned int n = 0, i;

	for (i = q->first_pair; i < q->first_pair + q->pairs; i++) {
		if (rx)
			vnet_ds_put_req(&req[n++], 2 * i, rx);
		if (tx)
			vnet_ds_put_req(&req[n++], 2 * i + 1, tx);
	}
	if (ctrl)
		vnet_ds_put_req(&req[n++], q->ctrl_vq, ctrl);
	return n;
}

/* Bytes a complete reply to @q takes. */
size_t vnet_ds_reply_len(const struct vnet_ds_query *q)
{
	return q->pairs * (vnet_ds_kind_len(q, VNET_DS_KIND_RX) +
			   vnet_ds_kind_len(q, VNET_DS_KIND_TX)) +
	       vnet_ds_kind_len(q, VNET_DS_KIND_CTRL);
}

/* Counter arrays the parse of a reply to @q fills. */
unsigned int vnet_ds_out_slots(const struct vnet_ds_query *q)
{
	return 2 * q->pairs + 1;
}

/* The slot of virtqueue @vq in the output of @q, or -1. */
static int vnet_ds_slot(const struct vnet_ds_query *q, unsigned int vq,
			enum vnet_ds_kind *kind)
{
	unsigned int first = 2 * q->first_pair;

	if (q->ctrl && vq == q->ctrl_vq) {
		*kind = VNET_DS_KIND_CTRL;
		return 2 * q->pairs;
	}
	if (vq < first || vq >= first + 2 * q->pairs)
		return -1;
	*kind = (vq & 1) ? VNET_DS_KIND_TX : VNET_DS_KIND_RX;
	return vq - first;
}

/*
 * Parse the @len bytes of a reply to @q into @out (vnet_ds_out_slots()
 * entries, left as they are where no record applies).  Never reads outside
 * [reply, reply + len).  @res counts what was applied and what skipped.
 */
void vnet_ds_parse(const struct vnet_ds_query *q, const void *reply,
		   size_t len, struct vnet_ds_ctrs *out,
		   struct vnet_ds_parse_result *res)
{
	const u8 *p = reply;
	size_t off = 0;

	memset(res, 0, sizeof(*res));
	while (off < len) {
		struct vnet_ds_hdr_wire h;
		struct vnet_ds_group_info gi;
		enum vnet_ds_kind kind;
		unsigned int i, size;
		const u8 *rec;
		__le64 v;
		int slot;

		/* Records need not be aligned: copy before reading. */
		if (len - off < sizeof(h)) {
			res->truncated = true;
			return;
		}
		rec = p + off;
		memcpy(&h, rec, sizeof(h));
		size = le16_to_cpu(h.size);
		if (size < sizeof(h) || size > len - off) {
			res->truncated = true;
			return;
		}
		off += size;

		if (!vnet_ds_group_info(h.type, &gi)) {
			res->bad_type++;
			continue;
		}
		slot = vnet_ds_slot(q, le16_to_cpu(h.vq), &kind);
		if (slot < 0) {
			res->bad_queue++;
			continue;
		}
		if (gi.kind != kind ||
		    !(vnet_ds_groups_of(q, kind) & VNET_DS_BIT(h.type))) {
			res->bad_type++;
			continue;
		}
		if (size != sizeof(h) + gi.count * sizeof(v)) {
			res->bad_size++;
			continue;
		}
		for (i = 0; i < gi.count; i++) {
			memcpy(&v, rec + sizeof(h) + i * sizeof(v), sizeof(v));
			out[slot].v[gi.first + i] = le64_to_cpu(v);
		}
		res->records++;
	}
}

/* The reply was complete and every record in it made sense. */
bool vnet_ds_parse_ok(const struct vnet_ds_parse_result *res)
{
	return !res->truncated && !res->bad_type && !res->bad_size &&
	       !res->bad_queue;
}
