// SPDX-License-Identifier: GPL-2.0-only
/*
 * RX moderation policy (pure).
 *
 * Baseline: the receive interrupt stays off while NAPI keeps finding a
 * full budget of work and is re-enabled as soon as a poll drains the ring.
 */
#include "rx_moderation.h"

enum vnet_rx_next vnet_rx_mod_decide(struct vnet_rx_mod_state *s,
				     int work_done, int budget)
{
	if (work_done >= budget) {
		s->polls++;
		return VNET_RX_POLL_AGAIN;
	}
	s->polls = 0;
	return VNET_RX_REARM;
}
