// SPDX-License-Identifier: GPL-2.0-only
/*
 * Affinity planner (pure).  See policy/affinity.h for the rules.
 */
#include <linux/bitmap.h>
#include <linux/errno.h>
#include <linux/slab.h>
#include "policy/affinity.h"

int vnet_plan_alloc(struct vnet_plan *p, const struct vnet_topo_cpu *cpus,
		    unsigned int ncpus, unsigned int mask_bits,
		    unsigned int total_pairs, gfp_t gfp)
{
	memset(p, 0, sizeof(*p));
	if (!ncpus || !total_pairs)
		return -EINVAL;
	p->cpus = cpus;
	p->ncpus = ncpus;
	p->mask_bits = mask_bits;
	p->total_pairs = total_pairs;
	p->irq_cpu = kcalloc(total_pairs, sizeof(*p->irq_cpu), gfp);
	p->xps = kcalloc(total_pairs * BITS_TO_LONGS(mask_bits),
			 sizeof(unsigned long), gfp);
	p->load = kcalloc(ncpus, sizeof(*p->load), gfp);
	p->order = kcalloc(ncpus, sizeof(*p->order), gfp);
	p->rank = kcalloc(ncpus, sizeof(*p->rank), gfp);
	p->core_of = kcalloc(ncpus, sizeof(*p->core_of), gfp);
	p->llc_of = kcalloc(ncpus, sizeof(*p->llc_of), gfp);
	p->core_load = kcalloc(ncpus, sizeof(*p->core_load), gfp);
	p->llc_load = kcalloc(ncpus, sizeof(*p->llc_load), gfp);
	p->llc_cpus = kcalloc(ncpus, sizeof(*p->llc_cpus), gfp);
	p->node_pairs = kcalloc(ncpus, sizeof(*p->node_pairs), gfp);
	p->irq_idx = kcalloc(total_pairs, sizeof(*p->irq_idx), gfp);
	p->xps_count = kcalloc(total_pairs, sizeof(*p->xps_count), gfp);
	if (!p->irq_cpu || !p->xps || !p->load || !p->order || !p->rank ||
	    !p->core_of || !p->llc_of || !p->core_load || !p->llc_load ||
	    !p->llc_cpus || !p->node_pairs || !p->irq_idx || !p->xps_count) {
		vnet_plan_free(p);
		return -ENOMEM;
	}
	return 0;
}

void vnet_plan_free(struct vnet_plan *p)
{
	kfree(p->irq_cpu);
	kfree(p->xps);
	kfree(p->load);
	kfree(p->order);
	kfree(p->rank);
	kfree(p->core_of);
	kfree(p->llc_of);
	kfree(p->core_load);
	kfree(p->llc_load);
	kfree(p->llc_cpus);
	kfree(p->node_pairs);
	kfree(p->irq_idx);
	kfree(p->xps_count);
	memset(p, 0, sizeof(*p));
}

unsigned long *vnet_plan_xps(const struct vnet_plan *p, unsigned int pair)
{
	return p->xps + pair * BITS_TO_LONGS(p->mask_bits);
}

static bool vnet_plan_same_llc(const struct vnet_topo_cpu *x,
			       const struct vnet_topo_cpu *y)
{
	return x->node == y->node && x->llc == y->llc;
}

/* Spread order: by node, then thread rank, cache, core, CPU number. */
static bool vnet_plan_before(const struct vnet_plan *p, unsigned int a,
			     unsigned int b)
{
	const struct vnet_topo_cpu *x = &p->cpus[a], *y = &p->cpus[b];

	if (x->node != y->node)
		return x->node < y->node;
	if (p->rank[a] != p->rank[b])
		return p->rank[a] < p->rank[b];
	if (x->llc != y->llc)
		return x->llc < y->llc;
	if (x->core != y->core)
		return x->core < y->core;
	return x->cpu < y->cpu;
}

/*
 * Group the CPUs: each CPU's thread rank within its core (how many
 * siblings come before it), the first CPU of its core and of its cache,
 * and the size of every cache; then sort them into the spread order.
 */
static void vnet_plan_order(struct vnet_plan *p)
{
	const struct vnet_topo_cpu *c = p->cpus;
	unsigned int i, j, v;

	for (i = 0; i < p->ncpus; i++) {
		p->rank[i] = 0;
		p->core_of[i] = i;
		p->llc_of[i] = i;
		p->llc_cpus[i] = 0;
		for (j = 0; j < p->ncpus; j++) {
			if (c[j].core == c[i].core) {
				if (c[j].cpu < c[i].cpu)
					p->rank[i]++;
				if (j < p->core_of[i])
					p->core_of[i] = j;
			}
			if (vnet_plan_same_llc(&c[j], &c[i]) && j < p->llc_of[i])
				p->llc_of[i] = j;
		}
	}
	for (i = 0; i < p->ncpus; i++)
		p->llc_cpus[p->llc_of[i]]++;
	/* Insertion sort: stable, and CPU counts are small. */
	for (i = 0; i < p->ncpus; i++) {
		v = i;
		for (j = i; j > 0 && vnet_plan_before(p, v, p->order[j - 1]); j--)
			p->order[j] = p->order[j - 1];
		p->order[j] = v;
	}
}

/* End (exclusive) of the node range of order[] that starts at @start. */
static unsigned int vnet_plan_node_end(const struct vnet_plan *p,
				       unsigned int start)
{
	u16 node = p->cpus[p->order[start]].node;
	unsigned int end = start;

	while (end < p->ncpus && p->cpus[p->order[end]].node == node)
		end++;
	return end;
}

/*
 * The node range whose share of the pairs placed so far is furthest
 * behind its share of the CPUs (first such range on ties).
 */
static unsigned int vnet_plan_pick_node(const struct vnet_plan *p,
					unsigned int placed)
{
	unsigned int start, end, best = 0;
	long long deficit, best_deficit = 0;
	bool first = true;

	for (start = 0; start < p->ncpus; start = end) {
		end = vnet_plan_node_end(p, start);
		/* (placed + 1) * cpus / total - assigned, scaled by total */
		deficit = (long long)(placed + 1) * (end - start) -
			  (long long)p->node_pairs[start] * p->ncpus;
		if (first || deficit > best_deficit) {
			best = start;
			best_deficit = deficit;
			first = false;
		}
	}
	return best;
}

/*
 * Is CPU index @a a better home than @b for the next interrupt of their
 * node?  The less loaded CPU, then the less loaded core (distinct cores
 * before SMT siblings), then the cache with fewer pairs per CPU; on a
 * tie, no (the one earlier in the spread order stays).
 */
static bool vnet_plan_better(const struct vnet_plan *p, unsigned int a,
			     unsigned int b)
{
	unsigned int ca = p->core_of[a], cb = p->core_of[b];
	unsigned int la = p->llc_of[a], lb = p->llc_of[b];

	if (p->load[a] != p->load[b])
		return p->load[a] < p->load[b];
	if (p->core_load[ca] != p->core_load[cb])
		return p->core_load[ca] < p->core_load[cb];
	/* llc_load[la] / llc_cpus[la] < llc_load[lb] / llc_cpus[lb] */
	return (u64)p->llc_load[la] * p->llc_cpus[lb] <
	       (u64)p->llc_load[lb] * p->llc_cpus[la];
}

/* Choose the XPS pair in [first, last) for CPU index @ci without one. */
static unsigned int vnet_plan_xps_fallback(const struct vnet_plan *p,
					   unsigned int ci, unsigned int first,
					   unsigned int last)
{
	const struct vnet_topo_cpu *c = &p->cpus[ci];
	unsigned int level, g, best;
	bool found;

	for (level = 0; level < 3; level++) {
		found = false;
		best = first;
		for (g = first; g < last; g++) {
			const struct vnet_topo_cpu *irq = &p->cpus[p->irq_idx[g]];

			if (level == 0 && !vnet_plan_same_llc(irq, c))
				continue;
			if (level == 1 && irq->node != c->node)
				continue;
			if (!found || p->xps_count[g] < p->xps_count[best]) {
				best = g;
				found = true;
			}
		}
		if (found)
			return best;
	}
	return first;
}

static void vnet_plan_xps_nic(struct vnet_plan *p, unsigned int first,
			      unsigned int last)
{
	unsigned int i, g, ci;
	bool own;

	for (i = 0; i < p->ncpus; i++) {
		ci = p->order[i];
		own = false;
		for (g = first; g < last; g++) {
			if (p->irq_idx[g] == ci) {
				__set_bit(p->cpus[ci].cpu, vnet_plan_xps(p, g));
				p->xps_count[g]++;
				own = true;
			}
		}
		if (own)
			continue;
		g = vnet_plan_xps_fallback(p, ci, first, last);
		__set_bit(p->cpus[ci].cpu, vnet_plan_xps(p, g));
		p->xps_count[g]++;
	}
}

/*
 * Plan @nnics NICs with pairs[k] queue pairs each, in that order: NIC k's
 * pairs are entries sum(pairs[0..k-1]) onwards of irq_cpu[] and xps.
 */
int vnet_affinity_plan(struct vnet_plan *p, const unsigned int *pairs,
		       unsigned int nnics)
{
	unsigned int k, j, g = 0, start, end, i, best, ci, first;
	size_t n = p->ncpus * sizeof(unsigned int);

	vnet_plan_order(p);
	memset(p->load, 0, n);
	memset(p->core_load, 0, n);
	memset(p->llc_load, 0, n);
	memset(p->node_pairs, 0, n);
	memset(p->xps_count, 0, p->total_pairs * sizeof(*p->xps_count));
	bitmap_zero(p->xps, p->total_pairs * BITS_TO_LONGS(p->mask_bits) *
		    BITS_PER_LONG);

	for (k = 0; k < nnics; k++) {
		first = g;
		for (j = 0; j < pairs[k]; j++, g++) {
			if (g >= p->total_pairs)
				return -EINVAL;
			start = vnet_plan_pick_node(p, g);
			end = vnet_plan_node_end(p, start);
			best = start;
			for (i = start + 1; i < end; i++)
				if (vnet_plan_better(p, p->order[i],
						     p->order[best]))
					best = i;
			ci = p->order[best];
			p->irq_idx[g] = ci;
			p->irq_cpu[g] = p->cpus[ci].cpu;
			p->load[ci]++;
			p->core_load[p->core_of[ci]]++;
			p->llc_load[p->llc_of[ci]]++;
			p->node_pairs[start]++;
		}
		vnet_plan_xps_nic(p, first, g);
	}
	return 0;
}
