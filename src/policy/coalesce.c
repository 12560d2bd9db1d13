// SPDX-License-Identifier: GPL-2.0-only
/*
 * Validation of coalescing settings (pure).  The same rules apply to
 * ethtool -C and to the module options that set the defaults.
 */
#include <linux/errno.h>
#include "policy/coalesce.h"

void vnet_tx_coal_default(struct vnet_tx_coal *c)
{
	c->frames = VNET_TX_FRAMES_DEFAULT;
	c->frames_auto = true;
	c->usecs = VNET_TX_USECS_DEFAULT;
	c->adaptive = VNET_TX_ADAPTIVE_DEFAULT;
	c->irq_frames = VNET_TX_IRQ_FRAMES_DEFAULT;
	c->irq_usecs = VNET_TX_IRQ_USECS_DEFAULT;
}

/*
 * Returns 0 when @c may be applied to a queue with a @ring-entry TX ring,
 * else -EINVAL with *why naming the problem (a static string).
 */
int vnet_tx_coal_check(const struct vnet_tx_coal *c, unsigned int ring,
		       const char **why)
{
	u32 frames = vnet_tx_frames(c, ring);

	if (frames > ring) {
		*why = "tx-frames cannot exceed the TX ring size";
		return -EINVAL;
	}
	if (c->usecs > VNET_TX_USECS_MAX) {
		*why = "tx-usecs must be at most 10000";
		return -EINVAL;
	}
	if (frames != 1 && frames && !c->usecs) {
		*why = "tx-frames above 1 needs tx-usecs above 0, or packets could wait forever";
		return -EINVAL;
	}
	if (c->irq_frames > ring) {
		*why = "tx-frames-irq cannot exceed the TX ring size";
		return -EINVAL;
	}
	if (c->irq_usecs > VNET_TX_IRQ_USECS_MAX) {
		*why = "tx-usecs-irq must be at most 100000";
		return -EINVAL;
	}
	return 0;
}

/* Kick batch in effect: tx-frames; the default shrinks to a smaller ring. */
u32 vnet_tx_frames(const struct vnet_tx_coal *c, unsigned int ring)
{
	if (c->frames_auto && c->frames > ring)
		return ring;
	return c->frames;
}

/* Reclaim batch in effect: tx-frames-irq, or half the ring for 0. */
u32 vnet_tx_irq_frames(const struct vnet_tx_coal *c, unsigned int ring)
{
	if (c->irq_frames)
		return c->irq_frames;
	return ring > 1 ? ring / 2 : 1;
}

/*
 * ethtool -C asks for @req on a queue whose settings are @cur and whose
 * ring has @ring entries.  The kernel fills the fields a user left out
 * with what -c reported, the number in effect, and a user may write back
 * what -c showed: a number equal to that keeps @cur's setting, so an
 * automatic one goes on following the ring.  Any other number is the
 * user's (tx-frames-irq 0: half the ring, again).
 */
void vnet_tx_coal_keep(struct vnet_tx_coal *req, const struct vnet_tx_coal *cur,
		       unsigned int ring)
{
	req->frames_auto = false;
	if (req->frames == vnet_tx_frames(cur, ring)) {
		req->frames = cur->frames;
		req->frames_auto = cur->frames_auto;
	}
	if (req->irq_frames == vnet_tx_irq_frames(cur, ring))
		req->irq_frames = cur->irq_frames;
}

void vnet_rx_coal_default(struct vnet_rx_coal *c)
{
	c->usecs = VNET_RX_USECS_DEFAULT;
	c->frames = VNET_RX_FRAMES_DEFAULT;
	c->adaptive = VNET_RX_ADAPTIVE_DEFAULT;
	c->usecs_high = VNET_RX_USECS_HIGH_DEFAULT;
}

/* As vnet_tx_coal_check(), for a @ring-entry RX ring. */
int vnet_rx_coal_check(const struct vnet_rx_coal *c, unsigned int ring,
		       const char **why)
{
	if (c->usecs > VNET_RX_USECS_MAX) {
		*why = "rx-usecs must be at most 10000";
		return -EINVAL;
	}
	if (c->usecs_high > VNET_RX_USECS_MAX) {
		*why = "rx-usecs-high must be at most 10000";
		return -EINVAL;
	}
	if (c->frames > ring) {
		*why = "rx-frames cannot exceed the RX ring size";
		return -EINVAL;
	}
	return 0;
}
