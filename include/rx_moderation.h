/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RX moderation policy: at the end of a NAPI poll, decide whether to
 * re-enable the receive interrupt, keep polling, or keep the interrupt
 * off and poll again after a deferral on the pair's timer.
 *
 * No device feature is needed: the receive interrupt is simply left off
 * while the timer runs.  A deferral costs a timer arm and a timer
 * interrupt (two VM exits) instead of the device interrupts it saves, so
 * it is only worth taking when a poll gathers several packets:
 *  - fixed mode: defer by rx-usecs after a poll that found at least
 *    rx-frames packets (any work when rx-frames is 0 or 1);
 *  - adaptive mode: defer only after a poll that found at least
 *    VNET_RX_MIN_BATCH packets, and size the deferral from the rate the
 *    last one saw so that the next poll gathers about rx-frames packets,
 *    never longer than rx-usecs.  An idle or latency-bound flow (one
 *    packet per interrupt) therefore always gets its interrupt at once.
 * rx-usecs 0 disables deferral (the interrupt is re-enabled as soon as a
 * poll drains the ring, like the stock driver).
 *
 * Pure decision logic; napi.c acts on the answer.
 */
#ifndef VNET_RX_MODERATION_H
#define VNET_RX_MODERATION_H

#include <linux/types.h>

#define VNET_RX_MIN_BATCH	4
/* Adaptive deferrals never go below this share of rx-usecs. */
#define VNET_RX_MIN_DEFER_DIV	16

struct vnet_rx_mod_cfg {
	u32 usecs;	/* longest deferral; 0: never defer */
	/* Fixed: packets that trigger a deferral; adaptive: the aim. */
	u32 frames;
	bool adaptive;
};

struct vnet_rx_mod_state {
	u32 polls;	/* consecutive polls that used their whole budget */
	u64 defer_ns;	/* length of the deferral in progress; 0: none */
};

enum vnet_rx_next {
	VNET_RX_POLL_AGAIN,	/* budget used up: NAPI polls again */
	VNET_RX_REARM,		/* ring drained: re-enable the interrupt */
	VNET_RX_DEFER,		/* keep the interrupt off, poll after *defer_ns */
};

enum vnet_rx_next vnet_rx_mod_decide(struct vnet_rx_mod_state *s,
				     const struct vnet_rx_mod_cfg *cfg,
				     int work_done, int budget, u64 *defer_ns);

#endif /* VNET_RX_MODERATION_H */
