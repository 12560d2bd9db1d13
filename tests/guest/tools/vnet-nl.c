// SPDX-License-Identifier: GPL-2.0-only
/*
 * vnet-nl: the device as the netdev generic netlink family shows it, and
 * per-NAPI settings written through it.
 *
 *   vnet-nl dev IFNAME        dev-get: one "name=value" per line (XDP, XSK features)
 *   vnet-nl queues IFNAME     queue-get dump: "rx|tx ID [napi-id=N] [xsk]"
 *   vnet-nl napis IFNAME      napi-get dump: "napi ID [irq=N] [pid=N] [defer-hard-irqs=N]
 *                             [gro-flush-timeout=N] [irq-suspend-timeout=N] [threaded=N]"
 *   vnet-nl napi-set ID NAME VALUE...   napi-set (NAME: defer-hard-irqs,
 *                             gro-flush-timeout, irq-suspend-timeout, threaded)
 *   vnet-nl qstats IFNAME     qstats-get, device scope then per queue:
 *                             "device NAME=N..." and "rx|tx ID NAME=N..."
 *                             (an attribute this tool has no name for: attrT=N)
 *   vnet-nl pools IFNAME      page-pool-get dump, every pool of every device:
 *                             "pool ID [ifindex=N] [napi-id=N] [inflight=N]
 *                             [inflight-mem=N] [detach-time=N]"
 *   vnet-nl pool-stats IFNAME page-pool-stats-get dump, every pool:
 *                             "pool ID [ifindex=N] NAME=N..."
 *
 * Only attributes the kernel sent are printed.  Exit status 2 when the
 * kernel has no netdev family or not this operation, 1 on other errors.
 *
 * Built statically on the host by the harness's initramfs builder and
 * shipped as /vnet/vnet-nl.  The uapi numbers are spelled out so it builds
 * against any libc headers.
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

enum {
	CMD_DEV_GET = 1, CMD_PAGE_POOL_GET = 5, CMD_PAGE_POOL_STATS_GET = 9,
	CMD_QUEUE_GET = 10, CMD_NAPI_GET = 11,
	CMD_QSTATS_GET = 12, CMD_NAPI_SET = 14,
};

/* Attribute numbers of each reply, and how this tool prints them. */
enum { ATTR_PAD, ATTR_U, ATTR_HEX, ATTR_FLAG };

struct attr_name {
	const char *name;
	int how;
};

static const struct attr_name dev_attrs[] = {
	[3] = { "xdp-features", ATTR_HEX },
	[4] = { "xdp-zc-max-segs", ATTR_U },
	[5] = { "xdp-rx-metadata-features", ATTR_HEX },
	[6] = { "xsk-features", ATTR_HEX },
};

static const struct attr_name napi_attrs[] = {
	[3] = { "irq", ATTR_U },
	[4] = { "pid", ATTR_U },
	[5] = { "defer-hard-irqs", ATTR_U },
	[6] = { "gro-flush-timeout", ATTR_U },
	[7] = { "irq-suspend-timeout", ATTR_U },
	[8] = { "threaded", ATTR_U },
};

static const struct attr_name queue_attrs[] = {
	[4] = { "napi-id", ATTR_U },
	[5] = { "dmabuf", ATTR_U },
	[6] = { "io-uring", ATTR_FLAG },
	[7] = { "xsk", ATTR_FLAG },
	[8] = { "lease", ATTR_FLAG },
};

static const struct attr_name pool_attrs[] = {
	[2] = { "ifindex", ATTR_U },
	[3] = { "napi-id", ATTR_U },
	[4] = { "inflight", ATTR_U },
	[5] = { "inflight-mem", ATTR_U },
	[6] = { "detach-time", ATTR_U },
};

static const struct attr_name pool_stat_attrs[] = {
	[8] = { "alloc-fast", ATTR_U },
	[9] = { "alloc-slow", ATTR_U },
	[10] = { "alloc-slow-high-order", ATTR_U },
	[11] = { "alloc-empty", ATTR_U },
	[12] = { "alloc-refill", ATTR_U },
	[13] = { "alloc-waive", ATTR_U },
	[14] = { "recycle-cached", ATTR_U },
	[15] = { "recycle-cache-full", ATTR_U },
	[16] = { "recycle-ring", ATTR_U },
	[17] = { "recycle-ring-full", ATTR_U },
	[18] = { "recycle-released-refcnt", ATTR_U },
};

static const char *const qstat_names[] = {
	[8] = "rx-packets", "rx-bytes", "tx-packets", "tx-bytes", "rx-alloc-fail",
	"rx-hw-drops", "rx-hw-drop-overruns", "rx-csum-complete",
	"rx-csum-unnecessary", "rx-csum-none", "rx-csum-bad", "rx-hw-gro-packets",
	"rx-hw-gro-bytes", "rx-hw-gro-wire-packets", "rx-hw-gro-wire-bytes",
	"rx-hw-drop-ratelimits", "tx-hw-drops", "tx-hw-drop-errors", "tx-csum-none",
	"tx-needs-csum", "tx-hw-gso-packets", "tx-hw-gso-bytes",
	"tx-hw-gso-wire-packets", "tx-hw-gso-wire-bytes", "tx-hw-drop-ratelimits",
	"tx-stop", "tx-wake",
};

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static char buf[1 << 16];
static char req[1024];
static int fd, family;

static void put_attr(struct nlmsghdr *nh, int type, const void *data, int len)
{
	struct nlattr *na = (struct nlattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	na->nla_type = type;
	na->nla_len = NLA_HDRLEN + len;
	memcpy((char *)na + NLA_HDRLEN, data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + NLA_ALIGN(na->nla_len);
}

static void put_u32(struct nlmsghdr *nh, int type, uint32_t v)
{
	put_attr(nh, type, &v, 4);
}

static uint64_t attr_uint(const struct nlattr *na)
{
	const char *p = (const char *)na + NLA_HDRLEN;
	int len = na->nla_len - NLA_HDRLEN;
	uint64_t v64;
	uint32_t v32;
	uint16_t v16;

	if (len == 8) {
		memcpy(&v64, p, 8);
		return v64;
	}
	if (len == 4) {
		memcpy(&v32, p, 4);
		return v32;
	}
	if (len == 2) {
		memcpy(&v16, p, 2);
		return v16;
	}
	return len >= 1 ? (uint8_t)p[0] : 0;
}

static struct nlmsghdr *new_msg(int type, int flags, int cmd)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)req;
	struct genlmsghdr *gh;

	memset(req, 0, sizeof(req));
	nh->nlmsg_type = type;
	nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nh->nlmsg_seq = 1;
	nh->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	gh = NLMSG_DATA(nh);
	gh->cmd = cmd;
	gh->version = 1;
	return nh;
}

#define for_each_attr(na, nh, len)						\
	for (na = (struct nlattr *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN),	\
	     len = nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);			\
	     len >= NLA_HDRLEN && na->nla_len >= NLA_HDRLEN && na->nla_len <= len; \
	     len -= NLA_ALIGN(na->nla_len),					\
	     na = (struct nlattr *)((char *)na + NLA_ALIGN(na->nla_len)))

/*
 * Send @nh and hand each reply message to @cb until the kernel says done
 * (or acks).  Returns 0, or the exit status: 2 for an operation this
 * kernel does not have, 1 for other errors.
 */
static int talk(struct nlmsghdr *nh, void (*cb)(struct nlmsghdr *))
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (sendto(fd, nh, nh->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("vnet-nl: send");
		return 1;
	}
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0) {
			perror("vnet-nl: recv");
			return 1;
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_DONE || nh->nlmsg_type == NLMSG_ERROR) {
				int err = 0;

				/* Both start with the error: 0 for success. */
				if (nh->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
					memcpy(&err, NLMSG_DATA(nh), sizeof(int));
				if (!err)
					return 0;
				fprintf(stderr, "vnet-nl: %s\n", strerror(-err));
				return err == -EOPNOTSUPP ? 2 : 1;
			}
			if (cb)
				cb(nh);
		}
	}
}

static void family_cb(struct nlmsghdr *nh)
{
	struct nlattr *na;
	int len;

	for_each_attr(na, nh, len)
		if ((na->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
			family = (int)attr_uint(na);
}

/* Print the attributes of @nh that @names knows, " name=value" each. */
static void print_attrs(struct nlmsghdr *nh, const struct attr_name *names, int n,
			const char *sep)
{
	struct nlattr *na;
	int len;

	for_each_attr(na, nh, len) {
		int t = na->nla_type & NLA_TYPE_MASK;

		if (t >= n || !names[t].name)
			continue;
		if (names[t].how == ATTR_FLAG)
			printf("%s%s", sep, names[t].name);
		else if (names[t].how == ATTR_HEX)
			printf("%s%s=0x%llx", sep, names[t].name,
			       (unsigned long long)attr_uint(na));
		else
			printf("%s%s=%llu", sep, names[t].name,
			       (unsigned long long)attr_uint(na));
	}
}

static uint64_t find_attr(struct nlmsghdr *nh, int type, uint64_t def)
{
	struct nlattr *na;
	int len;

	for_each_attr(na, nh, len)
		if ((na->nla_type & NLA_TYPE_MASK) == type)
			return attr_uint(na);
	return def;
}

static void dev_cb(struct nlmsghdr *nh)
{
	print_attrs(nh, dev_attrs, N(dev_attrs), "\n");
	printf("\n");
}

static void queue_cb(struct nlmsghdr *nh)
{
	printf("%s %llu", find_attr(nh, 3, 0) ? "tx" : "rx",
	       (unsigned long long)find_attr(nh, 1, 0));
	print_attrs(nh, queue_attrs, N(queue_attrs), " ");
	printf("\n");
}

static void napi_cb(struct nlmsghdr *nh)
{
	printf("napi %llu", (unsigned long long)find_attr(nh, 2, 0));
	print_attrs(nh, napi_attrs, N(napi_attrs), " ");
	printf("\n");
}

static void qstats_cb(struct nlmsghdr *nh)
{
	struct nlattr *na;
	int len;

	if (find_attr(nh, 3, ~0ULL) == ~0ULL)
		printf("device");
	else
		printf("%s %llu", find_attr(nh, 2, 0) ? "tx" : "rx",
		       (unsigned long long)find_attr(nh, 3, 0));
	for_each_attr(na, nh, len) {
		int t = na->nla_type & NLA_TYPE_MASK;
		unsigned long long v = attr_uint(na);

		if (t < N(qstat_names) && qstat_names[t])
			printf(" %s=%llu", qstat_names[t], v);
		else if (t > 4)
			printf(" attr%d=%llu", t, v);
	}
	printf("\n");
}

static void pool_cb(struct nlmsghdr *nh)
{
	printf("pool %llu", (unsigned long long)find_attr(nh, 1, 0));
	print_attrs(nh, pool_attrs, N(pool_attrs), " ");
	printf("\n");
}

/* The pool's id and ifindex are nested in the info attribute (1). */
static void pool_stats_cb(struct nlmsghdr *nh)
{
	struct nlattr *na, *in;
	int len, ilen;

	printf("pool");
	for_each_attr(na, nh, len) {
		if ((na->nla_type & NLA_TYPE_MASK) != 1)
			continue;
		for (in = (struct nlattr *)((char *)na + NLA_HDRLEN),
		     ilen = na->nla_len - NLA_HDRLEN;
		     ilen >= NLA_HDRLEN && in->nla_len >= NLA_HDRLEN &&
		     in->nla_len <= ilen;
		     ilen -= NLA_ALIGN(in->nla_len),
		     in = (struct nlattr *)((char *)in + NLA_ALIGN(in->nla_len))) {
			int t = in->nla_type & NLA_TYPE_MASK;

			if (t == 1)
				printf(" %llu", (unsigned long long)attr_uint(in));
			else if (t == 2)
				printf(" ifindex=%llu", (unsigned long long)attr_uint(in));
		}
	}
	print_attrs(nh, pool_stat_attrs, N(pool_stat_attrs), " ");
	printf("\n");
}

static int usage(void)
{
	fprintf(stderr, "usage: vnet-nl dev|queues|napis|qstats|pools|pool-stats IFNAME\n"
		"       vnet-nl napi-set ID NAME VALUE...\n");
	return 1;
}

static int napi_set(int argc, char **argv)
{
	static const char *const names[] = {
		"defer-hard-irqs", "gro-flush-timeout", "irq-suspend-timeout", "threaded",
	};
	static const int types[] = { 5, 6, 7, 8 };
	struct nlmsghdr *nh = new_msg(family, 0, CMD_NAPI_SET);
	int i, k;

	put_u32(nh, 2, strtoul(argv[0], NULL, 0));
	for (i = 1; i + 1 < argc; i += 2) {
		uint64_t v = strtoull(argv[i + 1], NULL, 0);

		for (k = 0; k < N(names) && strcmp(argv[i], names[k]); k++)
			;
		if (k == N(names)) {
			fprintf(stderr, "vnet-nl: unknown NAPI setting %s\n", argv[i]);
			return 1;
		}
		if (types[k] == 6 || types[k] == 7)
			put_attr(nh, types[k], &v, 8);
		else
			put_u32(nh, types[k], (uint32_t)v);
	}
	if (i != argc)
		return usage();
	return talk(nh, NULL);
}

int main(int argc, char **argv)
{
	struct nlmsghdr *nh;
	unsigned int ifindex = 0;
	int rc;

	if (argc < 3)
		return usage();
	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (fd < 0) {
		perror("vnet-nl: socket");
		return 1;
	}
	nh = new_msg(GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY);
	put_attr(nh, CTRL_ATTR_FAMILY_NAME, "netdev", 7);
	if (talk(nh, family_cb) || !family) {
		fprintf(stderr, "vnet-nl: no netdev netlink family\n");
		return 2;
	}
	if (!strcmp(argv[1], "napi-set"))
		return napi_set(argc - 2, argv + 2);

	ifindex = if_nametoindex(argv[2]);
	if (!ifindex) {
		fprintf(stderr, "vnet-nl: no interface %s\n", argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "dev")) {
		nh = new_msg(family, 0, CMD_DEV_GET);
		put_u32(nh, 1, ifindex);
		rc = talk(nh, dev_cb);
	} else if (!strcmp(argv[1], "queues")) {
		nh = new_msg(family, NLM_F_DUMP, CMD_QUEUE_GET);
		put_u32(nh, 2, ifindex);
		rc = talk(nh, queue_cb);
	} else if (!strcmp(argv[1], "napis")) {
		nh = new_msg(family, NLM_F_DUMP, CMD_NAPI_GET);
		put_u32(nh, 1, ifindex);
		rc = talk(nh, napi_cb);
	} else if (!strcmp(argv[1], "qstats")) {
		/* Device scope first (no scope attribute), then per queue. */
		nh = new_msg(family, NLM_F_DUMP, CMD_QSTATS_GET);
		put_u32(nh, 1, ifindex);
		rc = talk(nh, qstats_cb);
		if (!rc) {
			nh = new_msg(family, NLM_F_DUMP, CMD_QSTATS_GET);
			put_u32(nh, 1, ifindex);
			put_u32(nh, 4, 1);
			rc = talk(nh, qstats_cb);
		}
	} else if (!strcmp(argv[1], "pools")) {
		nh = new_msg(family, NLM_F_DUMP, CMD_PAGE_POOL_GET);
		rc = talk(nh, pool_cb);
	} else if (!strcmp(argv[1], "pool-stats")) {
		nh = new_msg(family, NLM_F_DUMP, CMD_PAGE_POOL_STATS_GET);
		rc = talk(nh, pool_stats_cb);
	} else {
		return usage();
	}
	return rc;
}
