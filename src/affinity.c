// SPDX-License-Identifier: GPL-2.0-only
/*
 * Applies the affinity plan (policy/affinity.c): each active queue pair's
 * RX and TX interrupts on one CPU (so NAPI runs there too), and XPS from
 * the plan.  All virtio NICs of this driver are planned together and
 * re-planned on probe, remove, restore, ethtool -L, XDP attach and detach
 * and CPU hotplug.
 *
 * The interrupts are placed through virtqueue_set_affinity(), which sets
 * the IRQ's affinity and publishes it as a hint: a user or irqbalance may
 * move it later (modern irqbalance ignores hints).  irq_affinity=off
 * leaves placement to the kernel and irqbalance entirely.
 *
 * Cache topology is not exported to modules, so the last-level cache is
 * approximated by the CPU package.
 *
 * Locking: the CPU hotplug lock (held by the hotplug callbacks, taken by
 * everyone else) comes first, then vnet_aff_lock, which guards the device
 * list and every device's plan.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include "policy/affinity.h"
#include "compat.h"
#include "vnet.h"

static LIST_HEAD(vnet_aff_devices);
static DEFINE_MUTEX(vnet_aff_lock);
static enum cpuhp_state vnet_aff_state;
static bool vnet_aff_hotplug;

/* Module option irq_affinity=auto|off; anything else means auto. */
static bool vnet_aff_auto = true;

static int vnet_aff_opt_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "auto")) {
		vnet_aff_auto = true;
	} else if (sysfs_streq(val, "off")) {
		vnet_aff_auto = false;
	} else {
		vnet_aff_auto = true;
		pr_warn("invalid value '%s' for option irq_affinity (auto or off), using the default auto\n",
			val ? val : "");
	}
	return 0;
}

static int vnet_aff_opt_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n", vnet_aff_auto ? "auto" : "off");
}

static const struct kernel_param_ops vnet_aff_opt_ops = {
	.set = vnet_aff_opt_set,
	.get = vnet_aff_opt_get,
};
module_param_cb(irq_affinity, &vnet_aff_opt_ops, NULL, 0444);
MODULE_PARM_DESC(irq_affinity,
		 "auto: spread queue pairs over CPUs (NUMA/SMT aware, XPS aligned); off: leave IRQ placement to the kernel and irqbalance (default auto)");

/* Online CPUs except @skip (a CPU going down), as the planner sees them. */
static unsigned int vnet_aff_topology(struct vnet_topo_cpu *cpus,
				      unsigned int skip)
{
	unsigned int cpu, n = 0;

	for_each_online_cpu(cpu) {
		if (cpu == skip)
			continue;
		cpus[n].cpu = cpu;
		cpus[n].node = max(cpu_to_node(cpu), 0);
		cpus[n].core = cpumask_first(topology_sibling_cpumask(cpu));
		cpus[n].llc = cpumask_first(topology_core_cpumask(cpu));
		n++;
	}
	return n;
}

/*
 * Apply plan @p from its pair @first on to the stack's @pairs pairs of
 * @vi, and place the @xdp pairs after them that XDP enabled: CPU n sends
 * its XDP frames on pair @pairs + n (policy/xdp.h), so that pair's
 * interrupts go to CPU n, unless it is offline or @skip (going down); the
 * stack does not send there, so they get no XPS.
 */
static void vnet_aff_apply(struct vnet *vi, const struct vnet_plan *p,
			   unsigned int first, unsigned int pairs,
			   unsigned int xdp, unsigned int skip)
{
	unsigned int i, cpu;

	for (i = 0; i < vi->max_pairs; i++) {
		struct vnet_qp *qp = &vi->qp[i];
		struct cpumask *xps = vi->aff_xps[i];

		if (i >= pairs) {
			cpu = i - pairs;
			if (i >= pairs + xdp || cpu == skip || !cpu_online(cpu))
				cpu = U16_MAX;
			virtqueue_set_affinity(qp->rq.vq, cpu == U16_MAX ?
					       NULL : cpumask_of(cpu));
			virtqueue_set_affinity(qp->sq.vq, cpu == U16_MAX ?
					       NULL : cpumask_of(cpu));
			vi->aff_cpu[i] = cpu;
			cpumask_clear(xps);
			continue;
		}
		vi->aff_cpu[i] = p->irq_cpu[first + i];
		bitmap_copy(cpumask_bits(xps), vnet_plan_xps(p, first + i),
			    nr_cpu_ids);
		virtqueue_set_affinity(qp->rq.vq, cpumask_of(vi->aff_cpu[i]));
		virtqueue_set_affinity(qp->sq.vq, cpumask_of(vi->aff_cpu[i]));
		vnet_set_xps_cpus(vi->dev, cpumask_bits(xps), i);
	}
	vi->aff_pairs = pairs + xdp;
}

static void vnet_aff_log(struct vnet *vi)
{
	unsigned int i;

	for (i = 0; i < vi->aff_pairs; i++)
		netdev_info(vi->dev, "affinity: pair %u irq cpu %u, xps cpus %*pbl\n",
			    i, vi->aff_cpu[i], cpumask_pr_args(vi->aff_xps[i]));
}

/*
 * Plan all active devices together and apply the plan.  Called with the
 * CPU hotplug lock held (or from a hotplug callback) and vnet_aff_lock.
 *
 * The hotplug callbacks do not hold RTNL, so a device's curr_pairs may
 * change meanwhile (ethtool -L, XDP, which re-plan once they are done):
 * it is read once per device, and the plan, its application, the log and
 * the sysfs file all use that one count.  Pairs enabled for XDP only are
 * not planned with the stack's (see vnet_aff_apply()).
 */
static void vnet_aff_replan(unsigned int skip, bool log)
{
	struct vnet_topo_cpu *cpus;
	unsigned int *pairs, *xdp, ndev = 0, total = 0, ncpus, k, first;
	struct vnet_plan plan;
	struct vnet *vi;

	lockdep_assert_held(&vnet_aff_lock);
	if (!vnet_aff_auto)
		return;
	list_for_each_entry(vi, &vnet_aff_devices, aff_node)
		if (vi->aff_active)
			ndev++;
	if (!ndev)
		return;

	cpus = kcalloc(nr_cpu_ids, sizeof(*cpus), GFP_KERNEL);
	pairs = kcalloc(ndev, sizeof(*pairs), GFP_KERNEL);
	xdp = kcalloc(ndev, sizeof(*xdp), GFP_KERNEL);
	if (!cpus || !pairs || !xdp)
		goto out;
	ncpus = vnet_aff_topology(cpus, skip);
	k = 0;
	list_for_each_entry(vi, &vnet_aff_devices, aff_node) {
		if (!vi->aff_active)
			continue;
		pairs[k] = READ_ONCE(vi->curr_pairs);
		xdp[k] = READ_ONCE(vi->xdp_pairs);
		if (xdp[k] < pairs[k])
			pairs[k] -= xdp[k];
		else
			xdp[k] = 0;
		total += pairs[k++];
	}

	if (vnet_plan_alloc(&plan, cpus, ncpus, nr_cpu_ids, total, GFP_KERNEL))
		goto out;
	if (!vnet_affinity_plan(&plan, pairs, ndev)) {
		first = 0;
		k = 0;
		list_for_each_entry(vi, &vnet_aff_devices, aff_node) {
			if (!vi->aff_active)
				continue;
			vnet_aff_apply(vi, &plan, first, pairs[k], xdp[k],
				       skip);
			first += pairs[k++];
			if (log)
				vnet_aff_log(vi);
		}
	}
	vnet_plan_free(&plan);
out:
	kfree(xdp);
	kfree(pairs);
	kfree(cpus);
}

/* Re-plan after a change of devices or queue pairs. */
void vnet_affinity_update(void)
{
	cpus_read_lock();
	mutex_lock(&vnet_aff_lock);
	vnet_aff_replan(nr_cpu_ids, true);
	mutex_unlock(&vnet_aff_lock);
	cpus_read_unlock();
}

/* A device's queues exist (probe, restore): plan it in. */
void vnet_affinity_start(struct vnet *vi)
{
	mutex_lock(&vnet_aff_lock);
	if (list_empty(&vi->aff_node))
		list_add_tail(&vi->aff_node, &vnet_aff_devices);
	vi->aff_active = true;
	mutex_unlock(&vnet_aff_lock);
	vnet_affinity_update();
}

/*
 * A device's queues go away (freeze, remove): stop touching them.  With
 * @remove the device leaves the list and the others are re-planned.
 */
void vnet_affinity_stop(struct vnet *vi, bool remove)
{
	unsigned int i;

	mutex_lock(&vnet_aff_lock);
	vi->aff_active = false;
	vi->aff_pairs = 0;
	if (vnet_aff_auto && vi->qp) {
		for (i = 0; i < vi->max_pairs; i++) {
			if (vi->qp[i].rq.vq)
				virtqueue_set_affinity(vi->qp[i].rq.vq, NULL);
			if (vi->qp[i].sq.vq)
				virtqueue_set_affinity(vi->qp[i].sq.vq, NULL);
		}
	}
	if (remove && !list_empty(&vi->aff_node))
		list_del_init(&vi->aff_node);
	mutex_unlock(&vnet_aff_lock);
	if (remove)
		vnet_affinity_update();
}

int vnet_affinity_alloc(struct vnet *vi)
{
	unsigned int i;

	INIT_LIST_HEAD(&vi->aff_node);
	vi->aff_cpu = kcalloc(vi->max_pairs, sizeof(*vi->aff_cpu), GFP_KERNEL);
	vi->aff_xps = kcalloc(vi->max_pairs, sizeof(*vi->aff_xps), GFP_KERNEL);
	if (!vi->aff_cpu || !vi->aff_xps)
		goto fail;
	for (i = 0; i < vi->max_pairs; i++) {
		vi->aff_cpu[i] = U16_MAX;
		vi->aff_xps[i] = kzalloc(cpumask_size(), GFP_KERNEL);
		if (!vi->aff_xps[i])
			goto fail;
	}
	return 0;
fail:
	vnet_affinity_free(vi);
	return -ENOMEM;
}

void vnet_affinity_free(struct vnet *vi)
{
	unsigned int i;

	if (vi->aff_xps)
		for (i = 0; i < vi->max_pairs; i++)
			kfree(vi->aff_xps[i]);
	kfree(vi->aff_xps);
	kfree(vi->aff_cpu);
	vi->aff_xps = NULL;
	vi->aff_cpu = NULL;
}

/* /sys/class/net/<dev>/virtio_net/affinity: the plan in force. */
ssize_t vnet_affinity_show(struct vnet *vi, char *buf)
{
	unsigned int i;
	ssize_t n = 0;

	mutex_lock(&vnet_aff_lock);
	if (!vnet_aff_auto)
		n += scnprintf(buf + n, PAGE_SIZE - n, "off\n");
	for (i = 0; vnet_aff_auto && i < vi->aff_pairs; i++)
		n += scnprintf(buf + n, PAGE_SIZE - n, "pair %u irq %u xps %*pbl\n",
			       i, vi->aff_cpu[i], cpumask_pr_args(vi->aff_xps[i]));
	mutex_unlock(&vnet_aff_lock);
	return n;
}

static int vnet_aff_cpu_online(unsigned int cpu)
{
	mutex_lock(&vnet_aff_lock);
	vnet_aff_replan(nr_cpu_ids, true);
	mutex_unlock(&vnet_aff_lock);
	return 0;
}

static int vnet_aff_cpu_down(unsigned int cpu)
{
	mutex_lock(&vnet_aff_lock);
	vnet_aff_replan(cpu, true);
	mutex_unlock(&vnet_aff_lock);
	return 0;
}

int vnet_affinity_init(void)
{
	int ret;

	if (!vnet_aff_auto)
		return 0;
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN,
					"net/virtio_net_dkms:online",
					vnet_aff_cpu_online, vnet_aff_cpu_down);
	if (ret < 0) {
		pr_warn("no CPU hotplug notifications (%d): affinity is planned at probe only\n",
			ret);
		return 0;
	}
	vnet_aff_state = ret;
	vnet_aff_hotplug = true;
	return 0;
}

void vnet_affinity_exit(void)
{
	if (vnet_aff_hotplug)
		cpuhp_remove_state_nocalls(vnet_aff_state);
}
