#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host time per packet of a few functions, per boot, from the two
`bench/insn-profile.py --count time` runs of this directory.

    python3 docs/results/2026-12-04-dns-6.1/profile-per-boot.py
"""
import json
from pathlib import Path

here = Path(__file__).resolve().parent
FUNCS = ("native_queued_spin_lock_slowpath", "__default_send_IPI_dest_field", "__run_timers",
         "native_safe_halt")
print("| run | variant | " + " | ".join(f"`{f}` ns/packet" for f in FUNCS) + " |")
print("|---|---|" + "---|" * len(FUNCS))
for run in ("profile-time", "profile-time-trylock"):
    res = json.loads((here / run / "results.json").read_text())
    for b in res["boots"]:
        for s in b["spans"]:
            pk = s["tap"]["guest_tx_packets"] + s["tap"]["guest_rx_packets"]
            print(f"| {run} | {b['variant']} | "
                  + " | ".join(f"{s['insns'].get(f, 0) / pk:.0f}" for f in FUNCS) + " |")
