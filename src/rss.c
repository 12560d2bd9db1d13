// SPDX-License-Identifier: GPL-2.0-only
/*
 * Receive-side scaling and hash report: device limits at probe, the
 * control commands, and the ethtool interface (-x/-X indirection table
 * and key, -n/-N rx-flow-hash, the rxhash feature).
 *
 * With VIRTIO_NET_F_RSS the device steers each received packet to the
 * queue pair its hash selects in our indirection table, and the number of
 * active pairs travels in the same command (max_tx_vq) instead of
 * VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, which would turn steering off.  With
 * VIRTIO_NET_F_HASH_REPORT the device writes the hash and its type into
 * each receive header; skb->hash then comes from there when the rxhash
 * feature is on.  The decisions and the wire format are in policy/rss.c.
 *
 * Everything here runs under RTNL (probe, restore, ethtool, feature and
 * channel changes); the commands themselves take the control queue lock.
 *
 * A device that steers in software may hold a packet it meant for a ring
 * without buffers on the queue it arrived on, and retry it only when the
 * driver notifies *that* queue (QEMU 7.2 does so, and stops reading that
 * backend queue meanwhile: without help the queue stalls for good).  So
 * when a refill notifies the device, the other active receive queues are
 * notified too; and when steering may have picked
 * rings that had no buffers yet (after probe, after more pairs are
 * enabled), every receive queue is notified once all active rings have
 * buffers (the "settle" work).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/virtio_config.h>
#include "compat.h"
#include "policy/rss.h"
#include "vnet.h"

struct vnet_rss {
	struct vnet_rss_limits lim;
	/* RSS negotiated: the table steers; else hashes are only reported. */
	bool steering;
	/* Hash types chosen through ethtool -N (the device's by default). */
	u32 types;
	u16 *table;		/* [lim.table_len] */
	u8 *key;		/* [lim.key_len] */
	/* Command buffer, kmalloc'ed: the control queue maps it for DMA. */
	u8 *cmd;
	struct vnet *vi;
	/* Notify every RX queue once all active rings have buffers. */
	struct delayed_work settle;
	unsigned int settle_tries;
};

/* Rings without buffers are waited for this often, this many times. */
#define VNET_RSS_SETTLE_DELAY	(HZ / 20)
#define VNET_RSS_SETTLE_TRIES	100

static void vnet_rss_settle_work(struct work_struct *work)
{
	struct vnet_rss *r = container_of(to_delayed_work(work),
					  struct vnet_rss, settle);
	struct vnet *vi = r->vi;
	unsigned int i, pairs = READ_ONCE(vi->curr_pairs);

	if (!netif_running(vi->dev))
		return;
	for (i = 0; i < pairs; i++) {
		struct virtqueue *vq = vi->qp[i].rq.vq;

		if (vq->num_free < virtqueue_get_vring_size(vq))
			continue;
		if (++r->settle_tries < VNET_RSS_SETTLE_TRIES)
			schedule_delayed_work(&r->settle,
					      VNET_RSS_SETTLE_DELAY);
		return;
	}
	for (i = 0; i < pairs; i++)
		virtqueue_notify(vi->qp[i].rq.vq);
}

/* After steering may have chosen rings that were empty (see above). */
void vnet_rss_settle(struct vnet *vi)
{
	struct vnet_rss *r = vi->rss;

	if (!r || !r->steering)
		return;
	r->settle_tries = 0;
	mod_delayed_work(system_wq, &r->settle, VNET_RSS_SETTLE_DELAY);
}

/*
 * A refill of @rq notified the device: let it retry what it holds for
 * @rq on the other queues.  Not rate limited: a held queue is only
 * retried on a notification that comes after @rq has buffers again.
 */
void vnet_rss_refilled(struct vnet *vi, struct vnet_rq *rq)
{
	unsigned int i, pairs;

	if (!vi->rss->steering)
		return;
	pairs = READ_ONCE(vi->curr_pairs);
	for (i = 0; i < pairs; i++)
		if (&vi->qp[i].rq != rq)
			virtqueue_notify(vi->qp[i].rq.vq);
}

/* Before the virtqueues go away (remove, freeze). */
void vnet_rss_stop(struct vnet *vi)
{
	if (vi->rss)
		cancel_delayed_work_sync(&vi->rss->settle);
}

bool vnet_rss_steers(const struct vnet *vi)
{
	return vi->rss && vi->rss->steering;
}

static void vnet_rss_fill_key(u8 *key, unsigned int len)
{
	unsigned int n = min_t(unsigned int, len, NETDEV_RSS_KEY_LEN);

	/* The system-wide key, as other drivers use; random beyond it. */
	netdev_rss_key_fill(key, n);
	if (len > n)
		get_random_bytes(key + n, len - n);
}

/*
 * Read the device's limits and set up the defaults: every hash type both
 * sides know, the system key, queue pairs in turn in the table.  A device
 * whose limits cannot be used keeps working without hashing.  Called at
 * probe, before the netdev is registered.
 */
int vnet_rss_probe(struct vnet *vi)
{
	struct virtio_device *vdev = vi->vdev;
	bool steer = vnet_has(vi, VIRTIO_NET_F_RSS);
	bool report = vnet_has(vi, VIRTIO_NET_F_HASH_REPORT);
	struct vnet_rss_limits lim;
	struct vnet_rss *r;
	u16 table_max = 0;
	const char *why;
	u8 key_max;
	u32 types;

	if (!steer && !report)
		return 0;
	if (steer)
		table_max = virtio_cread16(vdev,
					   offsetof(struct virtio_net_config,
						    rss_max_indirection_table_length));
	key_max = virtio_cread8(vdev, offsetof(struct virtio_net_config,
					       rss_max_key_size));
	types = virtio_cread32(vdev, offsetof(struct virtio_net_config,
					      supported_hash_types));
	if (vnet_rss_limits(steer, table_max, key_max, types, &lim, &why)) {
		dev_warn(&vdev->dev, "not using RSS/hash report: %s (table %u, key %u, types %#x)\n",
			 why, table_max, key_max, types);
		return 0;
	}

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->lim = lim;
	r->vi = vi;
	INIT_DELAYED_WORK(&r->settle, vnet_rss_settle_work);
	r->steering = steer;
	r->types = lim.types;
	r->key = kmalloc(lim.key_len, GFP_KERNEL);
	r->cmd = kmalloc(vnet_rss_cmd_size(lim.table_len, lim.key_len),
			 GFP_KERNEL);
	if (lim.table_len)
		r->table = kcalloc(lim.table_len, sizeof(*r->table),
				   GFP_KERNEL);
	if (!r->key || !r->cmd || (lim.table_len && !r->table)) {
		vi->rss = r;
		vnet_rss_free(vi);
		return -ENOMEM;
	}
	vnet_rss_fill_key(r->key, lim.key_len);
	vnet_rss_fill_table(r->table, lim.table_len, vi->curr_pairs);

	vi->rss = r;
	vi->hash_report = report;
	vi->dev->hw_features |= NETIF_F_RXHASH;
	return 0;
}

void vnet_rss_free(struct vnet *vi)
{
	struct vnet_rss *r = vi->rss;

	if (!r)
		return;
	cancel_delayed_work_sync(&r->settle);
	kfree(r->cmd);
	kfree(r->table);
	kfree(r->key);
	kfree(r);
	vi->rss = NULL;
	vi->hash_report = false;
}

/* Give the device the whole configuration, @pairs queue pairs in use. */
static int vnet_rss_send(struct vnet *vi, u16 pairs, bool rxhash)
{
	struct vnet_rss *r = vi->rss;
	struct vnet_rss_cmd c = {
		.types = vnet_rss_types_to_program(r->steering, rxhash,
						   r->types),
		.table = r->table,
		.table_len = r->lim.table_len,
		.unclassified = 0,
		.max_tx_vq = pairs,
		.key = r->key,
		.key_len = r->lim.key_len,
	};
	size_t len = vnet_rss_encode(r->cmd, &c);

	return vnet_ctrl_cmd(vi, VIRTIO_NET_CTRL_MQ,
			     r->steering ? VIRTIO_NET_CTRL_MQ_RSS_CONFIG :
					   VIRTIO_NET_CTRL_MQ_HASH_CONFIG,
			     r->cmd, len);
}

static int vnet_rss_commit(struct vnet *vi)
{
	int err = vnet_rss_send(vi, vi->curr_pairs,
				vi->dev->features & NETIF_F_RXHASH);

	if (err)
		netdev_warn(vi->dev, "device refused the %s configuration\n",
			    vi->rss->steering ? "RSS" : "hash report");
	return err;
}

/*
 * Program the device from scratch: after probe and restore.  Both send
 * the queue pair count first; with RSS it went out in the same command
 * (vnet_rss_set_pairs), this adds nothing but costs nothing either.
 */
int vnet_rss_apply(struct vnet *vi)
{
	int err;

	if (!vi->rss)
		return 0;
	err = vnet_rss_commit(vi);
	if (!err)
		vnet_rss_settle(vi);
	return err;
}

/*
 * The number of active pairs changes (the device still uses the old
 * one).  A table the user never set follows the new count; one the user
 * set names only pairs that stay (ethtool refuses fewer channels than
 * the table uses), unless a caller other than ethtool shrinks below it:
 * then the default table comes back, with a warning.
 */
int vnet_rss_set_pairs(struct vnet *vi, u16 pairs)
{
	struct vnet_rss *r = vi->rss;
	unsigned int i;
	int err;

	ASSERT_RTNL();
	if (netif_is_rxfh_configured(vi->dev)) {
		for (i = 0; i < r->lim.table_len; i++)
			if (r->table[i] >= pairs)
				break;
		if (i < r->lim.table_len) {
			netdev_warn(vi->dev, "RSS table names queue %u of %u; back to the default table\n",
				    r->table[i], pairs);
			vnet_rss_fill_table(r->table, r->lim.table_len, pairs);
		}
	} else {
		vnet_rss_fill_table(r->table, r->lim.table_len, pairs);
	}
	err = vnet_rss_send(vi, pairs, vi->dev->features & NETIF_F_RXHASH);
	if (err)
		netdev_warn(vi->dev, "device refused RSS with %u queue pairs\n",
			    pairs);
	else
		vnet_rss_settle(vi);
	return err;
}

/* ndo_set_features: rxhash changes what a report-only device computes. */
int vnet_rss_set_features(struct vnet *vi, netdev_features_t features)
{
	bool on = features & NETIF_F_RXHASH;

	if (!vi->rss || !((vi->dev->features ^ features) & NETIF_F_RXHASH))
		return 0;
	if (vi->rss->steering)
		return 0;
	return vnet_rss_send(vi, vi->curr_pairs, on);
}

/* --- ethtool --- */

u32 vnet_get_rxfh_key_size(struct net_device *dev)
{
	struct vnet *vi = netdev_priv(dev);

	return vi->rss ? vi->rss->lim.key_len : 0;
}

u32 vnet_get_rxfh_indir_size(struct net_device *dev)
{
	struct vnet *vi = netdev_priv(dev);

	return vi->rss ? vi->rss->lim.table_len : 0;
}

int vnet_get_rxfh(VNET_GET_RXFH_ARGS)
{
	struct vnet *vi = netdev_priv(dev);
	struct vnet_rss *r = vi->rss;
	u32 *indir = VNET_RXFH_INDIR;
	u8 *key = VNET_RXFH_KEY;
	u8 *hfunc = VNET_RXFH_HFUNC_OUT;
	unsigned int i;

	if (hfunc)
		*hfunc = ETH_RSS_HASH_TOP;
	if (!r)
		return 0;
	if (indir)
		for (i = 0; i < r->lim.table_len; i++)
			indir[i] = r->table[i];
	if (key)
		memcpy(key, r->key, r->lim.key_len);
	return 0;
}

int vnet_set_rxfh(VNET_SET_RXFH_ARGS)
{
	struct netlink_ext_ack *ack = VNET_RXFH_EXTACK;
	struct vnet *vi = netdev_priv(dev);
	struct vnet_rss *r = vi->rss;
	const u32 *indir = VNET_RXFH_INDIR;
	const u8 *key = VNET_RXFH_KEY;
	u8 hfunc = VNET_RXFH_HFUNC_IN;
	u16 *old_table = NULL;
	u8 *old_key = NULL;
	unsigned int i;
	int err;

	if (VNET_RXFH_CONTEXT) {
		NL_SET_ERR_MSG_MOD(ack, "no additional RSS contexts");
		return -EOPNOTSUPP;
	}
	if (hfunc != ETH_RSS_HASH_NO_CHANGE && hfunc != ETH_RSS_HASH_TOP) {
		NL_SET_ERR_MSG_MOD(ack, "the device hashes with Toeplitz only");
		return -EOPNOTSUPP;
	}
	if (!indir && !key)
		return 0;
	if (!r) {
		NL_SET_ERR_MSG_MOD(ack, "the device does not hash (no RSS or HASH_REPORT)");
		return -EOPNOTSUPP;
	}
	if (indir && !r->steering) {
		NL_SET_ERR_MSG_MOD(ack, "the device cannot steer by a table (no VIRTIO_NET_F_RSS)");
		return -EOPNOTSUPP;
	}
	if (indir && !vnet_rss_table_ok(indir, r->lim.table_len,
					vi->curr_pairs)) {
		NL_SET_ERR_MSG_MOD(ack, "the table names an inactive queue");
		return -EINVAL;
	}

	/* Keep the old values: a refused command leaves them in force. */
	if (indir)
		old_table = kmemdup(r->table, r->lim.table_len * sizeof(u16),
				    GFP_KERNEL);
	if (key)
		old_key = kmemdup(r->key, r->lim.key_len, GFP_KERNEL);
	if ((indir && !old_table) || (key && !old_key)) {
		err = -ENOMEM;
		goto out;
	}
	if (indir)
		for (i = 0; i < r->lim.table_len; i++)
			r->table[i] = indir[i];
	if (key)
		memcpy(r->key, key, r->lim.key_len);

	err = vnet_rss_commit(vi);
	if (err) {
		NL_SET_ERR_MSG_MOD(ack, "the device refused the configuration");
		if (old_table)
			memcpy(r->table, old_table,
			       r->lim.table_len * sizeof(u16));
		if (old_key)
			memcpy(r->key, old_key, r->lim.key_len);
	}
out:
	kfree(old_table);
	kfree(old_key);
	return err;
}

u32 vnet_get_rx_ring_count(struct net_device *dev)
{
	struct vnet *vi = netdev_priv(dev);

	return vi->curr_pairs;
}

static u64 vnet_rss_get_fields(struct vnet *vi, u32 flow_type)
{
	return vi->rss ? vnet_rss_flow_fields(vi->rss->types, flow_type) : 0;
}

static int vnet_rss_set_fields(struct vnet *vi, u32 flow_type, u64 fields,
			       struct netlink_ext_ack *ack)
{
	struct vnet_rss *r = vi->rss;
	u32 types, old;
	int err;

	if (!r) {
		NL_SET_ERR_MSG_MOD(ack, "the device does not hash (no RSS or HASH_REPORT)");
		return -EOPNOTSUPP;
	}
	err = vnet_rss_set_flow_fields(r->types, r->lim.types, flow_type,
				       fields, &types);
	if (err) {
		NL_SET_ERR_MSG_MOD(ack, "the device cannot hash this flow type on these fields");
		return err;
	}
	if (types == r->types)
		return 0;
	old = r->types;
	r->types = types;
	err = vnet_rss_commit(vi);
	if (err)
		r->types = old;
	return err;
}

int vnet_get_rxnfc(struct net_device *dev, struct ethtool_rxnfc *info,
		   u32 *rule_locs)
{
	struct vnet *vi = netdev_priv(dev);

	switch (info->cmd) {
	case ETHTOOL_GRXRINGS:
		info->data = vnet_get_rx_ring_count(dev);
		return 0;
	case ETHTOOL_GRXFH:
		info->data = vnet_rss_get_fields(vi, info->flow_type);
		return 0;
	}
	return -EOPNOTSUPP;
}

int vnet_set_rxnfc(struct net_device *dev, struct ethtool_rxnfc *info)
{
	if (info->cmd != ETHTOOL_SRXFH)
		return -EOPNOTSUPP;
	return vnet_rss_set_fields(netdev_priv(dev), info->flow_type,
				   info->data, NULL);
}

#ifdef VNET_HAVE_RXFH_FIELDS
int vnet_get_rxfh_fields(struct net_device *dev,
			 struct ethtool_rxfh_fields *f)
{
	f->data = vnet_rss_get_fields(netdev_priv(dev), f->flow_type);
	return 0;
}

int vnet_set_rxfh_fields(struct net_device *dev,
			 const struct ethtool_rxfh_fields *f,
			 struct netlink_ext_ack *extack)
{
	return vnet_rss_set_fields(netdev_priv(dev), f->flow_type, f->data,
				   extack);
}
#endif
