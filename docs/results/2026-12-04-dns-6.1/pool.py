#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Pool the DNS runs of this directory: per topology, cell and variant the
dnsperf mean latency of every boot, the loss check of each variant against
stock (bench/benchlib/report.py) and the guest's queue stops.

    python3 docs/results/2026-12-04-dns-6.1/pool.py
"""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here.parents[2] / "bench"))
from benchlib import report as R  # noqa: E402

runs = defaultdict(list)
for d in sorted(here.glob("run*/results.json")):
    res = json.loads(d.read_text())
    vb = [v for v in res["config"]["variants"] if v["name"] == "ours-b"]
    label = " ".join(vb[0]["coalesce"]) or vb[0]["modopts"] if vb else ""
    for b in res["boots"]:
        var = b["variant"]
        if var == "ours-b":
            var = f"ours-b ({label})"
        for r in b["runs"]:
            if not r.get("ok"):
                continue
            gs = r["window"].get("guest_stats", {})
            runs[(str(b["topology"]), r["workload"], var)].append({
                "run": d.parent.name, "mean_us": r["load"]["mean_us"], "lost": r["load"].get("lost_pct"),
                "exits": r["metrics"]["exits_per_unit"],
                "stops": sum(v for k, v in gs.items() if k.endswith("queue_stops"))})

print("| topology | cell | variant | boots | mean latency per boot (us) | median | exits/query (median) "
      "| queue stops per boot | / stock: estimate, interval, verdict |")
print("|---|---|---|---|---|---|---|---|---|")
for key in sorted(runs):
    topo, cell, var = key
    xs = runs[key]
    vals = [x["mean_us"] for x in xs]
    check = "-"
    if not var.startswith("stock"):
        st = [x["mean_us"] for x in runs.get((topo, cell, "stock"), [])]
        v = R.loss_verdict(vals, st, False)
        if v:
            check = (f"{v['est']:.2f}, {v['lo']:.2f}-{v['hi']:.2f} ({v['level']:.1%}), {v['verdict']}, "
                     f"{v['runs_needed']} boots a side to decide")
    stops = ", ".join(str(x["stops"]) for x in xs) if not var.startswith("stock") else "(no counter)"
    print(f"| {topo} | {cell} | {var} | {len(xs)} | {', '.join(f'{v:.0f}' for v in vals)} "
          f"| {statistics.median(vals):.0f} | {statistics.median(x['exits'] for x in xs):.2f} | {stops} | {check} |")
