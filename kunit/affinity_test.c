// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: affinity planner over synthetic topologies. */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/slab.h>
#include "policy/affinity.h"

#define MAXCPU	256
#define MAXNODE	4

struct topo {
	struct vnet_topo_cpu cpu[MAXCPU];
	unsigned int n;
	u16 idx[MAXCPU];	/* CPU number -> index into cpu[] */
};

/* Append CPU @cpu to @t. */
static void add_cpu(struct topo *t, u16 cpu, u16 node, u16 llc, u16 core)
{
	t->cpu[t->n].cpu = cpu;
	t->cpu[t->n].node = node;
	t->cpu[t->n].llc = llc;
	t->cpu[t->n].core = core;
	t->idx[cpu] = t->n++;
}

/*
 * nodes x caches x cores x threads, CPUs numbered node-major, then by
 * last-level cache (a socket), with SMT siblings adjacent (0,1 share a
 * core).  @hole skips every CPU whose number is a multiple of it (offline
 * holes), 0 for none.  Core and cache ids are unique machine-wide.
 */
static void make_topo(struct topo *t, unsigned int nodes, unsigned int llcs,
		      unsigned int cores, unsigned int threads,
		      unsigned int hole)
{
	unsigned int n, l, c, th, cpu = 0;

	t->n = 0;
	for (n = 0; n < nodes; n++)
		for (l = 0; l < llcs; l++)
			for (c = 0; c < cores; c++)
				for (th = 0; th < threads; th++, cpu++) {
					if (hole && cpu % hole == 0)
						continue;
					add_cpu(t, cpu, n, n * llcs + l,
						(n * llcs + l) * cores + c);
				}
}

/* Topologies are too big for a test's stack frame: KUnit frees them. */
static struct topo *new_topo(struct kunit *test)
{
	struct topo *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	return t;
}

static struct vnet_plan *plan(struct kunit *test, const struct topo *t,
			      const unsigned int *pairs, unsigned int nnics)
{
	struct vnet_plan *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	unsigned int k, total = 0;

	for (k = 0; k < nnics; k++)
		total += pairs[k];
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, vnet_plan_alloc(p, t->cpu, t->n, MAXCPU, total,
					      GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, vnet_affinity_plan(p, pairs, nnics), 0);
	return p;
}

static bool xps_has(const struct vnet_plan *p, unsigned int pair, u16 cpu)
{
	return test_bit(cpu, vnet_plan_xps(p, pair));
}

static void plan_one_pair_per_cpu(struct kunit *test)
{
	static const unsigned int pairs[] = { 4 };
	struct vnet_plan *p;
	struct topo *t = new_topo(test);
	unsigned int i;

	make_topo(t, 1, 1, 4, 1, 0);
	p = plan(test, t, pairs, 1);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, p->irq_cpu[i], (u16)i);
		KUNIT_EXPECT_TRUE(test, xps_has(p, i, i));
		KUNIT_EXPECT_EQ(test, p->xps_count[i], 1U);
	}
	vnet_plan_free(p);
}

/* 2 cores x 2 threads, 2 pairs: one per core, not two siblings. */
static void plan_cores_before_siblings(struct kunit *test)
{
	static const unsigned int pairs[] = { 2 };
	struct vnet_plan *p;
	struct topo *t = new_topo(test);

	make_topo(t, 1, 1, 2, 2, 0);
	p = plan(test, t, pairs, 1);
	KUNIT_EXPECT_EQ(test, p->irq_cpu[0], 0);
	KUNIT_EXPECT_EQ(test, p->irq_cpu[1], 2);
	/* Each sibling transmits on its own core's pair (same cache). */
	KUNIT_EXPECT_TRUE(test, xps_has(p, 0, 0));
	KUNIT_EXPECT_TRUE(test, xps_has(p, 1, 2));
	KUNIT_EXPECT_EQ(test, p->xps_count[0] + p->xps_count[1], 4U);
	vnet_plan_free(p);
}

/* More pairs than CPUs: round robin, a CPU transmits on all of its pairs. */
static void plan_more_pairs_than_cpus(struct kunit *test)
{
	static const unsigned int pairs[] = { 8 };
	struct vnet_plan *p;
	struct topo *t = new_topo(test);
	unsigned int i;

	make_topo(t, 1, 1, 4, 1, 0);
	p = plan(test, t, pairs, 1);
	for (i = 0; i < 8; i++) {
		KUNIT_EXPECT_EQ(test, p->irq_cpu[i], (u16)(i % 4));
		KUNIT_EXPECT_TRUE(test, xps_has(p, i, i % 4));
	}
	vnet_plan_free(p);
}

/* Two nodes: one pair each, every CPU transmits on its own node. */
static void plan_numa_local(struct kunit *test)
{
	static const unsigned int pairs[] = { 2 };
	struct vnet_plan *p;
	struct topo *t = new_topo(test);
	unsigned int i, g;

	make_topo(t, 2, 1, 2, 1, 0);
	p = plan(test, t, pairs, 1);
	KUNIT_EXPECT_EQ(test, p->irq_cpu[0], 0);
	KUNIT_EXPECT_EQ(test, p->irq_cpu[1], 2);
	for (i = 0; i < t->n; i++)
		for (g = 0; g < 2; g++)
			if (xps_has(p, g, t->cpu[i].cpu))
				KUNIT_EXPECT_EQ(test, t->cpu[i].node, (u16)g);
	vnet_plan_free(p);
}

/* Pairs in proportion to each node's CPUs: 6 + 2 CPUs, 4 pairs -> 3 + 1. */
static void plan_numa_proportion(struct kunit *test)
{
	static const unsigned int pairs[] = { 4 };
	unsigned int i, on_node1 = 0;
	struct vnet_plan *p;
	struct topo *t = new_topo(test);

	make_topo(t, 1, 1, 6, 1, 0);
	for (i = 6; i < 8; i++)
		add_cpu(t, i, 1, 1, i);
	p = plan(test, t, pairs, 1);
	for (i = 0; i < 4; i++)
		on_node1 += p->irq_cpu[i] >= 6;
	KUNIT_EXPECT_EQ(test, on_node1, 1U);
	vnet_plan_free(p);
}

/* Two NICs of two pairs on four CPUs do not share a CPU. */
static void plan_two_nics_spread(struct kunit *test)
{
	static const unsigned int pairs[] = { 2, 2 };
	struct vnet_plan *p;
	unsigned long used = 0;
	struct topo *t = new_topo(test);
	unsigned int i;

	make_topo(t, 1, 1, 4, 1, 0);
	p = plan(test, t, pairs, 2);
	for (i = 0; i < 4; i++)
		used |= BIT(p->irq_cpu[i]);
	KUNIT_EXPECT_EQ(test, used, 0xfUL);
	/* Each NIC's XPS covers all four CPUs. */
	KUNIT_EXPECT_EQ(test, p->xps_count[0] + p->xps_count[1], 4U);
	KUNIT_EXPECT_EQ(test, p->xps_count[2] + p->xps_count[3], 4U);
	vnet_plan_free(p);
}

/* Offline CPUs (holes in the numbering) are never used. */
static void plan_offline_holes(struct kunit *test)
{
	static const unsigned int pairs[] = { 4 };
	struct vnet_plan *p;
	struct topo *t = new_topo(test);
	unsigned int i;

	make_topo(t, 1, 1, 8, 1, 2);	/* CPUs 1, 3, 5, 7 online */
	p = plan(test, t, pairs, 1);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, p->irq_cpu[i] % 2, 1);
	for (i = 0; i < 8; i += 2) {
		KUNIT_EXPECT_FALSE(test, xps_has(p, 0, i));
		KUNIT_EXPECT_FALSE(test, xps_has(p, 3, i));
	}
	vnet_plan_free(p);
}

/*
 * Two sockets (last-level caches) of two cores in one node, 2 pairs: one
 * pair per socket, not both on socket 0; each CPU transmits on its own
 * socket's pair.
 */
static void plan_llc_spread(struct kunit *test)
{
	static const unsigned int pairs[] = { 2 };
	struct topo *t = new_topo(test);
	struct vnet_plan *p;

	make_topo(t, 1, 2, 2, 1, 0);
	p = plan(test, t, pairs, 1);
	KUNIT_EXPECT_EQ(test, p->irq_cpu[0], 0);
	KUNIT_EXPECT_EQ(test, p->irq_cpu[1], 2);
	KUNIT_EXPECT_TRUE(test, xps_has(p, 0, 1));
	KUNIT_EXPECT_TRUE(test, xps_has(p, 1, 3));
	KUNIT_EXPECT_FALSE(test, xps_has(p, 0, 3));
	vnet_plan_free(p);
}

/* The same with SMT: sockets in turn, then the other core of each. */
static void plan_llc_spread_smt(struct kunit *test)
{
	static const unsigned int pairs[] = { 4 };
	struct topo *t = new_topo(test);
	struct vnet_plan *p;

	make_topo(t, 1, 2, 2, 2, 0);	/* socket 0: CPUs 0-3, 1: 4-7 */
	p = plan(test, t, pairs, 1);
	KUNIT_EXPECT_EQ(test, p->irq_cpu[0], 0);
	KUNIT_EXPECT_EQ(test, p->irq_cpu[1], 4);
	KUNIT_EXPECT_EQ(test, p->irq_cpu[2], 2);
	KUNIT_EXPECT_EQ(test, p->irq_cpu[3], 6);
	vnet_plan_free(p);
}

/* Caches of 6 and 2 CPUs in one node, 4 pairs: 3 + 1. */
static void plan_llc_proportion(struct kunit *test)
{
	static const unsigned int pairs[] = { 4 };
	struct topo *t = new_topo(test);
	unsigned int i, on_small = 0;
	struct vnet_plan *p;

	for (i = 0; i < 8; i++)
		add_cpu(t, i, 0, i < 6 ? 0 : 6, i);
	p = plan(test, t, pairs, 1);
	for (i = 0; i < 4; i++)
		on_small += p->irq_cpu[i] >= 6;
	KUNIT_EXPECT_EQ(test, on_small, 1U);
	vnet_plan_free(p);
}

/*
 * Spread of the first @n pairs (a NIC planned alone, or all NICs):
 * every node gets its share within one pair, and within a node the
 * pairs go to distinct cores and distinct caches while there are any.
 */
static void check_spread(struct kunit *test, const struct topo *t,
			 const struct vnet_plan *p, unsigned int n,
			 const char *what)
{
	DECLARE_BITMAP(cores, MAXCPU);
	DECLARE_BITMAP(used_cores, MAXCPU);
	DECLARE_BITMAP(llcs, MAXCPU);
	DECLARE_BITMAP(used_llcs, MAXCPU);
	unsigned int node, i, g, ncpus, got, want;
	long long diff;

	for (node = 0; node < MAXNODE; node++) {
		bitmap_zero(cores, MAXCPU);
		bitmap_zero(used_cores, MAXCPU);
		bitmap_zero(llcs, MAXCPU);
		bitmap_zero(used_llcs, MAXCPU);
		ncpus = 0;
		for (i = 0; i < t->n; i++) {
			if (t->cpu[i].node != node)
				continue;
			ncpus++;
			__set_bit(t->cpu[i].core, cores);
			__set_bit(t->cpu[i].llc, llcs);
		}
		if (!ncpus)
			continue;
		got = 0;
		for (g = 0; g < n; g++) {
			const struct vnet_topo_cpu *c =
				&t->cpu[t->idx[p->irq_cpu[g]]];

			if (c->node != node)
				continue;
			got++;
			__set_bit(c->core, used_cores);
			__set_bit(c->llc, used_llcs);
		}
		/* |got - n * ncpus / all| < 1, scaled by all */
		diff = (long long)got * t->n - (long long)n * ncpus;
		KUNIT_EXPECT_LT_MSG(test, abs(diff), (long long)t->n,
				    "%s: node %u has %u of %u pairs for %u of %u CPUs",
				    what, node, got, n, ncpus, t->n);
		want = min(got, bitmap_weight(cores, MAXCPU));
		KUNIT_EXPECT_EQ_MSG(test, bitmap_weight(used_cores, MAXCPU), want,
				    "%s: node %u: %u pairs on too few cores", what,
				    node, got);
		want = min(got, bitmap_weight(llcs, MAXCPU));
		KUNIT_EXPECT_EQ_MSG(test, bitmap_weight(used_llcs, MAXCPU), want,
				    "%s: node %u: %u pairs on too few caches", what,
				    node, got);
	}
}

/*
 * XPS of the NIC owning pairs [first, last): every CPU transmits on the
 * pairs whose interrupt it takes, else on exactly one pair of its own
 * cache if the NIC has one there, else of its own node if it has one.
 */
static void check_xps(struct kunit *test, const struct topo *t,
		      const struct vnet_plan *p, unsigned int first,
		      unsigned int last, const char *what)
{
	DECLARE_BITMAP(own, MAXCPU);
	DECLARE_BITMAP(llc_has, MAXCPU);
	unsigned long node_has = 0;
	unsigned int i, g, count;

	bitmap_zero(own, MAXCPU);
	bitmap_zero(llc_has, MAXCPU);
	for (g = first; g < last; g++) {
		const struct vnet_topo_cpu *c = &t->cpu[t->idx[p->irq_cpu[g]]];

		__set_bit(c->cpu, own);
		__set_bit(c->llc, llc_has);
		node_has |= BIT(c->node);
	}
	for (i = 0; i < t->n; i++) {
		const struct vnet_topo_cpu *c = &t->cpu[i];

		count = 0;
		for (g = first; g < last; g++) {
			const struct vnet_topo_cpu *irq =
				&t->cpu[t->idx[p->irq_cpu[g]]];

			if (!xps_has(p, g, c->cpu))
				continue;
			count++;
			if (test_bit(c->cpu, own))
				KUNIT_EXPECT_EQ_MSG(test, irq->cpu, c->cpu,
						    "%s: CPU %u transmits on another CPU's pair",
						    what, c->cpu);
			else if (test_bit(c->llc, llc_has))
				KUNIT_EXPECT_EQ_MSG(test, irq->llc, c->llc,
						    "%s: CPU %u transmits off its cache",
						    what, c->cpu);
			else if (node_has & BIT(c->node))
				KUNIT_EXPECT_EQ_MSG(test, irq->node, c->node,
						    "%s: CPU %u transmits off its node",
						    what, c->cpu);
		}
		if (test_bit(c->cpu, own))
			KUNIT_EXPECT_GE_MSG(test, count, 1U, "%s: CPU %u", what,
					    c->cpu);
		else
			KUNIT_EXPECT_EQ_MSG(test, count, 1U,
					    "%s: CPU %u on %u pairs", what,
					    c->cpu, count);
	}
}

/* Properties over many topologies and pair counts. */
static void plan_properties(struct kunit *test)
{
	static const unsigned int shapes[][5] = {
		/* nodes, caches per node, cores per cache, threads, hole */
		{ 1, 1, 1, 1, 0 }, { 1, 1, 2, 2, 0 }, { 1, 1, 4, 1, 0 },
		{ 2, 1, 2, 2, 0 }, { 2, 1, 3, 1, 0 }, { 3, 1, 5, 2, 0 },
		{ 4, 1, 8, 2, 0 }, { 4, 1, 32, 2, 0 }, { 2, 1, 64, 2, 0 },
		{ 1, 1, 128, 2, 0 }, { 3, 1, 7, 1, 3 }, { 4, 1, 16, 2, 5 },
		/* several caches (sockets) per node */
		{ 1, 2, 2, 1, 0 }, { 1, 2, 2, 2, 0 }, { 1, 4, 4, 2, 0 },
		{ 2, 2, 3, 1, 0 }, { 2, 3, 4, 2, 0 }, { 4, 2, 16, 2, 0 },
		{ 1, 3, 5, 1, 4 }, { 2, 4, 2, 2, 3 }, { 1, 8, 16, 2, 7 },
	};
	char what[64];
	unsigned int s;

	for (s = 0; s < ARRAY_SIZE(shapes); s++) {
		struct topo *t = new_topo(test);
		unsigned int np, nn;

		make_topo(t, shapes[s][0], shapes[s][1], shapes[s][2],
			  shapes[s][3], shapes[s][4]);
		for (nn = 1; nn <= 2; nn++) {
			for (np = 1; np <= 2 * t->n + 1; np += 1 + t->n / 8) {
				unsigned int pairs[2] = { np, np + 1 };
				struct vnet_plan *p = plan(test, t, pairs, nn);
				struct vnet_plan *q = plan(test, t, pairs, nn);
				unsigned int total = np + (nn > 1 ? np + 1 : 0);
				unsigned int i, lo = ~0U, hi = 0;

				snprintf(what, sizeof(what),
					 "shape %u pairs %u nics %u", s, np, nn);
				/* Deterministic. */
				KUNIT_EXPECT_EQ(test, memcmp(p->irq_cpu, q->irq_cpu,
							     total * sizeof(u16)), 0);
				/* Balanced: loads differ by at most one. */
				for (i = 0; i < t->n; i++) {
					lo = min(lo, p->load[i]);
					hi = max(hi, p->load[i]);
				}
				KUNIT_EXPECT_LE_MSG(test, hi - lo, 1U, "%s", what);
				/* The first NIC alone, then all together. */
				check_spread(test, t, p, np, what);
				check_spread(test, t, p, total, what);
				check_xps(test, t, p, 0, np, what);
				if (nn > 1)
					check_xps(test, t, p, np, total, what);
				vnet_plan_free(p);
				vnet_plan_free(q);
			}
		}
	}
}

static struct kunit_case affinity_plan_cases[] = {
	KUNIT_CASE(plan_one_pair_per_cpu),
	KUNIT_CASE(plan_cores_before_siblings),
	KUNIT_CASE(plan_more_pairs_than_cpus),
	KUNIT_CASE(plan_numa_local),
	KUNIT_CASE(plan_numa_proportion),
	KUNIT_CASE(plan_two_nics_spread),
	KUNIT_CASE(plan_offline_holes),
	KUNIT_CASE(plan_llc_spread),
	KUNIT_CASE(plan_llc_spread_smt),
	KUNIT_CASE(plan_llc_proportion),
	KUNIT_CASE(plan_properties),
	{}
};

static struct kunit_suite affinity_plan_suite = {
	.name = "vnet_affinity_plan",
	.test_cases = affinity_plan_cases,
};

kunit_test_suite(affinity_plan_suite);
