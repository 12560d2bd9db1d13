#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Per variant and window of the boot (0: the first traffic after boot,
1: the next), the medians over the boots of dnsperf's mean, p50 and p99,
each boot's mean and ours' queue stops.  Usage: cold.py RUNDIR..."""
import json
import statistics as st
import sys

for path in sys.argv[1:]:
    d = json.load(open(f"{path}/results.json"))
    res = {}
    for b in d["boots"]:
        for i, r in enumerate(b["runs"]):
            m = r.get("metrics", {})
            gs = r["window"].get("guest_stats") or {}
            stops = sum(v for k, v in gs.items() if k.endswith("queue_stops"))
            res.setdefault((b["variant"], i), []).append(
                (m["mean_us"], m["p50_us"], m["p99_us"], stops))
    print(f"## {path}\n")
    print("| variant | window | mean | p50 | p99 | means per boot | queue stops per boot |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (v, i), xs in sorted(res.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        med = [round(st.median(x[j] for x in xs)) for j in range(3)]
        print(f"| {v} | {'first' if i == 0 else 'second'} | {med[0]} | {med[1]} | {med[2]} | "
              f"{' '.join(str(round(x[0])) for x in xs)} | {' '.join(str(x[3]) for x in xs)} |")
    print()
