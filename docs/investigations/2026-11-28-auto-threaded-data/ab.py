#!/usr/bin/env python3
"""Two variants of a bench/matrix.py run side by side, per cell and model:
each window's throughput (transactions/s or Mbit/s), the ratio of the
medians (B / A), and the medians of EXITS, IPIs per unit and p99 (or the
mean for dns and kv).

ab.py RESULTS.json A B
"""
import json
import statistics as st
import sys


def main() -> None:
    path, a_name, b_name = sys.argv[1:4]
    r = json.load(open(path))
    agg: dict = {}
    for boot in r["boots"]:
        for x in boot["runs"]:
            if not x.get("ok"):
                continue
            m = x["metrics"]
            thr = m.get("tps") or m.get("mbps")
            lat = m.get("p99_us") or m.get("mean_us")
            agg.setdefault((x["workload"], x["model"]), {}).setdefault(boot["variant"], []).append(
                (thr, m.get("exits_per_unit"), m.get("ipis_per_unit"), lat))

    def med(v, i):
        xs = [t[i] for t in v if t[i] is not None]
        return st.median(xs) if xs else float("nan")

    print(f"{'cell':<14} {'model':<6} {a_name:>16} {b_name:>16} {'B/A':>5}  "
          "EXITS A/B   IPIs A/B      p99|mean us A/B")
    for key in sorted(agg):
        d = agg[key]
        if a_name not in d or b_name not in d:
            continue
        a, b = d[a_name], d[b_name]
        ratio = med(b, 0) / med(a, 0) if med(a, 0) else float("nan")
        print(f"{key[0]:<14} {key[1]:<6} {' '.join(f'{t[0]:.0f}' for t in a):>16} "
              f"{' '.join(f'{t[0]:.0f}' for t in b):>16} {ratio:5.2f}  "
              f"{med(a, 1):.2f}/{med(b, 1):.2f}  {med(a, 2):.3f}/{med(b, 2):.3f}  "
              f"{med(a, 3):.0f}/{med(b, 3):.0f}")


if __name__ == "__main__":
    main()
