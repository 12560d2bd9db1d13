// SPDX-License-Identifier: GPL-2.0-only
/*
 * vnet-xdphash: what an XDP program learns from bpf_xdp_metadata_rx_hash()
 * on a NIC, for the rss.xdp_hash test.  No libbpf: the program is
 * assembled here, loaded bound to the device (BPF_F_XDP_DEV_BOUND_ONLY,
 * which the metadata kfuncs need) with the kfunc's BTF id looked up in
 * /sys/kernel/btf/vmlinux, and attached in driver mode for the life of
 * the process.
 *
 *   vnet-xdphash IFNAME PORT SECONDS
 *	attach, print "ready", then for SECONDS (or until SIGTERM) call the
 *	kfunc on every IPv4 UDP frame to PORT and keep, per source port
 *	modulo 64, the frames seen and the last return value, hash and
 *	hash type; at the end print one line per source port slot seen:
 *	"slot S frames N ret R hash 0xH type T".  Every frame passes on.
 *	Exit 0; 2 on a setup error; 4 when the kernel has no such kfunc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "vnet-bpf.h"

#ifndef BPF_F_XDP_DEV_BOUND_ONLY
#define BPF_F_XDP_DEV_BOUND_ONLY (1U << 6)	/* 6.3 uapi */
#endif

#define SLOTS	64
#define KFUNC	"bpf_xdp_metadata_rx_hash"

struct slot {
	uint32_t hash;
	uint32_t type;
	uint32_t frames;
	int32_t ret;
};

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "%s: %s\n", what, strerror(errno));
	exit(2);
}

/* Bytes of kind-specific data after a struct btf_type. */
static long btf_extra(uint32_t info)
{
	uint32_t vlen = BTF_INFO_VLEN(info);

	switch (BTF_INFO_KIND(info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case 17:	/* DECL_TAG */
		return 4;
	case BTF_KIND_ARRAY:
		return 12;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_DATASEC:
	case 19:	/* ENUM64 */
		return vlen * 12L;
	case BTF_KIND_ENUM:
	case BTF_KIND_FUNC_PROTO:
		return vlen * 8L;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case 18:	/* TYPE_TAG */
		return 0;
	}
	return -1;
}

/* The BTF id of function @name in the kernel's BTF, 0 if absent. */
static uint32_t kernel_func_id(const char *name)
{
	const struct btf_header *h;
	const char *strs;
	uint32_t id = 1;
	unsigned char *buf;
	long off, end;
	struct stat st;
	int fd;

	fd = open("/sys/kernel/btf/vmlinux", O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		die("/sys/kernel/btf/vmlinux");
	buf = malloc(st.st_size);
	if (!buf)
		die("malloc");
	for (off = 0; off < st.st_size; off += end) {
		end = read(fd, buf + off, st.st_size - off);
		if (end <= 0)
			die("read vmlinux BTF");
	}
	close(fd);
	h = (const struct btf_header *)buf;
	if (h->magic != BTF_MAGIC) {
		fprintf(stderr, "vmlinux BTF: bad magic\n");
		exit(2);
	}
	strs = (const char *)buf + h->hdr_len + h->str_off;
	off = h->hdr_len + h->type_off;
	end = off + h->type_len;
	while (off + (long)sizeof(struct btf_type) <= end) {
		const struct btf_type *t = (const void *)(buf + off);
		long extra = btf_extra(t->info);

		if (extra < 0) {
			fprintf(stderr, "vmlinux BTF: unknown kind %u\n",
				BTF_INFO_KIND(t->info));
			exit(2);
		}
		if (BTF_INFO_KIND(t->info) == BTF_KIND_FUNC &&
		    !strcmp(strs + t->name_off, name))
			return id;
		off += sizeof(*t) + extra;
		id++;
	}
	return 0;
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })

static int load_prog(int ifindex, int port, int map_fd, uint32_t kfunc)
{
	uint16_t port_le = (uint16_t)((port >> 8) | ((port & 0xff) << 8));
	struct bpf_insn insns[] = {
		/* r6 = ctx, r2 = data, r3 = data_end */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0),
		INSN(BPF_LDX | BPF_W | BPF_MEM, 2, 6, 0, 0),
		INSN(BPF_LDX | BPF_W | BPF_MEM, 3, 6, 4, 0),
		/* Ethernet + IPv4 (no options) + UDP ports: 38 bytes */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 4, 2, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, 38),
		INSN(BPF_JMP | BPF_JGT | BPF_X, 4, 3, 33, 0),
		/* EtherType 0x0800, protocol 17, destination port */
		INSN(BPF_LDX | BPF_H | BPF_MEM, 4, 2, 12, 0),
		INSN(BPF_JMP | BPF_JNE | BPF_K, 4, 0, 31, 0x0008),
		INSN(BPF_LDX | BPF_B | BPF_MEM, 4, 2, 23, 0),
		INSN(BPF_JMP | BPF_JNE | BPF_K, 4, 0, 29, 17),
		INSN(BPF_LDX | BPF_H | BPF_MEM, 4, 2, 36, 0),
		INSN(BPF_JMP | BPF_JNE | BPF_K, 4, 0, 27, port_le),
		/* r7 = source port (host order) % SLOTS */
		INSN(BPF_LDX | BPF_H | BPF_MEM, 7, 2, 34, 0),
		INSN(BPF_ALU | BPF_END | BPF_TO_BE, 7, 0, 0, 16),
		INSN(BPF_ALU64 | BPF_AND | BPF_K, 7, 0, 0, SLOTS - 1),
		/* hash at fp-4, type at fp-8, both zeroed */
		INSN(BPF_ST | BPF_W | BPF_MEM, 10, 0, -4, 0),
		INSN(BPF_ST | BPF_W | BPF_MEM, 10, 0, -8, 0),
		/* r8 = kfunc(ctx, &hash, &type) */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 3, 10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, -8),
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, kfunc),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 8, 0, 0, 0),
		/* r0 = lookup(map, &slot) */
		INSN(BPF_STX | BPF_W | BPF_MEM, 10, 7, -12, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -12),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 8, 0),
		/* the slot: hash, type, frames++, ret */
		INSN(BPF_LDX | BPF_W | BPF_MEM, 1, 10, -4, 0),
		INSN(BPF_STX | BPF_W | BPF_MEM, 0, 1, 0, 0),
		INSN(BPF_LDX | BPF_W | BPF_MEM, 1, 10, -8, 0),
		INSN(BPF_STX | BPF_W | BPF_MEM, 0, 1, 4, 0),
		INSN(BPF_LDX | BPF_W | BPF_MEM, 1, 0, 8, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, 1),
		INSN(BPF_STX | BPF_W | BPF_MEM, 0, 1, 8, 0),
		INSN(BPF_STX | BPF_W | BPF_MEM, 0, 8, 12, 0),
		/* pass: */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_PASS),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};

	return xdp_prog_load(insns, sizeof(insns) / sizeof(insns[0]), ifindex,
			     BPF_F_XDP_DEV_BOUND_ONLY);
}

int main(int argc, char **argv)
{
	union bpf_attr attr;
	int ifindex, port, map_fd, prog_fd;
	unsigned int secs, i;
	uint32_t kfunc;
	struct slot s;

	if (argc != 4) {
		fprintf(stderr, "usage: vnet-xdphash IFNAME PORT SECONDS\n");
		return 2;
	}
	ifindex = if_nametoindex(argv[1]);
	port = atoi(argv[2]);
	secs = atoi(argv[3]);
	if (!ifindex)
		die(argv[1]);
	kfunc = kernel_func_id(KFUNC);
	if (!kfunc) {
		printf("no %s in this kernel\n", KFUNC);
		return 4;
	}

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = sizeof(struct slot);
	attr.max_entries = SLOTS;
	map_fd = sys_bpf(BPF_MAP_CREATE, &attr);
	if (map_fd < 0)
		die("BPF_MAP_CREATE");
	prog_fd = load_prog(ifindex, port, map_fd, kfunc);

	xdp_attach_drv(prog_fd, ifindex);

	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	printf("ready\n");
	fflush(stdout);
	while (!stop && secs--)
		sleep(1);

	for (i = 0; i < SLOTS; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = map_fd;
		attr.key = (uint64_t)(uintptr_t)&i;
		attr.value = (uint64_t)(uintptr_t)&s;
		if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr))
			die("BPF_MAP_LOOKUP_ELEM");
		if (s.frames)
			printf("slot %u frames %u ret %d hash 0x%08x type %u\n",
			       i, s.frames, s.ret, s.hash, s.type);
	}
	return 0;
}
