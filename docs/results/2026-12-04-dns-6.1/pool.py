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

# This directory's runs, and the dns-1000 cells of two A/Bs run beside them.
RESULTS = sorted(here.glob("run*/results.json")) + [
    here.parent / "2026-12-04-ab-split-txirq-6.1" / "results.json",
    here.parent / "2026-12-04-ab-rx-poll-order-6.1" / "results.json"]


def ours_b_label(variants: list, run: str) -> str:
    """What ours-b changed (settings, options; a guest script or another
    module: see the run's README)."""
    vb = [v for v in variants if v["name"] == "ours-b"]
    if not vb:
        return ""
    v = vb[0]
    parts = [" ".join(v["coalesce"]), v["modopts"],
             "guest setup script" if v.get("setup") else "",
             "other module" if v.get("module") else ""]
    label = ", ".join(p for p in parts if p)
    return f"{label} [{run}]" if run.startswith("2026") else label


runs = defaultdict(list)
for d in RESULTS:
    res = json.loads(d.read_text())
    label = ours_b_label(res["config"]["variants"], d.parent.name)
    for b in res["boots"]:
        var = b["variant"]
        if var == "ours-b":
            var = f"ours-b ({label})"
        for r in b["runs"]:
            if not r.get("ok") or not r["workload"].startswith("dns-"):
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
