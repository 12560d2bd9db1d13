/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RX moderation policy: at the end of a NAPI poll, decide whether to
 * re-enable the receive interrupt or keep polling.
 *
 * Pure decision logic; napi.c acts on the answer.
 */
#ifndef VNET_RX_MODERATION_H
#define VNET_RX_MODERATION_H

#include <linux/types.h>

struct vnet_rx_mod_state {
	/* Polls since the interrupt was last re-enabled. */
	u32 polls;
};

enum vnet_rx_next {
	VNET_RX_POLL_AGAIN,	/* budget used up: NAPI polls again */
	VNET_RX_REARM,		/* ring drained: re-enable the interrupt */
};

enum vnet_rx_next vnet_rx_mod_decide(struct vnet_rx_mod_state *s,
				     int work_done, int budget);

#endif /* VNET_RX_MODERATION_H */
