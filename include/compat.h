/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every kernel-version difference the driver meets, in one place.
 *
 * The VNET_HAVE_* macros come from scripts/compat-probe.sh, which kbuild
 * runs against the headers of the kernel being built for: it looks for a
 * declaration, never at LINUX_VERSION_CODE.  The driver calls the vnet_*
 * wrappers below (or the kernel names that are provided here when a kernel
 * lacks them) and contains no version checks of its own.  Where a kernel
 * feature decides what the driver offers at all, the file offering it
 * tests the probe's macro from here directly: netdev queue statistics and
 * the ethtool -S names of the kernel (stats.c), ethtool's TX aggregation
 * fields (ethtool.c) and the rxfh-fields callbacks (rss.c, vnet.h).
 */
#ifndef VNET_COMPAT_H
#define VNET_COMPAT_H

#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/virtio.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/filter.h>
#include <net/tcp.h>
#include <net/xdp.h>

/* Device reset: virtio_reset_device() appeared in 5.16. */
static inline void vnet_reset_device(struct virtio_device *vdev)
{
#ifdef VNET_HAVE_VIRTIO_RESET_DEVICE
	virtio_reset_device(vdev);
#else
	vdev->config->reset(vdev);
#endif
}

/*
 * 6.11 let drivers hold back config change notifications.  The in-tree
 * driver holds them while its interface is down and leaves them held when
 * it is unloaded; a driver bound after it must let them through again.
 */
static inline void vnet_config_driver_enable(struct virtio_device *vdev)
{
#ifdef VNET_HAVE_CONFIG_DRIVER_ENABLE
	virtio_config_driver_enable(vdev);
#endif
}

/*
 * Virtqueue discovery: 6.11 replaced the parallel callbacks/names/ctx
 * arrays by an array of struct virtqueue_info.
 */
static inline int vnet_find_vqs(struct virtio_device *vdev, unsigned int nvqs,
				struct virtqueue *vqs[],
				vq_callback_t *callbacks[],
				const char * const names[], const bool *ctx)
{
#ifdef VNET_HAVE_VIRTQUEUE_INFO
	struct virtqueue_info *info;
	unsigned int i;
	int err;

	info = kcalloc(nvqs, sizeof(*info), GFP_KERNEL);
	if (!info)
		return -ENOMEM;
	for (i = 0; i < nvqs; i++) {
		info[i].name = names[i];
		info[i].callback = callbacks[i];
		info[i].ctx = ctx ? ctx[i] : false;
	}
	err = virtio_find_vqs(vdev, nvqs, vqs, info, NULL);
	kfree(info);
	return err;
#else
	return virtio_find_vqs_ctx(vdev, nvqs, vqs, callbacks, names, ctx,
				   NULL);
#endif
}

/* Feature bit of per-queue reset (uapi since 6.0). */
#ifndef VIRTIO_F_RING_RESET
#define VIRTIO_F_RING_RESET	40
#endif

/* Largest ring the device allows (vq->num_max appeared in 6.0). */
static inline unsigned int vnet_vq_max_size(struct virtqueue *vq)
{
#ifdef VNET_HAVE_VQ_NUM_MAX
	if (vq->num_max)
		return vq->num_max;
#endif
	return virtqueue_get_vring_size(vq);
}

/*
 * Ring resize (6.0).  6.13, and later 6.12 stable releases, added a
 * callback run once all old buffers have been recycled; where it is
 * missing the caller does that work after virtqueue_resize() returns.
 */
#ifdef VNET_HAVE_VIRTQUEUE_RESIZE
#define VNET_CAN_RESIZE	1
static inline int vnet_vq_resize(struct virtqueue *vq, u32 num,
				 void (*recycle)(struct virtqueue *vq,
						 void *buf))
{
#ifdef VNET_HAVE_RESIZE_RECYCLE_DONE
	return virtqueue_resize(vq, num, recycle, NULL);
#else
	return virtqueue_resize(vq, num, recycle);
#endif
}
#else
#define VNET_CAN_RESIZE	0
static inline int vnet_vq_resize(struct virtqueue *vq, u32 num,
				 void (*recycle)(struct virtqueue *vq,
						 void *buf))
{
	return -EOPNOTSUPP;
}
#endif

/* NAPI registration with an explicit weight (renamed in 6.1). */
static inline void vnet_napi_add(struct net_device *dev,
				 struct napi_struct *napi,
				 int (*poll)(struct napi_struct *, int),
				 int weight)
{
#ifdef VNET_HAVE_NAPI_ADD_WEIGHT
	netif_napi_add_weight(dev, napi, poll, weight);
#else
	netif_napi_add(dev, napi, poll, weight);
#endif
}

static inline void vnet_napi_add_tx(struct net_device *dev,
				    struct napi_struct *napi,
				    int (*poll)(struct napi_struct *, int),
				    int weight)
{
#ifdef VNET_HAVE_NAPI_ADD_TX_WEIGHT
	netif_napi_add_tx_weight(dev, napi, poll, weight);
#else
	netif_tx_napi_add(dev, napi, poll, weight);
#endif
}

/*
 * An RX NAPI with a per-NAPI configuration slot (6.13): the core keeps its
 * id and its settings (defer-hard-irqs, gro-flush-timeout,
 * irq-suspend-timeout, threaded) in slot @index across napi_disable() and
 * napi_enable().  Without slots each enable hands out a new id.  The slot
 * variant takes no weight: it is set before the instance is first enabled.
 */
static inline void vnet_napi_add_rx(struct net_device *dev,
				    struct napi_struct *napi,
				    int (*poll)(struct napi_struct *, int),
				    int weight, unsigned int index)
{
#ifdef VNET_HAVE_NETIF_NAPI_ADD_CONFIG
	netif_napi_add_config(dev, napi, poll, index);
	napi->weight = weight;
#else
	vnet_napi_add(dev, napi, poll, weight);
#endif
}

/* The IRQ that schedules a NAPI, shown by netlink napi-get (6.9). */
#ifdef VNET_HAVE_NETIF_NAPI_SET_IRQ
#define VNET_CAN_NAPI_IRQ	1
static inline void vnet_napi_set_irq(struct napi_struct *napi, int irq)
{
	netif_napi_set_irq(napi, irq);
}
#else
#define VNET_CAN_NAPI_IRQ	0
static inline void vnet_napi_set_irq(struct napi_struct *napi, int irq)
{
}
#endif

/*
 * Does the core defer this instance's interrupts itself: after a poll
 * with work, napi_complete_done() keeps the instance and the core polls
 * it again after gro-flush-timeout, up to defer-hard-irqs times?  The
 * settings are per NAPI from 6.13, per device (sysfs) before.
 */
static inline bool vnet_napi_core_defers(const struct napi_struct *napi)
{
#ifdef VNET_HAVE_NAPI_DEFER_PER_NAPI
	return READ_ONCE(napi->defer_hard_irqs) &&
	       READ_ONCE(napi->gro_flush_timeout);
#else
	return READ_ONCE(napi->dev->napi_defer_hard_irqs) &&
	       READ_ONCE(napi->dev->gro_flush_timeout);
#endif
}

/*
 * Threaded NAPI for all of a device's instances (5.12; the setting is an
 * enum with a busy-polling mode from 6.17).  Caller holds RTNL.  Recent
 * kernels' dev_set_threaded() takes the instance lock itself (7.2 does:
 * taking it here as well hung the guest); the few releases in which it
 * only asserted the lock get a lockdep warning at worst, never a deadlock.
 */
#ifdef VNET_HAVE_DEV_SET_THREADED
#define VNET_CAN_THREADED	1
static inline bool vnet_threaded(struct net_device *dev)
{
	return dev->threaded;
}

static inline int vnet_set_threaded(struct net_device *dev, bool on)
{
#ifdef VNET_HAVE_DEV_SET_THREADED_ENUM
	return dev_set_threaded(dev, on ? NETDEV_NAPI_THREADED_ENABLED :
				     NETDEV_NAPI_THREADED_DISABLED);
#else
	return dev_set_threaded(dev, on);
#endif
}
#else
#define VNET_CAN_THREADED	0
static inline bool vnet_threaded(struct net_device *dev)
{
	return false;
}

static inline int vnet_set_threaded(struct net_device *dev, bool on)
{
	return -EOPNOTSUPP;
}
#endif

/* Tell the core which NAPI serves a queue (6.8), for busy polling. */
static inline void vnet_queue_set_napi(struct net_device *dev,
				       unsigned int index, bool rx,
				       struct napi_struct *napi)
{
#ifdef VNET_HAVE_NETIF_QUEUE_SET_NAPI
	netif_queue_set_napi(dev, index, rx ? NETDEV_QUEUE_TYPE_RX :
			     NETDEV_QUEUE_TYPE_TX, napi);
#endif
}

/*
 * XPS for CPUs from a context that already holds the CPU hotplug lock:
 * the map type became an enum in 5.14 (a bool "is_rxqs_map" before).
 */
static inline int vnet_set_xps_cpus(struct net_device *dev,
				    const unsigned long *mask, u16 index)
{
#ifdef VNET_HAVE_XPS_MAP_TYPE
	return __netif_set_xps_queue(dev, mask, index, XPS_CPUS);
#else
	return __netif_set_xps_queue(dev, mask, index, false);
#endif
}

/* hrtimer_setup() replaced hrtimer_init() + ->function in 6.13. */
static inline void vnet_hrtimer_setup(struct hrtimer *t,
				      enum hrtimer_restart (*fn)(struct hrtimer *),
				      clockid_t clock, enum hrtimer_mode mode)
{
#ifdef VNET_HAVE_HRTIMER_SETUP
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

/* netdev_queue_set_dql_min_limit() came in 5.11; the field is older. */
static inline void vnet_set_bql_floor(struct netdev_queue *txq,
				      unsigned int bytes)
{
#ifdef VNET_HAVE_DQL_MIN_LIMIT_SETTER
	netdev_queue_set_dql_min_limit(txq, bytes);
#elif defined(CONFIG_BQL)
	txq->dql.min_limit = bytes;
#endif
}

/* tcp_snd_cwnd() (5.19) reads the congestion window; it was a field. */
static inline u32 vnet_tcp_snd_cwnd(const struct tcp_sock *tp)
{
#ifdef VNET_HAVE_TCP_SND_CWND
	return tcp_snd_cwnd(tp);
#else
	return READ_ONCE(tp->snd_cwnd);
#endif
}

/* eth_hw_addr_set() (5.15) made dev->dev_addr read-only. */
#ifndef VNET_HAVE_ETH_HW_ADDR_SET
static inline void eth_hw_addr_set(struct net_device *dev, const u8 *addr)
{
	ether_addr_copy(dev->dev_addr, addr);
}
#endif

/*
 * ethtool callbacks gained kernel-side structures and an extack: the
 * coalesce pair in 5.15, the ring pair in 5.17.  VNET_*_ARGS is the
 * parameter list (the names are fixed: dev, ec or ring, extack);
 * VNET_*_EXTACK is the extack where there is one, NULL elsewhere.
 */
#ifdef VNET_HAVE_COALESCE_EXTACK
#define VNET_COALESCE_ARGS						\
	struct net_device *dev, struct ethtool_coalesce *ec,		\
	struct kernel_ethtool_coalesce *kec, struct netlink_ext_ack *extack
#define VNET_COALESCE_EXTACK	extack
#else
#define VNET_COALESCE_ARGS						\
	struct net_device *dev, struct ethtool_coalesce *ec
#define VNET_COALESCE_EXTACK	NULL
#endif

#ifdef VNET_HAVE_RINGPARAM_EXTACK
#define VNET_RINGPARAM_ARGS					\
	struct net_device *dev, struct ethtool_ringparam *ring,		\
	struct kernel_ethtool_ringparam *kring,				\
	struct netlink_ext_ack *extack
#define VNET_RINGPARAM_EXTACK	extack
#else
#define VNET_RINGPARAM_ARGS					\
	struct net_device *dev, struct ethtool_ringparam *ring
#define VNET_RINGPARAM_EXTACK	NULL
#endif

/*
 * Report a message held in a variable through an extack (NL_SET_ERR_MSG
 * only takes literals; the formatted variant is 6.3+).  @msg must be a
 * static string.
 */
static inline void vnet_extack_msg(struct netlink_ext_ack *extack,
				   const char *msg)
{
	if (extack)
		extack->_msg = msg;
}

/* ethtool's TX aggregation fields (6.12 here): aliases of ours. */
#ifdef ETHTOOL_COALESCE_TX_AGGR_MAX_FRAMES
#define VNET_HAVE_TX_AGGR	1
#else
#define VNET_HAVE_TX_AGGR	0
#endif

/*
 * Statistics names in ethtool -S follow the in-tree driver of the same
 * kernel: "rx_queue_N_x" until 6.9, "rxN_x" from 6.10, the release that
 * also brought device statistics to the virtio-net uapi header (which is
 * what the probe detects).
 */
#ifdef VNET_HAVE_VIRTIO_NET_DEVICE_STATS
#define VNET_STATS_NEW_NAMES	1
#else
#define VNET_STATS_NEW_NAMES	0
#endif

/*
 * RSS through ethtool.  6.8 moved the indirection table, key and hash
 * function of get_rxfh/set_rxfh into struct ethtool_rxfh_param (and gave
 * set_rxfh an extack); VNET_*_RXFH_ARGS are the parameter lists, the
 * VNET_RXFH_* names what the function body reads.  Per-flow hash fields
 * moved from get_rxnfc/set_rxnfc to their own callbacks in 6.16, the RX
 * ring count to get_rx_ring_count in 6.18: VNET_OPS_* add those members
 * to an ethtool_ops initializer where the kernel has them.
 */
#ifdef VNET_HAVE_RXFH_PARAM
#define VNET_GET_RXFH_ARGS						\
	struct net_device *dev, struct ethtool_rxfh_param *rxfh
#define VNET_SET_RXFH_ARGS						\
	struct net_device *dev, struct ethtool_rxfh_param *rxfh,	\
	struct netlink_ext_ack *extack
#define VNET_RXFH_INDIR		(rxfh->indir)
#define VNET_RXFH_KEY		(rxfh->key)
#define VNET_RXFH_HFUNC_OUT	(&rxfh->hfunc)
#define VNET_RXFH_HFUNC_IN	(rxfh->hfunc)
#define VNET_RXFH_CONTEXT	(rxfh->rss_context)
#define VNET_RXFH_EXTACK	extack
#else
#define VNET_GET_RXFH_ARGS						\
	struct net_device *dev, u32 *rxfh_indir, u8 *rxfh_key,		\
	u8 *rxfh_hfunc
#define VNET_SET_RXFH_ARGS						\
	struct net_device *dev, const u32 *rxfh_indir,			\
	const u8 *rxfh_key, const u8 rxfh_hfunc
#define VNET_RXFH_INDIR		rxfh_indir
#define VNET_RXFH_KEY		rxfh_key
#define VNET_RXFH_HFUNC_OUT	rxfh_hfunc
#define VNET_RXFH_HFUNC_IN	rxfh_hfunc
#define VNET_RXFH_CONTEXT	0
#define VNET_RXFH_EXTACK	NULL
#endif

#ifdef VNET_HAVE_RXFH_FIELDS
#define VNET_OPS_RXFH_FIELDS(get, set)	.get_rxfh_fields = get,		\
					.set_rxfh_fields = set,
#else
#define VNET_OPS_RXFH_FIELDS(get, set)
#endif

#ifdef VNET_HAVE_RX_RING_COUNT
#define VNET_OPS_RX_RING_COUNT(fn)	.get_rx_ring_count = fn,
#else
#define VNET_OPS_RX_RING_COUNT(fn)
#endif

/*
 * UDP segmentation offload: the kernel's virtio-net header helpers learnt
 * VIRTIO_NET_HDR_GSO_UDP_L4 in 6.2.  Elsewhere the USO features are not
 * accepted from the device.
 */
#ifdef VNET_HAVE_VIRTIO_NET_USO
#define VNET_CAN_USO	1
#else
#define VNET_CAN_USO	0
#endif

/*
 * UDP tunnel GSO (VXLAN, Geneve): the kernel's virtio-net header helpers
 * learnt the tunnel fields in 6.17, with the virtio core's feature bits
 * beyond 64 (linux/virtio_features.h).  Elsewhere features 65-68 are not
 * in the feature table, so they are never negotiated, and headers are
 * converted by the plain helpers.
 */
#ifdef VNET_HAVE_VIRTIO_NET_UDP_TUNNEL
#define VNET_CAN_UDP_TUNNEL	1

/* Features 64-127, bit N at N - 64. */
static inline u64 vnet_features_hi(const struct virtio_device *vdev)
{
	BUILD_BUG_ON(VIRTIO_FEATURES_U64S < 2);
	return vdev->features_array[1];
}

static inline int vnet_hdr_to_skb(struct sk_buff *skb, const void *hdr,
				  bool tnl, bool tnl_csum, bool little_endian)
{
	return virtio_net_hdr_tnl_to_skb(skb, hdr, tnl, tnl_csum,
					 little_endian);
}

static inline int vnet_hdr_from_skb(const struct sk_buff *skb, void *hdr,
				    bool tnl, bool little_endian)
{
	return virtio_net_hdr_tnl_from_skb(skb, hdr, tnl, little_endian, 0,
					   false, false);
}
#else
#define VNET_CAN_UDP_TUNNEL	0

static inline u64 vnet_features_hi(const struct virtio_device *vdev)
{
	return 0;
}

static inline int vnet_hdr_to_skb(struct sk_buff *skb, const void *hdr,
				  bool tnl, bool tnl_csum, bool little_endian)
{
	return virtio_net_hdr_to_skb(skb, hdr, little_endian);
}

static inline int vnet_hdr_from_skb(const struct sk_buff *skb, void *hdr,
				    bool tnl, bool little_endian)
{
	return virtio_net_hdr_from_skb(skb, hdr, little_endian, false, 0);
}
#endif

/* XDP buffers: xdp_init_buff()/xdp_prepare_buff() appeared in 5.12. */
static inline void vnet_xdp_buff_init(struct xdp_buff *xdp, void *hard_start,
				      unsigned int headroom, unsigned int len,
				      unsigned int frame_sz,
				      struct xdp_rxq_info *rxq)
{
#ifdef VNET_HAVE_XDP_INIT_BUFF
	xdp_init_buff(xdp, frame_sz, rxq);
	xdp_prepare_buff(xdp, hard_start, headroom, len, true);
#else
	xdp->data_hard_start = hard_start;
	xdp->data = hard_start + headroom;
	xdp->data_end = xdp->data + len;
	xdp->data_meta = xdp->data;
	xdp->frame_sz = frame_sz;
	xdp->rxq = rxq;
#endif
}

/*
 * Frames ndo_xdp_xmit() did not send: up to 5.12 the driver frees them,
 * from 5.13 the caller does.  No declaration changed with it; the 5.12
 * xdp_init_buff() tells the kernels we support apart.
 */
#ifdef VNET_HAVE_XDP_INIT_BUFF
#define VNET_XDP_XMIT_FREES_UNSENT	0
#else
#define VNET_XDP_XMIT_FREES_UNSENT	1
#endif

/* xdp_rxq_info_reg() takes the NAPI id since 5.11. */
static inline int vnet_xdp_rxq_reg(struct xdp_rxq_info *rxq,
				   struct net_device *dev, u32 index,
				   unsigned int napi_id)
{
#ifdef VNET_HAVE_XDP_RXQ_NAPI_ID
	return xdp_rxq_info_reg(rxq, dev, index, napi_id);
#else
	return xdp_rxq_info_reg(rxq, dev, index);
#endif
}

/* bpf_warn_invalid_xdp_action() names the device and program since 5.17. */
static inline void vnet_xdp_warn_action(struct net_device *dev,
					struct bpf_prog *prog, u32 act)
{
#ifdef VNET_HAVE_XDP_WARN_DEV
	bpf_warn_invalid_xdp_action(dev, prog, act);
#else
	bpf_warn_invalid_xdp_action(act);
#endif
}

/*
 * What the netdev netlink family reports of XDP (6.3); before register.
 * @rx_sg: receive takes multi-buffer programs (mergeable buffers).
 */
static inline void vnet_xdp_features(struct net_device *dev, bool rx_sg)
{
#ifdef VNET_HAVE_XDP_FEATURES
	dev->xdp_features = NETDEV_XDP_ACT_BASIC | NETDEV_XDP_ACT_REDIRECT |
			    NETDEV_XDP_ACT_NDO_XMIT | NETDEV_XDP_ACT_NDO_XMIT_SG;
	if (rx_sg)
		dev->xdp_features |= NETDEV_XDP_ACT_RX_SG;
#endif
}

/*
 * XDP RX metadata: programs read the device's hash report with
 * bpf_xdp_metadata_rx_hash() (6.3; with its hash type from 6.5, the form
 * used here).
 */
#ifdef VNET_HAVE_XDP_RX_HASH_TYPE
#define VNET_CAN_XDP_RX_HASH	1
#else
#define VNET_CAN_XDP_RX_HASH	0
#endif

/* AF_XDP sockets may bind this device in zero-copy mode (see xsk.c). */
static inline void vnet_xdp_features_zc(struct net_device *dev)
{
#ifdef VNET_HAVE_XDP_FEATURES
	dev->xdp_features |= NETDEV_XDP_ACT_XSK_ZEROCOPY;
#endif
}

/*
 * Multi-buffer XDP (5.18): a program loaded for fragments (section
 * "xdp.frags") takes a frame spread over several buffers, the first one
 * linear, the others listed in the skb_shared_info at its end.  Before
 * 5.18 no program asks for it, and the helpers below that only such a
 * program reaches are empty.
 */
#ifdef VNET_HAVE_XDP_FRAME_FRAGS
#define VNET_CAN_XDP_FRAGS	1

static inline bool vnet_xdp_prog_frags(const struct bpf_prog *prog)
{
	return prog->aux->xdp_has_frags;
}

/* The fragments of a buffer or a frame; NULL when it has none. */
static inline struct skb_shared_info *vnet_xdp_buff_sinfo(struct xdp_buff *xdp)
{
	return xdp_buff_has_frags(xdp) ? xdp_get_shared_info_from_buff(xdp) :
					 NULL;
}

static inline struct skb_shared_info *
vnet_xdp_frame_sinfo(struct xdp_frame *f)
{
	return xdp_frame_has_frags(f) ? xdp_get_shared_info_from_frame(f) :
					NULL;
}

/* Bytes in the fragments of @sinfo (one that has them). */
static inline unsigned int vnet_xdp_frags_len(const struct skb_shared_info *sinfo)
{
	return sinfo->xdp_frags_size;
}

/* Append @len bytes at @page + @off; false when the slots are full. */
static inline bool vnet_xdp_buff_add_frag(struct xdp_buff *xdp,
					  struct page *page, unsigned int off,
					  unsigned int len)
{
	struct skb_shared_info *sinfo = xdp_get_shared_info_from_buff(xdp);
	skb_frag_t *frag;

	if (!xdp_buff_has_frags(xdp)) {
		xdp_buff_set_frags_flag(xdp);
		sinfo->nr_frags = 0;
		sinfo->xdp_frags_size = 0;
	}
	if (sinfo->nr_frags == MAX_SKB_FRAGS)
		return false;
	frag = &sinfo->frags[sinfo->nr_frags++];
#ifdef VNET_HAVE_SKB_FRAG_FILL_PAGE_DESC
	skb_frag_fill_page_desc(frag, page, off, len);
#else
	__skb_frag_set_page(frag, page);
	skb_frag_off_set(frag, off);
	skb_frag_size_set(frag, len);
#endif
	sinfo->xdp_frags_size += len;
	if (page_is_pfmemalloc(page))
		xdp_buff_set_frag_pfmemalloc(xdp);
	return true;
}

/*
 * An skb built around the buffer's first part takes over @nr fragments
 * of @size bytes (read before build_skb() cleared the shared info).
 */
static inline void vnet_xdp_skb_frags(struct sk_buff *skb,
				      struct xdp_buff *xdp, u8 nr,
				      unsigned int size, unsigned int truesize)
{
#ifdef VNET_HAVE_XDP_UPDATE_SKB_FRAGS_INFO
	xdp_update_skb_frags_info(skb, nr, size, truesize,
				  xdp_buff_get_skb_flags(xdp));
#else
	xdp_update_skb_shared_info(skb, nr, size, truesize,
				   xdp_buff_is_frag_pfmemalloc(xdp));
#endif
}
#else
#define VNET_CAN_XDP_FRAGS	0

static inline bool vnet_xdp_prog_frags(const struct bpf_prog *prog)
{
	return false;
}

static inline struct skb_shared_info *vnet_xdp_buff_sinfo(struct xdp_buff *xdp)
{
	return NULL;
}

static inline struct skb_shared_info *
vnet_xdp_frame_sinfo(struct xdp_frame *f)
{
	return NULL;
}

static inline unsigned int vnet_xdp_frags_len(const struct skb_shared_info *sinfo)
{
	return 0;
}

static inline bool vnet_xdp_buff_add_frag(struct xdp_buff *xdp,
					  struct page *page, unsigned int off,
					  unsigned int len)
{
	return false;
}

static inline void vnet_xdp_skb_frags(struct sk_buff *skb,
				      struct xdp_buff *xdp, u8 nr,
				      unsigned int size, unsigned int truesize)
{
}
#endif

/*
 * AF_XDP zero-copy (6.13 on): receive buffers from a socket's pool are
 * posted DMA-mapped by the pool (virtqueue_add_inbuf_premapped()), next
 * to ordinary buffers of the same ring; binding a pool swaps a queue's
 * buffers with a queue reset.  Transmit adds the socket's frames the
 * same way (virtqueue_add_outbuf_premapped()) behind one shared header
 * that the driver maps itself.  Earlier kernels (6.12 sets a whole ring
 * premapped, before 6.11 nothing) get copy mode only.
 */
#if defined(VNET_HAVE_VQ_ADD_INBUF_PREMAPPED) && \
	defined(VNET_HAVE_VIRTQUEUE_RESET_DONE) && defined(CONFIG_XDP_SOCKETS)
#define VNET_CAN_XSK	1
#else
#define VNET_CAN_XSK	0
#endif

#if VNET_CAN_XSK
#ifdef VNET_HAVE_VQ_MAP_SINGLE
#define vnet_vq_sync_range_for_cpu virtqueue_map_sync_single_range_for_cpu
#else
#define vnet_vq_sync_range_for_cpu virtqueue_dma_sync_single_range_for_cpu
#endif
/* The device wrote @len bytes at @addr of a buffer mapped by a pool. */
static inline void vnet_vq_sync_for_cpu(struct virtqueue *vq, dma_addr_t addr,
					unsigned int len)
{
	vnet_vq_sync_range_for_cpu(vq, addr, 0, len, DMA_BIDIRECTIONAL);
}
#endif

#if VNET_CAN_XSK && defined(VNET_HAVE_VQ_ADD_OUTBUF_PREMAPPED)
#define VNET_CAN_XSK_TX	1
#else
#define VNET_CAN_XSK_TX	0
#endif

/*
 * Receive page pools.  Small and mergeable buffers come from a page pool
 * per receive queue through page_pool_alloc_frag() (5.15 on; before
 * 6.7 only on a pool created with PP_FLAG_PAGE_FRAG); skbs built on them
 * are marked for recycling (skb_mark_for_recycle(), 5.14).  The pool
 * knows its netdev and NAPI from 6.8, which lists it over netlink
 * (page-pool-get) like the in-tree driver's: that is where pools are on
 * by default.  The API moved from <net/page_pool.h> to
 * <net/page_pool/helpers.h> in 6.6.
 */
#if defined(VNET_HAVE_PAGE_POOL_HELPERS_H) && IS_ENABLED(CONFIG_PAGE_POOL)
#include <net/page_pool/helpers.h>
#define VNET_CAN_PAGE_POOL	1
#elif defined(VNET_HAVE_PAGE_POOL_FRAG) && IS_ENABLED(CONFIG_PAGE_POOL)
#include <net/page_pool.h>
#define VNET_CAN_PAGE_POOL	1
#else
#define VNET_CAN_PAGE_POOL	0
#endif

#if VNET_CAN_PAGE_POOL && defined(VNET_HAVE_PAGE_POOL_NETDEV)
#define VNET_PAGE_POOL_DEFAULT	1
#else
#define VNET_PAGE_POOL_DEFAULT	0
#endif

#if VNET_CAN_PAGE_POOL
/* What pool creation needs beyond size and node, per kernel. */
static inline void vnet_page_pool_link(struct page_pool_params *pp,
				       struct net_device *dev,
				       struct napi_struct *napi)
{
#ifdef PP_FLAG_PAGE_FRAG
	pp->flags |= PP_FLAG_PAGE_FRAG;
#endif
#ifdef VNET_HAVE_PAGE_POOL_NETDEV
	pp->netdev = dev;
	pp->napi = napi;
#endif
}
#else
struct page_pool;
#endif

/* Drop one reference to @page, a page of @pp (NULL: a page of its own). */
static inline void vnet_pp_put_page(struct page_pool *pp, struct page *page,
				    bool napi)
{
#if VNET_CAN_PAGE_POOL
	if (pp) {
		page_pool_put_page(pp, page, -1, napi);
		return;
	}
#endif
	put_page(page);
}

/* Mark @skb when its head or fragments may be pages of @pp. */
static inline void vnet_skb_mark_recycle(struct page_pool *pp,
					 struct sk_buff *skb)
{
#if VNET_CAN_PAGE_POOL
	if (pp)
		skb_mark_for_recycle(skb);
#endif
}

/* Per-RX-queue sysfs attributes moved to <net/netdev_rx_queue.h> (6.6). */
#ifdef VNET_HAVE_NETDEV_RX_QUEUE_H
#include <net/netdev_rx_queue.h>
#endif

#endif /* VNET_COMPAT_H */
