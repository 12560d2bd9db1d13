/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TX reclaim policy: when to take completed buffers back from a send
 * queue, and when the device should interrupt us for completions.
 *
 * Completed buffers are taken back in batches: on transmit once
 * tx-frames-irq descriptors are in use or tx-usecs-irq passed since the
 * last reclaim, by the pair's RX poll, and by a deadline on the pair's
 * timer when the queue goes quiet.  A TX interrupt is only asked for when
 * something must wake us: the queue is stopped, or the deadline found
 * buffers still with the device and nobody transmitting.  Sockets thus
 * get their memory back within tx-usecs-irq (TCP Small Queues, BQL) while
 * busy queues take almost no TX interrupts.  XDP frames in a send queue
 * get the same bound, with or without TX NAPI (they pin pages).
 *
 * Buffers whose sender waits for them to come back (waited): an AF_XDP
 * socket's frames, zero-copy or the skbs of its copy mode, return to it
 * only through their completion, and a socket that has used up its
 * frames or its send buffer sends nothing more until then.  While any is
 * with the device every transmit reclaims (as the in-tree driver did up
 * to 6.x), so the socket gets them back within its own sends; the
 * interrupt and the deadline stay as above.  (Asking for the completion
 * interrupt instead, as in-tree 7.x does, was slower on a 6.1 guest:
 * docs/benchmarks.md.)
 *
 * The last segment of a TCP answer or of a paced message returns most of
 * its memory to its socket when it is handed to the device instead of
 * when it is reclaimed: a segment that ends what its socket has written
 * so far (nothing queued behind it), from a socket that received data
 * within the kick policy's conversation window, or whose task slept within
 * the socket's last VNET_RECLAIM_PACED_RUN segments sent by a task (a
 * publisher writing at its own pace, whose next message comes after
 * another sleep, also when woken late it writes a few in one go; the
 * senders table below).
 * TCP holds back a small write (autocorking) while an earlier skb of the
 * socket is still unfreed and unacknowledged, expecting its completion
 * within microseconds; delayed reclaim put that off until the pair's next
 * poll or the deadline.  A server answering in two writes (a header, then
 * a body) had every second write wait for the deadline, 8 ms; one whose
 * requests arrive in pairs (an open-loop client, pipelining) its second
 * answer; a publisher at 1000-3000 messages/s a share of its messages,
 * for up to tx-usecs-irq.  Senders that write without sleeping (a stream
 * of small writes, bulk) keep their full accounting: TCP Small Queues
 * limit them and autocorking coalesces their writes, as with any NIC, and
 * so do the segments of an answer that have more of it queued behind
 * them.
 * Neither a packet gap nor a rate says which is which: under TCG a single
 * bulk flow's segments are 50 us and more apart.  The socket keeps one
 * minimum skb's worth per segment, so it still sees a packet in flight
 * and XPS does not move the flow to another queue while one is out (no
 * reordering).
 *
 * A sender other than TCP waits on its send buffer: a UDP, raw or packet
 * socket whose packets not yet freed hold its whole buffer blocks in its
 * next send until they fall to half of it.  Delayed reclaim let them wait
 * with the device, the sender with them: an iperf3 UDP stream of 1400-byte
 * datagrams, two sockets a queue, ran at 0.6-0.75x stock's rate (212 KiB
 * buffers, about 90 datagrams each; docs/results/2026-12-07-udp-streams-6.1).
 * So a packet whose socket has more than half its buffer out makes the
 * queue reclaim as the stock driver does (every transmit, the completion
 * interrupt while buffers are out) for tx-usecs-irq; each such packet
 * extends it.  TCP has its own limits (TCP Small Queues, the release at
 * send above) and is not asked.
 *
 * tx-usecs-irq 0 selects the stock behaviour: reclaim on every transmit,
 * interrupt at the end of every burst.
 *
 * Pure decision logic; tx.c and napi.c act on the answers.
 */
#ifndef VNET_RECLAIM_POLICY_H
#define VNET_RECLAIM_POLICY_H

#include <linux/bits.h>
#include <linux/types.h>

/*
 * The least a send queue's byte queue limit may fall to.  BQL starts each
 * queue at a limit of 0 and learns it from how long completions take; ours
 * come in batches, up to tx-usecs-irq late, so while it learns (the first
 * traffic after load, a ring resize or a reset, and whenever the limit has
 * decayed in a quiet spell) a queue holding two small answers is stopped
 * and waits for a reclaim.  A DNS server at 1000 queries/s stopped 2-6
 * times in its first seconds and answered slower than stock then
 * (docs/results/2026-12-06-dns-cold-6.1, -bql-floor-driver-6.1).  The
 * floor is one largest segment: a packet never stops the queue on its
 * own.  Busy queues learn limits above it anyway.  Users change it as for
 * any NIC, in /sys/class/net/DEV/queues/tx-N/byte_queue_limits/limit_min.
 */
#define VNET_RECLAIM_BQL_FLOOR		(64 * 1024)

struct vnet_reclaim_cfg {
	u32 frames;	/* reclaim on transmit once this many are in use (>= 1) */
	u32 usecs;	/* ... or once the last reclaim is this old */
};

/*
 * The sockets whose segments were last seen on the queue, by a hash of
 * the socket: each with the wake stamp of the task that sent its latest
 * one (policy/kick.h), to count its segments since that task slept.  Two
 * sockets on one slot push each other out; neither is then seen to sleep,
 * and their segments keep the deadline.
 */
#define VNET_RECLAIM_SENDERS_BITS	5
#define VNET_RECLAIM_SENDERS		BIT(VNET_RECLAIM_SENDERS_BITS)
/*
 * Segments a socket's task sends after a sleep that still count as paced
 * (above): more than a publisher woken late owes at a few thousand
 * messages a second, fewer than a writer that does not pause sends
 * between the rare sleeps it has.
 */
#define VNET_RECLAIM_PACED_RUN		4

struct vnet_reclaim_sender {
	u64 id;		/* the socket; 0: none */
	u64 wake;	/* wake stamp of its latest segment sent by a task */
	u8 run;		/* segments since that task slept, to the limit */
};

struct vnet_reclaim_state {
	u64 last_ns;		/* last reclaim */
	u64 last_xmit_ns;	/* last packet added */
	bool deadline_armed;	/* reclaim deadline requested, not yet run */
	u32 waited;		/* buffers out whose sender waits for them */
	/* reclaim as stock until then: a sender's buffer is over half out */
	u64 full_until;
	struct vnet_reclaim_sender senders[VNET_RECLAIM_SENDERS];
};

/* A TCP segment with data, as vnet_reclaim_release_at_send() sees it. */
struct vnet_reclaim_seg {
	u64 sender;	/* its socket; 0: not a full socket's */
	u64 wake;	/* its task's wake stamp; 0: not sent by a task */
	bool answering;	/* the socket received data within the window */
	u32 unsent;	/* written and not yet sent, this segment's included */
	u32 payload;	/* bytes after the TCP header */
};

/* What to do about completions still with the device. */
enum vnet_reclaim_next {
	VNET_RECLAIM_IDLE,	/* nothing: no interrupt, no deadline */
	VNET_RECLAIM_IRQ,	/* ask the device for a completion interrupt */
	VNET_RECLAIM_DEADLINE,	/* arm the reclaim deadline (see _deadline()) */
};

/*
 * Delayed reclaim is on unless its time limit is zero (stock behaviour).
 * Inline with vnet_reclaim_room(): both are asked on every packet.
 */
static inline bool vnet_reclaim_delayed(const struct vnet_reclaim_cfg *cfg)
{
	return cfg->usecs != 0;
}

bool vnet_reclaim_release_at_send(const struct vnet_reclaim_cfg *cfg,
				  struct vnet_reclaim_state *s,
				  const struct vnet_reclaim_seg *seg);
bool vnet_reclaim_sender_paced(const struct vnet_reclaim_state *s, u64 sender,
			       u64 wake);
bool vnet_reclaim_note_sndbuf(const struct vnet_reclaim_cfg *cfg,
			      struct vnet_reclaim_state *s, u32 wmem,
			      u32 sndbuf, u64 now);
bool vnet_reclaim_on_xmit(const struct vnet_reclaim_cfg *cfg,
			  const struct vnet_reclaim_state *s,
			  unsigned int in_use, u64 now);
enum vnet_reclaim_next vnet_reclaim_at_burst_end(const struct vnet_reclaim_cfg *cfg,
						 const struct vnet_reclaim_state *s,
						 unsigned int in_use,
						 bool use_napi, u64 now);
enum vnet_reclaim_next vnet_reclaim_xdp_sent(const struct vnet_reclaim_cfg *cfg,
					     const struct vnet_reclaim_state *s,
					     unsigned int in_use,
					     bool use_napi, u64 now);
enum vnet_reclaim_next vnet_reclaim_after(const struct vnet_reclaim_cfg *cfg,
					  const struct vnet_reclaim_state *s,
					  unsigned int in_use,
					  bool queue_stopped, bool use_napi,
					  u64 now);
u64 vnet_reclaim_deadline(const struct vnet_reclaim_cfg *cfg,
			  const struct vnet_reclaim_state *s);

/* Whether @num_free descriptors leave room for a packet needing @need. */
static inline bool vnet_reclaim_room(unsigned int num_free, unsigned int need)
{
	return num_free >= need;
}

#endif /* VNET_RECLAIM_POLICY_H */
