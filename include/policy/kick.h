/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TX kick policy: after a packet has been added to a send queue, decide
 * whether to notify the device now or to hold the notification back.
 *
 * Always, whatever the settings:
 *  - packets the stack sends as one burst (xmit_more) share a notification;
 *  - a stopped queue (ring full, byte queue limit) and an urgent sender
 *    (netpoll, teardown, a packet that wants a software transmit
 *    timestamp) never wait.
 *
 * Fixed mode (adaptive-tx off): every packet is held until tx-frames
 * packets were queued since the last notification or tx-usecs passed since
 * the first held one, whichever comes first; the flush timer enforces the
 * time limit.  This is the user's explicit trade of latency for exits.
 *
 * Adaptive mode (the default) holds a packet only where nobody waits for
 * it, so that no flow pays latency for another's savings:
 *  - Bulk: a TCP segment whose socket has more data queued behind it
 *    (what a sender with a backlog makes: TSO, TCP's autocorking of small
 *    writes), and a large packet whose task has not slept since its
 *    socket's previous packet: a TCP segment (GSO, or VNET_KICK_BULK_LEN
 *    bytes or more) with nothing behind it, or a GSO packet that is not
 *    TCP (datagrams sent in one buffer, UDP_SEGMENT): a sender that
 *    writes as fast as it can, with no backlog only because each write
 *    leaves at once.  Nobody waits for one of these in particular.  A
 *    socket whose task slept since its previous packet and that has
 *    nothing behind this one sends at its own pace (a telemetry or
 *    market-data publisher, a paced upload, a QUIC sender pacing its
 *    bursts or waiting for acknowledgments): its newest message is
 *    awaited as soon as it is written, so it is not bulk however large.
 *    None of a TCP socket that received data within the conversation
 *    window is bulk either (a conversation: a large answer is still
 *    awaited by someone).  The other TCP segments of a socket that sent
 *    bulk within the last tx-usecs count as bulk too while its task has
 *    not slept since and it is not answering: they are the same stream's
 *    (a small write between autocorked ones, the end of a write, segments
 *    TCP sends from softirq).  Not so a datagram: each is a message of its
 *    own, however much its socket sent before (a QUIC server's small
 *    packets after a GSO burst).  The policy remembers the last
 *    VNET_KICK_SENDERS bulk sockets (vnet_kick_classify_tcp() sorts TCP
 *    segments for the caller; the sleeps are the policy's to judge).
 *    Bulk is held like in fixed mode when the queue's bulk traffic is
 *    dense enough for holding to pay (below); TCP Small Queues are told
 *    to allow for the hold (vnet_kick_pacing_shift()).
 *  - Anything else (a request, an answer, a datagram, an ICMP echo, a
 *    pure acknowledgment, of a socket that sent no bulk) is not held in a
 *    batch.  Sent from the pair's own receive poll (acknowledgments,
 *    answers the stack makes in softirq context) it waits until that poll
 *    ends, which notifies once for all of them: no timer, and no wait
 *    beyond the poll that was running anyway.  Otherwise it is notified at
 *    once, together with whatever is held: a latency-bound packet never
 *    waits behind a bulk batch.
 *  - A queue shared with such traffic holds no bulk: for tx-usecs after
 *    a packet that is neither bulk nor a pure TCP acknowledgment, bulk is
 *    treated like the rest (at once, or at the end of the receive poll
 *    that sent it).  A held batch would otherwise reach the device in one
 *    piece just ahead of the next request or answer, which then waits
 *    for all of it.
 *
 * The conversation window is tx-usecs, but never shorter than the
 * default's VNET_KICK_CONV_USECS: a TCP socket that received data within
 * it is answering (the caller tells), and for that long after a packet
 * that is neither bulk nor a pure TCP acknowledgment reaches the device
 * (in fixed mode up to tx-usecs after it was sent) the guest counts as
 * answering (answer_until), which the receive side reads: it defers
 * nothing then (policy/rx_moderation.h).  Both hold in every mode, also
 * when the settings never hold a packet (tx-frames 1, tx-usecs 0) or hold
 * every one (adaptive-tx off): the latency rules of the receive side and
 * of the reclaim (policy/reclaim.h) do not depend on how the user set up
 * the kicks.
 *
 * A batch its sender waits on goes out at once, for a TCP sender that
 * would rather it went: a socket with Nagle's algorithm off (TCP_NODELAY:
 * its application asked that a small write not wait for the
 * acknowledgment of earlier data), or one whose task paces it (slept
 * within its last few segments, the reclaim policy's senders table: a
 * publisher, whose next message comes after a sleep, not from a writer
 * that keeps the socket full).  When all the socket has unacknowledged is
 * held (the segment before it was acknowledged), it can send nothing more
 * until the held ones are notified.  TCP autocorks its next small write,
 * Nagle's algorithm holds it for that acknowledgment, TCP Small Queues
 * hold back the rest until a held skb is freed, and a full congestion
 * window waits for an acknowledgment of held data; the batch would wait
 * for its timer, several times what the sender paces at.  So may a batch
 * with one full segment or less unacknowledged before it: a receiver
 * acknowledges every second full-sized segment at once but delays its
 * acknowledgment of a lone one until the next arrives or its delayed-ACK
 * timer runs out (tens of milliseconds), and the next one is held
 * (vnet_kick_unacked_before()).  A stream (Nagle on, its task not
 * sleeping) keeps its batches: its writes coalesce in the socket
 * meanwhile, which is the point of holding it.  Not so any sender, eager
 * or not, whose segment leaves less than a full segment of the window
 * its peer offers (vnet_kick_window_full()): it can send nothing more
 * until an acknowledgment, and the acknowledgment of what is held only
 * comes once it is notified.  A stream whose receiver fixed its buffer
 * at 128 KiB (iperf3 -w 128K) had a held batch wait for its timer about
 * 60 times a second and ran at 0.65-0.76x stock's rate
 * (docs/results/2026-12-07-window-limited-6.1).  Nor any sender with
 * all it has unacknowledged held (as for an eager one, above) whose
 * segment leaves it less room than TCP sends into: TCP keeps a large
 * segment back while the room its peer's window and its congestion
 * window leave is under a third of the smaller window
 * (tcp_tso_win_divisor) and it expects an acknowledgment soon; that
 * acknowledgment is of the held batch (vnet_kick_tcp_defers()).  Such a
 * stream, 128 KiB windows again, had its whole window held for the timer
 * 5 to 14 times a second after the rule above, 0.84x stock's rate
 * (docs/results/2026-12-07-window-limited-7.2); with this rule none
 * (docs/results/2026-12-07-ab-tso-defer-7.2).  The caller tells
 * (in->waits) for the last segment of a burst, and checks a held batch
 * of an eager sender again at the end of each receive poll of the pair,
 * where the acknowledgments arrive.  The window rules look at a
 * sender's segments only: an acknowledgment of what it had out before
 * the batch that still leaves it short of room sends nothing, and its
 * batch waits for the timer (none did in the runs above).  Such a batch
 * teaches the policy what a window yields, as one the timer flushed
 * does.  The check needs the batch's first segment of the socket,
 * whether or not its sender was eager when it was sent (a late
 * publisher's run, TCP's own sends from softirq): the batch watches the
 * socket of its first TCP segment with data, and moves to an eager
 * socket's segment only while no segment of the one it watches was eager
 * (vnet_kick_watch()).
 *
 * When holding bulk pays: a held batch costs its notification plus the
 * flush timer's arm and interrupt (VNET_KICK_BATCH_EXITS), while packets
 * sent unheld cost only the notifications the device's event index asks
 * for, which the policy samples (vnet_kick_sample()).  The smallest batch
 * worth holding for is (1 + VNET_KICK_BATCH_EXITS) / (notifications per
 * unheld packet), at least VNET_KICK_MIN_BATCH.  Holding starts when the
 * recent gaps between bulk bursts (a moving average) promise that batch
 * within tx-usecs, and stops when the batches the timer flushes fall
 * short of it on average; it may start again after a number of bursts
 * that doubles with every failure.  A batch that fills before its
 * deadline lets the next one grow, up to tx-frames; one the timer flushed
 * with enough sets the next batch's size.
 *
 * That back-off is the queue's: a batch that fills (another flow's, or a
 * burst of the same socket) ends it, and holding is soon tried again on
 * whatever comes.  A socket that writes too little to fill a batch and
 * has bursts now and then (a publisher with Nagle's algorithm on that
 * catches up after a delay, whose messages TCP sends on the
 * acknowledgments) would have a message held in every such try, for a
 * round trip or its timer.  So the first socket of a held batch that
 * stopped the holding with fewer than VNET_KICK_SPARE_BYTES is also
 * spared: its packets are not held for VNET_KICK_SPARE_WINDOWS windows
 * (they count as latency-bound, like a paced sender's), twice as long
 * for each further such batch of it, up to 2^VNET_KICK_MAX_SPARES times;
 * a batch of it that fills takes one doubling back, one that yields
 * enough all of them (vnet_kick_done() tells, for ethtool -S).  A
 * stream's thin batch spares nothing: its packets are large, and its
 * socket gathers its writes into them while the batch waits, which is
 * what the hold gains there.
 *
 * Pure decision logic: the caller (tx.c) passes the time and what it
 * knows about the packet and the queue, and carries out the answer.  The
 * device's own event-index suppression still applies afterwards
 * (virtqueue_kick_prepare()).
 */
#ifndef VNET_KICK_POLICY_H
#define VNET_KICK_POLICY_H

#include <linux/types.h>

#define VNET_KICK_MIN_BATCH	4
/* Exits a held batch adds besides its notification: timer arm, interrupt. */
#define VNET_KICK_BATCH_EXITS	2
/* Notifications per unheld packet are kept as a fraction of this. */
#define VNET_KICK_RATE_ONE	256
/* Unheld packets per sample of that rate. */
#define VNET_KICK_RATE_SAMPLE	64
#define VNET_KICK_MAX_BATCH	64
/* TCP's own pacing shift: about 1 ms of data below the socket. */
#define VNET_KICK_TCP_PACING_SHIFT	10
/* Segments of room TCP defers a large segment below without a divisor. */
#define VNET_KICK_TSO_DEFER_SEGS	3
/* Shortest conversation window (see above): the default tx-usecs. */
#define VNET_KICK_CONV_USECS	8000
/* A TCP segment of at least this many bytes of payload is large (above). */
#define VNET_KICK_BULK_LEN	1024
/* Sockets remembered as bulk senders per queue. */
#define VNET_KICK_SENDERS	8
/* Most bursts a failed hold keeps holding off for: 2^VNET_KICK_MAX_BACKOFF. */
#define VNET_KICK_MAX_BACKOFF	8
/*
 * A socket whose held batch stopped the holding (it yielded too little)
 * is not held for VNET_KICK_SPARE_WINDOWS hold windows, twice that after
 * each further such batch of it, up to 2^VNET_KICK_MAX_SPARES times.
 */
#define VNET_KICK_SPARE_WINDOWS	16
/* Only a batch of fewer bytes than this spares its socket. */
#define VNET_KICK_SPARE_BYTES	(16 * 1024)
#define VNET_KICK_MAX_SPARES	4
/* One notification in this many is timed (vnet_kick_cost()). */
#define VNET_KICK_COST_SAMPLE	16

struct vnet_kick_cfg {
	u32 frames;	/* most packets per notification; 0: no count limit */
	u32 usecs;	/* longest hold; 0: never hold beyond a burst */
	bool adaptive;
};

/* Why pending packets were finally notified (feeds adaptive mode). */
enum vnet_kick_reason {
	VNET_KICKED_UNHELD,	/* not holding: the burst ended */
	VNET_KICKED_COUNT,	/* the batch filled before its deadline */
	VNET_KICKED_TIMER,	/* the hold time ran out */
	VNET_KICKED_POLL,	/* the receive poll that sent them ended */
	VNET_KICKED_FORCED,	/* stopped queue, urgent sender, teardown */
	VNET_KICKED_WAITED,	/* the batch's sender can send no more until it goes */
	VNET_KICKED_WINDOW,	/* so, because its windows leave it no room */
};

/*
 * A socket that sent bulk, until when its packets count as bulk, and the
 * wake stamp of the task that sent its last packet (0: none known).
 */
struct vnet_kick_sender {
	u64 id;
	u64 until;
	u64 wake;
	u64 spare_until;	/* its packets are not held until then */
	u8 strikes;	/* its batches that stopped the holding, in a row */
};

struct vnet_kick_state {
	u32 pending;	/* packets added since the last notification */
	u32 pending_bytes;	/* their bytes (saturating) */
	u32 target;	/* adaptive: packets to gather; 1: not holding */
	u32 skip;	/* adaptive: bursts before holding may start again */
	u8 backoff;	/* adaptive: log2 of the next skip */
	/* adaptive: notifications per unheld packet, x VNET_KICK_RATE_ONE */
	u32 notify_rate;
	u32 sample_pkts;	/* unheld packets in the current sample */
	u32 sample_notifies;	/* notifications they needed */
	/*
	 * adaptive: packets the flush timer found held, x8, averaged over
	 * the timer flushes since holding (re)started
	 */
	u32 flush_avg8;
	bool armed;	/* flush timer requested for this batch */
	bool poll;	/* a receive poll will notify what is pending */
	enum vnet_kick_reason why;	/* why the last VNET_KICK_NOW */
	u64 first_ns;	/* when the oldest pending packet was added */
	u64 batch_sender;	/* adaptive: the first held packet's socket, 0: none */
	u64 cost_ns;	/* what a notification costs this vCPU, averaged */
	/* adaptive: recent bulk senders (0: a free slot) */
	struct vnet_kick_sender senders[VNET_KICK_SENDERS];
	/* adaptive: when the previous bulk burst ended */
	u64 last_end_ns;
	u64 gap_avg_ns;	/* adaptive: moving average of bulk burst gaps */
	/* adaptive: until when a latency-bound packet forbids holding bulk */
	u64 shared_until;
	/* until when the guest counts as answering (see above), any mode */
	u64 answer_until;
	u64 max_hold_ns;	/* longest wait of a packet for its kick */
	/*
	 * Latest a flush came after its deadline because the armed timer
	 * was late (its own latency, seen by the timer or by a transmit
	 * that got there first).
	 */
	u64 max_late_ns;
};

struct vnet_kick_in {
	u64 now;		/* ns, monotonic */
	bool xmit_more;		/* the stack promises another packet now */
	bool queue_stopped;	/* ring or byte-queue limit stopped the queue */
	bool urgent;		/* netpoll, teardown, timestamp: never hold */
	u32 len;		/* the packet's bytes */
	/* adaptive: sent from the pair's receive poll, which notifies at its end */
	bool in_poll;
	/* a bulk packet (see above) */
	bool bulk;
	/* a large TCP segment with nothing behind it (see above) */
	bool large;
	/*
	 * a TCP segment of a socket that is not answering: bulk too while
	 * its socket sent bulk within the window (see above)
	 */
	bool stream;
	/* a TCP segment without payload */
	bool pure_ack;
	/*
	 * a TCP segment after which its socket sends nothing more until
	 * what this queue holds, this segment included, is acknowledged:
	 * it waits on them (see above)
	 */
	bool waits;
	/*
	 * with @waits: because its windows leave it no room
	 * (vnet_kick_window_full(), vnet_kick_tcp_defers()), not because it
	 * is eager
	 */
	bool window;
	/* an id of the sending socket, 0 for none */
	u64 sender;
	/*
	 * a stamp of the sending task that changes whenever the task
	 * sleeps; 0 when no task sends (softirq)
	 */
	u64 wake;
};

/*
 * What limits a TCP socket's next send after one of its segments
 * (vnet_kick_tcp_defers()): sequence numbers, bytes and segments.
 */
struct vnet_kick_room {
	u32 end;	/* the segment's end */
	u32 wnd_end;	/* the end of the window its peer offers */
	u32 snd_wnd;	/* that window's size */
	u32 cwnd;	/* the congestion window, in segments */
	u32 in_flight;	/* segments in flight, the segment's own included */
	u32 mss;	/* a full segment */
	/* tcp_tso_win_divisor: the share of a window worth sending, 0: none */
	u32 divisor;
};

/* What the transmit path knows of a TCP segment and its socket. */
struct vnet_kick_seg {
	bool known;	/* plain TCP headers: @payload is what they say */
	bool gso;	/* a GSO packet */
	bool answering;	/* the socket received data within the window */
	u32 payload;	/* bytes after the TCP header */
	u32 unsent;	/* written and not yet sent, this segment's included */
};

enum vnet_kick_action {
	VNET_KICK_HOLD,		/* wait: more is coming or the timer is armed */
	VNET_KICK_POLL,		/* wait for the end of the running receive poll */
	VNET_KICK_ARM,		/* wait, and arm the flush timer (see deadline) */
	VNET_KICK_NOW,		/* notify the device now */
};

void vnet_kick_classify_tcp(const struct vnet_kick_seg *seg,
			    struct vnet_kick_in *in);
void vnet_kick_classify_other(bool gso, struct vnet_kick_in *in);
void vnet_kick_init(struct vnet_kick_state *s, const struct vnet_kick_cfg *cfg);
bool vnet_kick_watch(bool watching, bool same, bool watched_eager, bool eager);
bool vnet_kick_unacked_before(u32 una, u32 first, u32 mss);
bool vnet_kick_window_full(u32 end, u32 wnd_end, u32 mss);
bool vnet_kick_tcp_defers(const struct vnet_kick_room *r);
enum vnet_kick_action vnet_kick_decide(struct vnet_kick_state *s,
				       const struct vnet_kick_cfg *cfg,
				       const struct vnet_kick_in *in);
u64 vnet_kick_deadline(const struct vnet_kick_state *s,
		       const struct vnet_kick_cfg *cfg);
u8 vnet_kick_pacing_shift(const struct vnet_kick_cfg *cfg);
u32 vnet_kick_conv_usecs(const struct vnet_kick_cfg *cfg);
void vnet_kick_cost(struct vnet_kick_state *s, u64 ns);
void vnet_kick_flush_late(struct vnet_kick_state *s, u64 due, u64 now);
bool vnet_kick_overdue(const struct vnet_kick_state *s,
		       const struct vnet_kick_cfg *cfg, u64 now);
void vnet_kick_sample(struct vnet_kick_state *s, enum vnet_kick_reason why,
		      bool notified);
bool vnet_kick_done(struct vnet_kick_state *s, const struct vnet_kick_cfg *cfg,
		    enum vnet_kick_reason why, u64 now);

#endif /* VNET_KICK_POLICY_H */
