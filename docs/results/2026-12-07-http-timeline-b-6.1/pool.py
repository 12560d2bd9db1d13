#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Stock and main at low request rates on 6.1, over every run of
2026-12-07 with these cells (the paced HTTP cells from their first run on,
ol-udp-300 from the day's first): each boot's median over the four
models, then
  - unpaired: the loss check on the boots (as the matrix judges a cell);
  - paired: a repeat's main boot against the stock boot right before it
    (the runs interleave stock, main per repeat, so a pair shares the
    host's state): report.paired_ratio_interval(), the Hodges-Lehmann
    estimate and exact interval (95%) and Wilcoxon's signed-rank p.
Run from the repository's top:
python3 docs/results/2026-12-07-http-timeline-b-6.1/pool.py"""
import json
import statistics
import sys
from collections import defaultdict

sys.path[:0] = ["bench", "tests"]
from benchlib import report as R  # noqa: E402

DAY = ("2026-12-07-unscreened-6.1", "2026-12-07-ol-low-rate-6.1", "2026-12-07-http-paced-6.1",
       "2026-12-07-http-stocklike-6.1", "2026-12-07-http-affinity-off-6.1",
       "2026-12-07-http-timeline-6.1", "2026-12-07-http-timeline-b-6.1", "2026-12-07-screen-6.1")
CELLS = ("http-300", "http-1000", "ol-udp-300")


print("| cell | metric | boots a side | main | stock | unpaired: main / stock (interval) | verdict "
      "| pairs | paired: main / stock (interval) | Wilcoxon p |")
print("|---|---|---|---|---|---|---|---|---|---|")
for cell in CELLS:
    for metric in ("p50_us", "p99_us"):
        per = defaultdict(list)
        pairs = []
        for run in DAY:
            try:
                res = json.load(open(f"docs/results/{run}/results.json"))
            except FileNotFoundError:
                continue
            last_stock = None
            for b in res["boots"]:
                vals = [r["metrics"][metric] for r in b["runs"]
                        if r["workload"] == cell and r.get("metrics") and r["metrics"].get(metric)]
                if not vals or b["variant"] not in ("stock", "ours"):
                    continue
                v = statistics.median(vals)
                per[b["variant"]].append(v)
                if b["variant"] == "stock":
                    last_stock = (b["rep"], v)
                elif last_stock and last_stock[0] == b["rep"]:
                    pairs.append((v, last_stock[1]))
        if not per["ours"]:
            continue
        v = R.loss_verdict(per["ours"], per["stock"], False)
        pr = R.paired_ratio_interval(pairs)
        print(f"| {cell} | {metric} | {len(per['ours'])} | {statistics.median(per['ours']):.0f} "
              f"| {statistics.median(per['stock']):.0f} | {v['est']:.2f} ({v['lo']:.2f}-{v['hi']:.2f}) "
              f"| {v['verdict']} | {pr['n']} | {pr['est']:.2f} ({pr['lo']:.2f}-{pr['hi']:.2f}) "
              f"| {pr['p']:.3f} |")
