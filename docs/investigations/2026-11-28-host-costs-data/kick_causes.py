#!/usr/bin/env python3
"""Why a transmit stream's notifications come when they do: ours' kick
counters per send queue (ethtool -S: kicks and their causes) over SECONDS
of each stream cell, one boot, each cell's load started as
bench/matrix.py starts it, and the tap's bytes per transmitted packet.

kick_causes.py KERNEL TOPO CELL[,CELL...] OUT --module KO
"""
from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # the repository root
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from harness import net  # noqa: E402
from benchlib import probe  # noqa: E402
from benchlib import workloads as B  # noqa: E402

KEYS = ("packets", "kicks", "kicks_held", "kicks_suppressed", "timer_flushes", "poll_flushes",
        "batch_kicks", "forced_kicks", "released_at_send", "reclaim_batches",
        "reclaim_deadlines", "queue_stops", "interrupts")


def sq_stats(g) -> dict[str, dict[str, int]]:
    res: dict[str, dict[str, int]] = {}
    for name, v in net.ethtool_stats(g).items():
        m = re.match(r"tx_queue_(\d+)_(.+)$", name) or re.match(r"tx(\d+)_(.+)$", name)
        if m and m.group(2) in KEYS:
            res.setdefault(m.group(1), {})[m.group(2)] = v
    return res


def main() -> None:
    a = probe.parser(__doc__, variants="ours").parse_args()
    res = []
    for _rep, vname in probe.boots(a):
        with probe.booted(a, vname, "kick-causes", servers=False) as g:
            for cname in a.cells.split(","):
                with probe.load(g, cname, probe.ncpu(a), ramp=2.0):
                    s0, t0 = sq_stats(g), B.tap_counters(g.proc.pid, g.nics[0].tap)
                    time.sleep(a.seconds)
                    s1, t1 = sq_stats(g), B.tap_counters(g.proc.pid, g.nics[0].tap)
                d = {q: {k: s1[q].get(k, 0) - s0[q].get(k, 0) for k in s1[q]} for q in s1}
                tx = max(1, t1["guest_tx_packets"] - t0["guest_tx_packets"])
                rec = {"variant": vname, "cell": cname, "seconds": a.seconds,
                       "tap_tx_bytes_per_packet": round((t1["guest_tx_bytes"] - t0["guest_tx_bytes"]) / tx),
                       "queues": d}
                res.append(rec)
                print(json.dumps(rec), flush=True)
                time.sleep(1.0)
        probe.save(a.out / "kick_causes.json", res)


if __name__ == "__main__":
    main()
