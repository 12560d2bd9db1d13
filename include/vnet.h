/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-net-dkms: shared structures of the driver.
 *
 * A device (struct vnet) owns an array of queue pairs (struct vnet_qp).
 * Each pair holds one receive queue, one send queue, and the single
 * per-pair timer that every deferred notification feature shares.
 * Virtqueue numbering follows the virtio-net layout: receiveq N is
 * virtqueue 2N, transmitq N is 2N + 1, and the control queue comes last.
 */
#ifndef VNET_H
#define VNET_H

#include <linux/netdevice.h>
#include <linux/ethtool.h>
#include <linux/virtio.h>
#include <linux/virtio_net.h>
#include <linux/u64_stats_sync.h>
#include <linux/average.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <linux/scatterlist.h>
#include <linux/if_vlan.h>
#include <net/xdp.h>

#include "compat.h"
#include "timer.h"
#include "policy/rx.h"
#include "policy/kick.h"
#include "policy/clock.h"
#include "policy/reclaim.h"
#include "policy/threaded.h"
#include "policy/rx_moderation.h"
#include "policy/coalesce.h"
#include "policy/dev_coalesce.h"
#include "policy/dev_stats.h"
#include "policy/rss.h"
#include "policy/xdp.h"

#define VNET_DRV_NAME		"virtio_net"

/* Room before a small receive buffer's header (skb headroom). */
#define VNET_RX_PAD		(NET_IP_ALIGN + NET_SKB_PAD)
/* Room after an XDP buffer for the skb_shared_info of build_skb(). */
#define VNET_XDP_TAILROOM	SKB_DATA_ALIGN(sizeof(struct skb_shared_info))

/* Descriptors one skb may need when indirect descriptors are not used. */
#define VNET_TX_DESC_MAX	(MAX_SKB_FRAGS + 2)

/*
 * Moving average of received packet lengths, used to size mergeable
 * receive buffers: precision 0 bits, weight 1/64.
 */
DECLARE_EWMA(vnet_pkt_len, 0, 64)

/*
 * Counters.  Each group has exactly one writer context so that the
 * u64_stats sequence counter is never written concurrently:
 *  - vnet_rq_stats: the RX NAPI poll of that queue;
 *  - vnet_sq_stats: holders of the TX queue lock (xmit path, TX NAPI,
 *    the RX poll's opportunistic reclaim, the TX watchdog);
 *  - vnet_irq_stats: the virtqueue interrupt callback.
 */
struct vnet_rq_stats {
	struct u64_stats_sync syncp;
	u64_stats_t packets;
	u64_stats_t bytes;
	u64_stats_t drops;
	u64_stats_t xdp_packets;
	u64_stats_t xdp_tx;
	u64_stats_t xdp_redirects;
	u64_stats_t xdp_drops;
	u64_stats_t kicks;
	u64_stats_t napi_polls;
	u64_stats_t poll_ns;	/* in RX polls, up to the moderation decision */
	u64_stats_t rearms;
	u64_stats_t deferrals;
	u64_stats_t drop_bad_len;
	u64_stats_t drop_bad_hdr;
	u64_stats_t drop_nomem;
	u64_stats_t refill_nomem;
	/* polls that found every posted buffer used: none left for the device */
	u64_stats_t ring_empty;
	/* polls while a receiver with a fixed buffer was active: no deferral */
	u64_stats_t fixed_rcvbuf;
	/* AF_XDP zero-copy (xsk.c) */
	u64_stats_t xsk_packets;
	u64_stats_t xsk_bytes;
	u64_stats_t xsk_fill_empty;
};

struct vnet_sq_stats {
	struct u64_stats_sync syncp;
	u64_stats_t packets;
	u64_stats_t bytes;
	u64_stats_t xdp_tx;
	u64_stats_t xdp_tx_drops;
	u64_stats_t kicks;
	u64_stats_t napi_polls;
	u64_stats_t drops;
	u64_stats_t stops;
	u64_stats_t wakes;
	u64_stats_t kicks_held;
	u64_stats_t kicks_suppressed;
	u64_stats_t timer_flushes;
	u64_stats_t poll_flushes;
	u64_stats_t batch_kicks;
	u64_stats_t forced_kicks;
	u64_stats_t waiting_kicks;
	u64_stats_t window_kicks;
	u64_stats_t spared_senders;
	u64_stats_t reclaim_batches;
	u64_stats_t reclaim_deadlines;
	u64_stats_t released_at_send;
	u64_stats_t sndbuf_over_half;
	u64_stats_t irq_empty;
	/* AF_XDP zero-copy (xsk.c) */
	u64_stats_t xsk_packets;
	u64_stats_t xsk_bytes;
	u64_stats_t xsk_tx_drops;
};

struct vnet_irq_stats {
	struct u64_stats_sync syncp;
	u64_stats_t interrupts;
	u64_stats_t interrupted_task;	/* RX: the CPU was not idle */
};

struct vnet;
struct vnet_qp;
struct failover;

struct vnet_rq {
	struct virtqueue *vq;
	/* The ring's size, set with each new virtqueue (vnet_rx_setup()). */
	unsigned int ring;
	struct napi_struct napi;
	struct vnet_qp *qp;

	/*
	 * Where small and mergeable buffers come from: the queue's page pool
	 * (rx_page_pool, probe to remove; NULL without one), else the page
	 * fragment cache.
	 */
	struct page_pool *pp;
	struct page_frag frag;
	/* Spare pages for big-packet chains, linked through page->private. */
	struct page *spare_pages;
	struct ewma_vnet_pkt_len avg_len;
	/* Smallest mergeable buffer that still lets the ring hold a frame. */
	unsigned int mrg_min_len;
	/* Fewest posted buffers that hold the largest frame (see policy/rx.c). */
	unsigned int min_posted;

	/*
	 * The CPU running this queue's poll, -1 between polls: packets its
	 * poll sends on the pair are notified at the poll's end.
	 */
	int poll_cpu;

	/* RX moderation settings and state (NAPI context only). */
	struct vnet_rx_coal coal;
	struct vnet_rx_mod_cfg mod_cfg;
	struct vnet_rx_mod_state mod;
	struct vnet_rq_stats stats;
	struct vnet_irq_stats irq;

	/* XDP (xdp.c): registration, and what a poll left to finish. */
	struct xdp_rxq_info xdp_rxq;
	u8 xdp_pending;

	/*
	 * AF_XDP zero-copy (xsk.c): the pool bound to this pair, NULL
	 * without one (changed with the RX NAPI off), its receive info, and
	 * how often the socket woke the pair (any context).
	 */
	struct xsk_buff_pool *xsk_pool;
	struct xdp_rxq_info xsk_rxq;
	atomic64_t xsk_wakeups;

	struct scatterlist sg[MAX_SKB_FRAGS + 2];
	char name[16];
};

struct vnet_sq {
	struct virtqueue *vq;
	/* The ring's size, set with each new virtqueue (vnet_tx_setup()). */
	unsigned int ring;
	struct napi_struct napi;
	struct vnet_qp *qp;
	bool use_napi;
	/* Ring being resized: transmit and wake-ups must keep off. */
	bool paused;
	/* Written by the TX watchdog only. */
	atomic64_t timeouts;

	/*
	 * Coalescing.  The settings (coal, and the policy views derived
	 * from it) change under the TX queue lock, which every user holds.
	 */
	struct vnet_tx_coal coal;
	struct vnet_kick_cfg kick_cfg;
	struct vnet_kick_state kick;
	/* sk_pacing_shift for TCP senders; 10 (TCP's own) leaves them alone. */
	u8 pacing_shift;
	/* A TCP socket that received data this recently is in a conversation. */
	u32 kick_conv_jiffies;
	/* Notifications so far, for timing every few (vnet_tx_notify()). */
	u32 notify_seq;
	/*
	 * The socket of the held TCP segment with data that the batch
	 * watches (vnet_kick_watch()), with a reference, and that segment's
	 * sequence number: once the socket has at most a full segment
	 * before it unacknowledged, it waits on the batch (policy/kick.h).
	 * hold_eager: a segment of that socket in the batch had a sender
	 * that would rather the batch went (TCP_NODELAY, or paced by its
	 * task); only then does the pair's receive poll look (under the TX
	 * queue lock).
	 */
	struct sock *hold_sk;
	u32 hold_seq;
	bool hold_eager;
	struct vnet_reclaim_cfg reclaim_cfg;
	struct vnet_reclaim_state reclaim;
	/* Set by the interrupt, consumed by TX NAPI: was it worth it? */
	bool irq_seen;
	/*
	 * Set by the flush timer when it found the TX queue lock taken: the
	 * holder kicks the held packets before it lets go (see napi.c).
	 * flush_limit is when that timer was due (published before the
	 * flag), to measure its lateness.
	 */
	bool flush_wanted;
	u64 flush_limit;

	/*
	 * AF_XDP zero-copy transmit (xsk.c), under the TX queue lock: the
	 * pool, the socket's frames queued to the device, those reclaim
	 * found done, those the pool released that could not be queued
	 * (given back once every frame before them is done: the pool
	 * completes in release order), and the header they all share
	 * (mapped on xsk_hdr_dev).
	 */
	struct xsk_buff_pool *xsk_pool;
	unsigned int xsk_inflight;
	unsigned int xsk_done;
	unsigned int xsk_lost;
	void *xsk_hdr;
	dma_addr_t xsk_hdr_dma;
	struct device *xsk_hdr_dev;

	struct vnet_sq_stats stats;
	struct vnet_irq_stats irq;

	struct scatterlist sg[VNET_TX_DESC_MAX];
	char name[16];
};

struct vnet_qp {
	struct vnet *vi;
	unsigned int index;
	struct vnet_rq rq;
	struct vnet_sq sq;
	/*
	 * Two timers: the transmit users' (kick flush, reclaim deadline),
	 * armed by whichever CPU sends on the pair, and the receive
	 * deferral's, armed only by the pair's poll.  A shared one would
	 * fire on the CPU that armed it last, and a deferred poll scheduled
	 * there would run the pair's NAPI away from its interrupt CPU.
	 */
	struct vnet_qp_timer timer;
	struct vnet_qp_timer rx_timer;
};

#define VNET_LINK_UNKNOWN	0xffff

/*
 * A received virtio-net header, of any negotiated length: the hash report
 * (VIRTIO_NET_F_HASH_REPORT) follows the basic header, laid out as
 * struct virtio_net_hdr_v1_hash (whose field names differ by kernel), and
 * with UDP tunnel GSO the tunnel's header offsets follow that
 * (struct virtio_net_hdr_v1_hash_tunnel, 6.17).
 */
union vnet_rx_hdr {
	struct virtio_net_hdr_mrg_rxbuf mrg;
	struct {
		struct virtio_net_hdr_mrg_rxbuf mrg;
		__le32 value;
		__le16 report;
		__le16 padding;
	} hash;
	struct {
		struct virtio_net_hdr_mrg_rxbuf mrg;
		__le32 hash_value;
		__le16 hash_report;
		__le16 padding;
		__le16 outer_th_offset;
		__le16 inner_nh_offset;
	} tnl;
};

/* Length of the header with UDP tunnel GSO. */
#define VNET_HDR_TNL_LEN	sizeof_field(union vnet_rx_hdr, tnl)

/* RX buffer layout chosen at probe from the negotiated features. */
enum vnet_rx_mode {
	VNET_RX_SMALL,		/* one buffer per frame, at most 1518 bytes */
	VNET_RX_BIG,		/* a chain of pages per frame */
	VNET_RX_MERGEABLE,	/* frames span as many buffers as they need */
};

/* Control virtqueue buffers; they must not live on the stack (DMA). */
struct vnet_ctrl {
	struct virtio_net_ctrl_hdr hdr;
	virtio_net_ctrl_ack status;
	union {
		u8 promisc;
		u8 allmulti;
		u8 mac[ETH_ALEN];
		__virtio16 vid;
		__virtio16 pairs;
		__virtio64 offloads;
		struct vnet_coal_wire coal;
		struct vnet_coal_vq_wire coal_vq;
	} u;
};

struct vnet {
	struct virtio_device *vdev;
	struct net_device *dev;
	struct virtqueue *cvq;
	struct vnet_qp *qp;

	u16 max_pairs;
	u16 curr_pairs;

	enum vnet_rx_mode rx_mode;
	/* Length of the virtio-net header on both directions. */
	unsigned int hdr_len;
	/* Pages per buffer in big-packet mode. */
	unsigned int big_pages;
	/* The header may share a descriptor with packet data. */
	bool any_header_sg;
	bool has_cvq;
	bool little_endian;
	/* The device coalesces its interrupts (NOTF_COAL or VQ_NOTF_COAL). */
	bool dev_coal;
	/*
	 * Until when (ns) the guest counts as answering: a send queue sent a
	 * packet that is neither bulk nor a pure acknowledgment within the
	 * conversation window (see policy/kick.h), and the receive polls
	 * defer nothing (policy/rx_moderation.h).  Written
	 * lazily from any CPU (vnet_tx_note_answer()), read racily.
	 */
	u64 answer_until;
	/*
	 * Until when (ns) a TCP receiver with a fixed receive buffer counts
	 * as active: a send queue sent a pure acknowledgment of such a
	 * socket within the conversation window, and the receive polls
	 * defer nothing (vnet_tx_note_fixed_rcv()).  Written and read as
	 * answer_until.
	 */
	u64 fixed_rcv_until;
	/* The device may coalesce received frames (any GUEST_TSO/UFO). */
	bool guest_gso;
	/* What receive headers may announce (VNET_RX_ALLOW_*). */
	u32 rx_hdr_allowed;
	/*
	 * UDP tunnel GSO negotiated: receive (rx_tnl, and with the outer
	 * checksum rx_tnl_csum), transmit (tx_tnl).  The header is then
	 * VNET_HDR_TNL_LEN bytes long both ways.
	 */
	bool rx_tnl;
	bool rx_tnl_csum;
	bool tx_tnl;

	/* RSS and hash report state (rss.c), NULL without either. */
	struct vnet_rss *rss;
	/* Receive headers carry a hash report. */
	bool hash_report;
	/* The net_failover master we are the standby of (failover.c). */
	struct failover *failover;

	/*
	 * XDP (xdp.c), changed under RTNL: the program, the pairs enabled
	 * for XDP transmission only (the last xdp_pairs of curr_pairs), the
	 * headroom receive buffers get, the guest offloads to restore.
	 */
	struct bpf_prog __rcu *xdp_prog;
	u16 xdp_pairs;
	unsigned int xdp_headroom;
	u64 xdp_saved_offloads;

	/* Guest offloads negotiated, and the subset currently enabled. */
	u64 offloads_capable;
	u64 offloads;

	/* NAPI and timers of every pair are on (open, restore); RTNL. */
	bool pairs_enabled;

	/*
	 * Link state from config space (VIRTIO_NET_S_LINK_UP or 0, or
	 * VNET_LINK_UNKNOWN before the first reading), and what ethtool
	 * reports.
	 */
	u16 status;
	u32 speed;
	u8 duplex;

	/*
	 * Device statistics (dev_stats.c): the groups the device keeps (0
	 * without VIRTIO_NET_F_DEVICE_STATS), commands that failed, reply
	 * records skipped as malformed, and whether that was logged.
	 */
	u64 ds_caps;
	atomic64_t ds_errors;
	atomic64_t ds_bad_records;
	unsigned long ds_warned;

	/* Control queue: one command at a time. */
	struct mutex ctrl_lock;
	struct vnet_ctrl *ctrl;

	/*
	 * Deferred work.  work_lock guards the *_enabled flags, so that
	 * nothing is scheduled once teardown has begun, and refill_missed
	 * (refill was asked for while disabled).
	 */
	spinlock_t work_lock;
	bool refill_enabled;
	bool refill_missed;
	bool rx_mode_enabled;
	struct delayed_work refill;
	struct work_struct rx_mode_work;
	struct work_struct config_work;

	/* Affinity plan (affinity.c), guarded by its lock. */
	struct list_head aff_node;
	bool aff_active;
	u16 aff_pairs;			/* pairs the plan in force covers */
	u16 *aff_cpu;			/* [max_pairs] IRQ CPU, U16_MAX: none */
	struct cpumask **aff_xps;	/* [max_pairs] XPS CPUs */

	/*
	 * Threaded NAPI under receive livelock (threaded.c, auto_threaded):
	 * the device's window began at start with the counters at_start;
	 * applied (the work's own) says we turned threaded mode on.
	 */
	struct {
		spinlock_t lock;	/* all but applied; no switch once !enabled */
		bool enabled;
		bool applied;
		u64 start;
		struct vnet_thr_window at_start;
		struct vnet_thr_cfg cfg;
		struct vnet_thr_state st;
		struct work_struct work;
	} thr;

	/* VLANs added, replayed to the device after a reset. */
	unsigned long vlans[BITS_TO_LONGS(VLAN_N_VID)];

	/* Load-time settings, copied from the module options at probe. */
	int napi_weight;
	struct vnet_tx_coal tx_coal;
	struct vnet_rx_coal rx_coal;
};

/* Module options (main.c), validated when they are set. */
struct vnet_options {
	int napi_weight;
	bool csum;
	bool gso;
	bool napi_tx;
	int max_queue_pairs;
	/* TX coalescing defaults (see policy/coalesce.h); ints for option parsing. */
	int tx_frames;
	int tx_usecs;
	bool adaptive_tx;
	int tx_frames_irq;
	int tx_usecs_irq;
	/* RX moderation defaults. */
	int rx_usecs;
	int rx_frames;
	bool adaptive_rx;
	int rx_usecs_high;
	/* Receive buffers from a page pool per queue (compat.h). */
	bool rx_page_pool;
	/* Threaded NAPI while the receive side livelocks (threaded.c). */
	bool auto_threaded;
};

extern struct vnet_options vnet_opts;

static inline struct vnet_qp *vnet_vq_to_qp(struct virtqueue *vq)
{
	struct vnet *vi = vq->vdev->priv;

	return &vi->qp[vq->index / 2];
}

static inline bool vnet_has(const struct vnet *vi, unsigned int fbit)
{
	return virtio_has_feature(vi->vdev, fbit);
}

static inline unsigned int vnet_qp_index(const struct vnet_qp *qp)
{
	return qp->index;
}

/* device.c */
extern struct virtio_driver vnet_driver;

/* queues.c: virtqueues and per-pair state */
int vnet_qps_alloc(struct vnet *vi);
void vnet_qps_free(struct vnet *vi);
int vnet_vqs_init(struct vnet *vi);
void vnet_vqs_teardown(struct vnet *vi);
void vnet_qp_enable(struct vnet *vi, unsigned int i);
void vnet_qp_disable(struct vnet *vi, unsigned int i);
void vnet_tx_pause(struct vnet *vi, unsigned int i);
void vnet_tx_resume(struct vnet *vi, unsigned int i);
void vnet_napi_schedule(struct napi_struct *napi, struct virtqueue *vq);
void vnet_napi_enable(struct napi_struct *napi, struct virtqueue *vq);
void vnet_refill_enable(struct vnet *vi, bool now);
void vnet_refill_disable(struct vnet *vi);
void vnet_refill_work(struct work_struct *work);
void vnet_pairs_start(struct vnet *vi);
void vnet_pairs_stop(struct vnet *vi);
void vnet_tx_drain_all(struct vnet *vi);
int vnet_set_pairs(struct vnet *vi, u16 pairs);

/* Count one event in a receive queue's statistics (from its NAPI). */
static inline void vnet_rq_stat_inc(struct vnet_rq *rq, u64_stats_t *ctr)
{
	u64_stats_update_begin(&rq->stats.syncp);
	u64_stats_inc(ctr);
	u64_stats_update_end(&rq->stats.syncp);
}

/* rx.c */
bool vnet_rx_fill(struct vnet_rq *rq, gfp_t gfp);
void vnet_rx_receive(struct vnet_rq *rq, struct vnet_rx_poll *p);
void vnet_rx_free_buf(struct vnet_rq *rq, void *buf);
void vnet_rx_free_pages(struct vnet_rq *rq);
void vnet_rx_setup(struct vnet *vi, struct vnet_rq *rq);
void vnet_rx_schedule_refill(struct vnet *vi);
void vnet_rx_set_coal(struct vnet_rq *rq, const struct vnet_rx_coal *c);
unsigned int vnet_rx_mrg_len(struct vnet_rq *rq);
void vnet_rx_bad(struct vnet_rq *rq, u64_stats_t *ctr, const char *why,
		 unsigned int val);
void vnet_rx_drain(struct vnet_rq *rq, unsigned int n);
void vnet_rx_put_page(struct vnet_rq *rq, struct page *page, bool napi);
void *vnet_rx_alloc_page(struct vnet_rq *rq);
int vnet_rx_pools_create(struct vnet *vi);
void vnet_rx_pools_destroy(struct vnet *vi);
bool vnet_rx_append(struct page_pool *pp, struct sk_buff *head,
		    struct sk_buff **curr,
		    struct page *page, unsigned int off,
		    unsigned int len, unsigned int truesize);
void vnet_rx_deliver(struct vnet_rq *rq, struct sk_buff *skb,
		     union vnet_rx_hdr *hdr, u64 *bytes);

/* tx.c */
netdev_tx_t vnet_start_xmit(struct sk_buff *skb, struct net_device *dev);
unsigned int vnet_tx_reclaim(struct vnet_sq *sq, int budget, u64 now);
void vnet_tx_free_buf(struct vnet_sq *sq, void *buf);
void vnet_tx_flush(struct vnet_sq *sq);
void vnet_tx_setup(struct vnet_sq *sq);
void vnet_tx_set_coal(struct vnet_sq *sq, const struct vnet_tx_coal *c);
void vnet_tx_flush_timer(struct vnet_sq *sq, u64 due);
void vnet_tx_flush_overdue(struct vnet_sq *sq, u64 now);
void vnet_tx_poll_flush(struct vnet_sq *sq);
void vnet_tx_reclaim_timer(struct vnet_sq *sq);
void vnet_tx_rearm(struct vnet_sq *sq, enum vnet_reclaim_next next);
void vnet_tx_recover(struct vnet_sq *sq);
void vnet_tx_resumed(struct vnet_sq *sq, struct netdev_queue *txq);
void vnet_tx_xdp_reclaim(struct vnet_sq *sq, unsigned int n, u64 now);
void vnet_tx_xdp_sent(struct vnet_sq *sq, u64 now);
void vnet_tx_wake_if_room(struct vnet_sq *sq, struct netdev_queue *txq);
void vnet_tx_reclaim_deadline(struct vnet_sq *sq);
void vnet_tx_timer_stopped(struct vnet_sq *sq);
void vnet_tx_reset_bql(struct vnet_sq *sq);

/* Descriptors the device holds (sent, not yet reclaimed). */
static inline unsigned int vnet_sq_in_use(const struct vnet_sq *sq)
{
	return sq->ring - sq->vq->num_free;
}

/*
 * The flush timer found the lock taken by us: do its work before the
 * lock goes.  Every holder of the TX queue lock calls this last thing:
 * the driver's own holders through vnet_txq_unlock() and
 * vnet_txq_unlock_bh(), the stack's transmit (vnet_start_xmit()) on every
 * return.  A holder that did not would leave a held batch to the timer's
 * retry, a quarter of tx-usecs later.
 */
static inline void vnet_tx_flush_wanted(struct vnet_sq *sq)
{
	/* The flag, then the due time it was published with. */
	if (unlikely(smp_load_acquire(&sq->flush_wanted)))
		vnet_tx_flush_timer(sq, READ_ONCE(sq->flush_limit));
}

/* Let go of @sq's TX queue lock, taken with __netif_tx_lock() or trylock. */
static inline void vnet_txq_unlock(struct vnet_sq *sq, struct netdev_queue *txq)
{
	vnet_tx_flush_wanted(sq);
	__netif_tx_unlock(txq);
}

/* Let go of @sq's TX queue lock, taken with __netif_tx_lock_bh(). */
static inline void vnet_txq_unlock_bh(struct vnet_sq *sq,
				      struct netdev_queue *txq)
{
	vnet_tx_flush_wanted(sq);
	__netif_tx_unlock_bh(txq);
}

/* napi.c */
void vnet_rx_done(struct virtqueue *vq);
void vnet_tx_done(struct virtqueue *vq);
int vnet_poll_rx(struct napi_struct *napi, int budget);
int vnet_poll_tx(struct napi_struct *napi, int budget);
void vnet_qp_timer_fired(struct vnet_qp_timer *t, unsigned long expired);
void vnet_qp_rx_timer_fired(struct vnet_qp_timer *t, unsigned long expired);

/* threaded.c */
void vnet_thr_init(struct vnet *vi);
void vnet_thr_start(struct vnet *vi);
void vnet_thr_resume(struct vnet *vi);
void vnet_thr_stop(struct vnet *vi);
void vnet_thr_window_end(struct vnet *vi, u64 now);
/* trials, switches, livelock windows: the device's auto_threaded counters */
#define VNET_THR_COUNTERS	3
void vnet_thr_counters(struct vnet *vi, u64 *data);

/* A receive poll ended at @now: close the device's window if it is due. */
static inline void vnet_thr_poll(struct vnet *vi, u64 now)
{
	if (READ_ONCE(vi->thr.enabled) &&
	    vnet_ns_since(now, READ_ONCE(vi->thr.start)) >= vi->thr.cfg.window_ns)
		vnet_thr_window_end(vi, now);
}

/* ctrl.c */
int vnet_ctrl_set_pairs(struct vnet *vi, u16 pairs);
int vnet_ctrl_set_rx_flag(struct vnet *vi, u8 cmd, bool on);
int vnet_ctrl_set_mac(struct vnet *vi, const u8 *mac);
int vnet_ctrl_set_mac_table(struct vnet *vi, struct net_device *dev);
int vnet_ctrl_vlan(struct vnet *vi, u16 vid, bool add);
int vnet_ctrl_set_offloads(struct vnet *vi, u64 offloads);
int vnet_ctrl_announce_ack(struct vnet *vi);
int vnet_ctrl_dev_coal(struct vnet *vi, unsigned int first, unsigned int last);
int vnet_ctrl_cmd(struct vnet *vi, u8 class, u8 cmd, void *buf,
		  unsigned int len);
int vnet_ctrl_cmd_reply(struct vnet *vi, u8 class, u8 cmd, void *out,
			unsigned int out_len, void *in, unsigned int in_len,
			unsigned int *in_got);

/* netdev.c */
extern const struct net_device_ops vnet_netdev_ops;
void vnet_rx_mode_work(struct work_struct *work);
void vnet_rx_mode_enable(struct vnet *vi, bool on);
void vnet_replay_filters(struct vnet *vi);

/* affinity.c */
int vnet_affinity_init(void);
void vnet_affinity_exit(void);
int vnet_affinity_alloc(struct vnet *vi);
void vnet_affinity_free(struct vnet *vi);
void vnet_affinity_start(struct vnet *vi);
void vnet_affinity_stop(struct vnet *vi, bool remove);
void vnet_affinity_update(void);
ssize_t vnet_affinity_show(struct vnet *vi, char *buf);

/* sysfs.c */
void vnet_sysfs_register(struct net_device *dev);

/* ethtool.c */
extern const struct ethtool_ops vnet_ethtool_ops;

/* xdp.c; rq->xdp_pending: what the end of a receive poll must finish */
#define VNET_XDP_PEND_REDIRECT	BIT(0)
#define VNET_XDP_PEND_TX	BIT(1)
/* What the caller of vnet_xdp_act() still has to do with the frame. */
enum vnet_xdp_verdict {
	VNET_XDP_PASS,	/* build an skb from it */
	VNET_XDP_DROP,	/* free it (counted) */
	VNET_XDP_DONE,	/* nothing: sent or redirected */
};

void vnet_xdp_probe(struct vnet *vi);
bool vnet_xdp_hdr_offloaded(struct vnet_rq *rq, const union vnet_rx_hdr *hdr);
enum vnet_xdp_verdict vnet_xdp_act(struct vnet_rq *rq, struct bpf_prog *prog,
				   struct xdp_buff *xdp, u32 act);
int vnet_xdp_send(struct vnet *vi, struct xdp_frame **frames, int n,
		  bool kick);
bool vnet_xdp_rx(struct vnet_rq *rq, void *buf, void *ctx, unsigned int len,
		 u64 *bytes);
void vnet_xdp_rx_end(struct vnet_rq *rq);
bool vnet_xdp_tx_done(struct vnet_sq *sq, void *ptr, u64 *bytes);
bool vnet_xdp_attached(const struct vnet *vi);
const char *vnet_xdp_check_new_mtu(struct vnet *vi, unsigned int mtu);
int vnet_bpf(struct net_device *dev, struct netdev_bpf *bpf);
int vnet_xdp_xmit(struct net_device *dev, int n, struct xdp_frame **frames,
		  u32 flags);

/* xsk.c */
struct xsk_buff_pool;
bool vnet_xsk_fill(struct vnet_rq *rq, struct xsk_buff_pool *pool, gfp_t gfp);
void vnet_xsk_rx_one(struct vnet_rq *rq, struct xsk_buff_pool *pool,
		     struct xdp_buff *xdp, unsigned int len, u64 *bytes);
unsigned int vnet_xsk_xmit(struct vnet_sq *sq, unsigned int budget);
void vnet_xsk_tx_completed(struct vnet_sq *sq);
int vnet_xsk_wakeup(struct net_device *dev, u32 qid, u32 flags);
int vnet_xsk_pool_setup(struct vnet *vi, struct xsk_buff_pool *pool, u16 qid);

/* failover.c */
int vnet_failover_probe(struct vnet *vi);
void vnet_failover_remove(struct vnet *vi);
int vnet_get_phys_port_name(struct net_device *dev, char *buf, size_t len);

/* rss.c */
int vnet_rss_probe(struct vnet *vi);
void vnet_rss_free(struct vnet *vi);
bool vnet_rss_steers(const struct vnet *vi);
int vnet_rss_apply(struct vnet *vi);
void vnet_rss_settle(struct vnet *vi);
void vnet_rss_refilled(struct vnet *vi, struct vnet_rq *rq);
void vnet_rss_stop(struct vnet *vi);
int vnet_rss_set_pairs(struct vnet *vi, u16 pairs);
int vnet_rss_set_features(struct vnet *vi, netdev_features_t features);
u32 vnet_get_rxfh_key_size(struct net_device *dev);
u32 vnet_get_rxfh_indir_size(struct net_device *dev);
/* Their parameters differ between kernels: typed after the ops members. */
extern typeof(*((const struct ethtool_ops *)NULL)->get_rxfh) vnet_get_rxfh;
extern typeof(*((const struct ethtool_ops *)NULL)->set_rxfh) vnet_set_rxfh;
u32 vnet_get_rx_ring_count(struct net_device *dev);
int vnet_get_rxnfc(struct net_device *dev, struct ethtool_rxnfc *info,
		   u32 *rule_locs);
int vnet_set_rxnfc(struct net_device *dev, struct ethtool_rxnfc *info);
#ifdef VNET_HAVE_RXFH_FIELDS
int vnet_get_rxfh_fields(struct net_device *dev,
			 struct ethtool_rxfh_fields *f);
int vnet_set_rxfh_fields(struct net_device *dev,
			 const struct ethtool_rxfh_fields *f,
			 struct netlink_ext_ack *extack);
#endif

/* The RSS members of vnet_ethtool_ops. */
#define VNET_RSS_ETHTOOL_OPS						\
	.get_rxfh_key_size	= vnet_get_rxfh_key_size,		\
	.get_rxfh_indir_size	= vnet_get_rxfh_indir_size,		\
	.get_rxfh		= vnet_get_rxfh,			\
	.set_rxfh		= vnet_set_rxfh,			\
	.get_rxnfc		= vnet_get_rxnfc,			\
	.set_rxnfc		= vnet_set_rxnfc,			\
	VNET_OPS_RXFH_FIELDS(vnet_get_rxfh_fields, vnet_set_rxfh_fields) \
	VNET_OPS_RX_RING_COUNT(vnet_get_rx_ring_count)

/* skb->hash from the device's report, when the rxhash feature is on. */
static inline void vnet_rx_set_hash(const struct vnet *vi, struct sk_buff *skb,
				    const union vnet_rx_hdr *hdr)
{
	BUILD_BUG_ON(sizeof(hdr->hash) != sizeof(struct virtio_net_hdr_v1_hash));
	if (vi->hash_report && (vi->dev->features & NETIF_F_RXHASH))
		skb_set_hash(skb, le32_to_cpu(hdr->hash.value),
			     vnet_rss_report_level(le16_to_cpu(hdr->hash.report)));
}

/*
 * The buffer XDP programs run on, with the device's hash report for the
 * metadata kfunc (bpf_xdp_metadata_rx_hash).  On a zero-copy queue the
 * xdp_buff is the pool's and the rest lives in its private area (cb).
 */
struct vnet_xdp_buff {
	struct xdp_buff xdp;
	u32 hash;
	u16 report;
};

/* Keep the hash report of @hdr with @xdp, for the program about to run. */
static inline void vnet_xdp_buff_hash(const struct vnet *vi,
				      struct xdp_buff *xdp,
				      const union vnet_rx_hdr *hdr)
{
	struct vnet_xdp_buff *vx = container_of(xdp, struct vnet_xdp_buff, xdp);

	if (vi->hash_report) {
		vx->hash = le32_to_cpu(hdr->hash.value);
		vx->report = le16_to_cpu(hdr->hash.report);
	}
}

/* dev_stats.c */
void vnet_dev_stats_probe(struct vnet *vi);
struct vnet_ds_ctrs *vnet_dev_stats_get(struct vnet *vi, u16 first_pair,
					u16 pairs, u64 groups, bool ctrl);
unsigned int vnet_dev_stats_count(const struct vnet *vi,
				  enum vnet_ds_kind kind, bool intree);
void vnet_dev_stats_names(const struct vnet *vi, enum vnet_ds_kind kind,
			  bool intree, const char *fmt, int q, u8 **p);
void vnet_dev_stats_put(const struct vnet *vi, enum vnet_ds_kind kind,
			bool intree, const u64 *ctrs, u64 **data);
unsigned int vnet_dev_stats_own_count(const struct vnet *vi);
void vnet_dev_stats_own_names(const struct vnet *vi, u8 **p);
void vnet_dev_stats_own_values(struct vnet *vi, u64 **data);
#ifdef VNET_HAVE_QSTATS_HW
struct netdev_queue_stats_rx;
struct netdev_queue_stats_tx;
void vnet_dev_stats_qstats_rx(const struct vnet *vi,
			      const struct vnet_ds_ctrs *c,
			      struct netdev_queue_stats_rx *s, bool add);
void vnet_dev_stats_qstats_tx(const struct vnet *vi,
			      const struct vnet_ds_ctrs *c,
			      struct netdev_queue_stats_tx *s, bool add);
#endif

/* stats.c */
u64 vnet_stat_read(const struct u64_stats_sync *syncp, const u64_stats_t *ctr);
unsigned int vnet_stats_count(const struct vnet *vi);
void vnet_stats_strings(const struct vnet *vi, u8 *data);
void vnet_stats_values(struct vnet *vi, u64 *data);
void vnet_get_stats64(struct net_device *dev, struct rtnl_link_stats64 *tot);
void vnet_stats_register_qstats(struct net_device *dev);

#endif /* VNET_H */
