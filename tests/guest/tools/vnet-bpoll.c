// SPDX-License-Identifier: GPL-2.0-only
/*
 * vnet-bpoll: a UDP receiver that busy polls its NIC's NAPI, and the
 * host-side sender that measures what it gets back.
 *
 *   vnet-bpoll recv PORT COUNT MODE USECS WORK_US ECHO IDLE_MS
 *       Receive datagrams on PORT until COUNT arrived or none came for
 *       IDLE_MS.  MODE: "plain" (blocking recv), "sock" (SO_BUSY_POLL
 *       USECS, blocking recv), "epoll" (non-blocking socket in an epoll
 *       set with EPIOCSPARAMS busy_poll_usecs USECS, budget 64,
 *       prefer_busy_poll 1; "epoll-noprefer": prefer_busy_poll 0).  Each
 *       datagram costs WORK_US of spinning (an application that is
 *       busy); with ECHO 1 it goes back to its sender.  Prints "ready"
 *       once the socket is bound, at the end "received N distinct D" (D
 *       different sequence numbers).
 *   vnet-bpoll ping DST PORT COUNT TIMEOUT_MS
 *       COUNT exchanges, one at a time: send a numbered datagram, wait
 *       up to TIMEOUT_MS for its echo.  Prints "sent N lost L p50_us A
 *       p90_us B max_us C" (round-trip times of those answered).
 *   vnet-bpoll stream DST PORT COUNT GAP_US [GROUP INNER_US]
 *       Send COUNT numbered datagrams GAP_US apart; with GROUP, in groups
 *       of GROUP datagrams INNER_US apart, a group every GAP_US.  A sender
 *       held off by the shared host for longer than the spacing it was
 *       due to keep does not catch up in a burst (hundreds of datagrams
 *       at once would overflow any receive ring, whatever the driver):
 *       the rest of the schedule slips by the delay.  Prints "sent N
 *       slipped_us S slips K" (total slip, how many times).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL 46
#endif

/* <linux/eventpoll.h> (6.9) clashes with <sys/epoll.h>: the ioctl by hand */
struct vnet_epoll_params {
	uint32_t busy_poll_usecs;
	uint16_t busy_poll_budget;
	uint8_t prefer_busy_poll;
	uint8_t pad;
};

#define VNET_EPIOCSPARAMS _IOW(0x8A, 0x01, struct vnet_epoll_params)

#define MSG_LEN 64

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void spin_us(long us)
{
	int64_t end = mono_us() + us;

	while (us > 0 && mono_us() < end)
		;
}

static int udp_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0) {
		perror("socket");
		exit(2);
	}
	return fd;
}

static void addr_of(struct sockaddr_in *sa, const char *ip, int port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	if (ip && inet_pton(AF_INET, ip, &sa->sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", ip);
		exit(2);
	}
}

static int do_recv(int argc, char **argv)
{
	long port, count, usecs, work_us, echo, idle_ms, got = 0, distinct = 0;
	int fd, ep = -1;
	const char *mode;
	struct sockaddr_in sa;
	unsigned char *seen;
	int64_t last;

	if (argc != 9)
		return 2;
	port = atol(argv[2]);
	count = atol(argv[3]);
	mode = argv[4];
	usecs = atol(argv[5]);
	work_us = atol(argv[6]);
	echo = atol(argv[7]);
	idle_ms = atol(argv[8]);
	if (count <= 0 || idle_ms <= 0)
		return 2;
	seen = calloc(count, 1);
	fd = udp_socket();
	addr_of(&sa, NULL, port);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("bind");
		return 2;
	}
	{
		/* room for what a busy application leaves queued */
		int rcvbuf = 4 << 20;

		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
			   sizeof(rcvbuf));
	}
	if (!strcmp(mode, "sock")) {
		int v = usecs;

		if (setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &v, sizeof(v))) {
			perror("SO_BUSY_POLL");
			return 2;
		}
	} else if (!strcmp(mode, "epoll") || !strcmp(mode, "epoll-noprefer")) {
		struct vnet_epoll_params p = {
			.busy_poll_usecs = usecs, .busy_poll_budget = 64,
			.prefer_busy_poll = !strcmp(mode, "epoll"),
		};
		struct epoll_event ev = { .events = EPOLLIN };
		int one = 1;

		ep = epoll_create1(0);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
			perror("epoll");
			return 2;
		}
		if (ioctl(ep, VNET_EPIOCSPARAMS, &p)) {
			perror("EPIOCSPARAMS");
			return 2;
		}
		if (ioctl(fd, FIONBIO, &one)) {
			perror("FIONBIO");
			return 2;
		}
	} else if (strcmp(mode, "plain")) {
		return 2;
	}
	if (ep < 0) {
		/* blocking recv() busy polls first (sock), then sleeps */
		struct timeval tv = {
			.tv_sec = idle_ms / 1000, .tv_usec = (idle_ms % 1000) * 1000,
		};

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	printf("ready\n");
	fflush(stdout);

	last = mono_us();
	while (got < count) {
		unsigned char buf[2048];
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		uint32_t seq;
		ssize_t n;

		if (ep >= 0) {
			struct epoll_event ev;
			int r = epoll_wait(ep, &ev, 1, idle_ms);

			if (r < 0 && errno != EINTR) {
				perror("epoll_wait");
				return 2;
			}
			if (r <= 0) {
				if (mono_us() - last >= idle_ms * 1000)
					break;
				continue;
			}
		}
		/* epoll: take everything queued; blocking modes: one at a time */
		for (;;) {
			n = recvfrom(fd, buf, sizeof(buf), 0,
				     (struct sockaddr *)&from, &fl);
			if (n < 0)
				break;
			last = mono_us();
			got++;
			if (n >= 4) {
				memcpy(&seq, buf, 4);
				seq = ntohl(seq);
				if (seq < (uint32_t)count && !seen[seq]) {
					seen[seq] = 1;
					distinct++;
				}
			}
			spin_us(work_us);
			if (echo && sendto(fd, buf, n, 0, (struct sockaddr *)&from,
					   fl) < 0)
				perror("sendto");
			if (ep < 0 || got >= count)
				break;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR) {
			perror("recvfrom");
			return 2;
		}
		if (n < 0 && ep < 0 && errno != EINTR)
			break;	/* SO_RCVTIMEO: idle for IDLE_MS */
	}
	printf("received %ld distinct %ld\n", got, distinct);
	return 0;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int do_ping(int argc, char **argv)
{
	long count, timeout_ms, i, answered = 0;
	struct sockaddr_in dst;
	int64_t *rtt;
	int fd;

	if (argc != 6)
		return 2;
	addr_of(&dst, argv[2], atoi(argv[3]));
	count = atol(argv[4]);
	timeout_ms = atol(argv[5]);
	if (count <= 0)
		return 2;
	rtt = calloc(count, sizeof(*rtt));
	fd = udp_socket();
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
		perror("connect");
		return 2;
	}
	for (i = 0; i < count; i++) {
		unsigned char buf[MSG_LEN] = { 0 };
		uint32_t seq = htonl(i), back;
		int64_t t0 = mono_us(), left;

		memcpy(buf, &seq, 4);
		if (send(fd, buf, sizeof(buf), 0) < 0) {
			perror("send");
			return 2;
		}
		/* wait for this one's echo; earlier ones' late echoes are skipped */
		while ((left = timeout_ms * 1000 - (mono_us() - t0)) > 0) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			ssize_t n;

			if (poll(&pfd, 1, (left + 999) / 1000) <= 0)
				continue;
			n = recv(fd, buf, sizeof(buf), 0);
			if (n < 4)
				continue;
			memcpy(&back, buf, 4);
			if (back == seq) {
				rtt[answered++] = mono_us() - t0;
				break;
			}
		}
	}
	qsort(rtt, answered, sizeof(*rtt), cmp64);
	printf("sent %ld lost %ld p50_us %lld p90_us %lld max_us %lld\n",
	       count, count - answered,
	       answered ? (long long)rtt[answered / 2] : -1LL,
	       answered ? (long long)rtt[answered * 9 / 10] : -1LL,
	       answered ? (long long)rtt[answered - 1] : -1LL);
	return 0;
}

static int do_stream(int argc, char **argv)
{
	long count, gap_us, group = 1, inner_us = 0, i, slips = 0;
	int64_t start, prev = 0, slipped = 0;
	struct sockaddr_in dst;
	int fd;

	if (argc != 6 && argc != 8)
		return 2;
	addr_of(&dst, argv[2], atoi(argv[3]));
	count = atol(argv[4]);
	gap_us = atol(argv[5]);
	if (argc == 8) {
		group = atol(argv[6]);
		inner_us = atol(argv[7]);
	}
	if (group < 1)
		return 2;
	fd = udp_socket();
	start = mono_us();
	for (i = 0; i < count; i++) {
		int64_t at = start + slipped + i / group * gap_us +
			     i % group * inner_us;
		unsigned char buf[MSG_LEN] = { 0 };
		uint32_t seq = htonl(i);
		int64_t now = mono_us();

		/* later than one spacing past its time: slip, do not burst */
		if (i && now - at > (at - prev > 0 ? at - prev : 1)) {
			slipped += now - at;
			slips++;
			at = now;
		}
		prev = at;
		memcpy(buf, &seq, 4);
		while (mono_us() < at)
			;
		if (sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&dst,
			   sizeof(dst)) < 0) {
			perror("sendto");
			return 2;
		}
	}
	printf("sent %ld slipped_us %lld slips %ld\n", count,
	       (long long)slipped, slips);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 2;

	if (argc > 1 && !strcmp(argv[1], "recv"))
		rc = do_recv(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "ping"))
		rc = do_ping(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "stream"))
		rc = do_stream(argc, argv);
	if (rc == 2)
		fprintf(stderr, "usage: see the comment at the top of vnet-bpoll.c\n");
	return rc;
}
