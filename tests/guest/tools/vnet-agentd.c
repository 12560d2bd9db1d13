// SPDX-License-Identifier: GPL-2.0-only
/*
 * vnet-agentd - the test harness guest agent's command loop in C.
 *
 *   vnet-agentd TTY
 *
 * Speaks exactly the protocol of the shell agent, rootfs/vnet-agent (which
 * sets the line up, then execs this when it is there); see that file for
 * the requests and answers.  The shell loop starts eight to ten programs
 * per request (base64 both ways, timeout, setsid, two shells, rm), about
 * 170 ms under TCG; here a request costs one fork and one exec of the shell
 * that runs the script, so a test's many short commands (cat a counter,
 * ethtool -S) come back several times sooner.
 *
 * As in the shell loop: a RUN script runs under /bin/sh in its own session
 * with stdin from /dev/null, stdout and stderr in files, one at a time; on
 * its timeout its whole process group is killed and the answer is
 * "END 137 timeout".  A BG script is started through a child that exits at
 * once, so the job belongs to init and its end sends us nothing; its files
 * stay for the host to read and remove.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DIR "/run/vnet/agent"

static int tty = -1;

/* Everything goes to the line whole: a short write is continued. */
static void out(const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(tty, p, len);

		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			exit(1);	/* the line is gone; init starts us again */
		}
		p += w;
		len -= (size_t)w;
	}
}

static void outf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		out(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The file at @path in base64, 76 characters a line (as base64(1)). */
static void send_file_b64(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 16, have = 0, n = 0;
	unsigned char *in = NULL;
	char *text;
	ssize_t r;

	if (fd < 0)
		return;
	for (;;) {
		if (!in || have == cap) {
			unsigned char *nb = realloc(in, in ? cap *= 2 : cap);

			if (!nb)
				break;
			in = nb;
		}
		r = read(fd, in + have, cap - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
	}
	close(fd);
	text = malloc(have / 57 * 78 + 80);
	if (!text) {
		free(in);
		return;
	}
	for (size_t i = 0; i < have; i += 57) {
		size_t chunk = have - i < 57 ? have - i : 57;

		for (size_t k = 0; k < chunk; k += 3) {
			size_t left = chunk - k;
			unsigned int v = (unsigned int)in[i + k] << 16;

			if (left > 1)
				v |= (unsigned int)in[i + k + 1] << 8;
			if (left > 2)
				v |= in[i + k + 2];
			text[n++] = b64[(v >> 18) & 63];
			text[n++] = b64[(v >> 12) & 63];
			text[n++] = left > 1 ? b64[(v >> 6) & 63] : '=';
			text[n++] = left > 2 ? b64[v & 63] : '=';
		}
		text[n++] = '\n';
	}
	out(text, n);
	free(text);
	free(in);
}

static int b64val(int c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? (int)(p - b64) : -1;
}

/* Decode base64 @s into a new file @path; false on bad input. */
static int write_b64_file(const char *path, const char *s)
{
	size_t len = strlen(s), n = 0;
	unsigned char *buf = malloc(len / 4 * 3 + 3);
	unsigned int acc = 0;
	int bits = 0, fd, ok;

	if (!buf)
		return 0;
	for (; *s; s++) {
		int v = b64val(*s);

		if (*s == '=')
			break;
		if (v < 0)
			continue;
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[n++] = (unsigned char)(acc >> bits);
		}
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ok = fd >= 0 && write(fd, buf, n) == (ssize_t)n;
	if (fd >= 0)
		close(fd);
	free(buf);
	return ok;
}

static char *path_of(char *buf, size_t size, const char *id, const char *suffix)
{
	snprintf(buf, size, DIR "/%s%s", id, suffix);
	return buf;
}

/* In a child: stdin from /dev/null, stdout and stderr to the files of @id. */
static void child_files(const char *id)
{
	char p[256];
	int fd;

	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0)
		dup2(fd, 0);
	fd = open(path_of(p, sizeof(p), id, ".out"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		dup2(fd, 1);
	fd = open(path_of(p, sizeof(p), id, ".err"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		dup2(fd, 2);
	for (fd = 3; fd < 64; fd++)
		close(fd);
}

static sigset_t chld_set, old_set;

static void child_signals(void)
{
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, &old_set, NULL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void do_run(const char *id, const char *tmo_s, const char *script)
{
	char path[256], p[256];
	double deadline;
	int tmo = atoi(tmo_s), status = 0, rc, timed_out = 0;
	pid_t pid;

	if (tmo < 1)
		tmo = 1;
	path_of(path, sizeof(path), id, "");
	write_b64_file(path, script);
	pid = fork();
	if (pid == 0) {
		child_signals();
		setsid();
		child_files(id);
		execl("/bin/sh", "sh", path, (char *)NULL);
		_exit(127);
	}
	if (pid < 0) {
		rc = 126;
		goto answer;
	}
	deadline = now() + tmo;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		double left = deadline - now();
		struct timespec ts;

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			status = 0;
			break;
		}
		if (left <= 0) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			timed_out = 1;
			break;
		}
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		sigtimedwait(&chld_set, NULL, &ts);
	}
	if (timed_out)
		rc = 137;
	else if (WIFEXITED(status))
		rc = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		rc = 128 + WTERMSIG(status);
	else
		rc = 1;
answer:
	outf("\n@@VNET %s BEGIN\n", id);
	send_file_b64(path_of(p, sizeof(p), id, ".out"));
	outf("@@VNET %s ERR\n", id);
	send_file_b64(path_of(p, sizeof(p), id, ".err"));
	outf("@@VNET %s END %d %s\n", id, rc, timed_out ? "timeout" : "");
	unlink(path);
	unlink(path_of(p, sizeof(p), id, ".out"));
	unlink(path_of(p, sizeof(p), id, ".err"));
}

static void do_bg(const char *id, const char *script)
{
	char path[256], p[256];
	int fds[2];
	pid_t pid, job = -1;

	path_of(path, sizeof(path), id, "");
	write_b64_file(path, script);
	if (pipe2(fds, O_CLOEXEC) < 0) {
		outf("\n@@VNET %s BG -1\n", id);
		return;
	}
	pid = fork();
	if (pid == 0) {
		pid_t g;

		child_signals();
		g = fork();
		if (g == 0) {
			setsid();
			/* the session leader records the script's rc */
			execl("/bin/sh", "sh", "-c",
			      "sh \"$1\" >\"$1.out\" 2>\"$1.err\" </dev/null; echo $? >\"$1.rc\"",
			      "sh", path, (char *)NULL);
			_exit(127);
		}
		if (write(fds[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (pid > 0) {
		if (read(fds[0], &job, sizeof(job)) != sizeof(job))
			job = -1;
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close(fds[0]);
	if (job > 0) {
		FILE *f = fopen(path_of(p, sizeof(p), id, ".pid"), "w");

		if (f) {
			fprintf(f, "%d\n", (int)job);
			fclose(f);
		}
	}
	outf("\n@@VNET %s BG %d\n", id, (int)job);
}

static void log_request(const char *verb, const char *id)
{
	int fd = open(DIR "/requests", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd < 0)
		return;
	dprintf(fd, "%s %s\n", verb, id ? id : "");
	close(fd);
}

static void handle(char *line)
{
	char *words[5] = { NULL };
	int n = 0;

	for (char *tok = strtok(line, " \t"); tok && n < 5; tok = strtok(NULL, " \t"))
		words[n++] = tok;
	if (!n)
		return;
	log_request(words[0], words[1]);
	if (!strcmp(words[0], "PING") && n >= 2)
		outf("\n@@VNET %s PONG\n", words[1]);
	else if (!strcmp(words[0], "RUN") && n >= 4)
		do_run(words[1], words[2], words[3]);
	else if (!strcmp(words[0], "BG") && n >= 3)
		do_bg(words[1], words[2]);
	else
		outf("\n@@VNET - ERROR unknown request %s\n", words[0]);
}

int main(int argc, char **argv)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	char status[128] = "unknown";
	FILE *f;

	if (argc < 2 || !buf) {
		fprintf(stderr, "usage: vnet-agentd TTY\n");
		return 2;
	}
	tty = open(argv[1], O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (tty < 0) {
		perror(argv[1]);
		return 1;
	}
	mkdir(DIR, 0755);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&chld_set);
	sigaddset(&chld_set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld_set, &old_set);

	f = fopen("/run/vnet/status", "r");
	if (f) {
		if (fgets(status, sizeof(status), f))
			status[strcspn(status, "\n")] = 0;
		fclose(f);
	}
	outf("\n@@VNET - READY %s\n", status[0] ? status : "unknown");

	for (;;) {
		char *nl;
		ssize_t r;

		while ((nl = memchr(buf, '\n', len))) {
			*nl = 0;
			handle(buf);
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len);
		}
		if (len + 4096 > cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				return 1;
			buf = nb;
			cap *= 2;
		}
		r = read(tty, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 1;
		len += (size_t)r;
	}
}
