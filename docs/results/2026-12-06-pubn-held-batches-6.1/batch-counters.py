#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Held-batch counters of a bench/matrix.py run with --guest-stats whose
modules carry diag-batch-counters.patch: per variant and cell, the median
over the boots of (summed over the TX queues and the four models' windows)
packets sent, batches ended by the waiting rule and by the flush timer,
the packets held in them and their mean hold.

  batch-counters.py RESULTS.json
"""
import collections
import json
import statistics
import sys

r = json.load(open(sys.argv[1]))
rows = collections.defaultdict(list)
for b in r["boots"]:
    for cell in sorted({w["workload"] for w in b["runs"]}):
        agg = collections.Counter()
        for w in b["runs"]:
            if w["workload"] != cell or not w.get("ok"):
                continue
            for k, v in w["window"].get("guest_stats", {}).items():
                if k.startswith("tx_queue_"):
                    agg[k.split("_", 3)[3]] += v
        if agg["packets"]:
            rows[(cell, b["variant"])].append(agg)


def med(xs):
    return statistics.median(xs) if xs else 0


print("| cell | variant | boots | packets | waited batches | their packets | mean hold us "
      "| timer batches | their packets | mean hold us |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (cell, var), aggs in sorted(rows.items()):
    if var == "stock":
        continue
    def m(k):
        return med([a[k] for a in aggs])
    wk, tf = m("waiting_kicks"), m("timer_flushes")
    wh = med([a["d_wk_hold_us"] / a["waiting_kicks"] for a in aggs if a["waiting_kicks"]])
    th = med([a["d_tf_hold_us"] / a["timer_flushes"] for a in aggs if a["timer_flushes"]])
    print(f"| {cell} | {var} | {len(aggs)} | {m('packets'):.0f} | {wk:.0f} | {m('d_wk_pkts'):.0f} "
          f"| {wh:.0f} | {tf:.0f} | {m('d_tf_pkts'):.0f} | {th:.0f} |")
