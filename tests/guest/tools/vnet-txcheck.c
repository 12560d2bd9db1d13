// SPDX-License-Identifier: GPL-2.0-only
/*
 * vnet-txcheck: what a UDP sender in the guest gets back from the driver
 * after it sent: its socket memory (the driver frees sent skbs) and its
 * transmit timestamps.
 *
 *   vnet-txcheck burst DST PORT COUNT SIZE CPU WAIT_MS
 *       On CPU (-1: any), send COUNT datagrams of SIZE bytes, then poll
 *       SIOCOUTQ (memory of skbs not yet freed) every 200 us until it is
 *       0 or WAIT_MS passed.  Prints "sent N outq B ms T left L": B bytes
 *       right after the last send, T ms from the last send until 0 (or
 *       until the wait ended), L bytes still held then.  Exit status 0
 *       when everything came back.
 *   vnet-txcheck tstamp DST PORT COUNT CPU
 *       On CPU, send COUNT datagrams 2 ms apart with software transmit
 *       timestamps asked for (SOF_TIMESTAMPING_TX_SOFTWARE, OPT_ID) and
 *       read the error queue for up to 3 s.  Prints "sent N stamped M
 *       dup D late_us L": M distinct datagrams stamped, D stamps seen
 *       twice, L the longest time from a send() call to its stamp (0 if
 *       none).  Exit status 0 when every datagram got exactly one stamp.
 *
 * Sending on a given CPU picks the send queue: XPS maps each CPU to the
 * queue pair the driver planned for it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_TIMESTAMPING
#define SO_TIMESTAMPING 37
#endif
#ifndef SCM_TIMESTAMPING
#define SCM_TIMESTAMPING SO_TIMESTAMPING
#endif

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(2);
	}
}

/* Unconnected: an ICMP error for an earlier datagram fails no send(). */
static struct sockaddr_in peer;

static int udp_to(const char *dst, int port)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	peer.sin_family = AF_INET;
	peer.sin_port = htons(port);
	if (fd < 0 || inet_pton(AF_INET, dst, &peer.sin_addr) != 1) {
		perror("udp socket");
		exit(2);
	}
	return fd;
}

static int send_one(int fd, const void *buf, int len)
{
	return sendto(fd, buf, len, 0, (struct sockaddr *)&peer,
		      sizeof(peer)) == len ? 0 : -1;
}

static int outq(int fd)
{
	int v = -1;

	if (ioctl(fd, SIOCOUTQ, &v)) {
		perror("SIOCOUTQ");
		exit(2);
	}
	return v;
}

static int do_burst(const char *dst, int port, int count, int size, int cpu,
		    int wait_ms)
{
	char *buf = calloc(1, size);
	int fd, i, first, left;
	int64_t t0, t;

	pin(cpu);
	fd = udp_to(dst, port);
	for (i = 0; i < count; i++)
		if (send_one(fd, buf, size)) {
			perror("send");
			return 2;
		}
	t0 = mono_ns();
	first = outq(fd);
	do {
		left = outq(fd);
		t = mono_ns();
		if (!left)
			break;
		usleep(200);
	} while (t - t0 < (int64_t)wait_ms * 1000000);
	printf("sent %d outq %d ms %.1f left %d\n", count, first,
	       (t - t0) / 1e6, left);
	return left ? 1 : 0;
}

/* One stamp from the error queue: its id, or -1 when none is waiting. */
static int read_stamp(int fd, int64_t *ts)
{
	char data[256], ctrl[512];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctrl, .msg_controllen = sizeof(ctrl),
	};
	struct sock_extended_err *ee = NULL;
	struct scm_timestamping *st = NULL;
	struct cmsghdr *c;

	if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPING)
			st = (struct scm_timestamping *)CMSG_DATA(c);
		else if (c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR)
			ee = (struct sock_extended_err *)CMSG_DATA(c);
	}
	if (!st || !ee || ee->ee_origin != SO_EE_ORIGIN_TIMESTAMPING ||
	    ee->ee_info != SCM_TSTAMP_SND)
		return -2;
	*ts = (int64_t)st->ts[0].tv_sec * 1000000000 + st->ts[0].tv_nsec;
	return ee->ee_data;
}

static int do_tstamp(const char *dst, int port, int count, int cpu)
{
	int flags = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE |
		    SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
	int64_t *sent_at = calloc(count, sizeof(*sent_at));
	int *seen = calloc(count, sizeof(*seen));
	int fd, i, id, stamped = 0, dup = 0;
	int64_t ts, late = 0, end;
	char payload[64] = "vnet-txcheck";
	struct pollfd p;

	pin(cpu);
	fd = udp_to(dst, port);
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags))) {
		perror("SO_TIMESTAMPING");
		return 2;
	}
	for (i = 0; i < count; i++) {
		sent_at[i] = now_ns();
		if (send_one(fd, payload, sizeof(payload))) {
			perror("send");
			return 2;
		}
		usleep(2000);
	}
	end = mono_ns() + 3000000000LL;
	while (stamped < count && mono_ns() < end) {
		p.fd = fd;
		p.events = 0;	/* POLLERR is always reported */
		poll(&p, 1, 100);
		while ((id = read_stamp(fd, &ts)) != -1) {
			if (id < 0 || id >= count)
				continue;
			if (seen[id]++) {
				dup++;
				continue;
			}
			stamped++;
			if (ts - sent_at[id] > late)
				late = ts - sent_at[id];
		}
	}
	printf("sent %d stamped %d dup %d late_us %lld\n", count, stamped, dup,
	       (long long)(late / 1000));
	return stamped == count && !dup ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 8 && !strcmp(argv[1], "burst"))
		return do_burst(argv[2], atoi(argv[3]), atoi(argv[4]),
				atoi(argv[5]), atoi(argv[6]), atoi(argv[7]));
	if (argc == 6 && !strcmp(argv[1], "tstamp"))
		return do_tstamp(argv[2], atoi(argv[3]), atoi(argv[4]),
				 atoi(argv[5]));
	fprintf(stderr, "usage: vnet-txcheck burst DST PORT COUNT SIZE CPU WAIT_MS\n"
			"       vnet-txcheck tstamp DST PORT COUNT CPU\n");
	return 2;
}
