// SPDX-License-Identifier: GPL-2.0-only
/*
 * exitcost.c - QEMU TCG plugin that models the cost of KVM VM exits.
 *
 * Under TCG a virtqueue kick or an injected interrupt is cheap, while on KVM
 * (without posted interrupts / APIC virtualisation) each one is a VM exit that
 * costs the vCPU microseconds. This plugin stalls the vCPU thread for a
 * configurable time whenever the guest executes the first instruction of a
 * function that stands for such an exit, and counts the events per kind, per
 * hooked function and per vCPU.
 *
 * Plugin API version 1 (QEMU 7.2) cannot read guest registers, so we hook
 * function entries (guest virtual addresses, from /proc/kallsyms of a guest
 * booted with nokaslr) instead of the trapping I/O instruction itself; only
 * stores to an absolute address (xAPIC registers) can be matched directly.
 * The callbacks run on the vCPU's own thread before the hooked instruction,
 * so the stall delays that vCPU only, and guest time goes on meanwhile
 * (QEMU's clocks are real time), as it does during a real exit.
 *
 * Arguments (-plugin file=exitcost.so,ARG=VALUE,...):
 *   hook=KIND:ADDR[:NAME]  hook the instruction at guest virtual address ADDR
 *                          (hex with 0x, or decimal); repeatable. KIND is one
 *                          of kick, irq, timer_irq, ipi_irq, timer_arm, ipi,
 *                          count (count only, never charged).
 *   store=KIND:ADDR[:NAME] hook every instruction, wherever it is, that stores
 *                          to the absolute virtual address ADDR with a
 *                          "mov r32/imm32, [disp32]" (the way Linux writes
 *                          fixmap'ed xAPIC registers, e.g. the ICR, however
 *                          the code around it was inlined); repeatable.
 *   cost_KIND=US           stall per event in microseconds (fractions allowed,
 *                          0 = count only). Defaults: kick 20, irq 30,
 *                          timer_arm 10, ipi 15, hlt 20; timer_irq and ipi_irq
 *                          follow cost_irq unless given themselves.
 *   hlt=on                 count every HLT and MWAIT the guest kernel executes
 *                          as kind hlt (an idle vCPU's exit on KVM). Its cost
 *                          is charged when the halted vCPU is woken: at the
 *                          entry of the first interrupt (irq, timer_irq or
 *                          ipi_irq hook) it takes after the HLT, before that
 *                          interrupt's own cost. Halted time itself is free.
 *   scale=F                multiply every cost by F (default 1)
 *   mode=spin|sleep        busy-wait (default, precise) or clock_nanosleep
 *                          with a 1 ns timer slack (frees the host CPU, but
 *                          oversleeps by the host's wake-up latency)
 *   out=PATH               JSON counts written here (atomically: tmp+rename)
 *                          at exit, on request and periodically
 *   ctl=PATH               control file, polled every poll_ms: write it
 *                          atomically (tmp + rename); its lines are
 *                            snap TOKEN              write out now, "request": TOKEN
 *                            cost KIND US            change a cost (at once)
 *                            scale F                 change the scale (at once)
 *                            hook KIND ADDR [NAME]   add an entry hook  } applied
 *                            store KIND ADDR [NAME]  add a store hook   } together by
 *                            unhook NAME|ADDR        disable hooks      } a TB flush
 *                          the plugin deletes the file once read, applies it,
 *                          then writes out (with the TOKEN of a snap line).
 *   poll_ms=N              control file poll period (default 5)
 *   interval_ms=N          also write out every N ms (default 0: off)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <qemu-plugin.h>

#include "plugin_out.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

enum kind { K_KICK, K_IRQ, K_TIMER_IRQ, K_IPI_IRQ, K_TIMER_ARM, K_IPI, K_HLT, K_COUNT, NKINDS };

static const char *const kind_name[NKINDS] = {
	"kick", "irq", "timer_irq", "ipi_irq", "timer_arm", "ipi", "hlt", "count",
};

/* Reference costs in microseconds, see README.md for the derivation. */
static const double default_cost_us[NKINDS] = { 20, 30, 30, 30, 10, 15, 20, 0 };

#define MAX_HOOKS 256
#define KERNEL_VA_MIN 0xffff800000000000ull
#define NAME_LEN 64

struct hook {
	uint64_t addr;
	int kind;
	bool active;
	bool store;            /* abs store to addr, not the instruction at addr */
	bool idle;             /* every HLT/MWAIT instruction (addr = its opcode) */
	uint64_t translations; /* times an exec callback was attached */
	char name[NAME_LEN];
};

/* One per vCPU; only that vCPU's thread writes it. */
struct vstat {
	uint64_t hits[MAX_HOOKS];
	uint64_t stall_ns[NKINDS];
	uint64_t wakes;        /* halted -> woken by an interrupt: hlt cost charged */
	bool halted;           /* executed HLT/MWAIT, no interrupt taken since */
} __attribute__((aligned(64)));

static qemu_plugin_id_t self_id;
static struct hook hooks[MAX_HOOKS];
static int nhooks;            /* changed only before vCPUs run or in exclusive context */
static uint64_t addr_lo = UINT64_MAX, addr_hi;  /* range of active entry hooks */
static int nstores;                               /* active store hooks */
static int nidle;                                 /* active HLT/MWAIT hooks */
static uint64_t cost_ns[NKINDS];
static double cost_us[NKINDS];
static double scale = 1.0;
static bool mode_sleep;
static struct vstat *vstats;
static int nvstats;          /* max_vcpus + 1 overflow slot */
static int nvcpus;           /* vCPUs at start */
static char *out_path, *ctl_path;
static unsigned poll_ms = 5, interval_ms;
static uint64_t t_start;

/* control thread state */
static pthread_t ctl_tid;
static bool ctl_running;
static int ctl_stop;
static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t snap_seq;

/* staged hook changes, applied in the reset callback (all vCPUs stopped) */
struct staged { bool add; struct hook h; };
static pthread_mutex_t stage_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stage_cond = PTHREAD_COND_INITIALIZER;
static struct staged stage[MAX_HOOKS];
static int nstage;
static int reset_pending;     /* a vCPU thread should call qemu_plugin_reset */
static uint64_t resets_done;

static void plugin_exit(qemu_plugin_id_t id, void *p);
static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static struct vstat *vstat_of(unsigned int vcpu)
{
	/* the last slot collects vCPUs beyond max_vcpus (should not happen) */
	return &vstats[vcpu < (unsigned int)nvstats - 1 ? vcpu : (unsigned int)nvstats - 1];
}

static __thread bool slack_set;

static void stall(struct vstat *v, int kind, uint64_t ns)
{
	uint64_t t0 = now_ns(), end = t0 + ns, t;

	if (mode_sleep) {
		struct timespec ts = { .tv_sec = end / 1000000000ull,
				       .tv_nsec = end % 1000000000ull };
		if (!slack_set) {
			prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
			slack_set = true;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		t = now_ns();
	} else {
		do {
			cpu_relax();
			t = now_ns();
		} while (t < end);
	}
	__atomic_fetch_add(&v->stall_ns[kind], t - t0, __ATOMIC_RELAXED);
}

/* --- hook table changes through qemu_plugin_reset (flushes all TBs) --------- */

static void recompute_range(void)
{
	addr_lo = UINT64_MAX;
	addr_hi = 0;
	nstores = 0;
	nidle = 0;
	for (int i = 0; i < nhooks; i++) {
		if (!hooks[i].active)
			continue;
		if (hooks[i].store || hooks[i].idle) {
			nstores += hooks[i].store;
			nidle += hooks[i].idle;
			continue;
		}
		if (hooks[i].addr < addr_lo)
			addr_lo = hooks[i].addr;
		if (hooks[i].addr > addr_hi)
			addr_hi = hooks[i].addr;
	}
}

static void register_callbacks(void)
{
	qemu_plugin_register_vcpu_tb_trans_cb(self_id, vcpu_tb_trans);
	qemu_plugin_register_atexit_cb(self_id, plugin_exit, NULL);
}

/* Runs with every vCPU stopped, after the translation cache was flushed. */
static void reset_done(qemu_plugin_id_t id)
{
	pthread_mutex_lock(&stage_lock);
	for (int i = 0; i < nstage; i++) {
		struct staged *s = &stage[i];
		if (s->add) {
			if (nhooks < MAX_HOOKS) {
				hooks[nhooks] = s->h;
				hooks[nhooks].active = true;
				hooks[nhooks].translations = 0;
				/* the snapshot writer reads nhooks concurrently */
				__atomic_store_n(&nhooks, nhooks + 1, __ATOMIC_RELEASE);
			}
		} else {
			for (int j = 0; j < nhooks; j++) {
				if ((s->h.name[0] && !strcmp(hooks[j].name, s->h.name)) ||
				    (!s->h.name[0] && hooks[j].addr == s->h.addr))
					hooks[j].active = false;
			}
		}
	}
	nstage = 0;
	recompute_range();
	register_callbacks();
	resets_done++;
	pthread_cond_broadcast(&stage_cond);
	pthread_mutex_unlock(&stage_lock);
}

/* Called from vCPU threads only: qemu_plugin_reset needs current_cpu. */
static inline void maybe_reset(void)
{
	if (__atomic_load_n(&reset_pending, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&reset_pending, 0, __ATOMIC_ACQ_REL))
		qemu_plugin_reset(self_id, reset_done);
}

/* --- instrumentation ------------------------------------------------------ */

static void vcpu_hook_exec(unsigned int vcpu_index, void *udata)
{
	unsigned int idx = (unsigned int)(uintptr_t)udata;
	struct vstat *v = vstat_of(vcpu_index);
	int kind = hooks[idx].kind;
	uint64_t c = __atomic_load_n(&cost_ns[kind], __ATOMIC_RELAXED);

	__atomic_fetch_add(&v->hits[idx], 1, __ATOMIC_RELAXED);
	if (kind == K_HLT) {
		/* the exit is paid on the wake-up (below), not while idle */
		v->halted = true;
		maybe_reset();
		return;
	}
	if (v->halted && (kind == K_IRQ || kind == K_TIMER_IRQ || kind == K_IPI_IRQ)) {
		uint64_t w = __atomic_load_n(&cost_ns[K_HLT], __ATOMIC_RELAXED);

		v->halted = false;
		__atomic_fetch_add(&v->wakes, 1, __ATOMIC_RELAXED);
		if (w)
			stall(v, K_HLT, w);
	}
	if (c)
		stall(v, kind, c);
	maybe_reset();
}

/*
 * x86: is this "mov r32, [disp32]" / "movl $imm32, [disp32]" with absolute
 * (no base, no index, no segment override) addressing? Then *target is the
 * sign-extended disp32. Optional REX prefix; a 0x66/0x65/... prefix or any
 * other form is not matched (Linux writes xAPIC registers as 32-bit moves).
 */
static bool abs_store_target(const uint8_t *p, size_t n, uint64_t *target)
{
	size_t i = 0;
	int32_t disp;

	if (n && (p[0] & 0xf0) == 0x40)
		i++;
	if (i + 7 > n)
		return false;
	if (p[i] != 0x89 && p[i] != 0xc7)
		return false;
	if ((p[i + 1] & 0xc7) != 0x04 || p[i + 2] != 0x25)
		return false;
	if (p[i] == 0xc7 && (p[i + 1] & 0x38))
		return false;
	memcpy(&disp, p + i + 3, sizeof(disp));
	*target = (uint64_t)(int64_t)disp;
	return true;
}

/* HLT (f4) or MWAIT (0f 01 c9): the instructions an idle x86 vCPU exits on */
static bool idle_insn(const uint8_t *p, size_t n)
{
	return (n == 1 && p[0] == 0xf4) || (n == 3 && p[0] == 0x0f && p[1] == 0x01 && p[2] == 0xc9);
}

static void attach(struct qemu_plugin_insn *insn, int h)
{
	qemu_plugin_register_vcpu_insn_exec_cb(insn, vcpu_hook_exec, QEMU_PLUGIN_CB_NO_REGS,
					       (void *)(uintptr_t)h);
	__atomic_fetch_add(&hooks[h].translations, 1, __ATOMIC_RELAXED);
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	maybe_reset();
	if (!n || (!nstores && !nidle && qemu_plugin_tb_vaddr(tb) > addr_hi))
		return;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn), target;

		if (nidle && va >= KERNEL_VA_MIN &&
		    idle_insn(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn))) {
			for (int h = 0; h < nhooks; h++)
				if (hooks[h].idle && hooks[h].active &&
				    hooks[h].addr == (qemu_plugin_insn_size(insn) == 1 ? 0xf4 : 0x0f01c9))
					attach(insn, h);
		}

		if (nstores && abs_store_target(qemu_plugin_insn_data(insn),
						qemu_plugin_insn_size(insn), &target)) {
			for (int h = 0; h < nhooks; h++)
				if (hooks[h].store && hooks[h].active && hooks[h].addr == target)
					attach(insn, h);
		}
		if (va < addr_lo || va > addr_hi)
			continue;
		for (int h = 0; h < nhooks; h++)
			if (!hooks[h].store && !hooks[h].idle && hooks[h].active &&
			    hooks[h].addr == va)
				attach(insn, h);
	}
}

/* --- output ----------------------------------------------------------------- */

static void write_json(FILE *f, const char *request, bool final)
{
	uint64_t kcount[NKINDS] = { 0 }, kstall[NKINDS] = { 0 };
	int kh[NKINDS] = { 0 };
	int nh = __atomic_load_n(&nhooks, __ATOMIC_ACQUIRE);
	uint64_t now = now_ns();

	for (int h = 0; h < nh; h++) {
		if (hooks[h].active)
			kh[hooks[h].kind]++;
		for (int c = 0; c < nvstats; c++)
			kcount[hooks[h].kind] += __atomic_load_n(&vstats[c].hits[h], __ATOMIC_RELAXED);
	}
	for (int c = 0; c < nvstats; c++)
		for (int k = 0; k < NKINDS; k++)
			kstall[k] += __atomic_load_n(&vstats[c].stall_ns[k], __ATOMIC_RELAXED);

	fprintf(f, "{\n \"version\": 1,\n \"seq\": %" PRIu64 ",\n \"final\": %s,\n",
		++snap_seq, final ? "true" : "false");
	fprintf(f, " \"request\": ");
	json_str(f, request ? request : "");
	fprintf(f, ",\n \"pid\": %d,\n \"monotonic_ns\": %" PRIu64 ",\n \"elapsed_ns\": %" PRIu64
		",\n \"mode\": \"%s\",\n \"scale\": %g,\n \"resets\": %" PRIu64 ",\n",
		(int)getpid(), now, now - t_start, mode_sleep ? "sleep" : "spin", scale,
		__atomic_load_n(&resets_done, __ATOMIC_RELAXED));
	{
		uint64_t wakes = 0;

		for (int c = 0; c < nvstats; c++)
			wakes += __atomic_load_n(&vstats[c].wakes, __ATOMIC_RELAXED);
		fprintf(f, " \"hlt_wakes\": %" PRIu64 ",\n", wakes);
	}
	fprintf(f, " \"cost_us\": {");
	for (int k = 0; k < NKINDS; k++)
		fprintf(f, "%s\"%s\": %g", k ? ", " : "", kind_name[k],
			(double)__atomic_load_n(&cost_ns[k], __ATOMIC_RELAXED) / 1000.0);
	fprintf(f, "},\n \"kinds\": {\n");
	for (int k = 0; k < NKINDS; k++)
		fprintf(f, "  \"%s\": {\"count\": %" PRIu64 ", \"stall_ns\": %" PRIu64
			", \"hooks\": %d}%s\n", kind_name[k], kcount[k], kstall[k], kh[k],
			k + 1 < NKINDS ? "," : "");
	fprintf(f, " },\n \"vcpus\": [\n");
	for (int c = 0, first = 1; c < nvstats; c++) {
		uint64_t kc[NKINDS] = { 0 }, any = 0;
		bool overflow = c == nvstats - 1;

		for (int h = 0; h < nh; h++) {
			uint64_t x = __atomic_load_n(&vstats[c].hits[h], __ATOMIC_RELAXED);
			kc[hooks[h].kind] += x;
			any += x;
		}
		if (c >= nvcpus && !any)
			continue;
		fprintf(f, "%s  {\"vcpu\": %d%s", first ? "" : ",\n", c,
			overflow ? ", \"overflow\": true" : "");
		first = 0;
		for (int k = 0; k < NKINDS; k++)
			fprintf(f, ", \"%s\": %" PRIu64, kind_name[k], kc[k]);
		fprintf(f, ", \"hlt_wakes\": %" PRIu64,
			__atomic_load_n(&vstats[c].wakes, __ATOMIC_RELAXED));
		fprintf(f, ", \"stall_ns\": {");
		for (int k = 0; k < NKINDS; k++)
			fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", kind_name[k],
				__atomic_load_n(&vstats[c].stall_ns[k], __ATOMIC_RELAXED));
		fprintf(f, "}}");
	}
	fprintf(f, "\n ],\n \"hooks\": [\n");
	for (int h = 0; h < nh; h++) {
		uint64_t tot = 0;

		fprintf(f, "  {\"kind\": \"%s\", \"name\": ", kind_name[hooks[h].kind]);
		json_str(f, hooks[h].name);
		fprintf(f, ", \"type\": \"%s\", \"addr\": \"0x%" PRIx64 "\", \"active\": %s"
			", \"translations\": %" PRIu64 ", \"per_vcpu\": [",
			hooks[h].store ? "store" : hooks[h].idle ? "insn" : "entry", hooks[h].addr,
			hooks[h].active ? "true" : "false",
			__atomic_load_n(&hooks[h].translations, __ATOMIC_RELAXED));
		for (int c = 0; c < nvstats; c++) {
			uint64_t x = __atomic_load_n(&vstats[c].hits[h], __ATOMIC_RELAXED);
			tot += x;
			if (c < nvcpus)
				fprintf(f, "%s%" PRIu64, c ? ", " : "", x);
		}
		fprintf(f, "], \"count\": %" PRIu64 "}%s\n", tot, h + 1 < nh ? "," : "");
	}
	fprintf(f, " ]\n}\n");
}

static void write_snapshot(const char *request, bool final)
{
	pthread_mutex_lock(&snap_lock);
	if (out_path)
		write_atomic("exitcost", out_path, write_json, request, final);
	else if (final)
		/* no out=: the final summary goes to stderr */
		write_json(stderr, request, final);
	pthread_mutex_unlock(&snap_lock);
}

/* --- control file ----------------------------------------------------------- */

static void update_costs(void)
{
	for (int k = 0; k < NKINDS; k++)
		__atomic_store_n(&cost_ns[k], k == K_COUNT ? 0 :
				 (uint64_t)(cost_us[k] * scale * 1000.0 + 0.5), __ATOMIC_RELAXED);
}

static int parse_kind(const char *s, size_t len)
{
	for (int k = 0; k < NKINDS; k++)
		if (strlen(kind_name[k]) == len && !strncmp(kind_name[k], s, len))
			return k;
	return -1;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && end != s && *end == '\0';
}

static bool parse_double(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return !errno && end != s && *end == '\0' && *v >= 0;
}

static void handle_ctl(void)
{
	char buf[16384], token[256] = "";
	size_t len;
	bool changes = false;
	FILE *f = fopen(ctl_path, "r");

	if (!f)
		return;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	unlink(ctl_path);
	buf[len] = '\0';

	pthread_mutex_lock(&stage_lock);
	for (char *save, *line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char w0[32] = "", w1[128] = "", w2[128] = "", w3[NAME_LEN] = "";
		int nw = sscanf(line, "%31s %127s %127s %63s", w0, w1, w2, w3);

		if (nw <= 0)
			continue;
		if (!strcmp(w0, "snap") && nw >= 2) {
			snprintf(token, sizeof(token), "%s", w1);
		} else if ((!strcmp(w0, "hook") || !strcmp(w0, "store")) && nw >= 3 &&
			   nstage < MAX_HOOKS) {
			struct staged *s = &stage[nstage];
			int k = parse_kind(w1, strlen(w1));

			memset(s, 0, sizeof(*s));
			if (k < 0 || !parse_u64(w2, &s->h.addr)) {
				fprintf(stderr, "exitcost: bad control line: %s\n", line);
				continue;
			}
			s->add = true;
			s->h.kind = k;
			s->h.store = w0[0] == 's';
			snprintf(s->h.name, NAME_LEN, "%s", nw >= 4 ? w3 : w2);
			nstage++;
			changes = true;
		} else if (!strcmp(w0, "cost") && nw >= 3) {
			int k = parse_kind(w1, strlen(w1));
			double us;

			if (k < 0 || k == K_COUNT || !parse_double(w2, &us)) {
				fprintf(stderr, "exitcost: bad control line: %s\n", line);
				continue;
			}
			cost_us[k] = us;
			update_costs();
		} else if (!strcmp(w0, "scale") && nw >= 2) {
			double f;

			if (!parse_double(w1, &f)) {
				fprintf(stderr, "exitcost: bad control line: %s\n", line);
				continue;
			}
			scale = f;
			update_costs();
		} else if (!strcmp(w0, "unhook") && nw >= 2 && nstage < MAX_HOOKS) {
			struct staged *s = &stage[nstage];

			memset(s, 0, sizeof(*s));
			if (!parse_u64(w1, &s->h.addr))
				snprintf(s->h.name, NAME_LEN, "%s", w1);
			nstage++;
			changes = true;
		} else {
			fprintf(stderr, "exitcost: bad control line: %s\n", line);
		}
	}
	if (changes) {
		/* wait (bounded) for a vCPU thread to run the reset */
		uint64_t want = resets_done + 1;
		struct timespec dl;

		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 10;
		__atomic_store_n(&reset_pending, 1, __ATOMIC_RELEASE);
		while (resets_done < want && !ctl_stop)
			if (pthread_cond_timedwait(&stage_cond, &stage_lock, &dl) == ETIMEDOUT)
				break;
		if (resets_done < want)
			fprintf(stderr, "exitcost: hook change not applied yet (no vCPU activity)\n");
	}
	pthread_mutex_unlock(&stage_lock);
	write_snapshot(token, false);
}

static void *ctl_main(void *arg)
{
	uint64_t next = interval_ms ? now_ns() + interval_ms * 1000000ull : UINT64_MAX;
	unsigned period = poll_ms;

	(void)arg;
	if (!ctl_path && interval_ms)
		period = interval_ms;
	while (!__atomic_load_n(&ctl_stop, __ATOMIC_ACQUIRE)) {
		struct timespec ts = { .tv_sec = period / 1000, .tv_nsec = (period % 1000) * 1000000L };
		uint64_t t;

		nanosleep(&ts, NULL);
		if (ctl_path && access(ctl_path, F_OK) == 0)
			handle_ctl();
		t = now_ns();
		if (t >= next) {
			write_snapshot(NULL, false);
			next += interval_ms * 1000000ull;
			if (next < t)
				next = t + interval_ms * 1000000ull;
		}
	}
	return NULL;
}

static void plugin_exit(qemu_plugin_id_t id, void *p)
{
	(void)id;
	(void)p;
	ctl_thread_stop(ctl_tid, &ctl_running, &ctl_stop, &stage_lock, &stage_cond);
	write_snapshot("exit", true);
}

/* --- arguments ----------------------------------------------------------------- */

static int add_hook_arg(const char *val, bool store)
{
	/* KIND:ADDR[:NAME] */
	const char *c1 = strchr(val, ':'), *c2;
	char addr[64];
	struct hook *h;
	int k;

	if (!c1)
		return -1;
	k = parse_kind(val, (size_t)(c1 - val));
	c2 = strchr(c1 + 1, ':');
	snprintf(addr, sizeof(addr), "%.*s", (int)(c2 ? c2 - c1 - 1 : (long)strlen(c1 + 1)), c1 + 1);
	if (k < 0 || nhooks >= MAX_HOOKS)
		return -1;
	h = &hooks[nhooks];
	if (!parse_u64(addr, &h->addr))
		return -1;
	h->kind = k;
	h->active = true;
	h->store = store;
	snprintf(h->name, NAME_LEN, "%s", c2 ? c2 + 1 : addr);
	nhooks++;
	return 0;
}

/* hlt=on: one hook for every HLT, one for every MWAIT (kind hlt) */
static int add_idle_hooks(void)
{
	static const struct { uint64_t op; const char *name; } ops[] = {
		{ 0xf4, "hlt" }, { 0x0f01c9, "mwait" },
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct hook *h;

		if (nhooks >= MAX_HOOKS)
			return -1;
		h = &hooks[nhooks++];
		memset(h, 0, sizeof(*h));
		h->addr = ops[i].op;
		h->kind = K_HLT;
		h->active = true;
		h->idle = true;
		snprintf(h->name, NAME_LEN, "%s", ops[i].name);
	}
	return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	bool cost_set[NKINDS] = { false };
	uint64_t v;

	self_id = id;
	t_start = now_ns();
	for (int k = 0; k < NKINDS; k++)
		cost_us[k] = default_cost_us[k];

	for (int i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		const char *key = argv[i], *val;
		size_t klen;
		bool ok = true;

		if (!eq) {
			fprintf(stderr, "exitcost: argument without '=': %s\n", argv[i]);
			return -1;
		}
		klen = (size_t)(eq - key);
		val = eq + 1;
		if (klen == 4 && !strncmp(key, "hook", 4)) {
			ok = add_hook_arg(val, false) == 0;
		} else if (klen == 5 && !strncmp(key, "store", 5)) {
			ok = add_hook_arg(val, true) == 0;
		} else if (klen > 5 && !strncmp(key, "cost_", 5)) {
			int k = parse_kind(key + 5, klen - 5);

			ok = k >= 0 && k != K_COUNT && parse_double(val, &cost_us[k]);
			if (ok)
				cost_set[k] = true;
		} else if (klen == 5 && !strncmp(key, "scale", 5)) {
			ok = parse_double(val, &scale);
		} else if (klen == 3 && !strncmp(key, "hlt", 3)) {
			ok = !strcmp(val, "on") || !strcmp(val, "off");
			if (ok && !strcmp(val, "on"))
				ok = add_idle_hooks() == 0;
		} else if (klen == 4 && !strncmp(key, "mode", 4)) {
			ok = !strcmp(val, "spin") || !strcmp(val, "sleep");
			mode_sleep = !strcmp(val, "sleep");
		} else if (klen == 3 && !strncmp(key, "out", 3)) {
			out_path = strdup(val);
		} else if (klen == 3 && !strncmp(key, "ctl", 3)) {
			ctl_path = strdup(val);
		} else if (klen == 7 && !strncmp(key, "poll_ms", 7)) {
			ok = parse_u64(val, &v) && v > 0 && v < 100000;
			poll_ms = (unsigned)v;
		} else if (klen == 11 && !strncmp(key, "interval_ms", 11)) {
			ok = parse_u64(val, &v) && v < 100000000;
			interval_ms = (unsigned)v;
		} else {
			ok = false;
		}
		if (!ok) {
			fprintf(stderr, "exitcost: bad argument: %s\n", argv[i]);
			return -1;
		}
	}
	/* interrupt deliveries of all sorts follow cost_irq unless given */
	if (!cost_set[K_TIMER_IRQ])
		cost_us[K_TIMER_IRQ] = cost_us[K_IRQ];
	if (!cost_set[K_IPI_IRQ])
		cost_us[K_IPI_IRQ] = cost_us[K_IRQ];
	cost_us[K_COUNT] = 0;
	update_costs();

	nvcpus = info->system_emulation ? info->system.smp_vcpus : 1;
	nvstats = 1 + (info->system_emulation ? info->system.max_vcpus : 64);
	if (nvstats < 2)
		nvstats = 2;
	if (posix_memalign((void **)&vstats, 64, sizeof(*vstats) * (size_t)nvstats))
		return -1;
	memset(vstats, 0, sizeof(*vstats) * (size_t)nvstats);
	recompute_range();

	register_callbacks();
	if (ctl_path || (interval_ms && out_path)) {
		if (ctl_path)
			unlink(ctl_path);
		if (pthread_create(&ctl_tid, NULL, ctl_main, NULL)) {
			fprintf(stderr, "exitcost: cannot start the control thread\n");
			return -1;
		}
		ctl_running = true;
	}
	if (out_path)
		write_snapshot("start", false);
	return 0;
}
