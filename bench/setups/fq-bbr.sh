#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A guest tuned as many cloud images and servers are: the fq qdisc on
# every transmit queue (per-flow queues, TCP pacing by departure time)
# and the BBR congestion control.  fq releases a paced flow's packets
# from its timer, in softirq context, at the flow's rate.  For every
# driver of a run:
#   bench/matrix.py --setup bench/setups/fq-bbr.sh --cells ... --out DIR
# IF is the interface (set by the benchmark).
set -e
vnet modprobe sch_fq
vnet modprobe tcp_bbr
echo fq >/proc/sys/net/core/default_qdisc
echo bbr >/proc/sys/net/ipv4/tcp_congestion_control
# an mq root with an fq child per transmit queue (the root the kernel
# made at boot has a handle of zero and cannot be deleted)
tc=/usr/sbin/tc
n=0
for q in "/sys/class/net/$IF"/queues/tx-*; do
	[ -e "$q" ] && n=$((n + 1))
done
$tc qdisc replace dev "$IF" root handle 1: mq
i=1
while [ "$i" -le "$n" ]; do
	$tc qdisc replace dev "$IF" parent "1:$(printf %x "$i")" fq
	i=$((i + 1))
done
$tc qdisc show dev "$IF"
[ "$($tc qdisc show dev "$IF" | grep -c "qdisc fq ")" -eq "$n" ] ||
	{ echo "fq is not on every queue of $IF" >&2; exit 1; }
