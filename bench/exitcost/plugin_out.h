/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * plugin_out.h - helpers shared by the TCG plugins of this directory
 * (exitcost.c, insnprof.c): JSON strings, a JSON file replaced atomically
 * so that a reader polling it never sees half of it, and stopping the
 * thread that serves the control file.
 */
#ifndef VNET_PLUGIN_OUT_H
#define VNET_PLUGIN_OUT_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* @s as a JSON string: quotes and backslashes escaped, controls dropped. */
static inline void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
	fputc('"', f);
}

/*
 * Write @path through @write(f, request, final): into a temporary file
 * next to it, then renamed over it.  @who prefixes the error messages.
 */
static inline void write_atomic(const char *who, const char *path,
				void (*write)(FILE *f, const char *request, bool final),
				const char *request, bool final)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "%s: cannot write %s: %s\n", who, tmp, strerror(errno));
		return;
	}
	write(f, request, final);
	if (fclose(f) == 0) {
		if (rename(tmp, path))
			fprintf(stderr, "%s: rename %s: %s\n", who, path, strerror(errno));
	} else {
		unlink(tmp);
	}
}

/*
 * Stop the control thread @tid if *@running: raise *@stop, wake whatever
 * it waits for on @cond (under @lock), and join it.
 */
static inline void ctl_thread_stop(pthread_t tid, bool *running, int *stop,
				   pthread_mutex_t *lock, pthread_cond_t *cond)
{
	if (!*running)
		return;
	__atomic_store_n(stop, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(lock);
	pthread_cond_broadcast(cond);
	pthread_mutex_unlock(lock);
	pthread_join(tid, NULL);
	*running = false;
}

#endif /* VNET_PLUGIN_OUT_H */
