// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: affinity planner over synthetic topologies. */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/slab.h>
#include "affinity_plan.h"

#define MAXCPU	256

struct topo {
	struct vnet_topo_cpu cpu[MAXCPU];
	unsigned int n;
};

/*
 * nodes x cores x threads, CPUs numbered node-major with SMT siblings
 * adjacent (0,1 share a core); one LLC per node.  @hole skips every CPU
 * whose number is a multiple of it (offline holes), 0 for none.
 */
static void make_topo(struct topo *t, unsigned int nodes, unsigned int cores,
		      unsigned int threads, unsigned int hole)
{
	unsigned int n, c, th, cpu = 0;

	t->n = 0;
	for (n = 0; n < nodes; n++)
		for (c = 0; c < cores; c++)
			for (th = 0; th < threads; th++, cpu++) {
				if (hole && cpu % hole == 0)
					continue;
				t->cpu[t->n].cpu = cpu;
				t->cpu[t->n].node = n;
				t->cpu[t->n].core = n * cores + c;
				t->cpu[t->n].llc = n;
				t->n++;
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

	make_topo(t, 1, 4, 1, 0);
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

	make_topo(t, 1, 2, 2, 0);
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

	make_topo(t, 1, 4, 1, 0);
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

	make_topo(t, 2, 2, 1, 0);
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

	make_topo(t, 1, 6, 1, 0);
	for (i = 0; i < 2; i++) {
		t->cpu[t->n].cpu = 6 + i;
		t->cpu[t->n].node = 1;
		t->cpu[t->n].core = 6 + i;
		t->cpu[t->n].llc = 1;
		t->n++;
	}
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

	make_topo(t, 1, 4, 1, 0);
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

	make_topo(t, 1, 8, 1, 2);	/* CPUs 1, 3, 5, 7 online */
	p = plan(test, t, pairs, 1);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, p->irq_cpu[i] % 2, 1);
	for (i = 0; i < 8; i += 2) {
		KUNIT_EXPECT_FALSE(test, xps_has(p, 0, i));
		KUNIT_EXPECT_FALSE(test, xps_has(p, 3, i));
	}
	vnet_plan_free(p);
}

/* Properties over many topologies and pair counts. */
static void plan_properties(struct kunit *test)
{
	static const unsigned int shapes[][4] = {
		/* nodes, cores per node, threads, hole */
		{ 1, 1, 1, 0 }, { 1, 2, 2, 0 }, { 1, 4, 1, 0 }, { 2, 2, 2, 0 },
		{ 2, 3, 1, 0 }, { 3, 5, 2, 0 }, { 4, 8, 2, 0 }, { 4, 32, 2, 0 },
		{ 2, 64, 2, 0 }, { 1, 128, 2, 0 }, { 3, 7, 1, 3 }, { 4, 16, 2, 5 },
	};
	unsigned int s;

	for (s = 0; s < ARRAY_SIZE(shapes); s++) {
		struct topo *t = new_topo(test);
		unsigned int np, nn;

		make_topo(t, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
		for (nn = 1; nn <= 2; nn++) {
			for (np = 1; np <= 2 * t->n + 1; np += 1 + t->n / 8) {
				unsigned int pairs[2] = { np, np + 1 };
				struct vnet_plan *p = plan(test, t, pairs, nn);
				struct vnet_plan *q = plan(test, t, pairs, nn);
				unsigned int total = np + (nn > 1 ? np + 1 : 0);
				unsigned int i, g, lo = ~0U, hi = 0;

				/* Deterministic. */
				KUNIT_EXPECT_EQ(test, memcmp(p->irq_cpu, q->irq_cpu,
							     total * sizeof(u16)), 0);
				/* Balanced: loads differ by at most one. */
				for (i = 0; i < t->n; i++) {
					lo = min(lo, p->load[i]);
					hi = max(hi, p->load[i]);
				}
				KUNIT_EXPECT_LE_MSG(test, hi - lo, 1U,
						    "shape %u pairs %u nics %u", s, np, nn);
				/* Every online CPU transmits on some pair of each NIC. */
				for (i = 0; i < t->n; i++) {
					bool in0 = false, in1 = nn < 2;

					for (g = 0; g < np; g++)
						in0 |= xps_has(p, g, t->cpu[i].cpu);
					for (g = np; g < total; g++)
						in1 |= xps_has(p, g, t->cpu[i].cpu);
					KUNIT_EXPECT_TRUE(test, in0 && in1);
				}
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
	KUNIT_CASE(plan_properties),
	{}
};

static struct kunit_suite affinity_plan_suite = {
	.name = "vnet_affinity_plan",
	.test_cases = affinity_plan_cases,
};

kunit_test_suite(affinity_plan_suite);
