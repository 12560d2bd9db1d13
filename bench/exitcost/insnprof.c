// SPDX-License-Identifier: GPL-2.0-only
/*
 * insnprof.c - QEMU TCG plugin: guest instructions executed per function,
 * or the blocks executed, or the vCPU threads' host time per function.
 *
 * Under TCG a vCPU's time goes to the guest instructions it executes and to
 * the exits the exitcost plugin charges; two drivers with the same exits per
 * packet differ by their instructions.  This plugin counts executed guest
 * instructions per kernel function (a symbol table loaded at run time), plus
 * all of user space and the kernel outside the table, per vCPU, and writes
 * the totals as JSON on request.  Loaded next to exitcost.so, which it does
 * not disturb: it adds one callback per translated block piece and charges
 * nothing.
 *
 * Arguments (-plugin file=insnprof.so,ARG=VALUE,...):
 *   out=PATH      JSON written here (atomically) on request and at exit
 *   ctl=PATH      control file, polled every poll_ms; its lines are
 *                   syms FILE    load a symbol table (lines "ADDR TYPE NAME
 *                                [MODULE]" as in /proc/kallsyms or a
 *                                System.map; text symbols only), flush the
 *                                translations and start counting from zero
 *                   snap TOKEN   write out now with "request": TOKEN
 *   poll_ms=N     control file poll period (default 5)
 *   mode=M        what is counted per function:
 *                   insns   guest instructions (the default)
 *                   blocks  executed pieces of translated blocks: under
 *                           TCG each costs a dispatch besides its
 *                           instructions (a chained jump, or a lookup for
 *                           a return or an indirect call)
 *                   time    host time: each piece's
 *                           callback reads the host TSC and charges the
 *                           ticks since the vCPU's previous piece to that
 *                           piece's function, so a function gets the time
 *                           its code ran plus whatever the vCPU thread did
 *                           right after it (device accesses and their
 *                           big-lock waits, interrupt delivery, the halt of
 *                           an idle vCPU, exitcost's stalls); "tsc_hz" in
 *                           the output converts the ticks to seconds
 *
 * Blocks and time answer what instruction counts cannot: two drivers with
 * the same instructions and exits per packet can still differ in what they
 * cost the emulator.  The time callback makes every piece dearer (a 6.1
 * guest's closed loop ran 20-40% fewer transactions), the more so for code
 * of many short pieces: compare drivers with each other, not with
 * unprofiled runs.
 *
 * Until a table is loaded nothing is instrumented.  A block that crosses a
 * symbol boundary is split, so every instruction is charged to the
 * function that holds it; a block counts as executed in full once it
 * starts (an interrupt or fault in its middle is rare enough to ignore).
 * Symbols are at most MAX_SYM_SIZE long: the kernel beyond the last
 * symbol's bound or before the first goes to "[kernel]".
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
#include <time.h>
#include <unistd.h>

#include <qemu-plugin.h>

#include "plugin_out.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define KERNEL_VA_MIN 0xffff800000000000ull
#define MAX_SYM_SIZE (1u << 20)
/* callback data: bucket << COUNT_BITS | instructions (a block has <= 512) */
#define COUNT_BITS 12
#define B_USER 0
#define B_KERNEL 1
#define B_FIRST_SYM 2

struct sym {
	uint64_t addr;
	char *name;
};

struct table {
	struct sym *syms;
	size_t n;
	uint64_t *counts;	/* [nrows][n + B_FIRST_SYM] */
};

static qemu_plugin_id_t self_id;
static struct table *cur;	/* replaced only while every vCPU is stopped */
static struct table *staged;	/* loaded by the control thread, not yet active */
static size_t nrows;		/* max vCPUs + 1 overflow row */
static char *out_path, *ctl_path;
static unsigned int poll_ms = 5;
enum { M_INSNS, M_BLOCKS, M_TIME };
static int mode = M_INSNS;
static const char *const mode_names[] = { "insns", "blocks", "tsc" };
static uint64_t tsc_hz;
/* time mode, per row: the previous piece's bucket and its TSC reading */
struct vstate {
	uint64_t bucket;
	uint64_t last;
};
static struct vstate *vst;
static pthread_t ctl_tid;
static bool ctl_running;
static int ctl_stop;
static int reset_pending;
static uint64_t resets_done;
static uint64_t seq;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;	/* cur, staged, out */
static pthread_cond_t reset_cond = PTHREAD_COND_INITIALIZER;

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
static void plugin_exit(qemu_plugin_id_t id, void *p);

static uint64_t *row_of(struct table *t, unsigned int vcpu)
{
	size_t r = vcpu < nrows - 1 ? vcpu : nrows - 1;

	return t->counts + r * (t->n + B_FIRST_SYM);
}

static void table_free(struct table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->syms[i].name);
	free(t->syms);
	free(t->counts);
	free(t);
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols of FILE, sorted, one per address; NULL on error. */
static struct table *table_load(const char *path)
{
	struct table *t = calloc(1, sizeof(*t));
	char line[512], name[256], mod[128], type;
	size_t cap = 0, j = 0;
	uint64_t addr;
	FILE *f = fopen(path, "r");

	if (!t || !f) {
		fprintf(stderr, "insnprof: cannot read %s: %s\n", path, strerror(errno));
		free(t);
		if (f)
			fclose(f);
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		int nw = sscanf(line, "%" SCNx64 " %c %255s [%127[^]]]", &addr, &type, name, mod);

		if (nw < 3 || !strchr("tTwW", type) || addr < KERNEL_VA_MIN)
			continue;
		if (t->n == cap) {
			cap = cap ? 2 * cap : 65536;
			t->syms = realloc(t->syms, cap * sizeof(*t->syms));
			if (!t->syms)
				goto fail;
		}
		t->syms[t->n].addr = addr;
		if (nw == 4) {
			size_t len = strlen(name) + strlen(mod) + 4;

			t->syms[t->n].name = malloc(len);
			if (t->syms[t->n].name)
				snprintf(t->syms[t->n].name, len, "%s [%s]", name, mod);
		} else {
			t->syms[t->n].name = strdup(name);
		}
		if (!t->syms[t->n].name)
			goto fail;
		t->n++;
	}
	fclose(f);
	f = NULL;
	qsort(t->syms, t->n, sizeof(*t->syms), sym_cmp);
	/* aliases: keep the first name of each address */
	for (size_t i = 0; i < t->n; i++) {
		if (j && t->syms[j - 1].addr == t->syms[i].addr) {
			free(t->syms[i].name);
			continue;
		}
		t->syms[j++] = t->syms[i];
	}
	t->n = j;
	t->counts = calloc(nrows * (t->n + B_FIRST_SYM), sizeof(*t->counts));
	if (!t->counts)
		goto fail;
	return t;
fail:
	fprintf(stderr, "insnprof: out of memory loading %s\n", path);
	if (f)
		fclose(f);
	table_free(t);
	return NULL;
}

/* The bucket of guest address @va. */
static uint64_t bucket_of(const struct table *t, uint64_t va)
{
	size_t lo = 0, hi = t->n;

	if (va < KERNEL_VA_MIN)
		return B_USER;
	/* the last symbol at or below va */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return B_KERNEL;
	lo--;
	if (va - t->syms[lo].addr >= MAX_SYM_SIZE)
		return B_KERNEL;
	return B_FIRST_SYM + lo;
}

static void piece_exec(unsigned int vcpu_index, void *udata)
{
	uint64_t u = (uint64_t)(uintptr_t)udata;

	/* only this vCPU's thread writes its row */
	row_of(cur, vcpu_index)[u >> COUNT_BITS] += u & ((1u << COUNT_BITS) - 1);
}

static void piece_exec_block(unsigned int vcpu_index, void *udata)
{
	row_of(cur, vcpu_index)[(uint64_t)(uintptr_t)udata >> COUNT_BITS]++;
}

static void piece_exec_time(unsigned int vcpu_index, void *udata)
{
	uint64_t now = __builtin_ia32_rdtsc();
	struct vstate *v = &vst[vcpu_index < nrows - 1 ? vcpu_index : nrows - 1];

	/* only this vCPU's thread writes its row and its state */
	if (v->last)
		row_of(cur, vcpu_index)[v->bucket] += now - v->last;
	v->bucket = (uint64_t)(uintptr_t)udata >> COUNT_BITS;
	v->last = now;
}

static void reset_done(qemu_plugin_id_t id)
{
	pthread_mutex_lock(&lock);
	if (staged) {
		table_free(cur);
		cur = staged;
		staged = NULL;
		/* the old table's buckets mean nothing in the new one */
		if (vst)
			memset(vst, 0, nrows * sizeof(*vst));
	}
	/* a reset unregisters every callback */
	qemu_plugin_register_vcpu_tb_trans_cb(self_id, vcpu_tb_trans);
	qemu_plugin_register_atexit_cb(self_id, plugin_exit, NULL);
	resets_done++;
	pthread_cond_broadcast(&reset_cond);
	pthread_mutex_unlock(&lock);
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), start = 0;
	uint64_t b = 0;

	if (__atomic_load_n(&reset_pending, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&reset_pending, 0, __ATOMIC_ACQ_REL)) {
		/* needs a vCPU thread; translations made from now on are flushed */
		qemu_plugin_reset(self_id, reset_done);
		return;
	}
	if (!cur || !n)
		return;
	for (size_t i = 0; i <= n; i++) {
		uint64_t bi = i < n ? bucket_of(cur, qemu_plugin_insn_vaddr(
							qemu_plugin_tb_get_insn(tb, i))) : UINT64_MAX;

		if (i && bi == b)
			continue;
		if (i)
			qemu_plugin_register_vcpu_insn_exec_cb(
				qemu_plugin_tb_get_insn(tb, start),
				mode == M_TIME ? piece_exec_time :
				mode == M_BLOCKS ? piece_exec_block : piece_exec,
				QEMU_PLUGIN_CB_NO_REGS,
				(void *)(uintptr_t)(b << COUNT_BITS | (i - start)));
		b = bi;
		start = i;
	}
}

/* --- output ------------------------------------------------------------------ */

/* Called with lock held. */
static void write_json(FILE *f, const char *request, bool final)
{
	struct table *t = cur;
	size_t nb = t ? t->n + B_FIRST_SYM : 0;
	bool first = true;

	fprintf(f, "{\"version\": 1, \"seq\": %" PRIu64 ", \"final\": %s, \"request\": ",
		++seq, final ? "true" : "false");
	json_str(f, request ? request : "");
	fprintf(f, ", \"unit\": \"%s\", \"tsc_hz\": %" PRIu64, mode_names[mode], tsc_hz);
	fprintf(f, ", \"resets\": %" PRIu64 ", \"symbols\": %zu, \"per_vcpu\": [", resets_done,
		t ? t->n : 0);
	for (size_t r = 0; t && r < nrows; r++) {
		uint64_t s = 0, *row = t->counts + r * nb;

		for (size_t i = 0; i < nb; i++)
			s += __atomic_load_n(&row[i], __ATOMIC_RELAXED);
		fprintf(f, "%s%" PRIu64, r ? ", " : "", s);
	}
	fprintf(f, "],\n \"insns\": {");
	for (size_t i = 0; i < nb; i++) {
		uint64_t s = 0;

		for (size_t r = 0; r < nrows; r++)
			s += __atomic_load_n(&t->counts[r * nb + i], __ATOMIC_RELAXED);
		if (!s)
			continue;
		fprintf(f, "%s\n  ", first ? "" : ",");
		first = false;
		json_str(f, i == B_USER ? "[user]" : i == B_KERNEL ? "[kernel]" :
			 t->syms[i - B_FIRST_SYM].name);
		fprintf(f, ": %" PRIu64, s);
	}
	fprintf(f, "\n }\n}\n");
}

static void write_out(const char *request, bool final)
{
	if (out_path)
		write_atomic("insnprof", out_path, write_json, request, final);
}

/* --- control file ------------------------------------------------------------ */

static void handle_ctl(void)
{
	char buf[8192], token[256] = "";
	struct table *t = NULL;
	FILE *f = fopen(ctl_path, "r");
	size_t len;

	if (!f)
		return;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	unlink(ctl_path);
	buf[len] = '\0';
	for (char *save, *line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char w0[32] = "", w1[4000] = "";
		int nw = sscanf(line, "%31s %3999s", w0, w1);

		if (nw == 2 && !strcmp(w0, "snap")) {
			snprintf(token, sizeof(token), "%s", w1);
		} else if (nw == 2 && !strcmp(w0, "syms")) {
			table_free(t);
			t = table_load(w1);
		} else if (nw > 0) {
			fprintf(stderr, "insnprof: bad control line: %s\n", line);
		}
	}
	pthread_mutex_lock(&lock);
	if (t) {
		uint64_t want = resets_done + 1;
		struct timespec dl;

		table_free(staged);
		staged = t;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 10;
		__atomic_store_n(&reset_pending, 1, __ATOMIC_RELEASE);
		while (resets_done < want && !__atomic_load_n(&ctl_stop, __ATOMIC_ACQUIRE))
			if (pthread_cond_timedwait(&reset_cond, &lock, &dl) == ETIMEDOUT)
				break;
		if (resets_done < want)
			fprintf(stderr, "insnprof: symbol table not active yet (no vCPU activity)\n");
	}
	write_out(token, false);
	pthread_mutex_unlock(&lock);
}

static void *ctl_main(void *arg)
{
	struct timespec ts = { .tv_sec = poll_ms / 1000, .tv_nsec = (poll_ms % 1000) * 1000000L };

	(void)arg;
	while (!__atomic_load_n(&ctl_stop, __ATOMIC_ACQUIRE)) {
		nanosleep(&ts, NULL);
		if (access(ctl_path, F_OK) == 0)
			handle_ctl();
	}
	return NULL;
}

static void plugin_exit(qemu_plugin_id_t id, void *p)
{
	ctl_thread_stop(ctl_tid, &ctl_running, &ctl_stop, &lock, &reset_cond);
	pthread_mutex_lock(&lock);
	write_out("exit", true);
	pthread_mutex_unlock(&lock);
}

/* Host TSC ticks per second, against CLOCK_MONOTONIC over 50 ms. */
static uint64_t calibrate_tsc(void)
{
	struct timespec a, b, d = { .tv_nsec = 50000000L };
	uint64_t t0, t1, ns;

	clock_gettime(CLOCK_MONOTONIC, &a);
	t0 = __builtin_ia32_rdtsc();
	nanosleep(&d, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	t1 = __builtin_ia32_rdtsc();
	ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull;
	ns += (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
	return ns ? (t1 - t0) * 1000000000ull / ns : 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	self_id = id;
	for (int i = 0; i < argc; i++) {
		char *v = strchr(argv[i], '=');
		char *end;

		if (!v) {
			fprintf(stderr, "insnprof: argument without '=': %s\n", argv[i]);
			return -1;
		}
		*v++ = '\0';
		if (!strcmp(argv[i], "out")) {
			out_path = strdup(v);
		} else if (!strcmp(argv[i], "ctl")) {
			ctl_path = strdup(v);
		} else if (!strcmp(argv[i], "poll_ms")) {
			unsigned long ms = strtoul(v, &end, 0);

			if (*end || !ms || ms > 100000) {
				fprintf(stderr, "insnprof: bad poll_ms: %s\n", v);
				return -1;
			}
			poll_ms = (unsigned int)ms;
		} else if (!strcmp(argv[i], "mode")) {
			if (!strcmp(v, "insns")) {
				mode = M_INSNS;
			} else if (!strcmp(v, "blocks")) {
				mode = M_BLOCKS;
			} else if (!strcmp(v, "time")) {
				mode = M_TIME;
			} else {
				fprintf(stderr, "insnprof: bad mode: %s\n", v);
				return -1;
			}
		} else {
			fprintf(stderr, "insnprof: bad argument: %s\n", argv[i]);
			return -1;
		}
	}
	nrows = 1 + (info->system_emulation ? (size_t)info->system.max_vcpus : 64);
	if (mode == M_TIME) {
		vst = calloc(nrows, sizeof(*vst));
		if (!vst)
			return -1;
		tsc_hz = calibrate_tsc();
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, vcpu_tb_trans);
	qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
	if (ctl_path) {
		unlink(ctl_path);
		if (pthread_create(&ctl_tid, NULL, ctl_main, NULL)) {
			fprintf(stderr, "insnprof: cannot start the control thread\n");
			return -1;
		}
		ctl_running = true;
	}
	pthread_mutex_lock(&lock);
	write_out("start", false);
	pthread_mutex_unlock(&lock);
	return 0;
}
