/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Affinity planner: where each queue pair's interrupts (and so its NAPI)
 * run, and which CPUs transmit on it (XPS).  A pure function of a
 * topology description, tested with KUnit over synthetic topologies.
 *
 * Rules, in order:
 *  - pairs go to NUMA nodes in proportion to their online CPUs; the
 *    NICs planned together share one count, so several NICs spread over
 *    the machine instead of piling onto the same CPUs;
 *  - within a node a pair's interrupt goes to the least loaded CPU,
 *    distinct cores before SMT siblings, and among those to the
 *    last-level cache with the fewest pairs per CPU, so the caches of a
 *    node share its pairs in proportion before any cache gets a second;
 *  - with more pairs than CPUs the assignment wraps round robin, and no
 *    CPU ever carries two more pairs than another;
 *  - each CPU transmits on the pairs whose interrupt it takes; a CPU
 *    without one transmits on a pair of its own last-level cache, else of
 *    its node, else any, always the pair with the fewest such CPUs;
 *  - ties go to the lowest number: the plan is deterministic.
 */
#ifndef VNET_AFFINITY_PLAN_H
#define VNET_AFFINITY_PLAN_H

#include <linux/types.h>

/* One online CPU. */
struct vnet_topo_cpu {
	u16 cpu;	/* CPU number */
	u16 node;	/* NUMA node */
	u16 core;	/* identifies the physical core (SMT siblings share it) */
	u16 llc;	/* identifies the last-level cache */
};

/* Working space and results; sized by the caller (see vnet_plan_alloc). */
struct vnet_plan {
	unsigned int ncpus;		/* entries in cpus[] */
	unsigned int mask_bits;	/* bits in each XPS mask */
	const struct vnet_topo_cpu *cpus;
	unsigned int total_pairs;	/* over all NICs */
	u16 *irq_cpu;			/* [total_pairs] */
	unsigned long *xps;		/* [total_pairs][BITS_TO_LONGS(mask_bits)] */
	/* scratch; [ncpus] arrays are indexed like cpus[] */
	unsigned int *load;		/* [ncpus] pairs per CPU */
	unsigned int *order;		/* [ncpus] spread order */
	unsigned int *rank;		/* [ncpus] thread rank within its core */
	unsigned int *core_of;		/* [ncpus] first CPU of the same core */
	unsigned int *llc_of;		/* [ncpus] first CPU of the same cache */
	unsigned int *core_load;	/* [ncpus] pairs per core, at core_of */
	unsigned int *llc_load;		/* [ncpus] pairs per cache, at llc_of */
	unsigned int *llc_cpus;		/* [ncpus] CPUs per cache, at llc_of */
	unsigned int *node_pairs;	/* [ncpus] pairs per node, at the
					 * node's first position in order[]
					 */
	unsigned int *irq_idx;		/* [total_pairs] cpus[] index of irq_cpu */
	unsigned int *xps_count;	/* [total_pairs] */
};

int vnet_plan_alloc(struct vnet_plan *p, const struct vnet_topo_cpu *cpus,
		    unsigned int ncpus, unsigned int mask_bits,
		    unsigned int total_pairs, gfp_t gfp);
void vnet_plan_free(struct vnet_plan *p);
unsigned long *vnet_plan_xps(const struct vnet_plan *p, unsigned int pair);
int vnet_affinity_plan(struct vnet_plan *p, const unsigned int *pairs,
		       unsigned int nnics);

#endif /* VNET_AFFINITY_PLAN_H */
