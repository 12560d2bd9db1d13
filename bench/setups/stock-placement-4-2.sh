#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Ours on 4 vCPUs with 2 queue pairs, placed as the stock 6.1 driver
# places itself there: both vectors of pair 0 on CPU 1, of pair 1 on
# CPU 3; XPS CPUs 0-1 -> tx-0, 2-3 -> tx-1.  For A/Bs of the placement:
#   bench/bench.py --topology 4:2 --workloads rr16 \
#       --ours-setup bench/setups/stock-placement-4-2.sh
# IF is the interface (set by bench.py).
set -e
irq() { awk -v q="$1" '$NF == q { sub(":", "", $1); print $1 }' /proc/interrupts; }
dev=$(basename "$(readlink -f "/sys/class/net/$IF/device")")
echo 1 >"/proc/irq/$(irq "$dev-input.0")/smp_affinity_list"
echo 1 >"/proc/irq/$(irq "$dev-output.0")/smp_affinity_list"
echo 3 >"/proc/irq/$(irq "$dev-input.1")/smp_affinity_list"
echo 3 >"/proc/irq/$(irq "$dev-output.1")/smp_affinity_list"
echo 3 >"/sys/class/net/$IF/queues/tx-0/xps_cpus"
echo c >"/sys/class/net/$IF/queues/tx-1/xps_cpus"
grep "$dev-" /proc/interrupts
