/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * plugin_out.h - output helpers shared by the TCG plugins of this
 * directory (exitcost.c, insnprof.c): JSON strings, and a JSON file
 * replaced atomically so that a reader polling it never sees half of it.
 */
#ifndef VNET_PLUGIN_OUT_H
#define VNET_PLUGIN_OUT_H

#include <errno.h>
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

#endif /* VNET_PLUGIN_OUT_H */
