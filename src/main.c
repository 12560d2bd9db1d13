// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-net-dkms: module entry, module options.
 *
 * Options keep the names and meanings of the in-tree virtio_net driver
 * (napi_weight, csum, gso, napi_tx) so existing modprobe.d files keep
 * working, plus our own.  A bad value never stops the module from
 * loading: it is replaced by the default and a warning names both.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include "compat.h"
#include "policy/params.h"
#include "vnet.h"

struct vnet_options vnet_opts = {
	.napi_weight = NAPI_POLL_WEIGHT,
	.csum = true,
	.gso = true,
	.napi_tx = true,
	.max_queue_pairs = 0,
	.tx_frames = VNET_TX_FRAMES_DEFAULT,
	.tx_usecs = VNET_TX_USECS_DEFAULT,
	.adaptive_tx = VNET_TX_ADAPTIVE_DEFAULT,
	.tx_frames_irq = VNET_TX_IRQ_FRAMES_DEFAULT,
	.tx_usecs_irq = VNET_TX_IRQ_USECS_DEFAULT,
	.rx_usecs = VNET_RX_USECS_DEFAULT,
	.rx_frames = VNET_RX_FRAMES_DEFAULT,
	.adaptive_rx = VNET_RX_ADAPTIVE_DEFAULT,
	.rx_usecs_high = VNET_RX_USECS_HIGH_DEFAULT,
	.rx_page_pool = VNET_PAGE_POOL_DEFAULT,
};

struct vnet_bool_opt {
	bool *val;
	bool def;
};

struct vnet_int_opt {
	int *val;
	int def;
	int min;
	int max;
};

static int vnet_opt_set_bool(const char *val, const struct kernel_param *kp)
{
	const struct vnet_bool_opt *o = kp->arg;

	if (vnet_parse_bool(val, o->val)) {
		*o->val = o->def;
		pr_warn("invalid value '%s' for option %s, using the default %c\n",
			val ? val : "", kp->name, o->def ? 'Y' : 'N');
	}
	return 0;
}

static int vnet_opt_get_bool(char *buf, const struct kernel_param *kp)
{
	const struct vnet_bool_opt *o = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%c\n", *o->val ? 'Y' : 'N');
}

static int vnet_opt_set_int(const char *val, const struct kernel_param *kp)
{
	const struct vnet_int_opt *o = kp->arg;

	if (vnet_parse_int_range(val, o->min, o->max, o->val)) {
		*o->val = o->def;
		pr_warn("invalid value '%s' for option %s (allowed %d..%d), using the default %d\n",
			val ? val : "", kp->name, o->min, o->max, o->def);
	}
	return 0;
}

static int vnet_opt_get_int(char *buf, const struct kernel_param *kp)
{
	const struct vnet_int_opt *o = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%d\n", *o->val);
}

static const struct kernel_param_ops vnet_bool_ops = {
	.set = vnet_opt_set_bool,
	.get = vnet_opt_get_bool,
};

static const struct kernel_param_ops vnet_int_ops = {
	.set = vnet_opt_set_int,
	.get = vnet_opt_get_int,
};

static struct vnet_bool_opt vnet_opt_csum = {
	.val = &vnet_opts.csum, .def = true,
};
module_param_cb(csum, &vnet_bool_ops, &vnet_opt_csum, 0444);
MODULE_PARM_DESC(csum, "Offload transmit checksums to the device (default Y)");

static struct vnet_bool_opt vnet_opt_gso = {
	.val = &vnet_opts.gso, .def = true,
};
module_param_cb(gso, &vnet_bool_ops, &vnet_opt_gso, 0444);
MODULE_PARM_DESC(gso, "Offload segmentation (TSO) to the device (default Y)");

static struct vnet_bool_opt vnet_opt_napi_tx = {
	.val = &vnet_opts.napi_tx, .def = true,
};
module_param_cb(napi_tx, &vnet_bool_ops, &vnet_opt_napi_tx, 0444);
MODULE_PARM_DESC(napi_tx,
		 "Reclaim transmitted buffers in NAPI on TX interrupts; N orphans skbs at transmit (default Y)");

static struct vnet_int_opt vnet_opt_napi_weight = {
	.val = &vnet_opts.napi_weight, .def = NAPI_POLL_WEIGHT,
	.min = 1, .max = NAPI_POLL_WEIGHT,
};
module_param_cb(napi_weight, &vnet_int_ops, &vnet_opt_napi_weight, 0444);
MODULE_PARM_DESC(napi_weight, "NAPI budget per poll, 1..64 (default 64)");

static struct vnet_int_opt vnet_opt_max_queue_pairs = {
	.val = &vnet_opts.max_queue_pairs, .def = 0,
	.min = 0, .max = VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MAX,
};
module_param_cb(max_queue_pairs, &vnet_int_ops, &vnet_opt_max_queue_pairs,
		0444);
MODULE_PARM_DESC(max_queue_pairs,
		 "Cap on the queue pairs used at probe; 0 = one per online CPU up to the device's maximum (default 0)");

/*
 * TX coalescing defaults, as ethtool -C sets them later (see policy/coalesce.h for
 * their meaning).  Each is range-checked here; combinations are checked
 * at probe, where the ring size is known.
 */
static struct vnet_int_opt vnet_opt_tx_frames = {
	.val = &vnet_opts.tx_frames, .def = VNET_TX_FRAMES_DEFAULT,
	.min = 0, .max = VNET_RING_MAX,
};
module_param_cb(tx_frames, &vnet_int_ops, &vnet_opt_tx_frames, 0444);
MODULE_PARM_DESC(tx_frames,
		 "Notify the device at the latest after this many packets; 0 = by time only, 1 = no coalescing (default 64)");

static struct vnet_int_opt vnet_opt_tx_usecs = {
	.val = &vnet_opts.tx_usecs, .def = VNET_TX_USECS_DEFAULT,
	.min = 0, .max = VNET_TX_USECS_MAX,
};
module_param_cb(tx_usecs, &vnet_int_ops, &vnet_opt_tx_usecs, 0444);
MODULE_PARM_DESC(tx_usecs,
		 "Longest a packet waits for its notification, 0..10000 us; 0 = no holding (default 8000)");

static struct vnet_bool_opt vnet_opt_adaptive_tx = {
	.val = &vnet_opts.adaptive_tx, .def = VNET_TX_ADAPTIVE_DEFAULT,
};
module_param_cb(adaptive_tx, &vnet_bool_ops, &vnet_opt_adaptive_tx, 0444);
MODULE_PARM_DESC(adaptive_tx,
		 "Hold notifications only as far as the load fills batches (default Y)");

static struct vnet_int_opt vnet_opt_tx_frames_irq = {
	.val = &vnet_opts.tx_frames_irq, .def = VNET_TX_IRQ_FRAMES_DEFAULT,
	.min = 0, .max = VNET_RING_MAX,
};
module_param_cb(tx_frames_irq, &vnet_int_ops, &vnet_opt_tx_frames_irq, 0444);
MODULE_PARM_DESC(tx_frames_irq,
		 "Reclaim sent buffers once this many descriptors are in use; 0 = half the ring (default 0)");

static struct vnet_int_opt vnet_opt_tx_usecs_irq = {
	.val = &vnet_opts.tx_usecs_irq, .def = VNET_TX_IRQ_USECS_DEFAULT,
	.min = 0, .max = VNET_TX_IRQ_USECS_MAX,
};
module_param_cb(tx_usecs_irq, &vnet_int_ops, &vnet_opt_tx_usecs_irq, 0444);
MODULE_PARM_DESC(tx_usecs_irq,
		 "Longest a sent buffer waits to be reclaimed, 0..100000 us; 0 = stock behaviour, a TX interrupt per burst (default 1000)");

/* RX moderation defaults (see policy/coalesce.h and policy/rx_moderation.h). */
static struct vnet_int_opt vnet_opt_rx_usecs = {
	.val = &vnet_opts.rx_usecs, .def = VNET_RX_USECS_DEFAULT,
	.min = 0, .max = VNET_RX_USECS_MAX,
};
module_param_cb(rx_usecs, &vnet_int_ops, &vnet_opt_rx_usecs, 0444);
MODULE_PARM_DESC(rx_usecs,
		 "Longest the receive interrupt stays off after a busy poll, 0..10000 us; 0 = no deferral (default 100)");

static struct vnet_int_opt vnet_opt_rx_frames = {
	.val = &vnet_opts.rx_frames, .def = VNET_RX_FRAMES_DEFAULT,
	.min = 0, .max = VNET_RING_MAX,
};
module_param_cb(rx_frames, &vnet_int_ops, &vnet_opt_rx_frames, 0444);
MODULE_PARM_DESC(rx_frames,
		 "Packets a poll must find to defer (adaptive: to aim for per poll) (default 32)");

static struct vnet_bool_opt vnet_opt_adaptive_rx = {
	.val = &vnet_opts.adaptive_rx, .def = VNET_RX_ADAPTIVE_DEFAULT,
};
module_param_cb(adaptive_rx, &vnet_bool_ops, &vnet_opt_adaptive_rx, 0444);
MODULE_PARM_DESC(adaptive_rx,
		 "Size receive deferrals from the load; idle flows get interrupts at once (default Y)");

static struct vnet_int_opt vnet_opt_rx_usecs_high = {
	.val = &vnet_opts.rx_usecs_high, .def = VNET_RX_USECS_HIGH_DEFAULT,
	.min = 0, .max = VNET_RX_USECS_MAX,
};
module_param_cb(rx_usecs_high, &vnet_int_ops, &vnet_opt_rx_usecs_high, 0444);
MODULE_PARM_DESC(rx_usecs_high,
		 "Adaptive: longest receive deferral for bulk streams (large segments), 0..10000 us; 0 = none (default 8000)");

/*
 * Receive page pools: on by default where the kernel lists pools over
 * netlink (6.8 on), possible where it has page pool fragments (compat.h);
 * asked for on a kernel without them, the option stays N with a warning.
 */
static int vnet_opt_set_page_pool(const char *val,
				  const struct kernel_param *kp)
{
	bool on;

	if (vnet_parse_bool(val, &on)) {
		pr_warn("invalid value '%s' for option %s, using the default %c\n",
			val ? val : "", kp->name,
			VNET_PAGE_POOL_DEFAULT ? 'Y' : 'N');
		on = VNET_PAGE_POOL_DEFAULT;
	}
	if (on && !VNET_CAN_PAGE_POOL) {
		pr_warn("option %s=%s: this kernel has no page pool fragments, using N\n",
			kp->name, val);
		on = false;
	}
	vnet_opts.rx_page_pool = on;
	return 0;
}

static const struct kernel_param_ops vnet_page_pool_ops = {
	.set = vnet_opt_set_page_pool,
	.get = param_get_bool,
};
module_param_cb(rx_page_pool, &vnet_page_pool_ops, &vnet_opts.rx_page_pool,
		0444);
#if VNET_PAGE_POOL_DEFAULT
#define VNET_PAGE_POOL_HELP	" (default Y)"
#elif VNET_CAN_PAGE_POOL
#define VNET_PAGE_POOL_HELP	"; this kernel lists no pools over netlink (default N)"
#else
#define VNET_PAGE_POOL_HELP	"; not on this kernel (default N)"
#endif
MODULE_PARM_DESC(rx_page_pool,
		 "Receive small and mergeable buffers from a page pool per queue"
		 VNET_PAGE_POOL_HELP);

static struct vnet_bool_opt vnet_opt_auto_threaded = {
	.val = &vnet_opts.auto_threaded, .def = false,
};
module_param_cb(auto_threaded, &vnet_bool_ops, &vnet_opt_auto_threaded,
		0444);
MODULE_PARM_DESC(auto_threaded,
		 "Try threaded NAPI while the receive side livelocks, keep it while it measures better; kernel 5.12+ (default N)");

static int __init vnet_init(void)
{
	int err;

	err = vnet_affinity_init();
	if (err)
		return err;
	err = register_virtio_driver(&vnet_driver);
	if (err)
		vnet_affinity_exit();
	return err;
}

static void __exit vnet_exit(void)
{
	unregister_virtio_driver(&vnet_driver);
	vnet_affinity_exit();
}

module_init(vnet_init);
module_exit(vnet_exit);

MODULE_DESCRIPTION("Virtio network driver with guest-side notification coalescing (virtio-net-dkms)");
MODULE_LICENSE("GPL");
MODULE_VERSION(VNET_VERSION);
