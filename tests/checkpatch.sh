#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Kernel coding style check: checkpatch.pl --strict over every C source
# and header of the driver, its KUnit tests and the test-only modules of
# the QEMU harness (tests/guest/kmod).  checkpatch.pl and its
# data files come from Debian's linux-source-6.1 package (extracted once
# into the cache).  Any message fails the check.
#
# Usage: tests/checkpatch.sh [FILE...]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${VNET_CACHE:-$HOME/.cache/virtio-net-dkms}/checkpatch
tarball=${VNET_KSRC_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
cp_pl=$cache/linux-source-6.1/scripts/checkpatch.pl

if [ ! -x "$cp_pl" ]; then
	[ -r "$tarball" ] || {
		echo "checkpatch: $tarball missing (apt-get install linux-source-6.1)" >&2
		exit 1
	}
	mkdir -p "$cache"
	tar -xJf "$tarball" -C "$cache" \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi

cd "$top"
if [ $# -eq 0 ]; then
	set -- src/*.c src/policy/*.c include/*.h include/policy/*.h kunit/*.c \
		tests/guest/kmod/*.c
fi

out=$(perl "$cp_pl" --strict --no-tree --terse --show-types -f "$@" 2>&1 |
	grep -v '^total: 0 errors, 0 warnings, 0 checks' || true)
if [ -n "$out" ]; then
	echo "$out"
	echo "checkpatch: FAILED ($(echo "$out" | wc -l) messages)" >&2
	exit 1
fi
echo "checkpatch: $# files clean (--strict)"
