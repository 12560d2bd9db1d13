// SPDX-License-Identifier: GPL-2.0-only
/*
 * vnet-xsk: an AF_XDP socket on one queue of a NIC, for the xsk tests.
 * No libbpf or libxdp: the XDP program (redirect frames of EtherType
 * 0x88b5 to the socket, pass the rest) is assembled here and loaded and
 * attached with raw bpf() calls; it goes away with the process.
 *
 *   vnet-xsk bind IFNAME QUEUE zc|copy
 *	bind a socket and report "bound" (exit 0) or "bind: <error>" (exit 3)
 *   vnet-xsk rx IFNAME QUEUE zc|copy COUNT SECONDS
 *	attach the program, bind, print "ready", receive COUNT test frames
 *	within SECONDS or until SIGTERM; prints "rx <good> <bad> <secs>
 *	<dropped>", secs from the first frame to the last, dropped what the
 *	socket could not take (XDP_STATISTICS: no buffer, ring full,
 *	invalid descriptor); exit 0
 *	only if every frame was good and COUNT arrived.  COUNT 0: no
 *	program, the socket only holds the queue (its buffers posted) until
 *	SECONDS pass or SIGTERM comes
 *   vnet-xsk tx IFNAME QUEUE zc|copy COUNT DSTMAC
 *	send COUNT test frames to DSTMAC as fast as the rings allow; prints
 *	"tx <completed> <secs>", secs from the first send to the last
 *	completion; exit 0 if all completed within 20 seconds
 *
 * Test frame SEQ: destination, source, EtherType 0x88b5, SEQ (32 bits,
 * big endian), then bytes (SEQ * 7 + k) & 0xff up to frame_len(SEQ).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "vnet-bpf.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#define ETHERTYPE_TEST	0x88b5
#define FRAME_SIZE	4096
#define NUM_FRAMES	1024
#define RING_SIZE	512
#define RX_FRAMES	512	/* frames 0..511 receive, 512.. transmit */

struct ring {
	uint32_t *producer, *consumer, *flags;
	void *descs;
	uint32_t cached;	/* our index */
};

static char *umem;
static int xsk_fd = -1;
static struct ring fill, comp, rxr, txr;
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

static unsigned int frame_len(uint32_t seq)
{
	return 60 + (seq * 37) % 1400;
}

static void fill_frame(uint8_t *f, uint32_t seq, const uint8_t *dst,
		       const uint8_t *src)
{
	unsigned int len = frame_len(seq), k;

	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = ETHERTYPE_TEST >> 8;
	f[13] = ETHERTYPE_TEST & 0xff;
	f[14] = seq >> 24;
	f[15] = seq >> 16;
	f[16] = seq >> 8;
	f[17] = seq;
	for (k = 18; k < len; k++)
		f[k] = (seq * 7 + k) & 0xff;
}

/* The frame's sequence number if it is a good test frame, else -1. */
static long check_frame(const uint8_t *f, unsigned int len)
{
	unsigned int k;
	uint32_t seq;

	if (len < 18 || f[12] != (ETHERTYPE_TEST >> 8) ||
	    f[13] != (ETHERTYPE_TEST & 0xff))
		return -1;
	seq = (uint32_t)f[14] << 24 | (uint32_t)f[15] << 16 |
	      (uint32_t)f[16] << 8 | f[17];
	if (len != frame_len(seq))
		return -1;
	for (k = 18; k < len; k++)
		if (f[k] != ((seq * 7 + k) & 0xff))
			return -1;
	return seq;
}

static void ring_map(struct ring *r, const struct xdp_ring_offset *off,
		     size_t desc_size, off_t pgoff)
{
	size_t len = off->desc + RING_SIZE * desc_size;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, xsk_fd, pgoff);

	if (p == MAP_FAILED) {
		perror("mmap ring");
		exit(2);
	}
	r->producer = (uint32_t *)(p + off->producer);
	r->consumer = (uint32_t *)(p + off->consumer);
	r->flags = (uint32_t *)(p + off->flags);
	r->descs = p + off->desc;
	r->cached = 0;
}

/* Set up the socket and its rings; returns the bind() result. */
static int xsk_open(const char *ifname, unsigned int queue, bool zc)
{
	struct xdp_umem_reg reg = {
		.len = (uint64_t)FRAME_SIZE * NUM_FRAMES,
		.chunk_size = FRAME_SIZE,
	};
	struct xdp_mmap_offsets off;
	struct sockaddr_xdp sxdp = {
		.sxdp_family = AF_XDP,
		.sxdp_queue_id = queue,
		.sxdp_flags = (zc ? XDP_ZEROCOPY : XDP_COPY) |
			      XDP_USE_NEED_WAKEUP,
	};
	socklen_t optlen = sizeof(off);
	int size = RING_SIZE;

	sxdp.sxdp_ifindex = if_nametoindex(ifname);
	if (!sxdp.sxdp_ifindex) {
		perror(ifname);
		exit(2);
	}
	umem = mmap(NULL, reg.len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (umem == MAP_FAILED) {
		perror("mmap umem");
		exit(2);
	}
	reg.addr = (uint64_t)(uintptr_t)umem;
	xsk_fd = socket(AF_XDP, SOCK_RAW, 0);
	if (xsk_fd < 0) {
		perror("socket(AF_XDP)");
		exit(2);
	}
	if (setsockopt(xsk_fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) ||
	    setsockopt(xsk_fd, SOL_XDP, XDP_UMEM_FILL_RING, &size, sizeof(size)) ||
	    setsockopt(xsk_fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &size,
		       sizeof(size)) ||
	    setsockopt(xsk_fd, SOL_XDP, XDP_RX_RING, &size, sizeof(size)) ||
	    setsockopt(xsk_fd, SOL_XDP, XDP_TX_RING, &size, sizeof(size)) ||
	    getsockopt(xsk_fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen)) {
		perror("setsockopt(SOL_XDP)");
		exit(2);
	}
	ring_map(&fill, &off.fr, sizeof(uint64_t), XDP_UMEM_PGOFF_FILL_RING);
	ring_map(&comp, &off.cr, sizeof(uint64_t),
		 XDP_UMEM_PGOFF_COMPLETION_RING);
	ring_map(&rxr, &off.rx, sizeof(struct xdp_desc), XDP_PGOFF_RX_RING);
	ring_map(&txr, &off.tx, sizeof(struct xdp_desc), XDP_PGOFF_TX_RING);
	return bind(xsk_fd, (struct sockaddr *)&sxdp, sizeof(sxdp));
}

static void fill_give(uint64_t addr)
{
	uint64_t *d = fill.descs;

	d[fill.cached++ & (RING_SIZE - 1)] = addr;
	__atomic_store_n(fill.producer, fill.cached, __ATOMIC_RELEASE);
}

/* The program: EtherType 0x88b5 to XSKMAP[rx_queue_index], else PASS. */
static int load_prog(int map_fd)
{
	struct bpf_insn insns[] = {
		/* r2 = data, r3 = data_end */
		{ BPF_LDX | BPF_W | BPF_MEM, 2, 1, 0, 0 },
		{ BPF_LDX | BPF_W | BPF_MEM, 3, 1, 4, 0 },
		/* if data + 14 > data_end goto pass */
		{ BPF_ALU64 | BPF_MOV | BPF_X, 4, 2, 0, 0 },
		{ BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, 14 },
		{ BPF_JMP | BPF_JGT | BPF_X, 4, 3, 8, 0 },
		/* if EtherType != 0x88b5 goto pass (little-endian load) */
		{ BPF_LDX | BPF_H | BPF_MEM, 4, 2, 12, 0 },
		{ BPF_JMP | BPF_JNE | BPF_K, 4, 0, 6, 0xb588 },
		/* return bpf_redirect_map(map, rx_queue_index, XDP_PASS) */
		{ BPF_LDX | BPF_W | BPF_MEM, 2, 1, 16, 0 },
		{ BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd },
		{ 0, 0, 0, 0, 0 },
		{ BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, XDP_PASS },
		{ BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
		/* pass: */
		{ BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_PASS },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
	};

	return xdp_prog_load(insns, sizeof(insns) / sizeof(insns[0]), 0, 0);
}

/* XSKMAP[queue] = the socket; the program attached to IFNAME (driver mode). */
static void attach_prog(const char *ifname, unsigned int queue)
{
	union bpf_attr attr;
	int map_fd, prog_fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_XSKMAP;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = queue + 1;
	map_fd = sys_bpf(BPF_MAP_CREATE, &attr);
	if (map_fd < 0) {
		perror("BPF_MAP_CREATE(XSKMAP)");
		exit(2);
	}
	prog_fd = load_prog(map_fd);

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = map_fd;
	attr.key = (uint64_t)(uintptr_t)&queue;
	attr.value = (uint64_t)(uintptr_t)&xsk_fd;
	if (sys_bpf(BPF_MAP_UPDATE_ELEM, &attr)) {
		perror("BPF_MAP_UPDATE_ELEM");
		exit(2);
	}

	xdp_attach_drv(prog_fd, if_nametoindex(ifname));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int do_rx(const char *ifname, unsigned int queue, bool zc,
		 unsigned int count, double secs)
{
	static unsigned char seen[1 << 16];
	unsigned int good = 0, bad = 0, i;
	double end, first = 0, last = 0;
	struct xdp_statistics st;
	socklen_t optlen;
	struct pollfd pfd;

	if (xsk_open(ifname, queue, zc)) {
		printf("bind: %s\n", strerror(errno));
		return 3;
	}
	if (count)
		attach_prog(ifname, queue);
	signal(SIGTERM, on_term);
	for (i = 0; i < RX_FRAMES && i < RING_SIZE; i++)
		fill_give((uint64_t)i * FRAME_SIZE);
	printf("ready\n");
	fflush(stdout);

	end = now() + secs;
	pfd.fd = xsk_fd;
	pfd.events = POLLIN;
	while ((!count || good + bad < count) && now() < end && !stop) {
		uint32_t prod = __atomic_load_n(rxr.producer, __ATOMIC_ACQUIRE);
		struct xdp_desc *d = rxr.descs;

		if (prod == rxr.cached) {
			poll(&pfd, 1, 100);
			continue;
		}
		last = now();
		if (!first)
			first = last;
		while (rxr.cached != prod) {
			struct xdp_desc *e = &d[rxr.cached++ & (RING_SIZE - 1)];
			long seq = check_frame((uint8_t *)umem + e->addr, e->len);

			if (seq < 0 || seq >= (long)sizeof(seen) || seen[seq]) {
				bad++;
				if (bad <= 5)
					fprintf(stderr, "bad frame: len %u seq %ld\n",
						e->len, seq);
			} else {
				seen[seq] = 1;
				good++;
			}
			fill_give(e->addr & ~(uint64_t)(FRAME_SIZE - 1));
		}
		__atomic_store_n(rxr.consumer, rxr.cached, __ATOMIC_RELEASE);
	}
	memset(&st, 0, sizeof(st));
	optlen = sizeof(st);
	if (getsockopt(xsk_fd, SOL_XDP, XDP_STATISTICS, &st, &optlen))
		perror("XDP_STATISTICS");
	printf("rx %u %u %.6f %llu\n", good, bad, last - first,
	       (unsigned long long)(st.rx_dropped + st.rx_ring_full +
				    st.rx_invalid_descs));
	fflush(stdout);
	return good == count && !bad ? 0 : 1;
}

static int parse_mac(const char *s, uint8_t *mac)
{
	return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
		      &mac[2], &mac[3], &mac[4], &mac[5]) == 6 ? 0 : -1;
}

static int do_tx(const char *ifname, unsigned int queue, bool zc,
		 unsigned int count, const char *dstmac)
{
	unsigned int sent = 0, done = 0, free_frames, next = 0;
	uint64_t frames[NUM_FRAMES - RX_FRAMES];
	uint8_t dst[6], src[6] = { 0x02, 0, 0, 0, 0x88, 0xb5 };
	double start, end, last;
	struct ifreq ifr;
	int s;

	if (parse_mac(dstmac, dst)) {
		fprintf(stderr, "bad MAC %s\n", dstmac);
		return 2;
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (s >= 0 && !ioctl(s, SIOCGIFHWADDR, &ifr))
		memcpy(src, ifr.ifr_hwaddr.sa_data, 6);
	if (xsk_open(ifname, queue, zc)) {
		printf("bind: %s\n", strerror(errno));
		return 3;
	}
	free_frames = NUM_FRAMES - RX_FRAMES;
	for (next = 0; next < free_frames; next++)
		frames[next] = (uint64_t)(RX_FRAMES + next) * FRAME_SIZE;

	start = now();
	end = start + 20;
	last = start;

	while (done < count && now() < end) {
		uint32_t cprod = __atomic_load_n(comp.producer, __ATOMIC_ACQUIRE);
		uint64_t *c = comp.descs;
		struct xdp_desc *d = txr.descs;
		unsigned int batch = 0;

		if (comp.cached != cprod)
			last = now();
		while (comp.cached != cprod) {
			frames[free_frames++] = c[comp.cached++ & (RING_SIZE - 1)];
			done++;
		}
		__atomic_store_n(comp.consumer, comp.cached, __ATOMIC_RELEASE);

		while (sent < count && free_frames && batch < 64 &&
		       txr.cached - __atomic_load_n(txr.consumer,
						    __ATOMIC_ACQUIRE) < RING_SIZE) {
			struct xdp_desc *e = &d[txr.cached++ & (RING_SIZE - 1)];

			e->addr = frames[--free_frames];
			e->len = frame_len(sent);
			e->options = 0;
			fill_frame((uint8_t *)umem + e->addr, sent, dst, src);
			sent++;
			batch++;
		}
		if (batch)
			__atomic_store_n(txr.producer, txr.cached,
					 __ATOMIC_RELEASE);
		/* kick: needed whenever the driver asks for a wakeup */
		if (batch || (__atomic_load_n(txr.flags, __ATOMIC_ACQUIRE) &
			      XDP_RING_NEED_WAKEUP))
			sendto(xsk_fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		if (!batch)
			usleep(1000);
	}
	printf("tx %u %.6f\n", done, last - start);
	return done == count ? 0 : 1;
}

int main(int argc, char **argv)
{
	unsigned int queue;
	bool zc;

	if (argc < 5)
		goto usage;
	queue = strtoul(argv[3], NULL, 0);
	zc = !strcmp(argv[4], "zc");
	if (!strcmp(argv[1], "bind")) {
		if (xsk_open(argv[2], queue, zc)) {
			printf("bind: %s\n", strerror(errno));
			return 3;
		}
		printf("bound\n");
		return 0;
	}
	if (!strcmp(argv[1], "rx") && argc == 7)
		return do_rx(argv[2], queue, zc, strtoul(argv[5], NULL, 0),
			     strtod(argv[6], NULL));
	if (!strcmp(argv[1], "tx") && argc == 7)
		return do_tx(argv[2], queue, zc, strtoul(argv[5], NULL, 0),
			     argv[6]);
usage:
	fprintf(stderr, "usage: vnet-xsk bind|rx|tx IFNAME QUEUE zc|copy [COUNT SECONDS|COUNT DSTMAC]\n");
	return 2;
}
