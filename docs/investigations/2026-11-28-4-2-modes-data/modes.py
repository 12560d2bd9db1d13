#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Per window of one cell: throughput and how many vCPUs carry the traffic.

A vCPU carries traffic when its device interrupts plus kicks are at least
5% of the window's total.  Usage: modes.py results.json CELL [TOPOLOGY]
"""
import json
import statistics
import sys

d = json.load(open(sys.argv[1]))
cell = sys.argv[2]
topo = sys.argv[3] if len(sys.argv) > 3 else None
by = {}
for b in d['boots']:
    if topo and str(b['topology']) != topo:
        continue
    for r in b['runs']:
        if r.get('workload') != cell or not r.get('ok'):
            continue
        w = r['window']
        v = r['exitcost']['vcpus']
        tps = w['tap']['guest_tx_packets'] / w['seconds']
        load = {c: v[c].get('irq', 0) + v[c].get('kick', 0) for c in v}
        tot = sum(load.values()) or 1
        active = sum(1 for x in load.values() if x >= 0.05 * tot)
        ipi = r['exitcost']['kinds'].get('ipi', 0) / max(1, w['tap']['guest_tx_packets'])
        print(f"{b['variant']:8} rep {b['rep']} {r['model']:9} pkts/s {tps:6.0f} "
              f"active vCPUs {active}  IPIs/pkt {ipi:.3f}  "
              f"irq+kick per vCPU {'/'.join(str(load[c]) for c in sorted(load))}")
        by.setdefault((b['variant'], active), []).append(tps)
print()
for (var, act), xs in sorted(by.items()):
    print(f"{var:8} {act} active vCPUs: {len(xs):2} windows, pkts/s median "
          f"{statistics.median(xs):.0f} (range {min(xs):.0f}-{max(xs):.0f})")
