/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Module option parsing.  A NIC driver that refuses to load strands the
 * guest, so a bad value never fails the load: it is replaced by the
 * option's default and a warning names the option and the value.
 */
#ifndef VNET_PARAMS_H
#define VNET_PARAMS_H

#include <linux/types.h>

int vnet_parse_bool(const char *val, bool *out);
int vnet_parse_int_range(const char *val, int min, int max, int *out);

#endif /* VNET_PARAMS_H */
