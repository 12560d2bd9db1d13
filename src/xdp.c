// SPDX-License-Identifier: GPL-2.0-only
/*
 * XDP: native programs on receive (PASS, DROP, TX, REDIRECT), XDP frames
 * on the send queues (XDP_TX and ndo_xdp_xmit), attach and detach.
 *
 * Receive.  While a program is attached, new receive buffers get
 * XDP_PACKET_HEADROOM before them and room for skb_shared_info after
 * (rx.c).  A frame's first buffer runs in place when it has that room;
 * one posted before the program came is first copied into a page of its
 * own.  A frame spread over several mergeable buffers is copied into one
 * page for a single-buffer program (frames of the MTU must fit a page),
 * and given as fragments to a program loaded for them (multi-buffer,
 * section "xdp.frags", 5.18 and later).  XDP_PASS builds the skb around
 * the first buffer, fragments included.
 *
 * Transmit.  XDP frames, fragments included, go into send queues with the
 * low bit of their token set (policy/xdp.h), so reclaim (tx.c) can tell
 * them from skbs and keep them out of the byte queue limits.  Which
 * queue: see policy/xdp.h; the queue lock is always held.  ndo_xdp_xmit works with or without a
 * program attached (then on the stack's queues).
 *
 * Attaching makes the device stop coalescing and checksum-offloading
 * received frames (guest offloads, through the control queue) so that
 * programs see whole, final frames, and enables one extra queue pair per
 * CPU when the device has them.  Channel and GRO_HW changes are refused
 * while a program is attached.  All of it runs under RTNL.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/bpf_trace.h>
#include <linux/filter.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/xdp.h>
#include "compat.h"
#include "vnet.h"

bool vnet_xdp_attached(const struct vnet *vi)
{
	return rcu_access_pointer(vi->xdp_prog);
}

#if VNET_CAN_XDP_RX_HASH
/*
 * bpf_xdp_metadata_rx_hash() of a program bound to this device: the hash
 * the device reported for the frame (struct vnet_xdp_buff), while the
 * rxhash feature is on, as for skbs.
 */
static int vnet_xdp_rx_hash(const struct xdp_md *ctx, u32 *hash,
			    enum xdp_rss_hash_type *type)
{
	const struct vnet_xdp_buff *vx = (const void *)ctx;
	struct net_device *dev = vx->xdp.rxq->dev;
	const struct vnet *vi = netdev_priv(dev);

	if (!vi->hash_report || !(dev->features & NETIF_F_RXHASH))
		return -ENODATA;
	*hash = vx->hash;
	*type = vnet_rss_report_xdp_type(vx->report);
	return 0;
}

static const struct xdp_metadata_ops vnet_xdp_metadata_ops = {
	.xmo_rx_hash = vnet_xdp_rx_hash,
};

static void vnet_xdp_metadata_probe(struct vnet *vi)
{
	/* policy/rss.h spells the kernel's hash types out: no bit differs */
	BUILD_BUG_ON((VNET_XDP_RSS_L3_IPV4 ^ XDP_RSS_L3_IPV4) |
		     (VNET_XDP_RSS_L3_IPV6 ^ XDP_RSS_L3_IPV6) |
		     (VNET_XDP_RSS_L3_DYNHDR ^ XDP_RSS_L3_DYNHDR) |
		     (VNET_XDP_RSS_L4 ^ XDP_RSS_L4) |
		     (VNET_XDP_RSS_L4_TCP ^ XDP_RSS_L4_TCP) |
		     (VNET_XDP_RSS_L4_UDP ^ XDP_RSS_L4_UDP));
	if (vi->hash_report)
		vi->dev->xdp_metadata_ops = &vnet_xdp_metadata_ops;
}
#else
static void vnet_xdp_metadata_probe(struct vnet *vi)
{
}
#endif

/* Before register_netdevice(), after RSS (the hash report) is known. */
void vnet_xdp_probe(struct vnet *vi)
{
	vnet_xdp_features(vi->dev, VNET_CAN_XDP_FRAGS &&
			  vi->rx_mode == VNET_RX_MERGEABLE);
	if (VNET_CAN_XSK)
		vnet_xdp_features_zc(vi->dev);
	vnet_xdp_metadata_probe(vi);
}

/* --- transmit --- */

/*
 * One frame into @sq: the virtio header, the first part, then the
 * fragments.  The xdp_frame itself is left as it is, for its return.
 */
static int vnet_xdp_add(struct vnet *vi, struct vnet_sq *sq,
			struct xdp_frame *f)
{
	struct skb_shared_info *sinfo = vnet_xdp_frame_sinfo(f);
	unsigned int nr = sinfo ? sinfo->nr_frags : 0, i, n;
	unsigned int hdr_len = vi->hdr_len;
	skb_frag_t *frag;

	/*
	 * The header goes in front of the data where the frame has room
	 * for it, else in an element of its own, read from the zero page: a
	 * frame copied out of an AF_XDP buffer (XDP_TX or a redirect from a
	 * zero-copy queue, ours or another driver's) has no headroom.
	 */
	n = f->headroom < hdr_len ? 2 : 1;
	if (nr + n > ARRAY_SIZE(sq->sg))
		return -EOVERFLOW;
	sg_init_table(sq->sg, nr + n);
	if (n == 1) {
		memset((u8 *)f->data - hdr_len, 0, hdr_len);
		sg_set_buf(&sq->sg[0], (u8 *)f->data - hdr_len,
			   hdr_len + f->len);
	} else {
		sg_set_page(&sq->sg[0], ZERO_PAGE(0), hdr_len, 0);
		sg_set_buf(&sq->sg[1], f->data, f->len);
	}
	for (i = 0; i < nr; i++) {
		frag = &sinfo->frags[i];
		sg_set_page(&sq->sg[i + n], skb_frag_page(frag),
			    skb_frag_size(frag), skb_frag_off(frag));
	}
	return virtqueue_add_outbuf(sq->vq, sq->sg, nr + n,
				    vnet_xdp_to_token(f), GFP_ATOMIC);
}

/*
 * Send @n frames on this CPU's XDP queue, notifying the device if
 * @kick; returns how many were queued (the first ones).  @n may be 0 to
 * notify only.  Caller runs with bottom halves off.
 */
int vnet_xdp_send(struct vnet *vi, struct xdp_frame **frames, int n,
		  bool kick)
{
	unsigned int cpu = smp_processor_id();
	unsigned int pairs = READ_ONCE(vi->curr_pairs);
	unsigned int xdp_pairs = min_t(unsigned int, READ_ONCE(vi->xdp_pairs),
				       pairs);
	unsigned int qi = min_t(unsigned int,
				vnet_xdp_txq(pairs - xdp_pairs, xdp_pairs, cpu),
				vi->max_pairs - 1);
	struct netdev_queue *txq = netdev_get_tx_queue(vi->dev, qi);
	struct vnet_sq *sq = &vi->qp[qi].sq;
	bool notified = false;
	int sent = 0;
	u64 now;

	__netif_tx_lock(txq, cpu);
	/* Detached (freeze) or resizing: the ring is off limits. */
	if (!netif_device_present(vi->dev) || sq->paused)
		goto out;
	now = vnet_now();
	if (n)
		vnet_tx_xdp_reclaim(sq, n, now);
	while (sent < n && !vnet_xdp_add(vi, sq, frames[sent]))
		sent++;
	if (kick && virtqueue_kick_prepare(sq->vq))
		notified = virtqueue_notify(sq->vq);
	/* Sent frames pin their pages: bound the wait for their reclaim. */
	if (sent)
		vnet_tx_xdp_sent(sq, now);
out:
	u64_stats_update_begin(&sq->stats.syncp);
	u64_stats_add(&sq->stats.xdp_tx, sent);
	u64_stats_add(&sq->stats.xdp_tx_drops, n - sent);
	if (notified)
		u64_stats_inc(&sq->stats.kicks);
	u64_stats_update_end(&sq->stats.syncp);
	vnet_txq_unlock(sq, txq);
	return sent;
}

int vnet_xdp_xmit(struct net_device *dev, int n, struct xdp_frame **frames,
		  u32 flags)
{
	struct vnet *vi = netdev_priv(dev);
	int sent, i;

	if (unlikely(flags & ~XDP_XMIT_FLAGS_MASK))
		return -EINVAL;
	if (unlikely(!netif_running(dev)))
		return -ENETDOWN;
	sent = vnet_xdp_send(vi, frames, n, flags & XDP_XMIT_FLUSH);
	if (VNET_XDP_XMIT_FREES_UNSENT)
		for (i = sent; i < n; i++)
			xdp_return_frame(frames[i]);
	return sent;
}

/*
 * Reclaim (tx.c): returns false for an skb, frees an XDP frame, counts
 * an AF_XDP socket's frame for vnet_xsk_tx_completed().  A frame the
 * device sent adds its length to *@bytes (NULL: dropped unsent).
 */
bool vnet_xdp_tx_done(struct vnet_sq *sq, void *ptr, u64 *bytes)
{
	struct skb_shared_info *sinfo;
	struct xdp_frame *f;

	if (vnet_xsk_is_token(ptr)) {
		/* 0 after an unbind whose reset failed */
		if (sq->xsk_inflight)
			sq->xsk_inflight--;
		sq->xsk_done++;
		if (bytes)
			*bytes += vnet_xsk_token_len(ptr);
		return true;
	}
	if (!vnet_xdp_is_token(ptr))
		return false;
	f = vnet_xdp_from_token(ptr);
	if (bytes) {
		sinfo = vnet_xdp_frame_sinfo(f);
		*bytes += f->len + (sinfo ? vnet_xdp_frags_len(sinfo) : 0);
	}
	xdp_return_frame(f);
	return true;
}

/* --- receive --- */

/* Largest frame one page takes with XDP's headroom and tailroom. */
static unsigned int vnet_xdp_page_frame(void)
{
	return vnet_xdp_max_frame(PAGE_SIZE, XDP_PACKET_HEADROOM,
				  VNET_XDP_TAILROOM);
}

/* Give back a received buffer and its fragments (drop, failure). */
static void vnet_xdp_buff_free(struct vnet_rq *rq, struct xdp_buff *xdp)
{
	struct skb_shared_info *sinfo = vnet_xdp_buff_sinfo(xdp);
	unsigned int i;

	for (i = 0; sinfo && i < sinfo->nr_frags; i++)
		vnet_rx_put_page(rq, skb_frag_page(&sinfo->frags[i]), true);
	vnet_rx_put_page(rq, virt_to_head_page(xdp->data_hard_start), true);
}

/*
 * A page of our own (of the queue's pool, if any, as every page of an
 * XDP frame goes back there): XDP headroom, then @len bytes copied from
 * @src.
 */
static bool vnet_xdp_copy_start(struct vnet_rq *rq, const void *src,
				unsigned int len, struct xdp_buff *xdp)
{
	u8 *va = vnet_rx_alloc_page(rq);

	if (unlikely(!va)) {
		vnet_rq_stat_inc(rq, &rq->stats.drop_nomem);
		return false;
	}
	memcpy(va + XDP_PACKET_HEADROOM, src, len);
	vnet_xdp_buff_init(xdp, va, XDP_PACKET_HEADROOM, len, PAGE_SIZE,
			   &rq->xdp_rxq);
	return true;
}

static bool vnet_xdp_small(struct vnet_rq *rq, void *buf, void *ctx,
			   unsigned int len, union vnet_rx_hdr *hdr,
			   struct xdp_buff *xdp)
{
	struct vnet *vi = rq->qp->vi;
	unsigned int room = vnet_rx_ctx_headroom(ctx);
	unsigned int off = VNET_RX_PAD + room;
	bool ok;

	if (vnet_rx_check_first(len, vi->hdr_len,
				vi->hdr_len + VNET_GOOD_FRAME_LEN)) {
		vnet_rx_bad(rq, &rq->stats.drop_bad_len, "bad length", len);
		vnet_rx_put_page(rq, virt_to_head_page(buf), true);
		return false;
	}
	memcpy(hdr, (u8 *)buf + off, vi->hdr_len);
	if (room >= XDP_PACKET_HEADROOM) {
		vnet_xdp_buff_init(xdp, buf, off + vi->hdr_len,
				   len - vi->hdr_len,
				   vnet_rx_ctx_truesize(ctx), &rq->xdp_rxq);
		return true;
	}
	/* posted before the program came: no room for it */
	ok = vnet_xdp_copy_start(rq, (u8 *)buf + off + vi->hdr_len,
				 len - vi->hdr_len, xdp);
	vnet_rx_put_page(rq, virt_to_head_page(buf), true);
	return ok;
}

/*
 * The first buffer of a mergeable frame as the start of @xdp: in place
 * when it has XDP's headroom and either is the whole frame or the rest
 * may follow as fragments (@frags); else copied, whole, or for @frags as
 * much as fits a page with the remainder left as the first fragment.
 */
static bool vnet_xdp_mrg_first(struct vnet_rq *rq, void *buf, void *ctx,
			       unsigned int len, bool more, bool frags,
			       struct xdp_buff *xdp, unsigned int *truesize)
{
	struct vnet *vi = rq->qp->vi;
	unsigned int room = vnet_rx_ctx_headroom(ctx);
	unsigned int cap = vnet_rx_ctx_truesize(ctx);
	unsigned int max = vnet_xdp_page_frame();
	unsigned int dlen = len - vi->hdr_len, copy;
	struct page *page = virt_to_head_page(buf);
	u8 *data = (u8 *)buf + vi->hdr_len;

	if (room >= XDP_PACKET_HEADROOM && (!more || frags)) {
		vnet_xdp_buff_init(xdp, (u8 *)buf - room, room + vi->hdr_len,
				   dlen, room + cap + VNET_XDP_TAILROOM,
				   &rq->xdp_rxq);
		return true;
	}
	if (!frags && dlen > max) {
		vnet_rx_bad(rq, &rq->stats.drop_bad_len,
			    "frame too long for XDP", len);
		vnet_rx_put_page(rq, page, true);
		return false;
	}
	copy = min(dlen, max);
	if (!vnet_xdp_copy_start(rq, data, copy, xdp)) {
		vnet_rx_put_page(rq, page, true);
		return false;
	}
	if (copy == dlen) {
		vnet_rx_put_page(rq, page, true);
		return true;
	}
	/* the rest of this buffer: the first fragment, keeps the page */
	vnet_xdp_buff_add_frag(xdp, page, data + copy - (u8 *)page_address(page),
			       dlen - copy);
	*truesize += cap;
	return true;
}

static bool vnet_xdp_mergeable(struct vnet_rq *rq, void *buf, void *ctx,
			       unsigned int len, union vnet_rx_hdr *hdr,
			       bool frags, struct xdp_buff *xdp,
			       unsigned int *truesize)
{
	struct vnet *vi = rq->qp->vi;
	unsigned int max = vnet_xdp_page_frame();
	unsigned int left, more;
	struct page *page;
	void *next;

	if (len < vi->hdr_len) {
		vnet_rx_bad(rq, &rq->stats.drop_bad_len, "bad length", len);
		vnet_rx_put_page(rq, virt_to_head_page(buf), true);
		return false;
	}
	memcpy(hdr, buf, vi->hdr_len);
	left = virtio16_to_cpu(vi->vdev, hdr->mrg.num_buffers);
	if (vnet_rx_check_num_buffers(left, rq->ring)) {
		vnet_rx_bad(rq, &rq->stats.drop_bad_hdr, "bad num_buffers",
			    left);
		vnet_rx_put_page(rq, virt_to_head_page(buf), true);
		return false;
	}
	left--;
	if (vnet_rx_check_first(len, vi->hdr_len, vnet_rx_ctx_truesize(ctx))) {
		vnet_rx_bad(rq, &rq->stats.drop_bad_len, "bad length", len);
		vnet_rx_put_page(rq, virt_to_head_page(buf), true);
		vnet_rx_drain(rq, left);
		return false;
	}
	if (!vnet_xdp_mrg_first(rq, buf, ctx, len, left, frags, xdp,
				truesize)) {
		vnet_rx_drain(rq, left);
		return false;
	}

	while (left) {
		left--;
		next = virtqueue_get_buf_ctx(rq->vq, &more, &ctx);
		if (unlikely(!next)) {
			vnet_rx_bad(rq, &rq->stats.drop_bad_hdr,
				    "missing buffers", left + 1);
			goto drop;
		}
		page = virt_to_head_page(next);
		if (vnet_rx_check_more(more, vnet_rx_ctx_truesize(ctx)) ||
		    (!frags && xdp->data_end - xdp->data + more > max)) {
			vnet_rx_bad(rq, &rq->stats.drop_bad_len,
				    "bad length for XDP", more);
			goto drop_next;
		}
		if (!more) {
			vnet_rx_put_page(rq, page, true);
		} else if (!frags) {
			memcpy(xdp->data_end, next, more);
			xdp->data_end += more;
			vnet_rx_put_page(rq, page, true);
		} else if (vnet_xdp_buff_add_frag(xdp, page,
						  (u8 *)next - (u8 *)page_address(page),
						  more)) {
			*truesize += vnet_rx_ctx_truesize(ctx);
		} else {
			vnet_rx_bad(rq, &rq->stats.drop_bad_len,
				    "too many buffers for XDP", left + 1);
			goto drop_next;
		}
	}
	return true;

drop_next:
	vnet_rx_put_page(rq, page, true);
	vnet_rx_drain(rq, left);
drop:
	vnet_xdp_buff_free(rq, xdp);
	return false;
}

/*
 * XDP_PASS: an skb around the first part, the fragments taken over.
 * build_skb() clears the shared info's counts, so they are read first.
 */
static void vnet_xdp_pass(struct vnet_rq *rq, struct xdp_buff *xdp,
			  unsigned int frags_truesize,
			  const union vnet_rx_hdr *hdr)
{
	struct skb_shared_info *sinfo = vnet_xdp_buff_sinfo(xdp);
	unsigned int nr = sinfo ? sinfo->nr_frags : 0;
	unsigned int frags_len = sinfo ? vnet_xdp_frags_len(sinfo) : 0;
	unsigned int meta = xdp->data - xdp->data_meta;
	struct vnet *vi = rq->qp->vi;
	struct sk_buff *skb;

	skb = build_skb(xdp->data_hard_start, xdp->frame_sz);
	if (unlikely(!skb)) {
		vnet_rq_stat_inc(rq, &rq->stats.drop_nomem);
		vnet_xdp_buff_free(rq, xdp);
		return;
	}
	vnet_skb_mark_recycle(rq->pp, skb);
	skb_reserve(skb, xdp->data - xdp->data_hard_start);
	skb_put(skb, xdp->data_end - xdp->data);
	if (meta)
		skb_metadata_set(skb, meta);
	if (nr)
		vnet_xdp_skb_frags(skb, xdp, nr, frags_len, frags_truesize);
	if (hdr->mrg.hdr.flags & VIRTIO_NET_HDR_F_DATA_VALID)
		skb->ip_summed = CHECKSUM_UNNECESSARY;
	skb_record_rx_queue(skb, rq->qp->index);
	skb->protocol = eth_type_trans(skb, vi->dev);
	vnet_rx_set_hash(vi, skb, hdr);
	napi_gro_receive(&rq->napi, skb);
}

/* Length of the frame in @xdp, fragments included. */
static unsigned int vnet_xdp_len(struct xdp_buff *xdp)
{
	struct skb_shared_info *sinfo = vnet_xdp_buff_sinfo(xdp);

	return xdp->data_end - xdp->data +
	       (sinfo ? vnet_xdp_frags_len(sinfo) : 0);
}

/*
 * Guest offloads are off while a program is attached, so a frame whose
 * header says it is coalesced or needs its checksum completed is bogus:
 * counted and logged here, the caller drops it.
 */
bool vnet_xdp_hdr_offloaded(struct vnet_rq *rq, const union vnet_rx_hdr *hdr)
{
	if (hdr->mrg.hdr.gso_type == VIRTIO_NET_HDR_GSO_NONE &&
	    !(hdr->mrg.hdr.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		return false;
	vnet_rx_bad(rq, &rq->stats.drop_bad_hdr, "offloaded frame with XDP",
		    hdr->mrg.hdr.gso_type);
	return true;
}

/*
 * Carry out a program's verdict @act on a received frame, XDP_PASS and
 * the freeing of a dropped frame left to the caller: XDP_TX sends a frame
 * converted from @xdp (a copy, for an AF_XDP buffer), XDP_REDIRECT
 * redirects it.  A drop is counted here.
 */
enum vnet_xdp_verdict vnet_xdp_act(struct vnet_rq *rq, struct bpf_prog *prog,
				   struct xdp_buff *xdp, u32 act)
{
	struct vnet *vi = rq->qp->vi;
	struct xdp_frame *xf;

	switch (act) {
	case XDP_PASS:
		return VNET_XDP_PASS;
	case XDP_TX:
		xf = xdp_convert_buff_to_frame(xdp);
		if (unlikely(!xf))
			break;
		vnet_rq_stat_inc(rq, &rq->stats.xdp_tx);
		if (unlikely(vnet_xdp_send(vi, &xf, 1, false) != 1))
			xdp_return_frame_rx_napi(xf);
		else
			rq->xdp_pending |= VNET_XDP_PEND_TX;
		return VNET_XDP_DONE;
	case XDP_REDIRECT:
		if (xdp_do_redirect(vi->dev, xdp, prog))
			break;
		vnet_rq_stat_inc(rq, &rq->stats.xdp_redirects);
		rq->xdp_pending |= VNET_XDP_PEND_REDIRECT;
		return VNET_XDP_DONE;
	default:
		vnet_xdp_warn_action(vi->dev, prog, act);
		fallthrough;
	case XDP_ABORTED:
		trace_xdp_exception(vi->dev, prog, act);
		fallthrough;
	case XDP_DROP:
		break;
	}
	vnet_rq_stat_inc(rq, &rq->stats.xdp_drops);
	return VNET_XDP_DROP;
}

/*
 * Run the attached program on one received frame (its buffers are
 * consumed whatever happens).  Returns false when no program is attached
 * after all (rx.c then takes the frame) or the layout has none (big).
 */
bool vnet_xdp_rx(struct vnet_rq *rq, void *buf, void *ctx, unsigned int len,
		 u64 *bytes)
{
	struct vnet *vi = rq->qp->vi;
	unsigned int frags_truesize = 0, flen;
	struct vnet_xdp_buff vx;
	struct xdp_buff *xdp = &vx.xdp;
	union vnet_rx_hdr hdr;
	struct bpf_prog *prog;
	bool ok;
	u32 act;

	if (vi->rx_mode == VNET_RX_BIG)
		return false;
	rcu_read_lock();
	prog = rcu_dereference(vi->xdp_prog);
	if (!prog) {
		rcu_read_unlock();
		return false;
	}
	if (vi->rx_mode == VNET_RX_SMALL)
		ok = vnet_xdp_small(rq, buf, ctx, len, &hdr, xdp);
	else
		ok = vnet_xdp_mergeable(rq, buf, ctx, len, &hdr,
					vnet_xdp_prog_frags(prog), xdp,
					&frags_truesize);
	if (!ok)
		goto out;
	if (vnet_xdp_hdr_offloaded(rq, &hdr)) {
		vnet_xdp_buff_free(rq, xdp);
		goto out;
	}
	flen = vnet_xdp_len(xdp);
	vnet_xdp_buff_hash(vi, xdp, &hdr);
	if (vi->rx_mode == VNET_RX_MERGEABLE)
		ewma_vnet_pkt_len_add(&rq->avg_len, flen);

	act = bpf_prog_run_xdp(prog, xdp);
	*bytes += flen;
	vnet_rq_stat_inc(rq, &rq->stats.xdp_packets);

	switch (vnet_xdp_act(rq, prog, xdp, act)) {
	case VNET_XDP_PASS:
		vnet_xdp_pass(rq, xdp, frags_truesize, &hdr);
		break;
	case VNET_XDP_DROP:
		vnet_xdp_buff_free(rq, xdp);
		break;
	case VNET_XDP_DONE:
		break;
	}
out:
	rcu_read_unlock();
	return true;
}

/* End of a receive poll: flush redirects, notify for XDP_TX frames. */
void vnet_xdp_rx_end(struct vnet_rq *rq)
{
	u8 pending = rq->xdp_pending;

	rq->xdp_pending = 0;
	if (pending & VNET_XDP_PEND_REDIRECT)
		xdp_do_flush();
	if (pending & VNET_XDP_PEND_TX)
		vnet_xdp_send(rq->qp->vi, NULL, 0, true);
}

/* --- attach, detach --- */

static void vnet_xdp_rxq_unreg(struct vnet *vi, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		xdp_rxq_info_unreg(&vi->qp[i].rq.xdp_rxq);
}

static int vnet_xdp_rxq_reg_all(struct vnet *vi)
{
	unsigned int i;
	int err;

	for (i = 0; i < vi->max_pairs; i++) {
		struct vnet_rq *rq = &vi->qp[i].rq;

		err = vnet_xdp_rxq_reg(&rq->xdp_rxq, vi->dev, i,
				       rq->napi.napi_id);
		/* XDP frames go back where their pages came from. */
		if (!err) {
			err = xdp_rxq_info_reg_mem_model(&rq->xdp_rxq,
							 rq->pp ?
							 MEM_TYPE_PAGE_POOL :
							 MEM_TYPE_PAGE_SHARED,
							 rq->pp);
			if (err)
				xdp_rxq_info_unreg(&rq->xdp_rxq);
		}
		if (err) {
			vnet_xdp_rxq_unreg(vi, i);
			return err;
		}
	}
	return 0;
}

static int vnet_xdp_start(struct vnet *vi, struct netlink_ext_ack *extack)
{
	unsigned int stack = vi->curr_pairs;
	unsigned int extra;
	int err;

	err = vnet_xdp_rxq_reg_all(vi);
	if (err)
		return err;
	if (vi->offloads) {
		err = vnet_ctrl_set_offloads(vi, 0);
		if (err) {
			NL_SET_ERR_MSG_MOD(extack, "the device refused to turn guest offloads off");
			vnet_xdp_rxq_unreg(vi, vi->max_pairs);
			return err;
		}
		vi->xdp_saved_offloads = vi->offloads;
		vi->offloads = 0;
	}
	WRITE_ONCE(vi->xdp_headroom, XDP_PACKET_HEADROOM);

	extra = vnet_xdp_dedicated_pairs(vi->max_pairs, stack, nr_cpu_ids);
	if (extra && !vnet_set_pairs(vi, stack + extra)) {
		/* The stack keeps its queues; the rest are XDP's. */
		netif_set_real_num_tx_queues(vi->dev, stack);
		WRITE_ONCE(vi->xdp_pairs, extra);
		vnet_affinity_update();
	} else {
		netdev_info(vi->dev, "XDP: %u queue pairs for %u CPUs: XDP frames share the stack's queues, under their lock\n",
			    vi->max_pairs, nr_cpu_ids);
	}
	return 0;
}

static void vnet_xdp_stop(struct vnet *vi)
{
	unsigned int extra = vi->xdp_pairs;

	WRITE_ONCE(vi->xdp_pairs, 0);
	/*
	 * The stack gets its own pair count back, unless the netdev is going
	 * away (the core detaches programs while unregistering it; queue
	 * counts changed then leave references on the netdev behind).
	 */
	if (extra && vi->dev->reg_state == NETREG_REGISTERED) {
		if (vnet_set_pairs(vi, vi->curr_pairs - extra))
			netdev_warn(vi->dev, "XDP queue pairs stay enabled\n");
		vnet_affinity_update();
	}
	WRITE_ONCE(vi->xdp_headroom, 0);
	if (vi->xdp_saved_offloads) {
		if (vnet_ctrl_set_offloads(vi, vi->xdp_saved_offloads))
			netdev_warn(vi->dev, "device refused guest offloads %#llx\n",
				    vi->xdp_saved_offloads);
		else
			vi->offloads = vi->xdp_saved_offloads;
		vi->xdp_saved_offloads = 0;
	}
	vnet_xdp_rxq_unreg(vi, vi->max_pairs);
}

/*
 * A program leaves a device that has no virtqueues (detached: its restore
 * failed).  Nothing may touch the queues or the device, which is reset;
 * only the state goes, so that the next restore programs the stack's
 * pairs and offloads (vnet_replay_filters()).  Caller holds RTNL.
 */
static void vnet_xdp_forget(struct vnet *vi)
{
	unsigned int extra = vi->xdp_pairs;

	WRITE_ONCE(vi->xdp_pairs, 0);
	if (extra) {
		WRITE_ONCE(vi->curr_pairs, vi->curr_pairs - extra);
		/* as in vnet_xdp_stop(): not while the netdev goes away */
		if (vi->dev->reg_state == NETREG_REGISTERED)
			netif_set_real_num_rx_queues(vi->dev, vi->curr_pairs);
	}
	WRITE_ONCE(vi->xdp_headroom, 0);
	if (vi->xdp_saved_offloads) {
		vi->offloads = vi->xdp_saved_offloads;
		vi->xdp_saved_offloads = 0;
	}
	vnet_xdp_rxq_unreg(vi, vi->max_pairs);
}

static void vnet_xdp_get_limits(struct vnet_xdp_limits *lim)
{
	lim->single = vnet_xdp_page_frame();
	lim->frags = vnet_xdp_max_frags_frame(MAX_SKB_FRAGS,
					      VNET_GOOD_FRAME_LEN);
}

/* ndo_change_mtu: why the attached program refuses @mtu, or NULL. */
const char *vnet_xdp_check_new_mtu(struct vnet *vi, unsigned int mtu)
{
	struct bpf_prog *prog = rtnl_dereference(vi->xdp_prog);
	struct vnet_xdp_limits lim;

	if (!prog)
		return NULL;
	vnet_xdp_get_limits(&lim);
	return vnet_xdp_check_mtu((enum vnet_xdp_layout)vi->rx_mode, mtu,
				  vnet_xdp_prog_frags(prog), &lim);
}

static int vnet_xdp_set(struct net_device *dev, struct bpf_prog *prog,
			struct netlink_ext_ack *extack)
{
	struct vnet *vi = netdev_priv(dev);
	struct bpf_prog *old = rtnl_dereference(vi->xdp_prog);
	struct vnet_xdp_limits lim;
	const char *why = NULL;
	int err;

	ASSERT_RTNL();
	BUILD_BUG_ON((int)VNET_XDP_SMALL != (int)VNET_RX_SMALL ||
		     (int)VNET_XDP_BIG != (int)VNET_RX_BIG ||
		     (int)VNET_XDP_MERGEABLE != (int)VNET_RX_MERGEABLE);
	/*
	 * Detached (a restore failed, so there are no virtqueues; ethtool is
	 * refused then, ndo_bpf is not): a program may go, none may come.
	 */
	if (!netif_device_present(dev) || !vi->qp[0].sq.vq) {
		if (prog) {
			vnet_extack_msg(extack,
					"the device has no virtqueues (its restore failed); attach after the next resume");
			netdev_warn(dev, "XDP: the device has no virtqueues (its restore failed)\n");
			return -ENODEV;
		}
		rcu_assign_pointer(vi->xdp_prog, NULL);
		if (old) {
			bpf_prog_put(old);
			vnet_xdp_forget(vi);
		}
		return 0;
	}
	/* A replacement is checked too: it may not take fragments. */
	if (prog) {
		vnet_xdp_get_limits(&lim);
		why = vnet_xdp_check_attach((enum vnet_xdp_layout)vi->rx_mode,
					    dev->mtu, vnet_xdp_prog_frags(prog),
					    &lim, vi->offloads,
					    vnet_has(vi, VIRTIO_NET_F_CTRL_GUEST_OFFLOADS));
	}
	if (why) {
		vnet_extack_msg(extack, why);
		netdev_warn(dev, "XDP: %s\n", why);
		return -EOPNOTSUPP;
	}
	if (prog && !old) {
		err = vnet_xdp_start(vi, extack);
		if (err)
			return err;
	}
	rcu_assign_pointer(vi->xdp_prog, prog);
	if (old)
		bpf_prog_put(old);
	if (!prog && old) {
		/* No receive poll uses the program or the rxq info any more. */
		synchronize_net();
		vnet_xdp_stop(vi);
	}
	return 0;
}

int vnet_bpf(struct net_device *dev, struct netdev_bpf *bpf)
{
	switch (bpf->command) {
	case XDP_SETUP_PROG:
		return vnet_xdp_set(dev, bpf->prog, bpf->extack);
#if VNET_CAN_XSK
	case XDP_SETUP_XSK_POOL:
		return vnet_xsk_pool_setup(netdev_priv(dev), bpf->xsk.pool,
					   bpf->xsk.queue_id);
#endif
	default:
		return -EINVAL;
	}
}
