// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-queue counters: names for ethtool -S, totals for ndo_get_stats64,
 * and the core's per-queue statistics interface where the kernel has it.
 *
 * The first names of each queue match the in-tree driver of the same
 * kernel ("rx_queue_0_packets" style before 6.10, "rx0_packets" after),
 * so existing monitoring keeps working; ours follow in the same style.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include "compat.h"
#include "vnet.h"
#ifdef VNET_HAVE_NETDEV_STAT_OPS
#include <net/netdev_queues.h>
#endif

/* Where a counter lives: the queue's main group, its interrupt group. */
enum vnet_stat_src {
	VNET_SRC_MAIN,
	VNET_SRC_IRQ,
	VNET_SRC_TIMEOUTS,	/* TX watchdog */
	VNET_SRC_TX_TIMER_ARMS,	/* pair timer armed to flush held kicks */
	VNET_SRC_MAX_HOLD,	/* longest kick hold, in microseconds */
	VNET_SRC_MAX_LATE,	/* latest timer flush after its deadline, us */
	VNET_SRC_NOTIFY_COST,	/* what a notification costs the vCPU, ns */
	VNET_SRC_RX_TIMER_ARMS,	/* pair timer armed for RX deferrals */
	VNET_SRC_PER_POLL,	/* packets per NAPI poll, average */
	VNET_SRC_XSK_WAKEUPS,	/* AF_XDP socket woke the pair */
};

struct vnet_stat_desc {
	const char *name;
	enum vnet_stat_src src;
	size_t offset;
};

/*
 * A name must fit ETH_GSTRING_LEN after the longest queue prefix
 * ("tx_queue_99_"), or ethtool -S shows it cut short.
 */
#define VNET_STAT_NAME(n) \
	((n) + BUILD_BUG_ON_ZERO(sizeof(n) > ETH_GSTRING_LEN - 12))
#define VNET_RQ_STAT(n, f) \
	{ VNET_STAT_NAME(n), VNET_SRC_MAIN, offsetof(struct vnet_rq_stats, f) }
#define VNET_SQ_STAT(n, f) \
	{ VNET_STAT_NAME(n), VNET_SRC_MAIN, offsetof(struct vnet_sq_stats, f) }
#define VNET_IRQ_STAT(n, f) \
	{ VNET_STAT_NAME(n), VNET_SRC_IRQ, \
	  offsetof(struct vnet_irq_stats, f) }
/* A counter computed by its source, not read from a stats group. */
#define VNET_SRC_STAT(n, src) \
	{ VNET_STAT_NAME(n), src, 0 }

/*
 * Up to 6.9 the in-tree driver names every counter per queue:
 * "rx_queue_0_packets" ... "tx_queue_0_tx_timeouts".  From 6.10 it lists
 * device totals first ("rx_drops" ... "tx_tx_timeouts"), then per queue
 * "rx0_drops" ..., and reports packets and bytes through the per-queue
 * statistics interface instead.  Each table starts with the in-tree
 * names of this kernel (VNET_*_INTREE), in the in-tree order; with the
 * new names these are also summed into the totals.  Our own counters
 * follow.
 *
 * The device's own counters (dev_stats.c), when it offers them: those the
 * in-tree driver shows come right after its names of each queue (and of
 * the totals), the others after ours; the control queue's and our
 * counters of the feature follow the totals.
 */
#if VNET_STATS_NEW_NAMES
#define VNET_RX_FMT		"rx%u_%s"
#define VNET_TX_FMT		"tx%u_%s"
#define VNET_RQ_INTREE		6
#define VNET_SQ_INTREE		4
#else
#define VNET_RX_FMT		"rx_queue_%u_%s"
#define VNET_TX_FMT		"tx_queue_%u_%s"
#define VNET_RQ_INTREE		8
#define VNET_SQ_INTREE		6
#endif

static const struct vnet_stat_desc vnet_rq_descs[] = {
#if !VNET_STATS_NEW_NAMES
	VNET_RQ_STAT("packets", packets),
	VNET_RQ_STAT("bytes", bytes),
#endif
	VNET_RQ_STAT("drops", drops),
	VNET_RQ_STAT("xdp_packets", xdp_packets),
	VNET_RQ_STAT("xdp_tx", xdp_tx),
	VNET_RQ_STAT("xdp_redirects", xdp_redirects),
	VNET_RQ_STAT("xdp_drops", xdp_drops),
	VNET_RQ_STAT("kicks", kicks),
	/* Ours. */
#if VNET_STATS_NEW_NAMES
	VNET_RQ_STAT("packets", packets),
	VNET_RQ_STAT("bytes", bytes),
#endif
	VNET_IRQ_STAT("interrupts", interrupts),
	VNET_IRQ_STAT("interrupts_busy_cpu", interrupted_task),
	VNET_RQ_STAT("napi_polls", napi_polls),
	VNET_RQ_STAT("poll_ns", poll_ns),
	VNET_RQ_STAT("irq_rearms", rearms),
	VNET_RQ_STAT("deferrals", deferrals),
	VNET_SRC_STAT("deferral_arms", VNET_SRC_RX_TIMER_ARMS),
	VNET_SRC_STAT("packets_per_poll", VNET_SRC_PER_POLL),
	VNET_RQ_STAT("drops_bad_length", drop_bad_len),
	VNET_RQ_STAT("drops_bad_header", drop_bad_hdr),
	VNET_RQ_STAT("drops_no_memory", drop_nomem),
	VNET_RQ_STAT("refill_no_memory", refill_nomem),
	VNET_RQ_STAT("polls_ring_empty", ring_empty),
	VNET_RQ_STAT("polls_fixed_rcvbuf", fixed_rcvbuf),
#if VNET_CAN_XSK
	VNET_RQ_STAT("xsk_packets", xsk_packets),
	VNET_RQ_STAT("xsk_bytes", xsk_bytes),
	VNET_RQ_STAT("xsk_fill_ring_empty", xsk_fill_empty),
	VNET_SRC_STAT("xsk_wakeups", VNET_SRC_XSK_WAKEUPS),
#endif
};

static const struct vnet_stat_desc vnet_sq_descs[] = {
#if !VNET_STATS_NEW_NAMES
	VNET_SQ_STAT("packets", packets),
	VNET_SQ_STAT("bytes", bytes),
#endif
	VNET_SQ_STAT("xdp_tx", xdp_tx),
	VNET_SQ_STAT("xdp_tx_drops", xdp_tx_drops),
	VNET_SQ_STAT("kicks", kicks),
	VNET_SRC_STAT("tx_timeouts", VNET_SRC_TIMEOUTS),
	/* Ours. */
#if VNET_STATS_NEW_NAMES
	VNET_SQ_STAT("packets", packets),
	VNET_SQ_STAT("bytes", bytes),
#endif
	VNET_SQ_STAT("kicks_held", kicks_held),
	VNET_SQ_STAT("kicks_suppressed", kicks_suppressed),
	VNET_SQ_STAT("timer_flushes", timer_flushes),
	VNET_SQ_STAT("poll_flushes", poll_flushes),
	VNET_SQ_STAT("batch_kicks", batch_kicks),
	VNET_SQ_STAT("forced_kicks", forced_kicks),
	VNET_SQ_STAT("waiting_kicks", waiting_kicks),
	VNET_SQ_STAT("window_kicks", window_kicks),
	VNET_SQ_STAT("spared_senders", spared_senders),
	VNET_SRC_STAT("flush_timer_arms", VNET_SRC_TX_TIMER_ARMS),
	VNET_SRC_STAT("max_hold_us", VNET_SRC_MAX_HOLD),
	VNET_SRC_STAT("max_flush_late_us", VNET_SRC_MAX_LATE),
	VNET_SRC_STAT("notify_cost_ns", VNET_SRC_NOTIFY_COST),
	VNET_SQ_STAT("reclaim_batches", reclaim_batches),
	VNET_SQ_STAT("reclaim_deadlines", reclaim_deadlines),
	VNET_SQ_STAT("released_at_send", released_at_send),
	VNET_SQ_STAT("sndbuf_over_half", sndbuf_over_half),
	VNET_IRQ_STAT("interrupts", interrupts),
	VNET_SQ_STAT("irq_empty", irq_empty),
	VNET_SQ_STAT("napi_polls", napi_polls),
	VNET_SQ_STAT("drops", drops),
	VNET_SQ_STAT("queue_stops", stops),
	VNET_SQ_STAT("queue_wakes", wakes),
#if VNET_CAN_XSK_TX
	VNET_SQ_STAT("xsk_packets", xsk_packets),
	VNET_SQ_STAT("xsk_bytes", xsk_bytes),
	VNET_SQ_STAT("xsk_drops", xsk_tx_drops),
#endif
};

/* Names in the totals: the in-tree driver's of each direction. */
static unsigned int vnet_rq_totals(const struct vnet *vi)
{
	if (!VNET_STATS_NEW_NAMES)
		return 0;
	return VNET_RQ_INTREE + vnet_dev_stats_count(vi, VNET_DS_KIND_RX, true);
}

static unsigned int vnet_sq_totals(const struct vnet *vi)
{
	if (!VNET_STATS_NEW_NAMES)
		return 0;
	return VNET_SQ_INTREE + vnet_dev_stats_count(vi, VNET_DS_KIND_TX, true);
}

/* Names per queue. */
static unsigned int vnet_rq_count(const struct vnet *vi)
{
	return ARRAY_SIZE(vnet_rq_descs) +
	       vnet_dev_stats_count(vi, VNET_DS_KIND_RX, true) +
	       vnet_dev_stats_count(vi, VNET_DS_KIND_RX, false);
}

static unsigned int vnet_sq_count(const struct vnet *vi)
{
	return ARRAY_SIZE(vnet_sq_descs) +
	       vnet_dev_stats_count(vi, VNET_DS_KIND_TX, true) +
	       vnet_dev_stats_count(vi, VNET_DS_KIND_TX, false);
}

/* Ours of the whole device: auto_threaded (threaded.c). */
static const char * const vnet_thr_names[] = {
	"threaded_trials", "threaded_switches", "threaded_livelock_windows",
};

/* Device-level names after the totals: the control queue's, ours. */
static unsigned int vnet_device_count(const struct vnet *vi)
{
	return vnet_dev_stats_count(vi, VNET_DS_KIND_CTRL, true) +
	       vnet_dev_stats_own_count(vi) + ARRAY_SIZE(vnet_thr_names);
}

unsigned int vnet_stats_count(const struct vnet *vi)
{
	return vnet_rq_totals(vi) + vnet_sq_totals(vi) +
	       vnet_device_count(vi) +
	       vi->curr_pairs * (vnet_rq_count(vi) + vnet_sq_count(vi));
}

static void vnet_put_names(u8 **p, const char *fmt, unsigned int q,
			   const struct vnet_stat_desc *d, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		snprintf(*p, ETH_GSTRING_LEN, fmt, q, d[i].name);
		*p += ETH_GSTRING_LEN;
	}
}

static void vnet_put_totals(u8 **p, const char *dir,
			    const struct vnet_stat_desc *d, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		snprintf(*p, ETH_GSTRING_LEN, "%s_%s", dir, d[i].name);
		*p += ETH_GSTRING_LEN;
	}
}

/* One queue's names: in-tree, the device's in-tree ones, ours, the rest. */
static void vnet_put_queue_names(const struct vnet *vi, u8 **p,
				 const char *fmt, unsigned int q,
				 const struct vnet_stat_desc *d,
				 unsigned int n, unsigned int intree,
				 enum vnet_ds_kind kind)
{
	vnet_put_names(p, fmt, q, d, intree);
	vnet_dev_stats_names(vi, kind, true, fmt, q, p);
	vnet_put_names(p, fmt, q, d + intree, n - intree);
	vnet_dev_stats_names(vi, kind, false, fmt, q, p);
}

void vnet_stats_strings(const struct vnet *vi, u8 *p)
{
	unsigned int q, i;

	if (VNET_STATS_NEW_NAMES) {
		vnet_put_totals(&p, "rx", vnet_rq_descs, VNET_RQ_INTREE);
		vnet_dev_stats_names(vi, VNET_DS_KIND_RX, true, "rx_%s", -1,
				     &p);
		vnet_put_totals(&p, "tx", vnet_sq_descs, VNET_SQ_INTREE);
		vnet_dev_stats_names(vi, VNET_DS_KIND_TX, true, "tx_%s", -1,
				     &p);
	}
	vnet_dev_stats_names(vi, VNET_DS_KIND_CTRL, true, "%s", -1, &p);
	vnet_dev_stats_own_names(vi, &p);
	for (i = 0; i < ARRAY_SIZE(vnet_thr_names); i++) {
		strscpy(p, vnet_thr_names[i], ETH_GSTRING_LEN);
		p += ETH_GSTRING_LEN;
	}
	for (q = 0; q < vi->curr_pairs; q++)
		vnet_put_queue_names(vi, &p, VNET_RX_FMT, q, vnet_rq_descs,
				     ARRAY_SIZE(vnet_rq_descs), VNET_RQ_INTREE,
				     VNET_DS_KIND_RX);
	for (q = 0; q < vi->curr_pairs; q++)
		vnet_put_queue_names(vi, &p, VNET_TX_FMT, q, vnet_sq_descs,
				     ARRAY_SIZE(vnet_sq_descs), VNET_SQ_INTREE,
				     VNET_DS_KIND_TX);
}

/* One counter of a group guarded by @syncp (any context). */
u64 vnet_stat_read(const struct u64_stats_sync *syncp, const u64_stats_t *ctr)
{
	unsigned int start;
	u64 v;

	do {
		start = u64_stats_fetch_begin(syncp);
		v = u64_stats_read(ctr);
	} while (u64_stats_fetch_retry(syncp, start));
	return v;
}

static u64 vnet_read_ctr(const struct u64_stats_sync *syncp,
			 const void *base, size_t offset)
{
	return vnet_stat_read(syncp, base + offset);
}

/*
 * hrtimer arms for kick flushes: each is a timer exit, unlike the
 * tick-based reclaim deadline (counted by reclaim_deadlines when it runs).
 */
static u64 vnet_tx_timer_arms(struct vnet_qp_timer *t)
{
	u64 arms, fires;

	vnet_qp_timer_counts(t, VNET_TIMER_TX_FLUSH, &arms, &fires);
	return arms;
}

/*
 * Read the counters @d of one queue: @syncp/@main is its main group, @irq
 * its interrupt group; @sq is set for a send queue.
 */
static u64 vnet_rx_per_poll(const struct vnet_rq *rq)
{
	u64 polls = vnet_read_ctr(&rq->stats.syncp, &rq->stats,
				  offsetof(struct vnet_rq_stats, napi_polls));
	u64 packets = vnet_read_ctr(&rq->stats.syncp, &rq->stats,
				    offsetof(struct vnet_rq_stats, packets));

	return polls ? div64_u64(packets, polls) : 0;
}

static void vnet_read_descs(const struct vnet_stat_desc *d, unsigned int n,
			    const struct u64_stats_sync *syncp,
			    const void *main, const struct vnet_irq_stats *irq,
			    struct vnet_qp *qp, u64 *out)
{
	struct vnet_sq *sq = &qp->sq;
	u64 arms, fires;

	unsigned int i;

	for (i = 0; i < n; i++) {
		switch (d[i].src) {
		case VNET_SRC_MAIN:
			out[i] = vnet_read_ctr(syncp, main, d[i].offset);
			break;
		case VNET_SRC_IRQ:
			out[i] = vnet_read_ctr(&irq->syncp, irq, d[i].offset);
			break;
		case VNET_SRC_TIMEOUTS:
			out[i] = atomic64_read(&sq->timeouts);
			break;
		case VNET_SRC_TX_TIMER_ARMS:
			out[i] = vnet_tx_timer_arms(&sq->qp->timer);
			break;
		case VNET_SRC_MAX_HOLD:
			out[i] = div_u64(READ_ONCE(sq->kick.max_hold_ns),
					 NSEC_PER_USEC);
			break;
		case VNET_SRC_MAX_LATE:
			out[i] = div_u64(max(READ_ONCE(sq->kick.max_late_ns),
					     vnet_qp_timer_max_late(&qp->timer,
								    VNET_TIMER_TX_FLUSH,
								    false)),
					 NSEC_PER_USEC);
			break;
		case VNET_SRC_NOTIFY_COST:
			out[i] = READ_ONCE(sq->kick.cost_ns);
			break;
		case VNET_SRC_RX_TIMER_ARMS:
			vnet_qp_timer_counts(&qp->rx_timer, VNET_TIMER_RX_POLL,
					     &arms, &fires);
			out[i] = arms;
			break;
		case VNET_SRC_PER_POLL:
			out[i] = vnet_rx_per_poll(&qp->rq);
			break;
		case VNET_SRC_XSK_WAKEUPS:
			out[i] = atomic64_read(&qp->rq.xsk_wakeups);
			break;
		}
	}
}

/*
 * One queue's values, in the order of vnet_put_queue_names(): @tmp holds
 * the values of its @n descriptors, @hw the device's counters of the
 * queue (NULL: zeros).
 */
static void vnet_put_queue_values(const struct vnet *vi, u64 **data,
				  unsigned int n, unsigned int intree,
				  const u64 *tmp, enum vnet_ds_kind kind,
				  const u64 *hw)
{
	memcpy(*data, tmp, intree * sizeof(u64));
	*data += intree;
	vnet_dev_stats_put(vi, kind, true, hw, data);
	memcpy(*data, tmp + intree, (n - intree) * sizeof(u64));
	*data += n - intree;
	vnet_dev_stats_put(vi, kind, false, hw, data);
}

void vnet_stats_values(struct vnet *vi, u64 *data)
{
	unsigned int q, n_rq = ARRAY_SIZE(vnet_rq_descs);
	unsigned int n_sq = ARRAY_SIZE(vnet_sq_descs);
	unsigned int rq_tot = vnet_rq_totals(vi), sq_tot = vnet_sq_totals(vi);
	unsigned int rq_all = vnet_rq_count(vi), sq_all = vnet_sq_count(vi);
	u64 rtmp[ARRAY_SIZE(vnet_rq_descs)], stmp[ARRAY_SIZE(vnet_sq_descs)];
	u64 *totals = data, *per_queue;
	struct vnet_ds_ctrs *hw;
	unsigned int i;

	/* The device's counters of every active queue, in one go. */
	hw = vnet_dev_stats_get(vi, 0, vi->curr_pairs, VNET_DS_KNOWN, true);

	data += rq_tot + sq_tot;
	vnet_dev_stats_put(vi, VNET_DS_KIND_CTRL, true,
			   hw ? hw[2 * vi->curr_pairs].v : NULL, &data);
	vnet_dev_stats_own_values(vi, &data);
	BUILD_BUG_ON(ARRAY_SIZE(vnet_thr_names) != VNET_THR_COUNTERS);
	vnet_thr_counters(vi, data);
	data += ARRAY_SIZE(vnet_thr_names);
	per_queue = data;
	for (q = 0; q < vi->curr_pairs; q++) {
		const struct vnet_rq *rq = &vi->qp[q].rq;

		vnet_read_descs(vnet_rq_descs, n_rq, &rq->stats.syncp,
				&rq->stats, &rq->irq, &vi->qp[q], rtmp);
		vnet_put_queue_values(vi, &data, n_rq,
				      VNET_RQ_INTREE, rtmp, VNET_DS_KIND_RX,
				      hw ? hw[2 * q].v : NULL);
	}
	for (q = 0; q < vi->curr_pairs; q++) {
		struct vnet_sq *sq = &vi->qp[q].sq;

		vnet_read_descs(vnet_sq_descs, n_sq, &sq->stats.syncp,
				&sq->stats, &sq->irq, &vi->qp[q], stmp);
		vnet_put_queue_values(vi, &data, n_sq,
				      VNET_SQ_INTREE, stmp, VNET_DS_KIND_TX,
				      hw ? hw[2 * q + 1].v : NULL);
	}
	kvfree(hw);

	/*
	 * Totals over the active pairs, from the per-queue values: the
	 * first names of each queue are the ones the totals have.
	 */
	for (i = 0; i < rq_tot + sq_tot; i++)
		totals[i] = 0;
	for (q = 0; q < vi->curr_pairs; q++) {
		for (i = 0; i < rq_tot; i++)
			totals[i] += per_queue[q * rq_all + i];
		for (i = 0; i < sq_tot; i++)
			totals[rq_tot + i] +=
				per_queue[vi->curr_pairs * rq_all + q * sq_all + i];
	}
}

struct vnet_rx_sums {
	u64 packets, bytes, drops, bad_len, bad_hdr, nomem;
};

struct vnet_tx_sums {
	u64 packets, bytes, drops, stops, wakes;
};

static void vnet_rx_sum(const struct vnet_rq *rq, struct vnet_rx_sums *s)
{
	const struct vnet_rq_stats *st = &rq->stats;
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&st->syncp);
		s->packets = u64_stats_read(&st->packets);
		s->bytes = u64_stats_read(&st->bytes);
		s->drops = u64_stats_read(&st->drops);
		s->bad_len = u64_stats_read(&st->drop_bad_len);
		s->bad_hdr = u64_stats_read(&st->drop_bad_hdr);
		s->nomem = u64_stats_read(&st->drop_nomem) +
			   u64_stats_read(&st->refill_nomem);
	} while (u64_stats_fetch_retry(&st->syncp, start));
}

static void vnet_tx_sum(const struct vnet_sq *sq, struct vnet_tx_sums *s)
{
	const struct vnet_sq_stats *st = &sq->stats;
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&st->syncp);
		s->packets = u64_stats_read(&st->packets);
		s->bytes = u64_stats_read(&st->bytes);
		s->drops = u64_stats_read(&st->drops);
		s->stops = u64_stats_read(&st->stops);
		s->wakes = u64_stats_read(&st->wakes);
	} while (u64_stats_fetch_retry(&st->syncp, start));
}

void vnet_get_stats64(struct net_device *dev, struct rtnl_link_stats64 *tot)
{
	struct vnet *vi = netdev_priv(dev);
	unsigned int q;

	/* Every pair, active or not: counts of inactive pairs are history. */
	for (q = 0; q < vi->max_pairs; q++) {
		struct vnet_rx_sums r;
		struct vnet_tx_sums t;

		vnet_rx_sum(&vi->qp[q].rq, &r);
		vnet_tx_sum(&vi->qp[q].sq, &t);
		tot->rx_packets += r.packets;
		tot->rx_bytes += r.bytes;
		tot->rx_dropped += r.drops;
		tot->rx_length_errors += r.bad_len;
		tot->rx_frame_errors += r.bad_hdr;
		tot->tx_packets += t.packets;
		tot->tx_bytes += t.bytes;
		tot->tx_dropped += t.drops;
		/* As in-tree: transmit errors are TX watchdog timeouts. */
		tot->tx_errors += atomic64_read(&vi->qp[q].sq.timeouts);
	}
	tot->rx_errors = tot->rx_length_errors + tot->rx_frame_errors;
}

#ifdef VNET_HAVE_NETDEV_STAT_OPS
#ifdef VNET_HAVE_QSTATS_HW
/*
 * The device's counters of the receive (transmit) queues of pairs
 * [first, first + n), summed into @s; the hardware fields the device does
 * not keep, or could not report now, stay unreported.
 */
static void vnet_qstats_hw_rx(struct vnet *vi, unsigned int first,
			      unsigned int n,
			      struct netdev_queue_stats_rx *s, bool add)
{
	struct vnet_ds_ctrs *hw;
	unsigned int q;

	hw = vnet_dev_stats_get(vi, first, n, VNET_DS_RX_GROUPS, false);
	if (!hw)
		return;
	for (q = 0; q < n; q++)
		vnet_dev_stats_qstats_rx(vi, &hw[2 * q], s, add || q);
	kvfree(hw);
}

static void vnet_qstats_hw_tx(struct vnet *vi, unsigned int first,
			      unsigned int n,
			      struct netdev_queue_stats_tx *s, bool add)
{
	struct vnet_ds_ctrs *hw;
	unsigned int q;

	hw = vnet_dev_stats_get(vi, first, n, VNET_DS_TX_GROUPS, false);
	if (!hw)
		return;
	for (q = 0; q < n; q++)
		vnet_dev_stats_qstats_tx(vi, &hw[2 * q + 1], s, add || q);
	kvfree(hw);
}

/*
 * Base: 0 for each field the device keeps, plus the queues the core does
 * not ask about (from @rxq and @txq on, vnet_qstats_base()).
 */
static void vnet_qstats_hw_base(struct vnet *vi, unsigned int rxq,
				unsigned int txq,
				struct netdev_queue_stats_rx *rx,
				struct netdev_queue_stats_tx *tx)
{
	static const struct vnet_ds_ctrs zero;

	vnet_dev_stats_qstats_rx(vi, &zero, rx, false);
	vnet_dev_stats_qstats_tx(vi, &zero, tx, false);
	if (rxq < vi->max_pairs)
		vnet_qstats_hw_rx(vi, rxq, vi->max_pairs - rxq, rx, true);
	if (txq < vi->max_pairs)
		vnet_qstats_hw_tx(vi, txq, vi->max_pairs - txq, tx, true);
}
#else
static void vnet_qstats_hw_rx(struct vnet *vi, unsigned int first,
			      unsigned int n,
			      struct netdev_queue_stats_rx *s, bool add)
{
}

static void vnet_qstats_hw_tx(struct vnet *vi, unsigned int first,
			      unsigned int n,
			      struct netdev_queue_stats_tx *s, bool add)
{
}

static void vnet_qstats_hw_base(struct vnet *vi, unsigned int rxq,
				unsigned int txq,
				struct netdev_queue_stats_rx *rx,
				struct netdev_queue_stats_tx *tx)
{
}
#endif

static void vnet_qstats_rx(struct net_device *dev, int i,
			   struct netdev_queue_stats_rx *stats)
{
	struct vnet *vi = netdev_priv(dev);
	struct vnet_rx_sums r;

	vnet_rx_sum(&vi->qp[i].rq, &r);
	stats->packets = r.packets;
	stats->bytes = r.bytes;
	stats->alloc_fail = r.nomem;
	vnet_qstats_hw_rx(vi, i, 1, stats, false);
}

static void vnet_qstats_tx(struct net_device *dev, int i,
			   struct netdev_queue_stats_tx *stats)
{
	struct vnet *vi = netdev_priv(dev);
	struct vnet_tx_sums t;

	vnet_tx_sum(&vi->qp[i].sq, &t);
	stats->packets = t.packets;
	stats->bytes = t.bytes;
	stats->stop = t.stops;
	stats->wake = t.wakes;
	vnet_qstats_hw_tx(vi, i, 1, stats, false);
}

/*
 * Totals of the queues the core does not ask about, so that device totals
 * add up: it asks about the stack's queues (real_num_*_queues), and with
 * dedicated XDP pairs the stack has fewer send queues than active pairs
 * (xdp.c): those pairs' earlier counts are here too.
 */
static void vnet_qstats_base(struct net_device *dev,
			     struct netdev_queue_stats_rx *rx,
			     struct netdev_queue_stats_tx *tx)
{
	struct vnet *vi = netdev_priv(dev);
	unsigned int rxq = min_t(unsigned int, dev->real_num_rx_queues, vi->max_pairs);
	unsigned int txq = min_t(unsigned int, dev->real_num_tx_queues, vi->max_pairs);
	unsigned int q;

	rx->packets = 0;
	rx->bytes = 0;
	rx->alloc_fail = 0;
	tx->packets = 0;
	tx->bytes = 0;
	tx->stop = 0;
	tx->wake = 0;
	for (q = rxq; q < vi->max_pairs; q++) {
		struct vnet_rx_sums r;

		vnet_rx_sum(&vi->qp[q].rq, &r);
		rx->packets += r.packets;
		rx->bytes += r.bytes;
		rx->alloc_fail += r.nomem;
	}
	for (q = txq; q < vi->max_pairs; q++) {
		struct vnet_tx_sums t;

		vnet_tx_sum(&vi->qp[q].sq, &t);
		tx->packets += t.packets;
		tx->bytes += t.bytes;
		tx->stop += t.stops;
		tx->wake += t.wakes;
	}
	vnet_qstats_hw_base(vi, rxq, txq, rx, tx);
}

static const struct netdev_stat_ops vnet_stat_ops = {
	.get_queue_stats_rx	= vnet_qstats_rx,
	.get_queue_stats_tx	= vnet_qstats_tx,
	.get_base_stats		= vnet_qstats_base,
};

void vnet_stats_register_qstats(struct net_device *dev)
{
	dev->stat_ops = &vnet_stat_ops;
}
#else
void vnet_stats_register_qstats(struct net_device *dev)
{
}
#endif
