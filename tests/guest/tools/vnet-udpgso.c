// SPDX-License-Identifier: GPL-2.0-only
/*
 * vnet-udpgso: UDP datagrams with a checkable pattern, sent in
 * segmentation-offload batches (UDP_SEGMENT), for the USO tests.
 *
 *   vnet-udpgso send DST PORT SENDS GSO_SIZE SEGS [GAP_US]
 *       SENDS sendmsg() calls of SEGS datagrams of GSO_SIZE bytes each, one
 *       buffer per call with UDP_SEGMENT = GSO_SIZE: the stack or the
 *       device cuts it; the task sleeps GAP_US (default 2000) after each.
 *       Prints the number of datagrams sent.
 *   vnet-udpgso recv PORT SECONDS
 *       Receives for SECONDS (from the first datagram, at most SECONDS*3
 *       in all) and prints "good G bad B bytes N".
 *
 * Datagram n carries n (32 bits, network order) and then bytes
 * (n + k) & 0xff: a lost, cut or corrupted datagram shows.
 *
 * Built statically on the host by the harness's initramfs builder and shipped
 * as /vnet/vnet-udpgso; the host side of the tests speaks the same format.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

static void fill(unsigned char *p, unsigned int len, uint32_t n)
{
	uint32_t be = htonl(n);
	unsigned int k;

	memcpy(p, &be, 4);
	for (k = 4; k < len; k++)
		p[k] = (unsigned char)(n + k);
}

static int check(const unsigned char *p, unsigned int len)
{
	uint32_t n;
	unsigned int k;

	if (len < 4)
		return 0;
	memcpy(&n, p, 4);
	n = ntohl(n);
	for (k = 4; k < len; k++)
		if (p[k] != (unsigned char)(n + k))
			return 0;
	return 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int do_send(const char *dst, int port, int sends, int gso, int segs,
		   int gap_us)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	unsigned int len = (unsigned int)gso * segs;
	unsigned char *buf = malloc(len);
	uint32_t n = 0;
	int fd, i, j;

	if (!buf || inet_pton(AF_INET, dst, &a.sin_addr) != 1)
		return 2;
	a.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_UDP, UDP_SEGMENT, &gso, sizeof(gso))) {
		perror("socket/UDP_SEGMENT");
		return 2;
	}
	for (i = 0; i < sends; i++) {
		for (j = 0; j < segs; j++)
			fill(buf + j * gso, gso, n + j);
		if (sendto(fd, buf, len, 0, (struct sockaddr *)&a, sizeof(a)) != (ssize_t)len) {
			perror("sendto");
			return 1;
		}
		n += segs;
		usleep(gap_us);
	}
	printf("%u\n", n);
	return 0;
}

static int do_recv(int port, int seconds)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	unsigned long good = 0, bad = 0, bytes = 0;
	static unsigned char buf[65536];
	double start = now(), first = 0;
	int fd, rcvbuf = 4 << 20;
	struct pollfd pfd;
	ssize_t r;

	a.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("socket/bind");
		return 2;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	printf("ready\n");
	fflush(stdout);
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (now() - start < seconds * 3 && (!first || now() - first < seconds)) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		r = recv(fd, buf, sizeof(buf), 0);
		if (r < 0)
			continue;
		if (!first)
			first = now();
		if (check(buf, r))
			good++;
		else
			bad++;
		bytes += r;
	}
	printf("good %lu bad %lu bytes %lu\n", good, bad, bytes);
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 7 || argc == 8) && !strcmp(argv[1], "send"))
		return do_send(argv[2], atoi(argv[3]), atoi(argv[4]),
			       atoi(argv[5]), atoi(argv[6]),
			       argc == 8 ? atoi(argv[7]) : 2000);
	if (argc == 4 && !strcmp(argv[1], "recv"))
		return do_recv(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: %s send DST PORT SENDS GSO_SIZE SEGS [GAP_US]\n"
		"       %s recv PORT SECONDS\n", argv[0], argv[0]);
	return 2;
}
