#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host time per packet (ns, per boot; packets = the guest's tap packets,
sent and received, of the span) by where it went, from this directory's
`bench/insn-profile.py --count time` run: stock, ours (defaults) and
ours-b (ours with stock's notification behaviour).

    python3 docs/results/2026-12-04-dns-6.1/profile-time-stocklike/breakdown.py
"""
import json
import statistics
from pathlib import Path

here = Path(__file__).resolve().parent
res = json.loads((here / "results.json").read_text())
GROUPS = {
    "busy (all but halt)": lambda f: f != "native_safe_halt",
    "virtio_net module": lambda f: f.endswith("[virtio_net]"),
    "virtio_ring": lambda f: f.endswith("[virtio_ring]"),
    "user": lambda f: f == "[user]",
    "read_hpet": lambda f: f == "read_hpet",
    "IPI sending": lambda f: f == "__default_send_IPI_dest_field",
    "spinlock slow path": lambda f: f == "native_queued_spin_lock_slowpath",
}
print("| variant | mean latency us | " + " | ".join(GROUPS) + " |")
print("|---|---|" + "---|" * len(GROUPS))
by = {}
for b in res["boots"]:
    for s in b["spans"]:
        pk = s["tap"]["guest_tx_packets"] + s["tap"]["guest_rx_packets"]
        cols = [sum(v for f, v in s["insns"].items() if pred(f)) / pk
                for pred in GROUPS.values()]
        print(f"| {b['variant']} | {s['window_metrics'].get('mean_us')} | "
              + " | ".join(f"{c:.0f}" for c in cols) + " |")
        for f, v in s["insns"].items():
            if f.endswith("[virtio_net]"):
                by.setdefault(f, {}).setdefault(b["variant"], []).append(v / pk)
print()
print("The driver's functions, median over the boots of each variant:")
print()


def med(xs):
    return statistics.median(xs) if xs else 0


names = ("stock", "ours", "ours-b")
rows = sorted(by.items(), key=lambda kv: -max(med(kv[1].get(v, [])) for v in names))
print("| function | " + " | ".join(names) + " |")
print("|---|" + "---|" * len(names))
for f, vs in rows[:25]:
    print(f"| `{f}` | " + " | ".join(f"{med(vs.get(v, [])):.0f}" for v in names) + " |")
