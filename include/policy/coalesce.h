/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Coalescing settings of a queue pair, as ethtool -C and the module
 * options set them, and their validation (pure, tested with KUnit).
 *
 * Meaning of the ethtool fields in this driver:
 *   tx-frames      notify the device at the latest after this many packets
 *                  (0: no count limit, only tx-usecs; 1: no coalescing)
 *   tx-usecs       ... or this long after the first held packet (0: never
 *                  hold beyond a burst of the stack)
 *   adaptive-tx    learn the batch size from the load (see policy/kick.h)
 *   tx-frames-irq  reclaim sent buffers once this many descriptors are in
 *                  use (0: half the ring)
 *   tx-usecs-irq   completed buffers wait at most this long to be
 *                  reclaimed (0: stock behaviour, see policy/reclaim.h)
 *   rx-usecs       after a poll that found work, keep the receive interrupt
 *                  off and poll again after at most this long (0: re-enable
 *                  the interrupt at once, like the stock driver)
 *   rx-frames      fixed mode: packets a poll must find to defer;
 *                  adaptive mode: packets a deferred poll aims to gather
 *   adaptive-rx    size deferrals from the load (see policy/rx_moderation.h)
 *   rx-usecs-high  adaptive mode, bulk receive (large segments): longest
 *                  deferral, at least two scheduler ticks to ride on the
 *                  tick (0: no bulk deferral)
 * On kernels with the TX aggregation fields, tx-aggr-max-frames and
 * tx-aggr-time-usecs are the same settings as tx-frames and tx-usecs.
 *
 * Two settings follow the TX ring until a user sets them: tx-frames-irq 0
 * (half the ring) and the default tx-frames (64, at most the ring).
 * ethtool -c reports the numbers in effect; ethtool -C with the number -c
 * reports keeps the setting as it is, so that writing back what -c showed
 * changes nothing (vnet_tx_coal_keep()).
 */
#ifndef VNET_COAL_H
#define VNET_COAL_H

#include <linux/types.h>

#define VNET_TX_USECS_MAX	10000	/* 10 ms */
#define VNET_TX_IRQ_USECS_MAX	100000	/* 100 ms */
#define VNET_RING_MAX		32768	/* largest virtqueue */

/* Defaults (module options tx_frames, tx_usecs, adaptive_tx, ...). */
#define VNET_TX_FRAMES_DEFAULT		64
#define VNET_TX_USECS_DEFAULT		8000
#define VNET_TX_ADAPTIVE_DEFAULT	true
#define VNET_TX_IRQ_FRAMES_DEFAULT	0
#define VNET_TX_IRQ_USECS_DEFAULT	1000

#define VNET_RX_USECS_MAX		10000	/* 10 ms */
#define VNET_RX_USECS_DEFAULT		100
#define VNET_RX_FRAMES_DEFAULT		32
#define VNET_RX_ADAPTIVE_DEFAULT	true
#define VNET_RX_USECS_HIGH_DEFAULT	8000	/* two ticks at HZ=250 */

struct vnet_tx_coal {
	u32 frames;
	bool frames_auto;	/* the default: min(frames, ring) */
	u32 usecs;
	bool adaptive;
	u32 irq_frames;
	u32 irq_usecs;
};

struct vnet_rx_coal {
	u32 usecs;
	u32 frames;
	bool adaptive;
	u32 usecs_high;
};

void vnet_tx_coal_default(struct vnet_tx_coal *c);
void vnet_rx_coal_default(struct vnet_rx_coal *c);
int vnet_rx_coal_check(const struct vnet_rx_coal *c, unsigned int ring,
		       const char **why);
int vnet_tx_coal_check(const struct vnet_tx_coal *c, unsigned int ring,
		       const char **why);
u32 vnet_tx_frames(const struct vnet_tx_coal *c, unsigned int ring);
u32 vnet_tx_irq_frames(const struct vnet_tx_coal *c, unsigned int ring);
void vnet_tx_coal_keep(struct vnet_tx_coal *req, const struct vnet_tx_coal *cur,
		       unsigned int ring);

#endif /* VNET_COAL_H */
