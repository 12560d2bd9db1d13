#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Open-loop windows of bench/matrix.py results: per variant and cell, how
many windows had a p99 of 5 ms or more, and for each window the answers
that belonged to messages sent before it opened (recv - sent with the old
vnet-load, "carried" with the new one) next to its largest delay.

    edge-stalls.py DIR [DIR ...]
"""
import json
import sys
from collections import defaultdict


def main() -> None:
    for d in sys.argv[1:]:
        r = json.load(open(f"{d}/results.json"))
        rows = defaultdict(list)
        for b in r["boots"]:
            for x in b["runs"]:
                if not x["workload"].startswith("ol-") or "load" not in x:
                    continue
                ld = x["load"]
                early = ld["carried"] if "carried" in ld else ld["recv"] - ld["sent"]
                rows[(x["workload"], b["variant"])].append(
                    (x["metrics"]["p99_us"] / 1000, ld["max_us"] / 1000, early))
        print(f"## {d}\n")
        print("| cell | variant | windows | p99 >= 5 ms | median p99 ms | worst p99 ms "
              "| early answers, max ms of the 3 worst windows |")
        print("|---|---|---|---|---|---|---|")
        for (cell, var), w in sorted(rows.items()):
            p99 = sorted(x[0] for x in w)
            worst = sorted(w, reverse=True)[:3]
            print(f"| {cell} | {var} | {len(w)} | {sum(x >= 5 for x in p99)} "
                  f"| {p99[len(p99) // 2]:.1f} | {p99[-1]:.1f} | "
                  + ", ".join(f"{e} / {m:.0f}" for _, m, e in worst) + " |")
        print()


if __name__ == "__main__":
    main()
