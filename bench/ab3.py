#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Three-way table of a matrix A/B run (variants stock, ours, ours-b).

bench/matrix.py's report compares ours with stock only; an A/B of a
change (--variants stock,ours,ours-b --ours-b-module NEW.ko) also wants
the change against stock and against ours.  For every cell and model:
the medians of each variant, ours-b / stock and ours-b / ours with the
two-sided Mann-Whitney p over the repeats (`*` below 0.05; 4 repeats a
side reach 0.029 at best, 3 only 0.1), the loss check of ours-b against
stock (the rank interval of the ratio and its verdict: "loss" shown,
a loss above 5% excluded "ok", or "open"; see docs/benchmarks.md), and
exits per unit.

  bench/ab3.py RESULT_DIR [--names stock,main,new] > table.md
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from benchlib import heatmap as H  # noqa: E402

VARIANTS = ("stock", "ours", "ours-b")


def fmt(x) -> str:
    if x is None:
        return "-"
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def ratio(d: dict) -> str:
    if not d:
        return "-"
    if d.get("p") is None:
        return f"{d['ratio']:.2f}"
    star = "*" if d["p"] < H.SIG else ""
    return f"{d['ratio']:.2f}{star} (p {d['p']:.3f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("result_dir")
    ap.add_argument("--names", default="stock,ours,ours-b",
                    help="column titles of stock, ours and ours-b")
    a = ap.parse_args()
    names = a.names.split(",")
    if len(names) != 3:
        ap.error("--names wants three names")
    summ = H.summarize(H.load(Path(a.result_dir)))
    print(f"| topology | cell | model | metric | {names[0]} | {names[1]} | {names[2]} "
          f"| {names[2]} / {names[0]} | {names[2]} / {names[1]} "
          f"| {names[2]} / {names[0]}: interval, loss check "
          f"| exits/unit {', '.join(names)} |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (topo, cell, model), ent in summ.items():
        if not all(v in ent["v"] for v in VARIANTS):
            continue
        c = ent["cell"]
        keys = [H.perf_key(c)]
        if H.rate_limited(c):
            keys.append("p50_us")
        if H.lat_key(c):
            keys.append(H.lat_key(c))
        exits = ", ".join(fmt(H.med(ent, v, "exits_per_unit")) for v in VARIANTS)
        for k in keys:
            med = " | ".join(fmt(H.med(ent, v, k)) for v in VARIANTS)
            lc = H.loss_check(ent, k, k in ("tps", "mbps"), "ours-b", "stock")
            check = f"{lc['lo']:.2f}-{lc['hi']:.2f} {lc['verdict']}" if lc else "-"
            print(f"| {topo} | {cell} | {model} | {k} | {med} "
                  f"| {ratio(H.compare(ent, k, 'ours-b', 'stock'))} "
                  f"| {ratio(H.compare(ent, k, 'ours-b', 'ours'))} | {check} | {exits} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
