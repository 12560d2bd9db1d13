/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Raw bpf() for the guest tools (no libbpf): load an XDP program given as
 * instructions and attach it to a NIC in driver mode.  Failures print the
 * reason (the verifier's log for a load) and exit with status 2.  The
 * harness rebuilds a tool when this header changes too.
 */
#ifndef VNET_BPF_H
#define VNET_BPF_H

#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* @n instructions as an XDP program; @ifindex and @flags for a bound one. */
static inline int xdp_prog_load(const struct bpf_insn *insns, unsigned int n,
				unsigned int ifindex, unsigned int flags)
{
	static char log[1 << 16];
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_XDP;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = n;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	attr.log_buf = (uint64_t)(uintptr_t)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	attr.prog_ifindex = ifindex;
	attr.prog_flags = flags;
	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0) {
		fprintf(stderr, "BPF_PROG_LOAD: %s\n%s\n", strerror(errno), log);
		exit(2);
	}
	return fd;
}

/* Attach @prog_fd to @ifindex in driver mode, for the life of the process. */
static inline void xdp_attach_drv(int prog_fd, unsigned int ifindex)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = prog_fd;
	attr.link_create.target_ifindex = ifindex;
	attr.link_create.attach_type = BPF_XDP;
	attr.link_create.flags = XDP_FLAGS_DRV_MODE;
	if (sys_bpf(BPF_LINK_CREATE, &attr) < 0) {
		perror("BPF_LINK_CREATE(XDP, driver mode)");
		exit(2);
	}
}

#endif /* VNET_BPF_H */
