// SPDX-License-Identifier: GPL-2.0-only
/*
 * XDP programs of the QEMU test suite (tests/suites/xdp.py), one
 * per MODE, built with clang -target bpf.  Frames that are not UDP over
 * IPv4 to PORT pass; those that are:
 *   MODE_PASS      pass (the program is attached, nothing else)
 *   MODE_DROP      XDP_DROP
 *   MODE_TX        XDP_TX, with Ethernet and IP addresses and UDP ports
 *                  swapped: the sender gets its datagram back
 *   MODE_REDIRECT  XDP_REDIRECT to interface IFINDEX, unchanged
 * With FRAGS the program is loaded for multi-buffer frames (section
 * "xdp.frags") and drops any frame to PORT whose length, fragments
 * included, is not what its IP header says: a driver that hands over
 * part of a frame loses the datagram.
 * No libbpf headers: the section macro and the helpers are here.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>

#define SEC(name)	__attribute__((section(name), used))
#define BE16(x)		__builtin_bswap16(x)

#if defined(FRAGS)
#define PROG_SEC	"xdp.frags"
static long (*bpf_xdp_get_buff_len)(struct xdp_md *ctx) =
	(void *)BPF_FUNC_xdp_get_buff_len;
#else
#define PROG_SEC	"xdp"
#endif

#if defined(MODE_REDIRECT)
static long (*bpf_redirect)(__u32 ifindex, __u64 flags) =
	(void *)BPF_FUNC_redirect;
#endif

#if defined(MODE_TX)
/* Back to the sender: swap addresses and ports (checksums stay valid). */
static __always_inline void reflect(struct ethhdr *eth, struct iphdr *ip,
				    struct udphdr *udp)
{
	__u8 mac[ETH_ALEN];
	__u32 addr;
	__u16 port;
	int i;

	for (i = 0; i < ETH_ALEN; i++) {
		mac[i] = eth->h_source[i];
		eth->h_source[i] = eth->h_dest[i];
		eth->h_dest[i] = mac[i];
	}
	addr = ip->saddr;
	ip->saddr = ip->daddr;
	ip->daddr = addr;
	port = udp->source;
	udp->source = udp->dest;
	udp->dest = port;
}
#endif

SEC(PROG_SEC)
int xdp_test(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	struct udphdr *udp;

	if ((void *)(ip + 1) > end || eth->h_proto != BE16(ETH_P_IP) ||
	    ip->protocol != IPPROTO_UDP || ip->ihl != 5)
		return XDP_PASS;
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > end || udp->dest != BE16(PORT))
		return XDP_PASS;
#if defined(FRAGS)
	if (bpf_xdp_get_buff_len(ctx) != sizeof(*eth) + BE16(ip->tot_len))
		return XDP_DROP;
#endif
#if defined(MODE_DROP)
	return XDP_DROP;
#elif defined(MODE_TX)
	reflect(eth, ip, udp);
	return XDP_TX;
#elif defined(MODE_REDIRECT)
	return bpf_redirect(IFINDEX, 0);
#else
	return XDP_PASS;
#endif
}

char _license[] SEC("license") = "GPL";
