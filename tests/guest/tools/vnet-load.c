// SPDX-License-Identifier: GPL-2.0-only
/*
 * vnet-load - request/response load with latency windows, for the traffic
 * matrix (bench/matrix.py). One binary, both ends:
 *
 *   vnet-load server -p PORT [-w WRITES]
 *       echo server for TCP and UDP on PORT (SO_REUSEPORT: start one per
 *       CPU, pinned, and the kernel spreads the flows over them); -w: a TCP
 *       echo goes back in WRITES write()s of about equal size, as from a
 *       server that writes a header and then a body (TCP_NODELAY is set)
 *   vnet-load client -c IP -p PORT [-P NPORTS] [-u] [-N] -n FLOWS -s SIZE [-r RATE]
 *       FLOWS connections (TCP, or connected UDP sockets with -u) to
 *       PORT..PORT+NPORTS-1. Without -r: closed loop, each flow sends its
 *       next message when the answer to the previous one arrived. With -r:
 *       open loop, RATE messages per second in all, evenly spaced, round
 *       robin over the flows, whether or not answers came back. TCP flows
 *       set TCP_NODELAY, as latency-minded applications do; -N leaves
 *       Nagle's algorithm on (an application that never asked).
 *   vnet-load sink -p PORT -s SIZE
 *       the receiving end of a one-way TCP stream (a client with -r whose
 *       messages nobody answers, as from a telemetry publisher): takes
 *       SIZE-byte messages on PORT and measures each one's one-way delay.
 *       The sender's clock is another machine's (the guest's), so what it
 *       reports is the delay above the least one seen within the same
 *       SINK_SLICE of its own time: the constant offset between the
 *       clocks and their slow drift cancel, what a driver adds by holding
 *       a packet back does not (a slice's least delay is a packet that went
 *       out at once, as the last one of a held batch does).
 *
 *   vnet-load abort -c IP -p PORT -n CONNS -s SIZE
 *       CONNS connections to PORT one after another, each writing up to
 *       SIZE bytes (what the send buffer takes at once) and then reset
 *       (SO_LINGER 0), closed while its segments may still wait in a
 *       qdisc; prints "ABORTED <conns> <bytes>"
 *
 * Each message carries its send time (CLOCK_MONOTONIC); the round-trip time
 * of every answer goes into a histogram (1 us steps below 1 ms, 512 steps per
 * octave above). SIGUSR1 prints the window since the last SIGUSR1 (or the
 * start) and starts a new one:
 *   W <seq> <seconds> sent <n> recv <n> skipped <n> p50 <us> p90 <us> p99 <us>
 *     p999 <us> max <us> mean <us> carried <n>
 * (open loop: answers to messages sent before the window count in recv
 * and in carried, and are not timed; see record_answer())
 * SIGTERM/SIGINT print the last window as "END ..." and exit; "READY <flows>"
 * says that every flow is connected and SIGUSR1 is handled. Pacing sleeps
 * (a timerfd with 1 ns slack), it never spins: a spinning load generator
 * would take a CPU from the 2-CPU host or keep a guest vCPU from idling.
 * An open-loop TCP flow whose socket cannot take a message now (the peer is
 * behind) skips it and counts it in "skipped"; so does a closed-loop UDP flow
 * whose answer did not come within a second (lost): it sends the next one.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_FLOWS 1024
#define MAX_MSG 65536
#define MIN_TICK_NS 50000ull     /* open loop: timer period at most 20000/s */
#define LIN 1024                 /* 1 us buckets below 1024 us */
#define SUB 512                  /* buckets per octave above */
#define NBUCKETS (LIN + 27 * SUB)
#define SINK_SLICE_NS 200000000ull /* sink: the baseline's span of time */
#define SINK_MAX 2000000         /* sink: samples kept per window */

static volatile sig_atomic_t want_window, want_stop;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		want_window = 1;
	else
		want_stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void nonblock(int fd)
{
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		die("fcntl");
}

static void ep_add(int ep, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		die("epoll_ctl");
}

/* --- histogram ----------------------------------------------------------- */

static uint32_t hist[NBUCKETS];
static uint64_t h_count, h_sum_us, h_max_us, w_sent, w_recv, w_skipped, w_carried;
/* client: when the window opened (open loop: earlier messages are not its own) */
static uint64_t w_open_ns;

static int bucket(uint64_t us)
{
	int e;

	if (us < LIN)
		return (int)us;
	e = 63 - __builtin_clzll(us);           /* us in [2^e, 2^(e+1)), e >= 10 */
	if (e > 36)
		return NBUCKETS - 1;
	return LIN + (e - 10) * SUB + (int)((us >> (e - 9)) & (SUB - 1));
}

static double bucket_us(int b)
{
	int e, s;

	if (b < LIN)
		return b + 0.5;
	e = 10 + (b - LIN) / SUB;
	s = (b - LIN) % SUB;
	/* the middle of [(SUB + s) << (e - 9), (SUB + s + 1) << (e - 9)) */
	return ((double)(SUB + s) + 0.5) * (double)(1ull << (e - 9));
}

static void record(uint64_t rtt_ns)
{
	uint64_t us = rtt_ns / 1000;

	hist[bucket(us)]++;
	h_count++;
	h_sum_us += us;
	if (us > h_max_us)
		h_max_us = us;
	w_recv++;
}

static double percentile(double q)
{
	uint64_t want = (uint64_t)(q * (double)h_count + 0.999999), seen = 0;

	if (!h_count)
		return -1;
	if (want < 1)
		want = 1;
	for (int b = 0; b < NBUCKETS; b++) {
		seen += hist[b];
		if (seen >= want)
			return bucket_us(b);
	}
	return (double)h_max_us;
}

static void print_window(const char *tag, unsigned seq, double secs)
{
	printf("%s %u %.6f sent %llu recv %llu skipped %llu p50 %.1f p90 %.1f p99 %.1f "
	       "p999 %.1f max %llu mean %.1f carried %llu\n", tag, seq, secs,
	       (unsigned long long)w_sent, (unsigned long long)w_recv,
	       (unsigned long long)w_skipped, percentile(0.50), percentile(0.90),
	       percentile(0.99), percentile(0.999), (unsigned long long)h_max_us,
	       h_count ? (double)h_sum_us / (double)h_count : -1.0,
	       (unsigned long long)w_carried);
	fflush(stdout);
	memset(hist, 0, sizeof(hist));
	h_count = h_sum_us = h_max_us = w_sent = w_recv = w_skipped = w_carried = 0;
}

/* --- server -------------------------------------------------------------- */

static int reuse_socket(int type, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, fd = socket(AF_INET, type, 0);

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0)
		die("SO_REUSEPORT");
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("bind");
	nonblock(fd);
	return fd;
}

/* write all of buf[0..len) to a non-blocking TCP socket; -1 on error */
static int write_all(int fd, const char *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, buf + off, len - off);

		if (w < 0 && errno == EAGAIN) {
			struct timespec ts = { 0, 50000 };

			nanosleep(&ts, NULL);
			continue;
		}
		if (w < 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

static int server(int port, int writes)
{
	static char buf[MAX_MSG];
	int ep = epoll_create1(0), lfd, ufd, one = 1;

	if (ep < 0)
		die("epoll_create1");
	lfd = reuse_socket(SOCK_STREAM, port);
	if (listen(lfd, 1024) < 0)
		die("listen");
	ufd = reuse_socket(SOCK_DGRAM, port);
	ep_add(ep, lfd, EPOLLIN, (uint64_t)lfd);
	ep_add(ep, ufd, EPOLLIN, (uint64_t)ufd);
	while (!want_stop) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, -1);

		for (int i = 0; i < n; i++) {
			int fd = (int)evs[i].data.u64;

			if (fd == lfd) {
				int c;

				while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
					ep_add(ep, c, EPOLLIN, (uint64_t)c);
				}
			} else if (fd == ufd) {
				struct sockaddr_in from;
				socklen_t fl = sizeof(from);
				ssize_t r;

				while ((r = recvfrom(ufd, buf, sizeof(buf), 0,
						     (struct sockaddr *)&from, &fl)) > 0) {
					sendto(ufd, buf, (size_t)r, 0, (struct sockaddr *)&from, fl);
					fl = sizeof(from);
				}
			} else {
				ssize_t r = read(fd, buf, sizeof(buf));

				if (r <= 0) {
					if (r == 0 || errno != EAGAIN)
						close(fd);
					continue;
				}
				/* echo everything: small messages fit the send buffer,
				 * and a closed- or open-loop client waits for them */
				for (int k = 0; k < writes; k++) {
					size_t from = (size_t)r * k / writes;
					size_t to = (size_t)r * (k + 1) / writes;

					if (to > from && write_all(fd, buf + from, to - from))
						break;
				}
			}
		}
	}
	return 0;
}

/* --- client -------------------------------------------------------------- */

struct flow {
	int fd;
	size_t have;             /* bytes of the answer being read (TCP) */
	uint64_t sent_at;        /* when its last message left */
	uint64_t cur_seq;        /* and its sequence number */
	char in[MAX_MSG];
};

static struct flow *flows;
static int nflows, msg_size, udp, nagle, closed_loop;
static uint64_t seqno;

/* send one message on flow f; 0 sent, -1 could not (skipped) */
static int send_msg(struct flow *f)
{
	char out[MAX_MSG];
	uint64_t t = now_ns();
	ssize_t w;

	memset(out, 'x', (size_t)msg_size);
	memcpy(out, &t, 8);
	memcpy(out + 8, &seqno, 8);
	seqno++;
	w = send(f->fd, out, (size_t)msg_size, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (w == msg_size) {
		w_sent++;
		f->sent_at = t;
		f->cur_seq = seqno - 1;
		return 0;
	}
	if (w > 0) {
		/* a partial TCP message: finish it, the stream must stay framed
		 * (the socket is non-blocking: wait until it takes more) */
		for (ssize_t off = w; off < msg_size;) {
			ssize_t r = send(f->fd, out + off, (size_t)(msg_size - off), MSG_NOSIGNAL);
			struct pollfd pf = { .fd = f->fd, .events = POLLOUT };

			if (r < 0 && errno == EAGAIN)
				poll(&pf, 1, 100);
			else if (r < 0 && errno != EINTR)
				die("send");
			off += r > 0 ? r : 0;
		}
		w_sent++;
		f->sent_at = t;
		f->cur_seq = seqno - 1;
		return 0;
	}
	if (w < 0 && errno != EAGAIN && errno != ENOBUFS && errno != ECONNREFUSED)
		die("send");
	w_skipped++;
	return -1;
}

/*
 * An answer to an open-loop message sent before the window opened counts
 * in the window's answers (its rate) and as carried, but its delay is the
 * previous window's and is left out.  Whatever held the guest up just
 * before the window (the benchmark's own counter snapshot runs a command
 * there) then stays out of the window's latencies.
 */
static void record_answer(uint64_t sent_ns)
{
	if (!closed_loop && sent_ns < w_open_ns) {
		w_carried++;
		w_recv++;
		return;
	}
	record(now_ns() - sent_ns);
}

/* read what arrived on flow f; returns the number of complete answers */
static int receive(struct flow *f)
{
	int done = 0;

	for (;;) {
		ssize_t r;
		uint64_t t;

		if (udp) {
			r = recv(f->fd, f->in, sizeof(f->in), MSG_DONTWAIT);
			if (r < 0)
				break;
			if (r >= 16) {
				uint64_t seq;

				memcpy(&t, f->in, 8);
				memcpy(&seq, f->in + 8, 8);
				/* closed loop: an answer to a message given up on
				 * (timed out and replaced) must not start a second
				 * one: one message per flow in flight, always */
				if (closed_loop && seq != f->cur_seq)
					continue;
				record_answer(t);
				done++;
			}
			continue;
		}
		r = recv(f->fd, f->in + f->have, (size_t)msg_size - f->have, MSG_DONTWAIT);
		if (r == 0) {
			fprintf(stderr, "vnet-load: the server closed a connection\n");
			exit(1);
		}
		if (r < 0)
			break;
		f->have += (size_t)r;
		if (f->have == (size_t)msg_size) {
			memcpy(&t, f->in, 8);
			record_answer(t);
			f->have = 0;
			done++;
		}
	}
	return done;
}

static int client(const char *ip, int port, int nports, int rate, double duration)
{
	int ep = epoll_create1(0), tfd = -1, one = 1, next = 0;
	uint64_t t0 = now_ns(), t_lost = t0, t_rate0 = t0, offered = 0;
	unsigned seq = 0;

	w_open_ns = t0;

	if (ep < 0)
		die("epoll_create1");
	closed_loop = rate <= 0;
	flows = calloc((size_t)nflows, sizeof(*flows));
	if (!flows)
		die("calloc");
	for (int i = 0; i < nflows; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port + i % nports) };
		int fd = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);

		if (fd < 0 || inet_pton(AF_INET, ip, &a.sin_addr) != 1)
			die("socket/address");
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			die("connect");
		if (!udp && !nagle)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		nonblock(fd);
		flows[i].fd = fd;
		ep_add(ep, fd, EPOLLIN, (uint64_t)i);
	}
	printf("READY %d\n", nflows);
	fflush(stdout);
	if (rate > 0) {
		/* one wake-up per message up to 20000/s, then every 50 us */
		uint64_t gap = 1000000000ull / (uint64_t)rate;

		if (gap < MIN_TICK_NS)
			gap = MIN_TICK_NS;
		t_rate0 = now_ns();
		struct itimerspec its = {
			.it_interval = { (time_t)(gap / 1000000000ull), (long)(gap % 1000000000ull) },
			.it_value = { 0, 1000 },
		};

		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
		if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL) < 0)
			die("timerfd");
		ep_add(ep, tfd, EPOLLIN, (uint64_t)MAX_FLOWS);
	} else {
		for (int i = 0; i < nflows; i++)
			send_msg(&flows[i]);
	}
	while (!want_stop) {
		struct epoll_event evs[256];
		int n = epoll_wait(ep, evs, 256, 100);
		uint64_t t = now_ns();

		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == MAX_FLOWS) {
				uint64_t ticks, due;

				if (read(tfd, &ticks, sizeof(ticks)) != sizeof(ticks))
					continue;
				/* what the rate says is due by now: late sends go at
				 * once, so the offered rate is kept */
				due = (uint64_t)((double)(now_ns() - t_rate0) * rate / 1e9);
				while (offered < due) {
					send_msg(&flows[next]);
					next = (next + 1) % nflows;
					offered++;
				}
				continue;
			}
			struct flow *f = &flows[evs[i].data.u64];
			int got = receive(f);

			if (rate <= 0)
				while (got-- > 0)
					send_msg(f);
		}
		if (rate <= 0 && udp && t - t_lost > 100000000ull) {
			t_lost = t;
			for (int i = 0; i < nflows; i++) {
				/* signed: a flow may have sent after t was read */
				if ((int64_t)(t - flows[i].sent_at) > 1000000000ll) {
					w_skipped++;
					send_msg(&flows[i]);
				}
			}
		}
		if (want_window) {
			want_window = 0;
			print_window("W", seq++, (double)(t - w_open_ns) / 1e9);
			w_open_ns = t;
		}
		if (duration > 0 && (double)(t - t0) / 1e9 >= duration)
			break;
	}
	print_window("END", seq, (double)(now_ns() - w_open_ns) / 1e9);
	return 0;
}

/* --- sink ----------------------------------------------------------------- */

struct sample {
	uint64_t at;             /* when it arrived (this clock) */
	int64_t delay;           /* arrival minus send time (two clocks) */
};

static struct sample *samples;
static size_t nsamples;

/* the window's delays above each slice's least one into the histogram */
static void sink_window(void)
{
	size_t i = 0;

	while (i < nsamples) {
		uint64_t slice = samples[i].at / SINK_SLICE_NS;
		int64_t least = samples[i].delay;
		size_t j;

		for (j = i; j < nsamples && samples[j].at / SINK_SLICE_NS == slice; j++)
			if (samples[j].delay < least)
				least = samples[j].delay;
		for (; i < j; i++)
			record((uint64_t)(samples[i].delay - least));
	}
	nsamples = 0;
}

static int sink(int port)
{
	static char buf[MAX_MSG];
	int ep = epoll_create1(0), lfd;
	uint64_t tw = now_ns();
	unsigned seq = 0;

	nflows = 0;
	samples = calloc(SINK_MAX, sizeof(*samples));
	flows = calloc(MAX_FLOWS, sizeof(*flows));
	if (ep < 0 || !samples || !flows)
		die("sink setup");
	lfd = reuse_socket(SOCK_STREAM, port);
	if (listen(lfd, 64) < 0)
		die("listen");
	ep_add(ep, lfd, EPOLLIN, MAX_FLOWS);
	printf("READY 0\n");
	fflush(stdout);
	while (!want_stop) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, 100);

		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		for (int i = 0; i < n; i++) {
			uint64_t k = evs[i].data.u64;
			struct flow *f;

			if (k == MAX_FLOWS) {
				int c;

				while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					if (nflows == MAX_FLOWS) {
						close(c);
						continue;
					}
					flows[nflows].fd = c;
					ep_add(ep, c, EPOLLIN, (uint64_t)nflows++);
				}
				continue;
			}
			f = &flows[k];
			for (;;) {
				ssize_t r = read(f->fd, buf, sizeof(buf));
				uint64_t t = now_ns();

				if (r <= 0) {
					if (r == 0 || errno != EAGAIN) {
						epoll_ctl(ep, EPOLL_CTL_DEL, f->fd, NULL);
						close(f->fd);
					}
					break;
				}
				for (ssize_t off = 0; off < r;) {
					size_t take = (size_t)msg_size - f->have;

					if (take > (size_t)(r - off))
						take = (size_t)(r - off);
					/* only the header is kept: the send time */
					if (f->have < 8)
						memcpy(f->in + f->have, buf + off,
						       take < 8 - f->have ? take : 8 - f->have);
					f->have += take;
					off += (ssize_t)take;
					if (f->have == (size_t)msg_size) {
						uint64_t sent;

						memcpy(&sent, f->in, 8);
						f->have = 0;
						if (nsamples < SINK_MAX) {
							samples[nsamples].at = t;
							samples[nsamples].delay = (int64_t)(t - sent);
							nsamples++;
						} else {
							w_skipped++;
						}
					}
				}
			}
		}
		if (want_window) {
			uint64_t t = now_ns();

			want_window = 0;
			sink_window();
			print_window("W", seq++, (double)(t - tw) / 1e9);
			tw = t;
		}
	}
	sink_window();
	print_window("END", seq, (double)(now_ns() - tw) / 1e9);
	return 0;
}

/* --- abort --------------------------------------------------------------- */

static int abort_conns(const char *ip, int port, int conns)
{
	static char buf[MAX_MSG];
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	unsigned long long bytes = 0;

	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		die("address");
	memset(buf, 'a', sizeof(buf));
	for (int i = 0; i < conns && !want_stop; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		ssize_t w;

		if (fd < 0)
			die("socket");
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			die("connect");
		nonblock(fd);
		w = write(fd, buf, (size_t)msg_size);
		if (w > 0)
			bytes += (unsigned long long)w;
		if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) < 0)
			die("SO_LINGER");
		close(fd);
	}
	printf("ABORTED %d %llu\n", conns, bytes);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: vnet-load server -p PORT [-w WRITES]\n"
			"       vnet-load client -c IP -p PORT [-P NPORTS] [-u] [-N] -n FLOWS -s SIZE "
			"[-r RATE] [-d SECONDS]\n"
			"       vnet-load sink -p PORT -s SIZE\n"
			"       vnet-load abort -c IP -p PORT -n CONNS -s SIZE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *ip = NULL;
	int port = 0, nports = 1, rate = 0, writes = 1, opt;
	double duration = 0;
	struct sigaction sa = { .sa_handler = on_signal };

	if (argc < 2)
		usage();
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	nflows = 1;
	msg_size = 64;
	optind = 2;
	while ((opt = getopt(argc, argv, "c:p:P:uNn:s:r:d:w:")) != -1) {
		switch (opt) {
		case 'c': ip = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'P': nports = atoi(optarg); break;
		case 'u': udp = 1; break;
		case 'N': nagle = 1; break;
		case 'n': nflows = atoi(optarg); break;
		case 's': msg_size = atoi(optarg); break;
		case 'r': rate = atoi(optarg); break;
		case 'd': duration = atof(optarg); break;
		case 'w': writes = atoi(optarg); break;
		default: usage();
		}
	}
	if (port <= 0 || port + nports > 65536 || nports < 1)
		usage();
	if (!strcmp(argv[1], "server")) {
		if (writes < 1 || writes > 16)
			usage();
		return server(port, writes);
	}
	if (!strcmp(argv[1], "sink")) {
		if (msg_size < 16 || msg_size > MAX_MSG)
			usage();
		return sink(port);
	}
	if (!strcmp(argv[1], "abort")) {
		if (!ip || nflows < 1 || msg_size < 1 || msg_size > MAX_MSG)
			usage();
		return abort_conns(ip, port, nflows);
	}
	if (strcmp(argv[1], "client") || !ip || nflows < 1 || nflows > MAX_FLOWS ||
	    msg_size < 16 || msg_size > MAX_MSG || rate < 0)
		usage();
	return client(ip, port, nports, rate, duration);
}
