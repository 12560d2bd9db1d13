// SPDX-License-Identifier: GPL-2.0-only
/*
 * Module option parsing (pure).  Returns 0 and stores the value, or
 * -EINVAL and leaves *out alone; the caller reports and falls back.
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/string.h>
#include "policy/params.h"

int vnet_parse_bool(const char *val, bool *out)
{
	bool b;

	/* A bare "csum" on the command line means "csum=1". */
	if (!val)
		val = "1";
	if (kstrtobool(val, &b))
		return -EINVAL;
	*out = b;
	return 0;
}

int vnet_parse_int_range(const char *val, int min, int max, int *out)
{
	int v;

	if (!val || kstrtoint(val, 0, &v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}
