#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Ours on 4 vCPUs with 2 queue pairs, taking a TX interrupt per burst
# (tx-usecs-irq 0) with the TX vectors moved to CPUs 2 and 3, the CPUs
# without a receive interrupt, as the stock driver's TX interrupts land
# on CPUs without one.  For A/Bs of the IPIs:
#   bench/bench.py --topology 4:2 --workloads rr16 \
#       --ours-setup bench/setups/tx-irq-on-2-3.sh
# IF is the interface (set by bench.py).
set -e
irq() { awk -v q="$1" '$NF == q { sub(":", "", $1); print $1 }' /proc/interrupts; }
dev=$(basename "$(readlink -f "/sys/class/net/$IF/device")")
ethtool -C "$IF" tx-usecs-irq 0
echo 2 >"/proc/irq/$(irq "$dev-output.0")/smp_affinity_list"
echo 3 >"/proc/irq/$(irq "$dev-output.1")/smp_affinity_list"
grep "$dev-" /proc/interrupts
