// SPDX-License-Identifier: GPL-2.0-only
/*
 * Receive path: posting buffers, turning used buffers into skbs.
 *
 * Three buffer layouts, chosen at probe (see device.c):
 *  - small: one frag-cache chunk per frame with room for skb_shared_info,
 *    wrapped by build_skb() without copying;
 *  - mergeable: chunks sized from the average frame length; a frame may
 *    span several, the header says how many (num_buffers);
 *  - big: a chain of whole pages per frame (header in the first page),
 *    for devices that send large frames but cannot merge buffers.
 * Small and mergeable chunks come from the queue's page pool when it has
 * one (rx_page_pool): every reference to such a page then goes back
 * through the pool, and skbs built on them are marked for recycling.
 * Everything the device reports (used length, buffer count, header) is
 * validated before use; a bad frame is dropped and counted by reason.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/skbuff.h>
#include <linux/mm.h>
#include <net/xdp_sock_drv.h>
#include "compat.h"
#include "policy/features.h"
#include "vnet.h"

/* @room: extra headroom for XDP programs (0 without one). */
static unsigned int vnet_small_truesize(const struct vnet *vi,
					unsigned int room)
{
	return SKB_DATA_ALIGN(VNET_RX_PAD + room + vi->hdr_len +
			      VNET_GOOD_FRAME_LEN) +
	       SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
}

/* --- big-packet page chains, linked through page->private --- */

static struct page *vnet_chain_next(struct page *p)
{
	return (struct page *)page_private(p);
}

static void vnet_give_pages(struct vnet_rq *rq, struct page *chain)
{
	struct page *end = chain;

	while (vnet_chain_next(end))
		end = vnet_chain_next(end);
	set_page_private(end, (unsigned long)rq->spare_pages);
	rq->spare_pages = chain;
}

static struct page *vnet_take_page(struct vnet_rq *rq, gfp_t gfp)
{
	struct page *p = rq->spare_pages;

	if (p) {
		rq->spare_pages = vnet_chain_next(p);
		set_page_private(p, 0);
		return p;
	}
	return alloc_page(gfp);
}

/* --- page pools --- */

#if VNET_CAN_PAGE_POOL
/*
 * One pool per receive queue for small and mergeable buffers, sized for
 * the ring as probed (its largest size: ethtool -G only shrinks it from
 * there, so the pool outlives resizes).  The pool does no DMA mapping;
 * the virtqueue maps each buffer as it is posted.
 */
int vnet_rx_pools_create(struct vnet *vi)
{
	struct page_pool_params pp;
	struct page_pool *pool;
	unsigned int i;

	if (!vnet_opts.rx_page_pool || vi->rx_mode == VNET_RX_BIG)
		return 0;
	for (i = 0; i < vi->max_pairs; i++) {
		struct vnet_rq *rq = &vi->qp[i].rq;

		memset(&pp, 0, sizeof(pp));
		pp.order = 0;
		pp.pool_size = virtqueue_get_vring_size(rq->vq);
		pp.nid = dev_to_node(vi->vdev->dev.parent);
		vnet_page_pool_link(&pp, vi->dev, &rq->napi);
		pool = page_pool_create(&pp);
		if (IS_ERR(pool)) {
			vnet_rx_pools_destroy(vi);
			return PTR_ERR(pool);
		}
		rq->pp = pool;
	}
	return 0;
}

/*
 * After every buffer left the rings and with each queue's NAPI off.  A
 * pool whose pages are still held (by skbs in sockets, XDP frames in
 * flight) lingers until the last one comes back.
 */
void vnet_rx_pools_destroy(struct vnet *vi)
{
	unsigned int i;

	for (i = 0; i < vi->max_pairs; i++) {
		struct vnet_rq *rq = &vi->qp[i].rq;

		if (rq->pp) {
			page_pool_destroy(rq->pp);
			rq->pp = NULL;
		}
	}
}
#else
int vnet_rx_pools_create(struct vnet *vi)
{
	return 0;
}

void vnet_rx_pools_destroy(struct vnet *vi)
{
}
#endif

/*
 * Drop one reference to a receive buffer's page.  @napi: called from the
 * queue's own poll, where the pool may recycle without locking.
 */
void vnet_rx_put_page(struct vnet_rq *rq, struct page *page, bool napi)
{
	vnet_pp_put_page(rq->pp, page, napi);
}

/* @size bytes for a small or mergeable buffer. */
static char *vnet_rx_alloc(struct vnet_rq *rq, unsigned int size, gfp_t gfp)
{
	struct page_frag *frag = &rq->frag;
	char *buf;

#if VNET_CAN_PAGE_POOL
	if (rq->pp) {
		unsigned int off;
		struct page *page;

		page = page_pool_alloc_frag(rq->pp, &off, size, gfp);
		return page ? (char *)page_address(page) + off : NULL;
	}
#endif
	if (unlikely(!skb_page_frag_refill(size, frag, gfp)))
		return NULL;
	buf = (char *)page_address(frag->page) + frag->offset;
	get_page(frag->page);
	frag->offset += size;
	return buf;
}

/*
 * A whole page for a frame that XDP needs in one piece (receive poll):
 * from the pool when the queue has one, as XDP frames of a pool queue
 * are returned to it.
 */
void *vnet_rx_alloc_page(struct vnet_rq *rq)
{
	struct page *page;

#if VNET_CAN_PAGE_POOL
	if (rq->pp)
		return vnet_rx_alloc(rq, PAGE_SIZE, GFP_ATOMIC);
#endif
	page = alloc_page(GFP_ATOMIC);
	return page ? page_address(page) : NULL;
}

/* --- posting buffers --- */

static int vnet_add_small(struct vnet_rq *rq, gfp_t gfp)
{
	struct vnet *vi = rq->qp->vi;
	unsigned int room = READ_ONCE(vi->xdp_headroom);
	unsigned int truesize = vnet_small_truesize(vi, room);
	char *buf;
	int err;

	buf = vnet_rx_alloc(rq, truesize, gfp);
	if (unlikely(!buf))
		return -ENOMEM;

	sg_init_one(rq->sg, buf + VNET_RX_PAD + room,
		    vi->hdr_len + VNET_GOOD_FRAME_LEN);
	err = virtqueue_add_inbuf_ctx(rq->vq, rq->sg, 1, buf,
				      vnet_rx_ctx(truesize, room), gfp);
	if (err < 0)
		vnet_rx_put_page(rq, virt_to_head_page(buf), false);
	return err;
}

/*
 * Size of the next mergeable buffer (also shown in sysfs): the device's
 * part of it, without the headroom and tailroom XDP needs around it.
 */
static unsigned int vnet_rx_mrg_len_room(struct vnet_rq *rq,
					 unsigned int room)
{
	unsigned int tail = room ? VNET_XDP_TAILROOM : 0;

	return vnet_mrg_buf_len(ewma_vnet_pkt_len_read(&rq->avg_len),
				rq->mrg_min_len, rq->qp->vi->hdr_len,
				PAGE_SIZE - room - tail, L1_CACHE_BYTES);
}

unsigned int vnet_rx_mrg_len(struct vnet_rq *rq)
{
	return vnet_rx_mrg_len_room(rq, READ_ONCE(rq->qp->vi->xdp_headroom));
}

/*
 * A mergeable buffer: [XDP headroom][device's part][XDP tailroom], the
 * rooms only while an XDP program may run.  The token the ring returns
 * is the start of the device's part; its context says how large that is
 * and how much headroom precedes it.
 */
static int vnet_add_mergeable(struct vnet_rq *rq, gfp_t gfp)
{
	unsigned int room = READ_ONCE(rq->qp->vi->xdp_headroom);
	unsigned int tail = room ? VNET_XDP_TAILROOM : 0;
	struct page_frag *frag = &rq->frag;
	unsigned int len, hole, alloc;
	char *buf;
	int err;

	len = vnet_rx_mrg_len_room(rq, room);
	alloc = room + len + tail;
	buf = vnet_rx_alloc(rq, alloc, gfp);
	if (unlikely(!buf))
		return -ENOMEM;
	buf += room;
	/* A tail too short for another buffer goes to this one. */
	hole = frag->size - frag->offset;
	if (!rq->pp && hole < alloc) {
		len += hole;
		frag->offset += hole;
	}

	sg_init_one(rq->sg, buf, len);
	err = virtqueue_add_inbuf_ctx(rq->vq, rq->sg, 1, buf,
				      vnet_rx_ctx(len, room), gfp);
	if (err < 0)
		vnet_rx_put_page(rq, virt_to_head_page(buf), false);
	return err;
}

static int vnet_add_big(struct vnet_rq *rq, gfp_t gfp)
{
	struct vnet *vi = rq->qp->vi;
	unsigned int n = vi->big_pages, i;
	struct page *first = NULL, *p;
	char *base;
	int err;

	/* sg[0] is the header, sg[1..n] the data: built back to front. */
	sg_init_table(rq->sg, n + 1);
	for (i = n; i > 0; i--) {
		p = vnet_take_page(rq, gfp);
		if (!p) {
			if (first)
				vnet_give_pages(rq, first);
			return -ENOMEM;
		}
		set_page_private(p, (unsigned long)first);
		first = p;
		if (i > 1)
			sg_set_buf(&rq->sg[i], page_address(p), PAGE_SIZE);
	}
	base = page_address(first);
	sg_set_buf(&rq->sg[0], base, vi->hdr_len);
	sg_set_buf(&rq->sg[1], base + VNET_BIG_HDR_PAD,
		   PAGE_SIZE - VNET_BIG_HDR_PAD);

	err = virtqueue_add_inbuf(rq->vq, rq->sg, n + 1, first, gfp);
	if (err < 0)
		vnet_give_pages(rq, first);
	return err;
}

/*
 * Fill the ring.  Returns false only when memory ran out (the caller then
 * retries later from process context); a full ring is success.
 */
bool vnet_rx_fill(struct vnet_rq *rq, gfp_t gfp)
{
	struct xsk_buff_pool *pool = READ_ONCE(rq->xsk_pool);
	struct vnet *vi = rq->qp->vi;
	bool oom = false, kicked = false, ok = true;
	int err;

	if (VNET_CAN_XSK && pool) {
		/* a dry pool is counted as such, not as memory shortage */
		ok = vnet_xsk_fill(rq, pool, gfp);
		goto kick;
	}
	while (rq->vq->num_free) {
		switch (vi->rx_mode) {
		case VNET_RX_MERGEABLE:
			err = vnet_add_mergeable(rq, gfp);
			break;
		case VNET_RX_BIG:
			err = vnet_add_big(rq, gfp);
			break;
		default:
			err = vnet_add_small(rq, gfp);
			break;
		}
		if (err) {
			oom = err == -ENOMEM;
			break;
		}
	}

kick:
	u64_stats_update_begin(&rq->stats.syncp);
	if (oom)
		u64_stats_inc(&rq->stats.refill_nomem);
	if (virtqueue_kick_prepare(rq->vq) && virtqueue_notify(rq->vq)) {
		u64_stats_inc(&rq->stats.kicks);
		kicked = true;
	}
	u64_stats_update_end(&rq->stats.syncp);
	if (kicked && vi->rss)
		vnet_rss_refilled(vi, rq);
	return ok && !oom;
}

/* --- receiving --- */

void vnet_rx_bad(struct vnet_rq *rq, u64_stats_t *ctr, const char *why,
		 unsigned int val)
{
	vnet_rq_stat_inc(rq, ctr);
	net_warn_ratelimited("%s: %s: dropped a frame with %s (%u)\n",
			     rq->qp->vi->dev->name, rq->name, why, val);
}

/* Give back @n further buffers of a frame that is being dropped. */
void vnet_rx_drain(struct vnet_rq *rq, unsigned int n)
{
	unsigned int len;
	void *buf;

	while (n--) {
		buf = virtqueue_get_buf(rq->vq, &len);
		if (!buf)
			break;
		vnet_rx_put_page(rq, virt_to_head_page(buf), true);
	}
}

/*
 * Attach @len bytes at @page + @off to the frame.  Adjacent chunks of the
 * same page merge into one fragment; when a skb's fragment slots are full
 * the frame continues in skbs chained on the head's frag_list.  @pp: the
 * page pool @page comes from, NULL for a page of its own; the caller
 * marked @head for recycling then, this marks what it chains on.
 */
bool vnet_rx_append(struct page_pool *pp, struct sk_buff *head,
		    struct sk_buff **curr, struct page *page, unsigned int off,
		    unsigned int len, unsigned int truesize)
{
	struct sk_buff *skb = *curr;
	int nr = skb_shinfo(skb)->nr_frags;

	if (skb_can_coalesce(skb, nr, page, off)) {
		vnet_pp_put_page(pp, page, true);
		skb_coalesce_rx_frag(skb, nr - 1, len, truesize);
	} else {
		if (nr == MAX_SKB_FRAGS) {
			struct sk_buff *nskb = alloc_skb(0, GFP_ATOMIC);

			if (unlikely(!nskb))
				return false;
			vnet_skb_mark_recycle(pp, nskb);
			if (skb == head)
				skb_shinfo(head)->frag_list = nskb;
			else
				skb->next = nskb;
			head->truesize += nskb->truesize;
			*curr = skb = nskb;
			nr = 0;
		}
		skb_add_rx_frag(skb, nr, page, off, len, truesize);
	}
	if (skb != head) {
		head->data_len += len;
		head->len += len;
		head->truesize += truesize;
	}
	return true;
}

static struct sk_buff *vnet_rx_small(struct vnet_rq *rq, void *buf, void *ctx,
				     unsigned int len,
				     union vnet_rx_hdr *hdr)
{
	struct vnet *vi = rq->qp->vi;
	unsigned int truesize = vnet_rx_ctx_truesize(ctx);
	unsigned int pad = VNET_RX_PAD + vnet_rx_ctx_headroom(ctx);
	struct sk_buff *skb;

	if (vnet_rx_check_first(len, vi->hdr_len,
				vi->hdr_len + VNET_GOOD_FRAME_LEN)) {
		vnet_rx_bad(rq, &rq->stats.drop_bad_len, "bad length", len);
		goto drop;
	}
	memcpy(hdr, buf + pad, vi->hdr_len);

	skb = build_skb(buf, truesize);
	if (unlikely(!skb)) {
		vnet_rq_stat_inc(rq, &rq->stats.drop_nomem);
		goto drop;
	}
	vnet_skb_mark_recycle(rq->pp, skb);
	skb_reserve(skb, pad + vi->hdr_len);
	skb_put(skb, len - vi->hdr_len);
	return skb;
drop:
	vnet_rx_put_page(rq, virt_to_head_page(buf), true);
	return NULL;
}

static struct sk_buff *vnet_rx_big(struct vnet_rq *rq, struct page *first,
				   unsigned int len,
				   union vnet_rx_hdr *hdr)
{
	struct vnet *vi = rq->qp->vi;
	unsigned int cap = vi->hdr_len + vnet_big_capacity(vi->big_pages,
							   PAGE_SIZE);
	unsigned int off, copy, n;
	struct sk_buff *skb;
	struct page *p, *next;
	char *data;

	if (vnet_rx_check_first(len, vi->hdr_len, cap)) {
		vnet_rx_bad(rq, &rq->stats.drop_bad_len, "bad length", len);
		goto drop;
	}
	memcpy(hdr, page_address(first), vi->hdr_len);
	len -= vi->hdr_len;

	skb = napi_alloc_skb(&rq->napi, VNET_COPY_LEN);
	if (unlikely(!skb)) {
		vnet_rq_stat_inc(rq, &rq->stats.drop_nomem);
		goto drop;
	}
	data = (char *)page_address(first) + VNET_BIG_HDR_PAD;
	copy = vnet_rx_copy_len(len, skb_tailroom(skb));
	skb_put_data(skb, data, copy);
	len -= copy;
	off = VNET_BIG_HDR_PAD + copy;

	p = first;
	while (len) {
		n = min_t(unsigned int, PAGE_SIZE - off, len);
		next = vnet_chain_next(p);
		set_page_private(p, 0);
		skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, p, off, n,
				PAGE_SIZE);
		len -= n;
		off = 0;
		p = next;
	}
	if (p)
		vnet_give_pages(rq, p);
	return skb;
drop:
	vnet_give_pages(rq, first);
	return NULL;
}

static struct sk_buff *vnet_rx_mergeable(struct vnet_rq *rq, void *buf,
					 void *ctx, unsigned int len,
					 union vnet_rx_hdr *hdr)
{
	struct vnet *vi = rq->qp->vi;
	unsigned int truesize = vnet_rx_ctx_truesize(ctx);
	struct page *page = virt_to_head_page(buf);
	unsigned int left, copy, dlen;
	struct sk_buff *skb, *curr;
	char *data;

	if (len < vi->hdr_len) {
		/* Not even a header: num_buffers is unknown, drop just this. */
		vnet_rx_bad(rq, &rq->stats.drop_bad_len, "bad length", len);
		vnet_rx_put_page(rq, page, true);
		return NULL;
	}
	memcpy(hdr, buf, vi->hdr_len);
	left = virtio16_to_cpu(vi->vdev, hdr->mrg.num_buffers);
	if (vnet_rx_check_num_buffers(left, rq->ring)) {
		vnet_rx_bad(rq, &rq->stats.drop_bad_hdr, "bad num_buffers",
			    left);
		vnet_rx_put_page(rq, page, true);
		return NULL;
	}
	left--;
	if (vnet_rx_check_first(len, vi->hdr_len, truesize)) {
		vnet_rx_bad(rq, &rq->stats.drop_bad_len, "bad length", len);
		vnet_rx_put_page(rq, page, true);
		vnet_rx_drain(rq, left);
		return NULL;
	}

	data = (char *)buf + vi->hdr_len;
	dlen = len - vi->hdr_len;
	/*
	 * The skb is built around the buffer when the frame leaves room
	 * for the skb's shared info at its end, else it gets a small head
	 * of its own (the whole frame copied when it fits) and the buffer
	 * becomes its first fragment.  Built, a small frame's skb is as
	 * large as its buffer (1.8 KiB for the usual 1.5 KiB one); head
	 * plus fragment is 2.8 KiB, and that is more than TCP's receive
	 * fast path allows: it takes a segment only if its truesize fits
	 * the socket's forward allocation, which 6.1 keeps below a page,
	 * so every segment of a request/response flow went down the slow
	 * path.  Frames of up to VNET_COPY_LEN bytes are copied, as
	 * before: their buffer goes back to the ring's allocator at once.
	 */
	if (!NET_IP_ALIGN && dlen > VNET_COPY_LEN &&
	    !vnet_rx_ctx_headroom(ctx) &&
	    vnet_rx_build_fits(len, truesize, VNET_XDP_TAILROOM)) {
		skb = build_skb(buf, truesize);
		if (unlikely(!skb))
			goto nomem;
		vnet_skb_mark_recycle(rq->pp, skb);
		skb_reserve(skb, vi->hdr_len);
		skb_put(skb, dlen);
	} else {
		skb = napi_alloc_skb(&rq->napi, VNET_COPY_LEN);
		if (unlikely(!skb))
			goto nomem;
		copy = vnet_rx_copy_len(dlen, skb_tailroom(skb));
		vnet_skb_mark_recycle(rq->pp, skb);
		skb_put_data(skb, data, copy);
		if (dlen > copy)
			skb_add_rx_frag(skb, 0, page,
					data + copy - (char *)page_address(page),
					dlen - copy, truesize);
		else
			vnet_rx_put_page(rq, page, true);
	}

	curr = skb;
	while (left) {
		left--;
		buf = virtqueue_get_buf_ctx(rq->vq, &len, &ctx);
		if (unlikely(!buf)) {
			vnet_rx_bad(rq, &rq->stats.drop_bad_hdr,
				    "missing buffers", left + 1);
			goto drop;
		}
		page = virt_to_head_page(buf);
		truesize = vnet_rx_ctx_truesize(ctx);
		if (vnet_rx_check_more(len, truesize)) {
			vnet_rx_bad(rq, &rq->stats.drop_bad_len, "bad length",
				    len);
			vnet_rx_put_page(rq, page, true);
			vnet_rx_drain(rq, left);
			goto drop;
		}
		if (!len) {
			vnet_rx_put_page(rq, page, true);
			continue;
		}
		if (!vnet_rx_append(rq->pp, skb, &curr, page,
				    (char *)buf - (char *)page_address(page),
				    len, truesize)) {
			vnet_rq_stat_inc(rq, &rq->stats.drop_nomem);
			vnet_rx_put_page(rq, page, true);
			vnet_rx_drain(rq, left);
			goto drop;
		}
	}
	ewma_vnet_pkt_len_add(&rq->avg_len, skb->len);
	return skb;
nomem:
	vnet_rq_stat_inc(rq, &rq->stats.drop_nomem);
	vnet_rx_put_page(rq, page, true);
	vnet_rx_drain(rq, left);
	return NULL;
drop:
	dev_kfree_skb(skb);
	return NULL;
}

/*
 * The assembled frame's length and its header, before the kernel acts on
 * them: a device that is wrong about either gets its frame dropped.
 */
static bool vnet_rx_hdr_ok(struct vnet_rq *rq, const struct sk_buff *skb,
			   const union vnet_rx_hdr *rh)
{
	const struct virtio_net_hdr *hdr = &rh->mrg.hdr;
	struct vnet *vi = rq->qp->vi;
	struct vnet_rx_hdr_fields f = {
		.flags = hdr->flags,
		.gso_type = hdr->gso_type,
		.gso_size = __virtio16_to_cpu(vi->little_endian, hdr->gso_size),
		.csum_start = __virtio16_to_cpu(vi->little_endian,
						hdr->csum_start),
		.csum_offset = __virtio16_to_cpu(vi->little_endian,
						 hdr->csum_offset),
	};
	const char *why;

	if (vi->hdr_len >= VNET_HDR_TNL_LEN) {
		f.outer_th_offset = le16_to_cpu(rh->tnl.outer_th_offset);
		f.inner_nh_offset = le16_to_cpu(rh->tnl.inner_nh_offset);
	}

	if (vnet_rx_check_frame(skb->len,
				vnet_max_rx_frame(vi->guest_gso,
						  vi->dev->max_mtu))) {
		vnet_rx_bad(rq, &rq->stats.drop_bad_len, "frame too long",
			    skb->len);
		return false;
	}
	if (vnet_rx_check_hdr(&f, skb->len, vi->rx_hdr_allowed, &why)) {
		vnet_rq_stat_inc(rq, &rq->stats.drop_bad_hdr);
		net_warn_ratelimited("%s: %s: dropped a %u-byte frame: %s (flags %#x gso_type %#x gso_size %u csum_start %u csum_offset %u outer_th %u inner_nh %u)\n",
				     vi->dev->name, rq->name, skb->len, why,
				     f.flags, f.gso_type, f.gso_size,
				     f.csum_start, f.csum_offset,
				     f.outer_th_offset, f.inner_nh_offset);
		return false;
	}
	return true;
}

/* Turn one used buffer (and those it announces) into a delivered frame. */
static void vnet_rx_one(struct vnet_rq *rq, void *buf, void *ctx,
			unsigned int len, u64 *bytes)
{
	struct vnet *vi = rq->qp->vi;
	union vnet_rx_hdr hdr;
	struct sk_buff *skb;

	if (rcu_access_pointer(vi->xdp_prog) && vnet_xdp_rx(rq, buf, ctx, len,
							    bytes))
		return;

	switch (vi->rx_mode) {
	case VNET_RX_MERGEABLE:
		skb = vnet_rx_mergeable(rq, buf, ctx, len, &hdr);
		break;
	case VNET_RX_BIG:
		skb = vnet_rx_big(rq, buf, len, &hdr);
		break;
	default:
		skb = vnet_rx_small(rq, buf, ctx, len, &hdr);
		break;
	}
	if (likely(skb))
		vnet_rx_deliver(rq, skb, &hdr, bytes);
}

/* Check an assembled frame against its header and hand it to the stack. */
void vnet_rx_deliver(struct vnet_rq *rq, struct sk_buff *skb,
		     union vnet_rx_hdr *hdr, u64 *bytes)
{
	struct vnet *vi = rq->qp->vi;

	if (unlikely(!vnet_rx_hdr_ok(rq, skb, hdr))) {
		dev_kfree_skb(skb);
		return;
	}

	if (hdr->mrg.hdr.flags & VIRTIO_NET_HDR_F_DATA_VALID) {
		skb->ip_summed = CHECKSUM_UNNECESSARY;
		/* The device checked the outer UDP checksum too. */
		if (hdr->mrg.hdr.flags & VNET_HDR_F_UDP_TUNNEL_CSUM)
			skb->csum_level = 1;
	}
	if (vnet_hdr_to_skb(skb, hdr, vi->rx_tnl, vi->rx_tnl_csum,
			    vi->little_endian)) {
		vnet_rx_bad(rq, &rq->stats.drop_bad_hdr, "bad gso/csum header",
			    hdr->mrg.hdr.gso_type);
		dev_kfree_skb(skb);
		return;
	}

	*bytes += skb->len;
	skb_record_rx_queue(skb, rq->qp->index);
	skb->protocol = eth_type_trans(skb, vi->dev);
	vnet_rx_set_hash(vi, skb, hdr);
	napi_gro_receive(&rq->napi, skb);
}

/*
 * Receive up to @p->budget frames; refill the ring when
 * vnet_rx_refill_due() says so.  Tells in @p what was received, for the
 * moderation policy.
 */
void vnet_rx_receive(struct vnet_rq *rq, struct vnet_rx_poll *p)
{
	u64 bytes = 0, before, dropped_before, dropped;
	unsigned int len, small = 0, free_before = rq->vq->num_free;
	int received = 0, budget = p->budget;
	bool empty;
	struct xsk_buff_pool *pool = READ_ONCE(rq->xsk_pool);
	void *buf, *ctx;

	dropped_before = u64_stats_read(&rq->stats.drop_bad_len) +
			 u64_stats_read(&rq->stats.drop_bad_hdr) +
			 u64_stats_read(&rq->stats.drop_nomem);

	while (received < budget) {
		buf = virtqueue_get_buf_ctx(rq->vq, &len, &ctx);
		if (!buf)
			break;
		before = bytes;
		if (VNET_CAN_XSK && pool)
			vnet_xsk_rx_one(rq, pool, buf, len, &bytes);
		else
			vnet_rx_one(rq, buf, ctx, len, &bytes);
		/* Dropped frames add no bytes: they count as small too. */
		small += bytes - before < VNET_RX_BULK_LEN;
		received++;
	}
	if (rq->xdp_pending)
		vnet_xdp_rx_end(rq);
	p->descs = rq->vq->num_free - free_before;
	/* Every buffer posted is used: the device has none for what comes. */
	empty = rq->vq->num_free == rq->ring;

	if (vnet_rx_refill_due(rq->vq->num_free, rq->ring, budget,
			       rq->min_posted) &&
	    !vnet_rx_fill(rq, GFP_ATOMIC))
		vnet_rx_schedule_refill(rq->qp->vi);

	dropped = u64_stats_read(&rq->stats.drop_bad_len) +
		  u64_stats_read(&rq->stats.drop_bad_hdr) +
		  u64_stats_read(&rq->stats.drop_nomem) - dropped_before;

	u64_stats_update_begin(&rq->stats.syncp);
	u64_stats_add(&rq->stats.packets, received - dropped);
	u64_stats_add(&rq->stats.bytes, bytes);
	u64_stats_add(&rq->stats.drops, dropped);
	if (empty)
		u64_stats_inc(&rq->stats.ring_empty);
	u64_stats_update_end(&rq->stats.syncp);
	p->work = received;
	p->bytes = bytes;
	p->small = small;
}

/* Release a buffer the device never used (teardown, resize). */
void vnet_rx_free_buf(struct vnet_rq *rq, void *buf)
{
	if (VNET_CAN_XSK && rq->xsk_pool)
		xsk_buff_free(buf);
	else if (rq->qp->vi->rx_mode == VNET_RX_BIG)
		vnet_give_pages(rq, buf);
	else
		vnet_rx_put_page(rq, virt_to_head_page(buf), false);
}

/* Release the page cache and spare pages of a queue. */
void vnet_rx_free_pages(struct vnet_rq *rq)
{
	struct page *p;

	while ((p = rq->spare_pages)) {
		rq->spare_pages = vnet_chain_next(p);
		set_page_private(p, 0);
		__free_page(p);
	}
	if (rq->frag.page) {
		put_page(rq->frag.page);
		rq->frag.page = NULL;
	}
}

/*
 * New RX moderation settings.  A poll running meanwhile may see a mix of
 * old and new values once; both are valid settings, so that is harmless.
 */
/* Whether the device delays this queue's interrupts (see policy/dev_coalesce.h). */
static bool vnet_rx_device_moderates(const struct vnet_rq *rq,
				     const struct vnet_rx_coal *c)
{
	const struct vnet *vi = rq->qp->vi;
	struct vnet_dev_coal_vq rx, tx;

	if (!vi->dev_coal || vnet_dev_coal_split(c, &rx, &tx))
		return false;
	/* Without per-queue commands the device has the device-wide values. */
	return vnet_has(vi, VNET_F_VQ_NOTF_COAL) ||
	       (c->usecs == vi->rx_coal.usecs && c->frames == vi->rx_coal.frames &&
		c->adaptive == vi->rx_coal.adaptive);
}

void vnet_rx_set_coal(struct vnet_rq *rq, const struct vnet_rx_coal *c)
{
	rq->coal = *c;
	/* A device that delays its own interrupts needs no deferral. */
	rq->mod_cfg.usecs = vnet_rx_device_moderates(rq, c) ? 0 : c->usecs;
	rq->mod_cfg.frames = c->frames;
	rq->mod_cfg.adaptive = c->adaptive;
	rq->mod_cfg.usecs_high = c->usecs_high;
	rq->mod_cfg.tick_ns = TICK_NSEC;
	memset(&rq->mod, 0, sizeof(rq->mod));
}

/* Per-queue receive state that depends on the ring size. */
void vnet_rx_setup(struct vnet *vi, struct vnet_rq *rq)
{
	unsigned int frame = vnet_max_rx_frame(vi->guest_gso,
					       vi->dev->max_mtu);

	rq->ring = virtqueue_get_vring_size(rq->vq);
	ewma_vnet_pkt_len_init(&rq->avg_len);
	rq->mrg_min_len = vnet_mrg_min_len(vi->hdr_len, frame, rq->ring);
	/*
	 * Mergeable buffers are sized from the average frame, never below
	 * the minimum; the smallest one is the minimum with XDP's rooms.
	 * A big or small buffer holds a whole frame.
	 */
	rq->min_posted = vi->rx_mode != VNET_RX_MERGEABLE ? 1 :
		vnet_rx_min_posted(vi->hdr_len, frame,
				   vnet_mrg_buf_len(0, rq->mrg_min_len,
						    vi->hdr_len,
						    PAGE_SIZE - XDP_PACKET_HEADROOM -
						    VNET_XDP_TAILROOM,
						    L1_CACHE_BYTES));
	rq->mod_cfg.ring = rq->ring;
}
