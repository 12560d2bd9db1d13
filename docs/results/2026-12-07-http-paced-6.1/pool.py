#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Stock and main over the three runs of 2026-12-07 with the paced HTTP
cells (12 boots a side), and over the four runs of that day with
ol-udp-300 (16): each boot's median over the four models, then the loss
check on the boots.
Run from the repository's top: python3 docs/results/2026-12-07-http-paced-6.1/pool.py"""
import json
import statistics
import sys
from collections import defaultdict

sys.path[:0] = ["bench", "tests"]
from benchlib import report as R  # noqa: E402

HTTP_RUNS = ("2026-12-07-http-paced-6.1", "2026-12-07-http-stocklike-6.1",
             "2026-12-07-http-affinity-off-6.1")
RUNS = {"http-300": HTTP_RUNS, "http-1000": HTTP_RUNS,
        "ol-udp-300": ("2026-12-07-unscreened-6.1", "2026-12-07-ol-low-rate-6.1",
                       "2026-12-07-http-paced-6.1", "2026-12-07-http-stocklike-6.1")}
print("| cell | metric | boots a side | main | stock | main / stock (interval, coverage) | p | verdict |")
print("|---|---|---|---|---|---|---|---|")
for cell, runs in RUNS.items():
    for metric in ("p50_us", "p99_us"):
        per = defaultdict(list)
        for run in runs:
            res = json.load(open(f"docs/results/{run}/results.json"))
            for b in res["boots"]:
                vals = [r["metrics"][metric] for r in b["runs"]
                        if r["workload"] == cell and r.get("metrics")]
                if vals and b["variant"] in ("stock", "ours"):
                    per[b["variant"]].append(statistics.median(vals))
        if not per["ours"]:
            continue
        v = R.loss_verdict(per["ours"], per["stock"], False)
        print(f"| {cell} | {metric} | {len(per['ours'])} | {statistics.median(per['ours']):.0f} "
              f"| {statistics.median(per['stock']):.0f} | {v['est']:.2f} ({v['lo']:.2f}-{v['hi']:.2f}, "
              f"{v['level']:.1%}) | {R.mann_whitney_p(per['stock'], per['ours']):.3f} | {v['verdict']} |")
