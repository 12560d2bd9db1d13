#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Rules of the driver's code that no compiler checks, each over src/;
# any breach fails with its lines.
#
#  1. A TX queue lock the driver took is let go only through
#     vnet_txq_unlock() or vnet_txq_unlock_bh() (include/vnet.h): they
#     first do the kick flush that the flush timer, finding the lock
#     taken, asked its holder for.  A holder that let go without it left
#     a held batch to the timer's retry, a quarter of tx-usecs later.
#     (The whole-device netif_tx_lock_bh() of detach and attach holds no
#     batch: the pairs are stopped, or not yet sending.)
#  2. vnet_start_xmit() runs under the stack's lock: every return of it
#     comes right after vnet_tx_flush_wanted(sq).
#
# Usage: tests/driver-rules.sh [SRCDIR]   (default: src of this tree)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-$top/src}
fail=0

bad=$(grep -n '__netif_tx_unlock' "$src"/*.c "$src"/*/*.c || true)
if [ -n "$bad" ]; then
	echo "driver-rules: TX queue lock let go without vnet_txq_unlock*():"
	echo "$bad"
	fail=1
fi

bad=$(awk '
	/^netdev_tx_t vnet_start_xmit\(/ { inside = 1 }
	inside && /^}/ { inside = 0 }
	inside && /[^_a-z]return[ ;]/ && prev !~ /vnet_tx_flush_wanted\(sq\);/ {
		printf "%s:%d: %s\n", FILENAME, FNR, $0
	}
	inside && NF { prev = $0 }
' "$src/tx.c")
n=$(grep -c '^netdev_tx_t vnet_start_xmit(' "$src/tx.c" || true)
if [ "$n" != 1 ]; then
	echo "driver-rules: vnet_start_xmit() not found in $src/tx.c"
	fail=1
elif [ -n "$bad" ]; then
	echo "driver-rules: vnet_start_xmit() returns without vnet_tx_flush_wanted():"
	echo "$bad"
	fail=1
fi

if [ "$fail" -ne 0 ]; then
	echo "driver-rules: FAILED" >&2
	exit 1
fi
echo "driver-rules: TX lock releases and vnet_start_xmit() returns all flush what the timer asked for"
