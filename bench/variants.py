#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every variant of a matrix run side by side, ours-b included (the
heat map compares ours with stock only): per topology and cell, each
variant's throughput over all its windows (min-max and median) and
median p99, or with --boots one line per window with where the
interrupts went.

  bench/variants.py DIR/results.json [...]                 # the summary
  bench/variants.py --cells mixed,mixed-c1 --boots DIR/results.json

Throughput is Mbit/s for streams and the mixed cells' bulk flow, else
transactions or messages per second.  Per window (--boots): the model,
p50/p99 in us, device interrupts per vCPU (as the exit-cost plugin
counted them), HLT exits per vCPU, all exits and IPIs per unit.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))                 # benchlib
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # harness (benchlib.matrix)
from benchlib import heatmap as H  # noqa: E402
from benchlib import matrix as M  # noqa: E402


def throughput(cell: str, m: dict) -> float:
    c = M.CELLS.get(cell)
    return (m.get(H.perf_key(c)) if c else None) or 0.0


def per_vcpu(ec: dict, kind: str) -> str:
    v = ec.get("vcpus", {})
    return "/".join(str(v.get(str(i), {}).get(kind, 0)) for i in range(len(v)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", help="results.json of bench/matrix.py runs")
    ap.add_argument("--cells", help="comma separated cell names (default: all)")
    ap.add_argument("--boots", action="store_true", help="one line per window")
    a = ap.parse_args(argv)
    want = set(a.cells.split(",")) if a.cells else None
    rows = collections.defaultdict(list)
    for path in a.results:
        # the heat map's loader: metrics recomputed from the raw windows
        data = H.load(Path(path).parent)
        for b in data["boots"]:
            for r in b["runs"]:
                cell = r["workload"]
                if not r.get("ok") or (want and cell not in want):
                    continue
                rows[(str(b["topology"]), cell, b["variant"])].append((b["rep"], r))
    if not rows:
        print("no windows matched", file=sys.stderr)
        return 1
    if a.boots:
        for key in sorted(rows):
            print(*key)
            for rep, r in rows[key]:
                m, ec = r["metrics"], r.get("exitcost", {})
                print(f"  rep {rep} {r['model']:<9} {throughput(key[1], m):8.0f}"
                      f"  p50 {m.get('p50_us') or 0:6.0f} p99 {m.get('p99_us') or 0:6.0f}"
                      f"  irq {per_vcpu(ec, 'irq')}  hlt {per_vcpu(ec, 'hlt')}"
                      f"  exits/u {m.get('exits_per_unit') or 0:.2f} ipis/u {m.get('ipis_per_unit') or 0:.3f}")
        return 0
    variants = sorted({k[2] for k in rows})
    print("| topology | cell | " + " | ".join(f"{v}: thr min-max (median), p99 us" for v in variants) + " |")
    print("|---|---|" + "---|" * len(variants))
    for topo, cell in sorted({k[:2] for k in rows}):
        out = []
        for v in variants:
            x = rows.get((topo, cell, v))
            if not x:
                out.append("-")
                continue
            thr = [throughput(cell, r["metrics"]) for _, r in x]
            p99 = [r["metrics"].get("p99_us") or 0 for _, r in x]
            s = f"{min(thr):.0f}-{max(thr):.0f} ({statistics.median(thr):.0f})"
            if any(p99):
                s += f", {statistics.median(p99):.0f}"
            out.append(s)
        print(f"| {topo} | {cell} | " + " | ".join(out) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
