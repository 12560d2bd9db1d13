// SPDX-License-Identifier: GPL-2.0-only
/*
 * vnet_fault2: a second instance of vnet_fault (same code, own name), for
 * tests that need two actions at once, e.g. one call failed and the next
 * one delayed.
 */
#include "vnet_fault.c"
