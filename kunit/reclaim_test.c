// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: TX reclaim policy. */
#include <kunit/test.h>
#include <linux/hash.h>
#include "policy/reclaim.h"

#define US	1000ULL

static const struct vnet_reclaim_cfg stock = { .frames = 128, .usecs = 0 };
static const struct vnet_reclaim_cfg delayed = { .frames = 128, .usecs = 1000 };

static void reclaim_stock_mode(struct kunit *test)
{
	struct vnet_reclaim_state s = {};

	KUNIT_EXPECT_FALSE(test, vnet_reclaim_delayed(&stock));
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_on_xmit(&stock, &s, 0, 0));
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_on_xmit(&stock, &s, 1, 0));
	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&stock, &s, 5, true, 0),
			VNET_RECLAIM_IRQ);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&stock, &s, 5, false, 0),
			VNET_RECLAIM_IDLE);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&stock, &s, 0, false, true, 0),
			VNET_RECLAIM_IRQ);
}

/* Threshold edges on the transmit path. */
static void reclaim_on_xmit_batches(struct kunit *test)
{
	struct vnet_reclaim_state s = { .last_ns = 1000 * US };

	KUNIT_EXPECT_TRUE(test, vnet_reclaim_delayed(&delayed));
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_on_xmit(&delayed, &s, 0, 5000 * US));
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_on_xmit(&delayed, &s, 127, 1500 * US));
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_on_xmit(&delayed, &s, 128, 1500 * US));
	/* The time bound: exactly tx-usecs-irq after the last reclaim. */
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_on_xmit(&delayed, &s, 1, 2000 * US - 1));
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_on_xmit(&delayed, &s, 1, 2000 * US));
}

static void reclaim_deadline_at_burst_end(struct kunit *test)
{
	struct vnet_reclaim_state s = {};

	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&delayed, &s, 3, true, 0),
			VNET_RECLAIM_DEADLINE);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&delayed, &s, 0, true, 0),
			VNET_RECLAIM_IDLE);
	s.deadline_armed = true;
	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&delayed, &s, 3, true, 0),
			VNET_RECLAIM_IDLE);
	/* Without TX NAPI skbs are orphaned: no deadline needed. */
	s.deadline_armed = false;
	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&delayed, &s, 3, false, 0),
			VNET_RECLAIM_IDLE);
}

/* After a reclaim: interrupts only for a stopped or a quiet queue. */
static void reclaim_after(struct kunit *test)
{
	struct vnet_reclaim_state s = { .last_xmit_ns = 1000 * US };

	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&delayed, &s, 10, true, true, 1001 * US),
			VNET_RECLAIM_IRQ);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&delayed, &s, 0, false, true, 9000 * US),
			VNET_RECLAIM_IDLE);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&delayed, &s, 10, false, true, 1500 * US),
			VNET_RECLAIM_DEADLINE);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_deadline(&delayed, &s), 2000 * US);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&delayed, &s, 10, false, true, 2000 * US),
			VNET_RECLAIM_IRQ);
}

/*
 * Stamps taken by another CPU may lie a little ahead of this CPU's clock:
 * no time has passed, so no batch is cut short and no interrupt asked for.
 */
static void reclaim_stamp_from_another_cpu(struct kunit *test)
{
	struct vnet_reclaim_state s = { .last_ns = 1000 * US,
					.last_xmit_ns = 1000 * US };

	KUNIT_EXPECT_FALSE(test, vnet_reclaim_on_xmit(&delayed, &s, 1, 1000 * US - 5 * US));
	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&delayed, &s, 10, false, true,
						 1000 * US - 5 * US),
			VNET_RECLAIM_DEADLINE);
}

/*
 * XDP frames pin pages: whatever the mode, a reclaim is due within
 * tx-usecs-irq.  Without TX NAPI only the deadline reclaims (the
 * interrupt just wakes the queue), so it repeats while anything is out.
 */
static void reclaim_xdp_frames(struct kunit *test)
{
	struct vnet_reclaim_state s = { .last_xmit_ns = 1000 * US };

	/* TX NAPI: as any burst (deadline, or the interrupt in stock mode) */
	KUNIT_EXPECT_EQ(test, vnet_reclaim_xdp_sent(&delayed, &s, 3, true, 0),
			VNET_RECLAIM_DEADLINE);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_xdp_sent(&stock, &s, 3, true, 0),
			VNET_RECLAIM_IRQ);
	/* no TX NAPI: the deadline, in stock mode too */
	KUNIT_EXPECT_EQ(test, vnet_reclaim_xdp_sent(&delayed, &s, 3, false, 0),
			VNET_RECLAIM_DEADLINE);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_xdp_sent(&stock, &s, 3, false, 0),
			VNET_RECLAIM_DEADLINE);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_xdp_sent(&delayed, &s, 0, false, 0),
			VNET_RECLAIM_IDLE);
	s.deadline_armed = true;
	KUNIT_EXPECT_EQ(test, vnet_reclaim_xdp_sent(&delayed, &s, 3, false, 0),
			VNET_RECLAIM_IDLE);
	/* no TX NAPI: the deadline repeats while buffers are out, even stopped */
	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&delayed, &s, 3, false, false, 9000 * US),
			VNET_RECLAIM_DEADLINE);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&delayed, &s, 3, true, false, 1001 * US),
			VNET_RECLAIM_DEADLINE);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&stock, &s, 3, false, false, 0),
			VNET_RECLAIM_DEADLINE);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&delayed, &s, 0, true, false, 0),
			VNET_RECLAIM_IDLE);
}

/*
 * Buffers an AF_XDP socket waits for: reclaimed on every transmit while
 * any is out, whatever the thresholds; the interrupt and deadline rules
 * stay those of delayed reclaim.  Delayed again once the last came back.
 */
static void reclaim_waited(struct kunit *test)
{
	struct vnet_reclaim_state s = { .last_ns = 1000 * US,
					.last_xmit_ns = 1000 * US,
					.waited = 1 };

	KUNIT_EXPECT_TRUE(test, vnet_reclaim_on_xmit(&delayed, &s, 1, 1001 * US));
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_on_xmit(&delayed, &s, 0, 1001 * US));
	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&delayed, &s, 3, true, 0),
			VNET_RECLAIM_DEADLINE);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&delayed, &s, 10, false, true, 1500 * US),
			VNET_RECLAIM_DEADLINE);

	s.waited = 0;
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_on_xmit(&delayed, &s, 1, 1001 * US));
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_on_xmit(&delayed, &s, 128, 1001 * US));
}

/*
 * A socket other than TCP's with more than half of its send buffer out:
 * the queue reclaims as stock for tx-usecs-irq after its packet (every
 * transmit, the completion interrupt while buffers are out), each such
 * packet extending it; then delayed again.  Half exactly, stock mode and
 * an empty queue do not change anything.
 */
static void reclaim_sndbuf_over_half(struct kunit *test)
{
	struct vnet_reclaim_state s = { .last_ns = 1000 * US,
					.last_xmit_ns = 1000 * US };
	struct vnet_reclaim_state st = {};

	KUNIT_EXPECT_FALSE(test, vnet_reclaim_note_sndbuf(&delayed, &s, 100000,
							  200000, 1000 * US));
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_on_xmit(&delayed, &s, 1, 1001 * US));
	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&delayed, &s, 3, true,
							1001 * US),
			VNET_RECLAIM_DEADLINE);

	KUNIT_EXPECT_TRUE(test, vnet_reclaim_note_sndbuf(&delayed, &s, 100001,
							 200000, 1000 * US));
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_on_xmit(&delayed, &s, 1, 1001 * US));
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_on_xmit(&delayed, &s, 0, 1001 * US));
	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&delayed, &s, 3, true,
							1001 * US),
			VNET_RECLAIM_IRQ);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&delayed, &s, 0, true,
							1001 * US),
			VNET_RECLAIM_IDLE);
	/* without TX NAPI the skbs are orphaned: nothing to wait for */
	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&delayed, &s, 3, false,
							1001 * US),
			VNET_RECLAIM_IDLE);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&delayed, &s, 10, false, true,
						 1500 * US),
			VNET_RECLAIM_IRQ);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&delayed, &s, 0, false, true,
						 1500 * US),
			VNET_RECLAIM_IDLE);

	/* tx-usecs-irq after the packet: delayed again (a transmit at 1900) */
	s.last_xmit_ns = 1900 * US;
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_on_xmit(&delayed, &s, 1,
						     2000 * US - 1));
	KUNIT_EXPECT_EQ(test, vnet_reclaim_after(&delayed, &s, 10, false, true,
						 2000 * US),
			VNET_RECLAIM_DEADLINE);
	s.last_ns = 2000 * US;
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_on_xmit(&delayed, &s, 1,
						      2000 * US));
	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&delayed, &s, 3, true,
							2000 * US),
			VNET_RECLAIM_DEADLINE);

	/* another such packet extends it */
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_note_sndbuf(&delayed, &s, 4000,
							 4608, 2100 * US));
	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&delayed, &s, 3, true,
							3000 * US),
			VNET_RECLAIM_IRQ);
	KUNIT_EXPECT_EQ(test, vnet_reclaim_at_burst_end(&delayed, &s, 3, true,
							3100 * US),
			VNET_RECLAIM_DEADLINE);

	/* stock mode reclaims as stock anyway */
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_note_sndbuf(&stock, &st, 200000,
							  200000, 1000 * US));
	KUNIT_EXPECT_EQ(test, st.full_until, 0ULL);
}

/* vnet_reclaim_release_at_send() on a fresh state */
static bool release(const struct vnet_reclaim_cfg *cfg, bool answering,
		    u32 unsent, u32 payload)
{
	struct vnet_reclaim_seg seg = { .sender = 0xa, .wake = 5,
					.answering = answering,
					.unsent = unsent, .payload = payload };
	struct vnet_reclaim_state s = {};

	return vnet_reclaim_release_at_send(cfg, &s, &seg);
}

/*
 * Memory back at send: only the segment that ends what an answering
 * socket has written so far, and only with delayed reclaim.
 */
static void reclaim_release_at_send(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, release(&delayed, true, 64, 64));
	KUNIT_EXPECT_TRUE(test, release(&delayed, true, 0, 64));
	KUNIT_EXPECT_TRUE(test, release(&delayed, true, 65536, 65536));
	/* more of the answer queued behind it */
	KUNIT_EXPECT_FALSE(test, release(&delayed, true, 65, 64));
	/* a sender that received nothing, first seen: not known to sleep */
	KUNIT_EXPECT_FALSE(test, release(&delayed, false, 64, 64));
	KUNIT_EXPECT_FALSE(test, release(&stock, true, 64, 64));
}

/*
 * A socket that received nothing: its segment is released when its task
 * slept (a new wake stamp) since the socket's previous segment sent by a
 * task, whatever its size; a task that did not sleep, or softirq, does
 * not; another socket on the same slot pushes it out.
 */
static void reclaim_release_paced(struct kunit *test)
{
	struct vnet_reclaim_seg seg = { .sender = 0xa, .wake = 5,
					.unsent = 200, .payload = 200 };
	struct vnet_reclaim_state s = {};
	u64 other;
	int i;

	/* a socket not seen before has not been seen to sleep */
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
	seg.wake = 6;
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
	/* the few it writes in one go after the sleep (a late publisher) */
	for (i = 1; i < VNET_RECLAIM_PACED_RUN; i++)
		KUNIT_EXPECT_TRUE_MSG(test,
				      vnet_reclaim_release_at_send(&delayed, &s, &seg),
				      "segment %d after the sleep", i);
	/* more without a sleep: a writer that does not pause */
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
	/* from softirq: neither released nor noted (6 is still the stamp) */
	seg.wake = 0;
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
	seg.wake = 6;
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
	seg.wake = 7;
	/* slept, but more of what it wrote is queued behind */
	seg.unsent = 400;
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
	seg.unsent = 200;
	seg.wake = 8;
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
	/* large or small alike */
	seg.wake = 9;
	seg.unsent = 65536;
	seg.payload = 65536;
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
	/* not a full socket's */
	seg.sender = 0;
	seg.wake = 10;
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
	/* a socket sharing 0xa's slot takes it over */
	for (other = 0xb; hash_64(other, VNET_RECLAIM_SENDERS_BITS) !=
			  hash_64(0xa, VNET_RECLAIM_SENDERS_BITS); other++)
		;
	seg.sender = other;
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
	seg.sender = 0xa;
	seg.wake = 11;
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
	/*
	 * Stock mode releases nothing but notes the sender, for the kick
	 * policy's waiting rule: 12 is the stamp now, a sleep since 11.
	 */
	seg.wake = 12;
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_release_at_send(&stock, &s, &seg));
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_sender_paced(&s, 0xa, 0));
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
	seg.wake = 13;
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_release_at_send(&delayed, &s, &seg));
}

/*
 * The kick policy's question: is a socket paced, as the table knows it,
 * without noting anything?  Not when first seen; yes within its last few
 * task-sent segments after a sleep, or when the task sending now slept
 * since the latest; not for a writer that does not pause, nor for a
 * segment from softirq of such a writer.
 */
static void reclaim_sender_paced(struct kunit *test)
{
	struct vnet_reclaim_seg seg = { .sender = 0xa, .wake = 5,
					.unsent = 200, .payload = 200 };
	struct vnet_reclaim_state s = {};
	int i;

	KUNIT_EXPECT_FALSE(test, vnet_reclaim_sender_paced(&s, 0xa, 5));
	vnet_reclaim_release_at_send(&delayed, &s, &seg);
	/* seen once, never seen to sleep */
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_sender_paced(&s, 0xa, 0));
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_sender_paced(&s, 0xa, 5));
	/* its task sending now slept since */
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_sender_paced(&s, 0xa, 6));
	/* asked for a segment from softirq: no sleep seen (asking noted none) */
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_sender_paced(&s, 0xa, 0));
	seg.wake = 6;
	vnet_reclaim_release_at_send(&delayed, &s, &seg);
	for (i = 1; i < VNET_RECLAIM_PACED_RUN; i++) {
		KUNIT_EXPECT_TRUE_MSG(test, vnet_reclaim_sender_paced(&s, 0xa, 0),
				      "segment %d after the sleep", i);
		vnet_reclaim_release_at_send(&delayed, &s, &seg);
	}
	/* one more without a sleep: a writer that does not pause */
	vnet_reclaim_release_at_send(&delayed, &s, &seg);
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_sender_paced(&s, 0xa, 0));
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_sender_paced(&s, 0xa, 6));
	/* another socket, or none */
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_sender_paced(&s, 0xb, 7));
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_sender_paced(&s, 0, 7));

	/* the same in stock mode (tx-usecs-irq 0): the kick policy asks too */
	memset(&s, 0, sizeof(s));
	seg.wake = 5;
	vnet_reclaim_release_at_send(&stock, &s, &seg);
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_sender_paced(&s, 0xa, 0));
	seg.wake = 6;
	vnet_reclaim_release_at_send(&stock, &s, &seg);
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_sender_paced(&s, 0xa, 0));
}

static void reclaim_room_edges(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, vnet_reclaim_room(19, 19));
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_room(18, 19));
	KUNIT_EXPECT_FALSE(test, vnet_reclaim_room(0, 1));
}

static struct kunit_case reclaim_policy_cases[] = {
	KUNIT_CASE(reclaim_stock_mode),
	KUNIT_CASE(reclaim_on_xmit_batches),
	KUNIT_CASE(reclaim_deadline_at_burst_end),
	KUNIT_CASE(reclaim_after),
	KUNIT_CASE(reclaim_xdp_frames),
	KUNIT_CASE(reclaim_waited),
	KUNIT_CASE(reclaim_sndbuf_over_half),
	KUNIT_CASE(reclaim_room_edges),
	KUNIT_CASE(reclaim_release_at_send),
	KUNIT_CASE(reclaim_release_paced),
	KUNIT_CASE(reclaim_sender_paced),
	KUNIT_CASE(reclaim_stamp_from_another_cpu),
	{}
};

static struct kunit_suite reclaim_policy_suite = {
	.name = "vnet_reclaim_policy",
	.test_cases = reclaim_policy_cases,
};

kunit_test_suite(reclaim_policy_suite);
