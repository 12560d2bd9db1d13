#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A floor under the byte queue limit of every transmit queue
# (byte_queue_limits/limit_min, default 0): a burst smaller than the floor
# never stops the queue.  For one driver of an A/B, e.g.
#   bench/matrix.py --variants stock,ours,ours-b \
#       --ours-b-setup bench/setups/bql-floor.sh --cells ... --out DIR
# IF is the interface (set by the benchmark); FLOOR in bytes (64 KiB).
set -e
floor=${FLOOR:-65536}
n=0
for q in "/sys/class/net/$IF"/queues/tx-*/byte_queue_limits; do
	[ -d "$q" ] || continue
	echo "$floor" >"$q/limit_min"
	echo "$q: limit_min $(cat "$q/limit_min")"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "no byte queue limits on $IF" >&2; exit 1; }
