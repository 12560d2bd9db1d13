#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""pubn-1400-3000 windows by variant: p99 against the packets the guest
sent and the receive interrupts it took (ethtool -S, --guest-stats), and
the held batches that went to the waiting rule or the timer.  Usage:
late-windows.py RUNDIR"""
import collections
import json
import re
import statistics as st
import sys

d = json.load(open(f"{sys.argv[1]}/results.json"))
rows = collections.defaultdict(list)
for b in d["boots"]:
    for r in b["runs"]:
        if r["workload"] != "pubn-1400-3000":
            continue
        agg = collections.Counter()
        for k, v in (r["window"].get("guest_stats") or {}).items():
            m = re.match(r"(tx|rx)_queue_\d+_(\w+)$", k)
            if m and isinstance(v, (int, float)):
                agg[f"{m.group(1)}.{m.group(2)}"] += v
        rows[b["variant"]].append((r["metrics"]["p99_us"], agg))


def rank(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    out = [0.0] * len(xs)
    for pos, i in enumerate(order):
        out[i] = pos
    return out


def spearman(a, b):
    ra, rb = rank(a), rank(b)
    ma, mb = st.mean(ra), st.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    return cov / (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5


print("| variant | windows | p99 > 2 ms | their median packets sent | the others' | "
      "Spearman p99 ~ packets sent | p99 ~ held batches (waited + timer) | "
      "p99 ~ share released at send |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for v, xs in sorted(rows.items()):
    p99 = [x[0] for x in xs]
    sent = [x[1]["tx.packets"] for x in xs]
    held = [x[1]["tx.waiting_kicks"] + x[1]["tx.timer_flushes"] for x in xs]
    rel = [x[1]["tx.released_at_send"] / max(x[1]["tx.packets"], 1) for x in xs]
    hi = [s for p, s in zip(p99, sent) if p > 2000]
    lo = [s for p, s in zip(p99, sent) if p <= 2000]
    print(f"| {v} | {len(xs)} | {len(hi)} | {st.median(hi) if hi else '-'} | "
          f"{st.median(lo)} | {spearman(p99, sent):.2f} | "
          f"{spearman(p99, held) if any(held) else float('nan'):.2f} | "
          f"{spearman(p99, rel) if any(rel) else float('nan'):.2f} |")
