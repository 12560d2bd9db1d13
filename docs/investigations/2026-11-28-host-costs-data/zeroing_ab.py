#!/usr/bin/env python3
"""Memory the guest allocates per packet, and what zeroing it costs: per
variant and guest command line (Debian's kernels zero every allocation,
init_on_alloc=1), one boot each, each cell's load started as
bench/matrix.py starts it; over SECONDS the answers, latency and the
guest's /proc/vmstat page allocations per packet (tap packets, both
directions).  Boots alternate variant by variant inside each repeat.

zeroing_ab.py KERNEL TOPO CELL[,CELL...] OUT --module KO [--variants stock-notx,ours]
              [--cmdlines ',init_on_alloc=0'] [--runs N]
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # the repository root
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from benchlib import probe  # noqa: E402
from benchlib import workloads as B  # noqa: E402

VMSTAT = ("pgalloc_normal", "pgalloc_dma32", "pgalloc_movable", "pgfree")


def vmstat(g) -> dict[str, int]:
    out = g.run_ok("cat /proc/vmstat", timeout=30)
    d = dict(ln.split() for ln in out.splitlines() if len(ln.split()) == 2)
    return {k: int(d.get(k, 0)) for k in VMSTAT}


def main() -> None:
    ap = probe.parser(__doc__)
    ap.add_argument("--cmdlines", default=",init_on_alloc=0")
    a = ap.parse_args()
    res = []
    for cmdline in a.cmdlines.split(","):
        for rep, vname in probe.boots(a):
            with probe.booted(a, vname, "zero", cmdline=cmdline) as g:
                for cname in a.cells.split(","):
                    with probe.load(g, cname, probe.ncpu(a)) as client:
                        v0, t0 = vmstat(g), B.tap_counters(g.proc.pid, g.nics[0].tap)
                        time.sleep(a.seconds)
                        v1, t1 = vmstat(g), B.tap_counters(g.proc.pid, g.nics[0].tap)
                        lat = client.window()
                    pk = max(1, (t1["guest_tx_packets"] - t0["guest_tx_packets"]) +
                             (t1["guest_rx_packets"] - t0["guest_rx_packets"]))
                    rec = {"rep": rep, "variant": vname, "cmdline": cmdline, "cell": cname,
                           "answers_per_s": round((lat.get("recv") or 0) / a.seconds),
                           "p50_us": lat.get("p50_us"), "p99_us": lat.get("p99_us"),
                           "packets": pk,
                           "per_packet": {k: round((v1[k] - v0[k]) / pk, 3) for k in VMSTAT}}
                    res.append(rec)
                    print(json.dumps(rec), flush=True)
                    time.sleep(1.0)
            probe.save(a.out / "zeroing.json", res)


if __name__ == "__main__":
    main()
