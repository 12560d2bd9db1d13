// SPDX-License-Identifier: GPL-2.0-only
/*
 * Control virtqueue commands.
 *
 * One command is in flight at a time (ctrl_lock).  A command is a header
 * (class, command), zero or more data buffers and a one-byte status the
 * device writes back.  All callers run in process context, so the wait
 * for the device yields the CPU instead of spinning with it held.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netdevice.h>
#include <linux/slab.h>
#include "compat.h"
#include "policy/features.h"
#include "vnet.h"

#define VNET_CTRL_MAX_SG	4

/*
 * Send one command and wait for the device's answer.  @data are the
 * command's data buffers (DMA-able memory): @ndata - @nin the device
 * reads, then @nin it writes.  With @written, the bytes the device says it
 * wrote: into those @nin buffers and the status byte after them (0 when
 * it says nothing).  Returns 0 when the device acknowledged, -EIO
 * when it refused or the queue is broken, -ENODEV when there is no queue
 * (between freeze and restore).
 */
static int vnet_ctrl_send(struct vnet *vi, u8 class, u8 cmd,
			  struct scatterlist **data, unsigned int ndata,
			  unsigned int nin, unsigned int *written)
{
	struct scatterlist hdr, stat, *sgs[VNET_CTRL_MAX_SG];
	struct vnet_ctrl *c = vi->ctrl;
	unsigned int n = 0, i, len;
	int err;

	lockdep_assert_held(&vi->ctrl_lock);
	if (WARN_ON_ONCE(ndata + 2 > VNET_CTRL_MAX_SG || nin > ndata))
		return -EINVAL;
	/* Between freeze and restore, or after a failed restore. */
	if (!vi->cvq)
		return -ENODEV;

	c->hdr.class = class;
	c->hdr.cmd = cmd;
	c->status = ~0;

	sg_init_one(&hdr, &c->hdr, sizeof(c->hdr));
	sgs[n++] = &hdr;
	for (i = 0; i < ndata; i++)
		sgs[n++] = data[i];
	sg_init_one(&stat, &c->status, sizeof(c->status));
	sgs[n++] = &stat;

	err = virtqueue_add_sgs(vi->cvq, sgs, n - 1 - nin, nin + 1, vi,
				GFP_KERNEL);
	if (err) {
		dev_warn(&vi->vdev->dev, "control command %u.%u not queued: %d\n",
			 class, cmd, err);
		return -EIO;
	}
	if (unlikely(!virtqueue_kick(vi->cvq)))
		return -EIO;

	while (!virtqueue_get_buf(vi->cvq, &len)) {
		if (virtqueue_is_broken(vi->cvq))
			return -EIO;
		cond_resched();
		cpu_relax();
	}
	if (written)
		*written = len;
	return c->status == VIRTIO_NET_OK ? 0 : -EIO;
}

static int vnet_ctrl_simple(struct vnet *vi, u8 class, u8 cmd,
			    void *payload, unsigned int len)
{
	struct scatterlist sg, *data[1] = { &sg };

	if (!vi->has_cvq)
		return -EOPNOTSUPP;
	if (!payload)
		return vnet_ctrl_send(vi, class, cmd, NULL, 0, 0, NULL);
	sg_init_one(&sg, payload, len);
	return vnet_ctrl_send(vi, class, cmd, data, 1, 0, NULL);
}

int vnet_ctrl_set_pairs(struct vnet *vi, u16 pairs)
{
	int err;

	/* With RSS the pair count travels with the steering configuration. */
	if (vnet_rss_steers(vi))
		return vnet_rss_set_pairs(vi, pairs);
	if (!vnet_has(vi, VIRTIO_NET_F_MQ))
		return pairs == 1 ? 0 : -EOPNOTSUPP;
	mutex_lock(&vi->ctrl_lock);
	vi->ctrl->u.pairs = cpu_to_virtio16(vi->vdev, pairs);
	err = vnet_ctrl_simple(vi, VIRTIO_NET_CTRL_MQ,
			       VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET,
			       &vi->ctrl->u.pairs, sizeof(vi->ctrl->u.pairs));
	mutex_unlock(&vi->ctrl_lock);
	if (err)
		dev_warn(&vi->vdev->dev, "device refused %u queue pairs\n",
			 pairs);
	return err;
}

/* One command with one data buffer (kmalloc'ed: it is mapped for DMA). */
int vnet_ctrl_cmd(struct vnet *vi, u8 class, u8 cmd, void *buf,
		  unsigned int len)
{
	int err;

	mutex_lock(&vi->ctrl_lock);
	err = vnet_ctrl_simple(vi, class, cmd, buf, len);
	mutex_unlock(&vi->ctrl_lock);
	return err;
}

/*
 * One command with an optional buffer @out (@out_len bytes) the device
 * reads and a buffer @in it answers into, both kmalloc'ed.  *@in_got is
 * how much of @in holds the answer: what the device reports having
 * written, at most @in_len, or all of @in when it reports nothing.
 */
int vnet_ctrl_cmd_reply(struct vnet *vi, u8 class, u8 cmd, void *out,
			unsigned int out_len, void *in, unsigned int in_len,
			unsigned int *in_got)
{
	struct scatterlist sg_out, sg_in, *data[2];
	unsigned int n = 0, written = 0;
	int err;

	if (!vi->has_cvq)
		return -EOPNOTSUPP;
	if (out) {
		sg_init_one(&sg_out, out, out_len);
		data[n++] = &sg_out;
	}
	sg_init_one(&sg_in, in, in_len);
	data[n++] = &sg_in;
	mutex_lock(&vi->ctrl_lock);
	err = vnet_ctrl_send(vi, class, cmd, data, n, 1, &written);
	mutex_unlock(&vi->ctrl_lock);
	/* The status byte is the last one the device wrote. */
	*in_got = written ? min(written - 1, in_len) : in_len;
	return err;
}

/* VIRTIO_NET_CTRL_RX_PROMISC or _ALLMULTI on or off. */
int vnet_ctrl_set_rx_flag(struct vnet *vi, u8 cmd, bool on)
{
	int err;

	if (!vnet_has(vi, VIRTIO_NET_F_CTRL_RX))
		return -EOPNOTSUPP;
	mutex_lock(&vi->ctrl_lock);
	vi->ctrl->u.promisc = on;
	err = vnet_ctrl_simple(vi, VIRTIO_NET_CTRL_RX, cmd,
			       &vi->ctrl->u.promisc, sizeof(vi->ctrl->u.promisc));
	mutex_unlock(&vi->ctrl_lock);
	return err;
}

int vnet_ctrl_set_mac(struct vnet *vi, const u8 *mac)
{
	int err;

	if (!vnet_has(vi, VIRTIO_NET_F_CTRL_MAC_ADDR))
		return -EOPNOTSUPP;
	mutex_lock(&vi->ctrl_lock);
	ether_addr_copy(vi->ctrl->u.mac, mac);
	err = vnet_ctrl_simple(vi, VIRTIO_NET_CTRL_MAC,
			       VIRTIO_NET_CTRL_MAC_ADDR_SET,
			       vi->ctrl->u.mac, ETH_ALEN);
	mutex_unlock(&vi->ctrl_lock);
	return err;
}

/* Fill one MAC table (entry count + addresses) from an address list. */
static unsigned int vnet_fill_mac_table(struct virtio_device *vdev,
					struct virtio_net_ctrl_mac *tbl,
					struct netdev_hw_addr_list *list,
					unsigned int max)
{
	struct netdev_hw_addr *ha;
	unsigned int n = 0;

	netdev_hw_addr_list_for_each(ha, list) {
		if (n == max)
			break;
		ether_addr_copy(tbl->macs[n++], ha->addr);
	}
	tbl->entries = cpu_to_virtio32(vdev, n);
	return n;
}

/*
 * Program the unicast and multicast filter tables from the device's
 * address lists.  Lists may change under us (multicast joins happen in
 * softirq context), so they are copied under the address lock into
 * buffers sized beforehand; entries added in between wait for the next
 * rx-mode update, which their addition schedules.
 */
int vnet_ctrl_set_mac_table(struct vnet *vi, struct net_device *dev)
{
	struct virtio_net_ctrl_mac *uc, *mc;
	struct scatterlist sg[2], *data[2] = { &sg[0], &sg[1] };
	unsigned int uc_max, mc_max, n_uc, n_mc;
	void *buf;
	int err;

	if (!vnet_has(vi, VIRTIO_NET_F_CTRL_RX))
		return -EOPNOTSUPP;

	netif_addr_lock_bh(dev);
	uc_max = netdev_uc_count(dev);
	mc_max = netdev_mc_count(dev);
	netif_addr_unlock_bh(dev);

	buf = kzalloc(2 * sizeof(*uc) + (uc_max + mc_max) * ETH_ALEN,
		      GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	uc = buf;
	mc = buf + sizeof(*uc) + uc_max * ETH_ALEN;

	netif_addr_lock_bh(dev);
	n_uc = vnet_fill_mac_table(vi->vdev, uc, &dev->uc, uc_max);
	n_mc = vnet_fill_mac_table(vi->vdev, mc, &dev->mc, mc_max);
	netif_addr_unlock_bh(dev);

	sg_init_one(&sg[0], uc, sizeof(*uc) + n_uc * ETH_ALEN);
	sg_init_one(&sg[1], mc, sizeof(*mc) + n_mc * ETH_ALEN);

	mutex_lock(&vi->ctrl_lock);
	err = vnet_ctrl_send(vi, VIRTIO_NET_CTRL_MAC,
			     VIRTIO_NET_CTRL_MAC_TABLE_SET, data, 2, 0, NULL);
	mutex_unlock(&vi->ctrl_lock);
	kfree(buf);
	return err;
}

int vnet_ctrl_vlan(struct vnet *vi, u16 vid, bool add)
{
	int err;

	if (!vnet_has(vi, VIRTIO_NET_F_CTRL_VLAN))
		return -EOPNOTSUPP;
	mutex_lock(&vi->ctrl_lock);
	vi->ctrl->u.vid = cpu_to_virtio16(vi->vdev, vid);
	err = vnet_ctrl_simple(vi, VIRTIO_NET_CTRL_VLAN,
			       add ? VIRTIO_NET_CTRL_VLAN_ADD :
				     VIRTIO_NET_CTRL_VLAN_DEL,
			       &vi->ctrl->u.vid, sizeof(vi->ctrl->u.vid));
	mutex_unlock(&vi->ctrl_lock);
	return err;
}

int vnet_ctrl_set_offloads(struct vnet *vi, u64 offloads)
{
	int err;

	if (!vnet_has(vi, VIRTIO_NET_F_CTRL_GUEST_OFFLOADS))
		return -EOPNOTSUPP;
	mutex_lock(&vi->ctrl_lock);
	vi->ctrl->u.offloads = cpu_to_virtio64(vi->vdev, offloads);
	err = vnet_ctrl_simple(vi, VIRTIO_NET_CTRL_GUEST_OFFLOADS,
			       VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET,
			       &vi->ctrl->u.offloads,
			       sizeof(vi->ctrl->u.offloads));
	mutex_unlock(&vi->ctrl_lock);
	return err;
}

int vnet_ctrl_announce_ack(struct vnet *vi)
{
	int err;

	if (!vnet_has(vi, VIRTIO_NET_F_GUEST_ANNOUNCE))
		return -EOPNOTSUPP;
	mutex_lock(&vi->ctrl_lock);
	err = vnet_ctrl_simple(vi, VIRTIO_NET_CTRL_ANNOUNCE,
			       VIRTIO_NET_CTRL_ANNOUNCE_ACK, NULL, 0);
	mutex_unlock(&vi->ctrl_lock);
	return err;
}

static int vnet_ctrl_coal_global(struct vnet *vi, u8 cmd, u32 packets,
				 u32 usecs)
{
	int err;

	mutex_lock(&vi->ctrl_lock);
	vnet_coal_encode(&vi->ctrl->u.coal, packets, usecs);
	err = vnet_ctrl_simple(vi, VNET_CTRL_NOTF_COAL, cmd, &vi->ctrl->u.coal,
			       sizeof(vi->ctrl->u.coal));
	mutex_unlock(&vi->ctrl_lock);
	return err;
}

static int vnet_ctrl_coal_vq(struct vnet *vi, u16 vqn, u32 packets, u32 usecs)
{
	int err;

	mutex_lock(&vi->ctrl_lock);
	vnet_coal_encode_vq(&vi->ctrl->u.coal_vq, vqn, packets, usecs);
	err = vnet_ctrl_simple(vi, VNET_CTRL_NOTF_COAL,
			       VNET_CTRL_NOTF_COAL_VQ_SET, &vi->ctrl->u.coal_vq,
			       sizeof(vi->ctrl->u.coal_vq));
	mutex_unlock(&vi->ctrl_lock);
	return err;
}

/*
 * Program the device's own interrupt coalescing for pairs [first, last)
 * from their settings (see policy/dev_coalesce.h): per virtqueue where the device
 * allows it, else once for the whole device from the device-wide
 * settings.
 */
int vnet_ctrl_dev_coal(struct vnet *vi, unsigned int first, unsigned int last)
{
	struct vnet_dev_coal_vq rx, tx;
	unsigned int i;
	int err = 0;

	if (!vi->dev_coal)
		return 0;
	for (i = first; i < last; i++) {
		vnet_dev_coal_split(vnet_has(vi, VNET_F_VQ_NOTF_COAL) ?
				    &vi->qp[i].rq.coal : &vi->rx_coal, &rx, &tx);
		if (vnet_has(vi, VNET_F_VQ_NOTF_COAL)) {
			err = vnet_ctrl_coal_vq(vi, 2 * i, rx.max_packets,
						rx.max_usecs) ?:
			      vnet_ctrl_coal_vq(vi, 2 * i + 1, tx.max_packets,
						tx.max_usecs);
		} else if (i == 0) {
			err = vnet_ctrl_coal_global(vi, VNET_CTRL_NOTF_COAL_RX_SET,
						    rx.max_packets,
						    rx.max_usecs) ?:
			      vnet_ctrl_coal_global(vi, VNET_CTRL_NOTF_COAL_TX_SET,
						    tx.max_packets,
						    tx.max_usecs);
		}
		if (err) {
			dev_warn(&vi->vdev->dev, "device refused coalescing settings for pair %u\n",
				 i);
			return err;
		}
	}
	return 0;
}
