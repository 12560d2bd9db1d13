// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device statistics (VIRTIO_NET_F_DEVICE_STATS): the counters the device
 * keeps per queue, asked for over the control queue whenever ethtool -S
 * or the netlink queue statistics are read.  Which groups the device
 * keeps is asked once, at probe.  Encoding and parsing are in
 * policy/dev_stats.c.
 *
 * ethtool -S shows the counters the in-tree driver (6.10+) shows, with its
 * names ("rx0_hw_packets", "cq_hw_ok_num"), right after its own per-queue
 * names; the device's other counters ("rx0_hw_drops" ...), which in-tree
 * only reports over netlink, follow ours.  Failed requests and skipped
 * reply records are counted (hw_stats_failed_requests,
 * hw_stats_skipped_records) and the first malformed reply is logged; a
 * failed request's counters read 0.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ethtool.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include "compat.h"
#include "vnet.h"
#ifdef VNET_HAVE_NETDEV_STAT_OPS
#include <net/netdev_queues.h>
#endif

/* Where the kernel's header has the feature, ours must be the same. */
#ifdef VNET_HAVE_VIRTIO_NET_DEVICE_STATS
static_assert(VNET_F_DEVICE_STATS == VIRTIO_NET_F_DEVICE_STATS);
static_assert(VNET_CTRL_STATS == VIRTIO_NET_CTRL_STATS);
static_assert(VNET_DS_BIT(VNET_DS_CTRL) == VIRTIO_NET_STATS_TYPE_CVQ);
static_assert(VNET_DS_BIT(VNET_DS_TX_SPEED) == VIRTIO_NET_STATS_TYPE_TX_SPEED);
static_assert(sizeof(struct vnet_ds_req_wire) ==
	      sizeof(struct virtio_net_ctrl_queue_stats));
static_assert(sizeof(struct vnet_ds_hdr_wire) ==
	      sizeof(struct virtio_net_stats_reply_hdr));
static_assert(sizeof(struct vnet_ds_hdr_wire) + 6 * sizeof(__le64) ==
	      sizeof(struct virtio_net_stats_tx_gso));
#endif

/* Pairs per GET, so that request and reply stay small allocations. */
#define VNET_DS_CHUNK_PAIRS	32

void vnet_dev_stats_probe(struct vnet *vi)
{
	struct vnet_ds_caps_wire *caps;
	unsigned int got;
	int err;

	vi->ds_caps = 0;
	if (!vnet_has(vi, VNET_F_DEVICE_STATS))
		return;
	caps = kzalloc(sizeof(*caps), GFP_KERNEL);
	if (!caps) {
		atomic64_inc(&vi->ds_errors);
		return;
	}
	err = vnet_ctrl_cmd_reply(vi, VNET_CTRL_STATS, VNET_CTRL_STATS_QUERY,
				  NULL, 0, caps, sizeof(*caps), &got);
	if (err || got < sizeof(*caps)) {
		/* In-tree fails the probe here; the network matters more. */
		atomic64_inc(&vi->ds_errors);
		dev_warn(&vi->vdev->dev, "device statistics: capability query failed (%d, %u bytes); none shown\n",
			 err, got);
	} else {
		vi->ds_caps = vnet_ds_caps_decode(caps);
	}
	kfree(caps);
}

static void vnet_ds_note_bad(struct vnet *vi,
			     const struct vnet_ds_parse_result *res)
{
	unsigned int bad = res->bad_type + res->bad_size + res->bad_queue +
			   res->truncated;

	atomic64_add(bad, &vi->ds_bad_records);
	if (!test_and_set_bit(0, &vi->ds_warned))
		dev_warn(&vi->vdev->dev, "device statistics: malformed reply skipped (%u of unknown type, %u of wrong size, %u for other queues%s); logged once\n",
			 res->bad_type, res->bad_size, res->bad_queue,
			 res->truncated ? ", cut short" : "");
}

/* One GET for @q, parsed into @out. */
static int vnet_ds_get_one(struct vnet *vi, const struct vnet_ds_query *q,
			   struct vnet_ds_ctrs *out)
{
	struct vnet_ds_parse_result res;
	struct vnet_ds_req_wire *req;
	size_t reply_len;
	unsigned int n, got;
	void *reply;
	int err = -ENOMEM;

	reply_len = vnet_ds_reply_len(q);
	if (!reply_len)
		return 0;
	req = kcalloc(vnet_ds_req_entries(q), sizeof(*req), GFP_KERNEL);
	reply = kzalloc(reply_len, GFP_KERNEL);
	if (!req || !reply)
		goto out;
	n = vnet_ds_encode(q, req);
	err = vnet_ctrl_cmd_reply(vi, VNET_CTRL_STATS, VNET_CTRL_STATS_GET,
				  req, n * sizeof(*req), reply, reply_len,
				  &got);
	if (err)
		goto out;
	vnet_ds_parse(q, reply, got, out, &res);
	if (!vnet_ds_parse_ok(&res))
		vnet_ds_note_bad(vi, &res);
out:
	kfree(reply);
	kfree(req);
	return err;
}

/*
 * The device's counters of pairs [first_pair, first_pair + pairs) for
 * @groups, and of the control queue with @ctrl: vnet_ds_out_slots() of
 * them, laid out as policy/dev_stats.h says (kvfree() them).  NULL when
 * the device keeps none of these or could not be asked; zeros where it
 * did not answer.
 */
struct vnet_ds_ctrs *vnet_dev_stats_get(struct vnet *vi, u16 first_pair,
					u16 pairs, u64 groups, bool ctrl)
{
	struct vnet_ds_query q = {
		.caps = vi->ds_caps & groups,
		.first_pair = first_pair,
		.pairs = pairs,
		/* The control queue's index must fit the request's 16 bits. */
		.ctrl = ctrl && 2 * vi->max_pairs <= U16_MAX,
		.ctrl_vq = 2 * vi->max_pairs,
	};
	struct vnet_ds_ctrs *out;
	unsigned int done = 0;

	if (!q.caps)
		return NULL;
	out = kvcalloc(vnet_ds_out_slots(&q), sizeof(*out), GFP_KERNEL);
	if (!out) {
		atomic64_inc(&vi->ds_errors);
		return NULL;
	}
	/* In chunks; the control queue with the last one, after its pairs. */
	do {
		struct vnet_ds_query c = q;

		c.first_pair = first_pair + done;
		c.pairs = min_t(unsigned int, pairs - done,
				VNET_DS_CHUNK_PAIRS);
		c.ctrl = ctrl && done + c.pairs == pairs;
		if (vnet_ds_get_one(vi, &c, out + 2 * done)) {
			atomic64_inc(&vi->ds_errors);
			kvfree(out);
			return NULL;
		}
		done += c.pairs;
	} while (done < pairs);
	return out;
}

/*
 * ethtool -S names: those the in-tree driver shows first (in its order),
 * then the other counters of the same groups.
 */
struct vnet_ds_name {
	u8 group;
	u8 ctr;
	bool intree;
	const char *name;
};

static const struct vnet_ds_name vnet_ds_rx_names[] = {
	{ VNET_DS_RX_BASIC, VNET_DS_RX_PACKETS, true, "hw_packets" },
	{ VNET_DS_RX_BASIC, VNET_DS_RX_BYTES, true, "hw_bytes" },
	{ VNET_DS_RX_BASIC, VNET_DS_RX_NOTIFICATIONS, true, "hw_notifications" },
	{ VNET_DS_RX_BASIC, VNET_DS_RX_INTERRUPTS, true, "hw_interrupts" },
	{ VNET_DS_RX_CSUM, VNET_DS_RX_NEEDS_CSUM, true, "hw_needs_csum" },
	{ VNET_DS_RX_SPEED, VNET_DS_RX_RATELIMIT_BYTES, true,
	  "hw_ratelimit_bytes" },
	{ VNET_DS_RX_BASIC, VNET_DS_RX_DROPS, false, "hw_drops" },
	{ VNET_DS_RX_BASIC, VNET_DS_RX_DROP_OVERRUNS, false,
	  "hw_drop_overruns" },
	{ VNET_DS_RX_CSUM, VNET_DS_RX_CSUM_VALID, false, "hw_csum_valid" },
	{ VNET_DS_RX_CSUM, VNET_DS_RX_CSUM_NONE, false, "hw_csum_none" },
	{ VNET_DS_RX_CSUM, VNET_DS_RX_CSUM_BAD, false, "hw_csum_bad" },
	{ VNET_DS_RX_GSO, VNET_DS_RX_GSO_PACKETS, false, "hw_gso_packets" },
	{ VNET_DS_RX_GSO, VNET_DS_RX_GSO_BYTES, false, "hw_gso_bytes" },
	{ VNET_DS_RX_GSO, VNET_DS_RX_GSO_PACKETS_COALESCED, false,
	  "hw_gso_packets_coalesced" },
	{ VNET_DS_RX_GSO, VNET_DS_RX_GSO_BYTES_COALESCED, false,
	  "hw_gso_bytes_coalesced" },
	{ VNET_DS_RX_SPEED, VNET_DS_RX_RATELIMIT_PACKETS, false,
	  "hw_ratelimit_packets" },
};

static const struct vnet_ds_name vnet_ds_tx_names[] = {
	{ VNET_DS_TX_BASIC, VNET_DS_TX_PACKETS, true, "hw_packets" },
	{ VNET_DS_TX_BASIC, VNET_DS_TX_BYTES, true, "hw_bytes" },
	{ VNET_DS_TX_BASIC, VNET_DS_TX_NOTIFICATIONS, true, "hw_notifications" },
	{ VNET_DS_TX_BASIC, VNET_DS_TX_INTERRUPTS, true, "hw_interrupts" },
	{ VNET_DS_TX_GSO, VNET_DS_TX_GSO_PACKETS_NOSEG, true,
	  "hw_gso_packets_noseg" },
	{ VNET_DS_TX_GSO, VNET_DS_TX_GSO_BYTES_NOSEG, true,
	  "hw_gso_bytes_noseg" },
	{ VNET_DS_TX_SPEED, VNET_DS_TX_RATELIMIT_BYTES, true,
	  "hw_ratelimit_bytes" },
	{ VNET_DS_TX_BASIC, VNET_DS_TX_DROPS, false, "hw_drops" },
	{ VNET_DS_TX_BASIC, VNET_DS_TX_DROP_MALFORMED, false,
	  "hw_drop_malformed" },
	{ VNET_DS_TX_CSUM, VNET_DS_TX_CSUM_NONE, false, "hw_csum_none" },
	{ VNET_DS_TX_CSUM, VNET_DS_TX_NEEDS_CSUM, false, "hw_needs_csum" },
	{ VNET_DS_TX_GSO, VNET_DS_TX_GSO_PACKETS, false, "hw_gso_packets" },
	{ VNET_DS_TX_GSO, VNET_DS_TX_GSO_BYTES, false, "hw_gso_bytes" },
	{ VNET_DS_TX_GSO, VNET_DS_TX_GSO_SEGMENTS, false, "hw_gso_segments" },
	{ VNET_DS_TX_GSO, VNET_DS_TX_GSO_SEGMENTS_BYTES, false,
	  "hw_gso_segments_bytes" },
	{ VNET_DS_TX_SPEED, VNET_DS_TX_RATELIMIT_PACKETS, false,
	  "hw_ratelimit_packets" },
};

static const struct vnet_ds_name vnet_ds_ctrl_names[] = {
	{ VNET_DS_CTRL, VNET_DS_CTRL_COMMANDS, true, "cq_hw_command_num" },
	{ VNET_DS_CTRL, VNET_DS_CTRL_OK, true, "cq_hw_ok_num" },
};

static const struct vnet_ds_name *vnet_ds_names_of(enum vnet_ds_kind kind,
						   unsigned int *n)
{
	switch (kind) {
	case VNET_DS_KIND_RX:
		*n = ARRAY_SIZE(vnet_ds_rx_names);
		return vnet_ds_rx_names;
	case VNET_DS_KIND_TX:
		*n = ARRAY_SIZE(vnet_ds_tx_names);
		return vnet_ds_tx_names;
	default:
		*n = ARRAY_SIZE(vnet_ds_ctrl_names);
		return vnet_ds_ctrl_names;
	}
}

/* Whether name @d is shown: its group is kept, and it is in that half. */
static bool vnet_ds_shown(const struct vnet *vi, const struct vnet_ds_name *d,
			  bool intree)
{
	return d->intree == intree && (vi->ds_caps & VNET_DS_BIT(d->group));
}

/* How many names of queues of @kind are in the in-tree (or our) half. */
unsigned int vnet_dev_stats_count(const struct vnet *vi,
				  enum vnet_ds_kind kind, bool intree)
{
	unsigned int i, n, shown = 0;
	const struct vnet_ds_name *d = vnet_ds_names_of(kind, &n);

	for (i = 0; i < n; i++)
		shown += vnet_ds_shown(vi, &d[i], intree);
	return shown;
}

/*
 * Write those names: for queue @q with @fmt ("rx%u_%s"), for totals (q
 * negative) with @fmt ("rx_%s") and no number.
 */
void vnet_dev_stats_names(const struct vnet *vi, enum vnet_ds_kind kind,
			  bool intree, const char *fmt, int q, u8 **p)
{
	unsigned int i, n;
	const struct vnet_ds_name *d = vnet_ds_names_of(kind, &n);

	for (i = 0; i < n; i++) {
		if (!vnet_ds_shown(vi, &d[i], intree))
			continue;
		if (q < 0)
			snprintf(*p, ETH_GSTRING_LEN, fmt, d[i].name);
		else
			snprintf(*p, ETH_GSTRING_LEN, fmt, q, d[i].name);
		*p += ETH_GSTRING_LEN;
	}
}

/* Their values, from one queue's counters @ctrs (NULL: all 0). */
void vnet_dev_stats_put(const struct vnet *vi, enum vnet_ds_kind kind,
			bool intree, const u64 *ctrs, u64 **data)
{
	unsigned int i, n;
	const struct vnet_ds_name *d = vnet_ds_names_of(kind, &n);

	for (i = 0; i < n; i++) {
		if (!vnet_ds_shown(vi, &d[i], intree))
			continue;
		*(*data)++ = ctrs ? ctrs[d[i].ctr] : 0;
	}
}

/* Our device-level counters of the feature itself. */
static const char * const vnet_ds_own_names[] = {
	"hw_stats_failed_requests",
	"hw_stats_skipped_records",
};

unsigned int vnet_dev_stats_own_count(const struct vnet *vi)
{
	return vnet_has(vi, VNET_F_DEVICE_STATS) ?
	       ARRAY_SIZE(vnet_ds_own_names) : 0;
}

void vnet_dev_stats_own_names(const struct vnet *vi, u8 **p)
{
	unsigned int i;

	for (i = 0; i < vnet_dev_stats_own_count(vi); i++) {
		strscpy(*p, vnet_ds_own_names[i], ETH_GSTRING_LEN);
		*p += ETH_GSTRING_LEN;
	}
}

void vnet_dev_stats_own_values(struct vnet *vi, u64 **data)
{
	if (!vnet_dev_stats_own_count(vi))
		return;
	*(*data)++ = atomic64_read(&vi->ds_errors);
	*(*data)++ = atomic64_read(&vi->ds_bad_records);
}

#ifdef VNET_HAVE_QSTATS_HW
/*
 * Netlink queue statistics from the device's counters @c of one receive
 * queue, for the groups the device keeps (the others stay unreported);
 * with @add summed into @s (totals of inactive queues).
 */
static void vnet_qs(u64 *field, u64 value, bool add)
{
	*field = (add ? *field : 0) + value;
}

void vnet_dev_stats_qstats_rx(const struct vnet *vi,
			      const struct vnet_ds_ctrs *c,
			      struct netdev_queue_stats_rx *s, bool add)
{
	const u64 *v = c->v;

	if (vi->ds_caps & VNET_DS_BIT(VNET_DS_RX_BASIC)) {
		vnet_qs(&s->hw_drops, v[VNET_DS_RX_DROPS], add);
		vnet_qs(&s->hw_drop_overruns, v[VNET_DS_RX_DROP_OVERRUNS], add);
	}
	if (vi->ds_caps & VNET_DS_BIT(VNET_DS_RX_CSUM)) {
		vnet_qs(&s->csum_unnecessary, v[VNET_DS_RX_CSUM_VALID], add);
		vnet_qs(&s->csum_none, v[VNET_DS_RX_CSUM_NONE], add);
		vnet_qs(&s->csum_bad, v[VNET_DS_RX_CSUM_BAD], add);
	}
	if (vi->ds_caps & VNET_DS_BIT(VNET_DS_RX_GSO)) {
		vnet_qs(&s->hw_gro_packets, v[VNET_DS_RX_GSO_PACKETS], add);
		vnet_qs(&s->hw_gro_bytes, v[VNET_DS_RX_GSO_BYTES], add);
		vnet_qs(&s->hw_gro_wire_packets,
			v[VNET_DS_RX_GSO_PACKETS_COALESCED], add);
		vnet_qs(&s->hw_gro_wire_bytes, v[VNET_DS_RX_GSO_BYTES_COALESCED], add);
	}
	if (vi->ds_caps & VNET_DS_BIT(VNET_DS_RX_SPEED))
		vnet_qs(&s->hw_drop_ratelimits, v[VNET_DS_RX_RATELIMIT_PACKETS], add);
}

void vnet_dev_stats_qstats_tx(const struct vnet *vi,
			      const struct vnet_ds_ctrs *c,
			      struct netdev_queue_stats_tx *s, bool add)
{
	const u64 *v = c->v;

	if (vi->ds_caps & VNET_DS_BIT(VNET_DS_TX_BASIC)) {
		vnet_qs(&s->hw_drops, v[VNET_DS_TX_DROPS], add);
		vnet_qs(&s->hw_drop_errors, v[VNET_DS_TX_DROP_MALFORMED], add);
	}
	if (vi->ds_caps & VNET_DS_BIT(VNET_DS_TX_CSUM)) {
		vnet_qs(&s->csum_none, v[VNET_DS_TX_CSUM_NONE], add);
		vnet_qs(&s->needs_csum, v[VNET_DS_TX_NEEDS_CSUM], add);
	}
	if (vi->ds_caps & VNET_DS_BIT(VNET_DS_TX_GSO)) {
		vnet_qs(&s->hw_gso_packets, v[VNET_DS_TX_GSO_PACKETS], add);
		vnet_qs(&s->hw_gso_bytes, v[VNET_DS_TX_GSO_BYTES], add);
		vnet_qs(&s->hw_gso_wire_packets, v[VNET_DS_TX_GSO_SEGMENTS], add);
		vnet_qs(&s->hw_gso_wire_bytes, v[VNET_DS_TX_GSO_SEGMENTS_BYTES], add);
	}
	if (vi->ds_caps & VNET_DS_BIT(VNET_DS_TX_SPEED))
		vnet_qs(&s->hw_drop_ratelimits, v[VNET_DS_TX_RATELIMIT_PACKETS], add);
}
#endif
