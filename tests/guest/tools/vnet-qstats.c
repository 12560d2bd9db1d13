// SPDX-License-Identifier: GPL-2.0-only
/*
 * vnet-qstats: dump per-queue statistics through the netdev generic netlink
 * family (NETDEV_CMD_QSTATS_GET, Linux 6.10+), for kernels whose virtio_net
 * no longer lists per-queue packet counters in `ethtool -S`.
 *
 *   vnet-qstats [IFNAME]
 *
 * Output, one line per queue:  <ifindex> rx|tx <queue-id> name=value ...
 * Exit status 2 if the kernel has no netdev family or no QSTATS_GET.
 *
 * Built statically on the host by the harness's initramfs builder and shipped as
 * /vnet/vnet-qstats. Self-contained: the uapi constants are spelled out so it
 * builds against any libc headers.
 */
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#define NETDEV_CMD_QSTATS_GET 12
#define NETDEV_A_QSTATS_IFINDEX 1
#define NETDEV_A_QSTATS_QUEUE_TYPE 2
#define NETDEV_A_QSTATS_QUEUE_ID 3
#define NETDEV_A_QSTATS_SCOPE 4
#define NETDEV_QSTATS_SCOPE_QUEUE 1

static const char *const stat_names[] = {
	[8] = "rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "rx_alloc_fail",
	"rx_hw_drops", "rx_hw_drop_overruns", "rx_csum_complete",
	"rx_csum_unnecessary", "rx_csum_none", "rx_csum_bad", "rx_hw_gro_packets",
	"rx_hw_gro_bytes", "rx_hw_gro_wire_packets", "rx_hw_gro_wire_bytes",
	"rx_hw_drop_ratelimits", "tx_hw_drops", "tx_hw_drop_errors", "tx_csum_none",
	"tx_needs_csum", "tx_hw_gso_packets", "tx_hw_gso_bytes",
	"tx_hw_gso_wire_packets", "tx_hw_gso_wire_bytes", "tx_hw_drop_ratelimits",
	"tx_stop", "tx_wake",
};
#define N_STAT_NAMES (sizeof(stat_names) / sizeof(stat_names[0]))

static char buf[1 << 16];

static void put_attr(struct nlmsghdr *nh, int type, const void *data, int len)
{
	struct nlattr *na = (struct nlattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	na->nla_type = type;
	na->nla_len = NLA_HDRLEN + len;
	memcpy((char *)na + NLA_HDRLEN, data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + NLA_ALIGN(na->nla_len);
}

static uint64_t attr_uint(const struct nlattr *na)
{
	const char *p = (const char *)na + NLA_HDRLEN;
	int len = na->nla_len - NLA_HDRLEN;

	if (len == 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		return v;
	}
	if (len == 4) {
		uint32_t v;

		memcpy(&v, p, 4);
		return v;
	}
	if (len == 2) {
		uint16_t v;

		memcpy(&v, p, 2);
		return v;
	}
	return len >= 1 ? (uint8_t)p[0] : 0;
}

static int send_req(int fd, struct nlmsghdr *nh)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	return sendto(fd, nh, nh->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -1 : 0;
}

static struct nlmsghdr *new_msg(int type, int flags, int cmd)
{
	static char req[512];
	struct nlmsghdr *nh = (struct nlmsghdr *)req;
	struct genlmsghdr *gh;

	memset(req, 0, sizeof(req));
	nh->nlmsg_type = type;
	nh->nlmsg_flags = NLM_F_REQUEST | flags;
	nh->nlmsg_seq = 1;
	nh->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	gh = NLMSG_DATA(nh);
	gh->cmd = cmd;
	gh->version = 1;
	return nh;
}

static int family_id(int fd)
{
	struct nlmsghdr *nh = new_msg(GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY);
	ssize_t n;

	put_attr(nh, CTRL_ATTR_FAMILY_NAME, "netdev", 7);
	if (send_req(fd, nh))
		return -1;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -1;
	for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
		struct nlattr *na;
		int len;

		if (nh->nlmsg_type == NLMSG_ERROR)
			return -1;
		na = (struct nlattr *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN);
		len = nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
		for (; len >= NLA_HDRLEN && na->nla_len >= NLA_HDRLEN && na->nla_len <= len;
		     len -= NLA_ALIGN(na->nla_len),
		     na = (struct nlattr *)((char *)na + NLA_ALIGN(na->nla_len)))
			if ((na->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
				return (int)attr_uint(na);
	}
	return -1;
}

int main(int argc, char **argv)
{
	unsigned int ifindex = 0;
	struct nlmsghdr *nh;
	uint32_t scope = NETDEV_QSTATS_SCOPE_QUEUE;
	int fd, fam;

	if (argc > 1) {
		ifindex = if_nametoindex(argv[1]);
		if (!ifindex) {
			fprintf(stderr, "vnet-qstats: no interface %s\n", argv[1]);
			return 1;
		}
	}
	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (fd < 0) {
		perror("vnet-qstats: socket");
		return 1;
	}
	fam = family_id(fd);
	if (fam < 0) {
		fprintf(stderr, "vnet-qstats: no netdev netlink family\n");
		return 2;
	}
	nh = new_msg(fam, NLM_F_DUMP, NETDEV_CMD_QSTATS_GET);
	if (ifindex)
		put_attr(nh, NETDEV_A_QSTATS_IFINDEX, &ifindex, 4);
	put_attr(nh, NETDEV_A_QSTATS_SCOPE, &scope, 4);
	if (send_req(fd, nh)) {
		perror("vnet-qstats: send");
		return 1;
	}
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0) {
			perror("vnet-qstats: recv");
			return 1;
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			struct nlattr *na;
			int len;

			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nh);

				if (!e->error)
					continue;
				fprintf(stderr, "vnet-qstats: %s\n", strerror(-e->error));
				return e->error == -EOPNOTSUPP || e->error == -EINVAL ? 2 : 1;
			}
			na = (struct nlattr *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN);
			len = nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
			{
				uint64_t ifi = 0, type = 0, qid = 0;
				char line[2048];
				int pos = 0;

				for (; len >= NLA_HDRLEN && na->nla_len >= NLA_HDRLEN && na->nla_len <= len;
				     len -= NLA_ALIGN(na->nla_len),
				     na = (struct nlattr *)((char *)na + NLA_ALIGN(na->nla_len))) {
					int t = na->nla_type & NLA_TYPE_MASK;
					uint64_t v = attr_uint(na);

					if (t == NETDEV_A_QSTATS_IFINDEX)
						ifi = v;
					else if (t == NETDEV_A_QSTATS_QUEUE_TYPE)
						type = v;
					else if (t == NETDEV_A_QSTATS_QUEUE_ID)
						qid = v;
					else if (t == NETDEV_A_QSTATS_SCOPE)
						continue;
					else if (pos < (int)sizeof(line) - 64) {
						if (t < (int)N_STAT_NAMES && stat_names[t])
							pos += snprintf(line + pos, sizeof(line) - pos,
									" %s=%llu", stat_names[t],
									(unsigned long long)v);
						else
							pos += snprintf(line + pos, sizeof(line) - pos,
									" attr%d=%llu", t,
									(unsigned long long)v);
					}
				}
				line[pos] = 0;
				printf("%llu %s %llu%s\n", (unsigned long long)ifi,
				       type == 0 ? "rx" : "tx", (unsigned long long)qid, line);
			}
		}
	}
}
