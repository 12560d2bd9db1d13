#!/usr/bin/env python3
"""Every emulated device access (MMIO and port I/O, QEMU's
memory_region_ops_read/write trace events) per transaction, per variant:
one boot each, a cell's load started as bench/matrix.py starts it, the
host-side trace counted over SECONDS by (kind, region, offset, size).
Under TCG each such access leaves the translated code for the device
model (and takes QEMU's big lock); on KVM each is an exit.

mmio.py KERNEL TOPO CELL[,CELL...] OUT --module KO [--variants stock-notx,ours]
"""
from __future__ import annotations

import collections
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # the repository root
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

import bench as BENCH  # noqa: E402
from benchlib import probe  # noqa: E402


def count(g, since: int) -> collections.Counter:
    c = collections.Counter()
    for ev, f in g.trace_events(since):
        if ev.startswith("memory_region_ops_"):
            c[(ev[len("memory_region_ops_"):], f.get("name", "?"), f.get("addr"), f.get("size"))] += 1
        elif ev.startswith("virtio"):
            c[(ev, "", "", "")] += 1
    return c


def main() -> None:
    a = probe.parser(__doc__).parse_args()
    # variant_guest() takes the trace events from bench.py when it builds the guest
    BENCH.TRACE_EVENTS = BENCH.TRACE_EVENTS + ("memory_region_ops_read", "memory_region_ops_write")
    res = []
    for _rep, vname in probe.boots(a):
        with probe.booted(a, vname, "mmio") as g:
            for cname in a.cells.split(","):
                with probe.load(g, cname, probe.ncpu(a)) as client:
                    off = g.trace_offset()
                    time.sleep(a.seconds)
                    lat = client.window()
                c = count(g, off)
                n = max(1, lat.get("recv") or 1)
                rec = {"variant": vname, "cell": cname, "answers": lat.get("recv"),
                       "p50_us": lat.get("p50_us"),
                       "per_txn": {" ".join(str(x) for x in k): round(v / n, 4)
                                   for k, v in c.most_common(40)}}
                res.append(rec)
                print(json.dumps(rec, indent=1), flush=True)
                time.sleep(1.0)
        probe.save(a.out / "mmio.json", res)


if __name__ == "__main__":
    main()
