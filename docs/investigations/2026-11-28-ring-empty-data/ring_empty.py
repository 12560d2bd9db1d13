#!/usr/bin/env python3
"""How often each matrix cell leaves the device without a receive buffer:
one boot of ours (with --modopts, e.g. auto_threaded=1), each cell's load
started as bench/matrix.py starts it, ethtool -S read before and after
SECONDS of it.  Per cell, summed over the receive queues: polls,
polls_ring_empty, packets, interrupts and interrupts_busy_cpu, auto_threaded's
trials and switches, and answers/s.  The question: does a flood that
threaded NAPI helps run the ring dry, and do the loads it harms not?

ring_empty.py KERNEL TOPO CELL[,CELL...] OUT --module KO [--seconds S] [--modopts OPTS]
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
from benchlib import matrix as M  # noqa: E402
from benchlib import probe  # noqa: E402

RQ = {"polls": "napi_polls", "ring_empty": "polls_ring_empty", "packets": "packets",
      "irqs": "interrupts", "busy": "interrupts_busy_cpu"}


def counters(g) -> dict[str, int]:
    """The receive queues' counters of RQ, summed, and the device's
    auto_threaded counters."""
    st = net.ethtool_stats(g)
    res = {k: sum(v for n, v in st.items() if re.fullmatch(rf"rx(_queue_)?\d+_{name}", n))
           for k, name in RQ.items()}
    res["trials"] = st.get("threaded_trials", 0)
    res["switches"] = st.get("threaded_switches", 0)
    return res


def main() -> None:
    ap = probe.parser(__doc__, variants=None, seconds=6.0)
    ap.add_argument("--modopts", default="")
    a = ap.parse_args()
    res = []
    v = M.Variant("ours-opts" if a.modopts else "ours", "ours", modopts=a.modopts)
    with probe.booted(a, v.name, "ringempty", variant=v) as g:
        for cname in a.cells.split(","):
            with probe.load(g, cname, probe.ncpu(a)) as client:
                c0, t0 = counters(g), time.monotonic()
                time.sleep(a.seconds)
                c1, t1 = counters(g), time.monotonic()
                lat = client.window() if client else {}
            d = {k: c1[k] - c0[k] for k in c0}
            secs = t1 - t0
            rec = {"cell": cname, "topo": a.topo, "modopts": a.modopts, "seconds": round(secs, 2),
                   **d,
                   "empty_per_s": round(d["ring_empty"] / secs, 1),
                   "empty_share_of_polls": round(d["ring_empty"] / d["polls"], 4) if d["polls"] else None,
                   "packets_per_poll": round(d["packets"] / d["polls"], 2) if d["polls"] else None,
                   "busy_share": round(d["busy"] / d["irqs"], 3) if d["irqs"] else None,
                   "answers_per_s": lat.get("recv") and round(lat["recv"] / secs)}
            res.append(rec)
            print(json.dumps(rec), flush=True)
            probe.save(a.out / f"ring_empty-{a.topo.replace(':', '-')}{'-' + a.modopts if a.modopts else ''}.json", res)
            time.sleep(1.0)


if __name__ == "__main__":
    main()
