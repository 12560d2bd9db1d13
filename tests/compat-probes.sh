#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Self-test of scripts/compat-probe.sh on a kernel's headers (default: the
# host's 6.1 headers): the probes pass on the real headers, and a probe
# whose silent miss would change the driver fails loudly when the header
# names the feature in a shape the driver does not know.
#
#   tests/compat-probes.sh [KERNEL-HEADERS-DIR]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
hdrs=${1:-$(find /usr/src -maxdepth 1 -name 'linux-headers-6.1.*-common' | sort -V | tail -n1)}
[[ -r $hdrs/include/linux/virtio.h ]] || { echo "no kernel headers at '$hdrs'" >&2; exit 2; }
probe=$top/scripts/compat-probe.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0

ok() { echo "PASS $*"; }
no() { echo "FAIL $*"; bad=1; }

out=$(sh "$probe" "$hdrs")
if [[ $out == *VNET_PROBE_FAILED* ]]; then no "probes on $hdrs"; else ok "probes on $hdrs"; fi
if sh "$probe" --report "$hdrs" >/dev/null; then ok "compat report on $hdrs"; else no "compat report on $hdrs"; fi

# mangle FILE PERL-EXPR: a copy of the headers with one declaration changed
# (the whole file is one string, so a declaration may span lines)
mangle() {
	rm -rf "$tmp/k"
	mkdir -p "$tmp/k"
	cp -r "$hdrs/include" "$tmp/k/"
	perl -0pi -e "$2" "$tmp/k/$1"
	! cmp -s "$hdrs/$1" "$tmp/k/$1" || { echo "mangle: $2 changed nothing in $1" >&2; exit 2; }
}

# expect_fail NAME: the probe run on the mangled copy must stop the build
expect_fail() {
	local o
	o=$(sh "$probe" "$tmp/k" 2>"$tmp/err")
	if [[ $o == *VNET_PROBE_FAILED* ]] && grep -q "compat-probe: $1 " "$tmp/err"; then
		ok "$1: an unknown prototype fails the build"
	else
		no "$1: an unknown prototype went unnoticed"
	fi
}

# An ops prototype neither old nor new (a callback built with the wrong
# type would be called with the wrong arguments).
mangle include/linux/ethtool.h 's/\(\*set_coalesce\)\([^;]*;/(*set_coalesce)(struct net_device *, struct ethtool_coalesce *, u32 flags);/'
expect_fail COALESCE_EXTACK
mangle include/linux/ethtool.h 's/\(\*get_rxfh\)\(struct net_device \*,/(*get_rxfh)(struct net_device *dev,/'
expect_fail RXFH_PARAM
# A feature the header names in a form the probe does not match.
mangle include/linux/virtio.h 's/unsigned int num_max;/u32 num_max;/'
expect_fail VQ_NUM_MAX
# dev_set_threaded() taking something other than a bool or the enum
mangle include/linux/netdevice.h 's/int dev_set_threaded\(struct net_device \*dev, bool threaded\);/int dev_set_threaded(struct net_device *dev, u8 threaded);/'
expect_fail DEV_SET_THREADED

exit "$bad"
