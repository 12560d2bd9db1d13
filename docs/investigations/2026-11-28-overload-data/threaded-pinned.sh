#!/bin/sh
# variant setup (bench/matrix.py --ours-b-setup): threaded NAPI, each RX
# NAPI thread (by NAPI id: pair order) pinned to CPU (pair % CPUs), the
# planner's placement on 2 vCPUs / 2 pairs; TX threads (id 0) unpinned
echo 1 > "/sys/class/net/$IF/threaded"
n=$(nproc); i=0
pgrep -a '^napi/' | awk '{k=split($2,a,"-"); if (a[k]+0 > 0) print a[k], $1}' | sort -n |
while read -r _ pid; do taskset -pc $((i % n)) "$pid" >/dev/null; i=$((i+1)); done
pgrep -a '^napi/' | while read -r pid name; do echo "$name $(taskset -pc "$pid")"; done > /tmp/napi-pin.txt
