#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Receive-stream cells of a matrix run: per variant, the medians over all
windows of throughput, bytes per packet the guest received (the host's
GSO packets as the tap hands them over), packets per second and RX
interrupts per received packet.

  rx_packet_sizes.py docs/results/2026-11-27-full-6.1/results.json
"""
import json
import statistics
import sys

d = json.load(open(sys.argv[1]))
rows = {}
for b in d["boots"]:
    for r in b["runs"]:
        if not r.get("ok") or not r["workload"].startswith("rx-"):
            continue
        w = r["window"]
        n = max(1, w["tap"]["guest_rx_packets"])
        m = r["metrics"]
        irq = sum(v for q, v in r["trace"]["notify"].items() if q.isdigit() and int(q) % 2 == 0)
        rows.setdefault((r["workload"], b["variant"]), []).append(
            (m.get("mbps") or m.get("throughput") or 0, w["tap"]["guest_rx_bytes"] / n,
             n / w["seconds"], irq / n))
print("| cell | variant | Mbit/s | bytes per packet | packets/s | RX interrupts per packet |")
print("| --- | --- | --- | --- | --- | --- |")
for (cell, var), xs in sorted(rows.items()):
    med = [statistics.median(x[i] for x in xs) for i in range(4)]
    print(f"| {cell} | {var} | {med[0]:.0f} | {med[1]:.0f} | {med[2]:.0f} | {med[3]:.3f} |")
