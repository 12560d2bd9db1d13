#!/usr/bin/env python3
"""Within one boot, switch the experiment build's parameter window
by window while a transmit stream runs, and count per window what the tap
saw and how many packets were released as sparse (ethtool -S).

stream_ab.py KERNEL TOPO CELL[,CELL] OUT --module KO [--rounds N] [--boots N]
             [--seconds S] [--param exp_release] [--settings main=0,both=1]
(KO: the release at send + exp-release-modes.patch)
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # the repository root
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from harness import Guest, Nic, VMConfig  # noqa: E402
from harness import net  # noqa: E402
from benchlib import workloads as B  # noqa: E402
from benchlib import matrix as M  # noqa: E402
import bench as BC  # noqa: E402

PARAMS = "/sys/module/virtio_net/parameters"


def tx_counts(g) -> dict[str, int]:
    st = net.ethtool_stats(g)
    out = {"packets": 0, "released_at_send": 0, "kicks": 0}
    for k, v in st.items():
        m = re.match(r"tx(?:_queue_)?(\d+)_(packets|released_at_send|kicks)$", k)
        if m:
            out[m.group(2)] += v
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernel")
    ap.add_argument("topo")
    ap.add_argument("cells")
    ap.add_argument("out", type=Path)
    ap.add_argument("--module", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--boots", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--param", default="exp_release")
    ap.add_argument("--settings", default="main=0,both=1")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    ncpu, nq = B.topo_parse(a.topo)
    values = dict(x.split("=", 1) for x in a.settings.split(","))
    res = []
    for boot in range(a.boots):
        cfg = VMConfig(smp=ncpu, memory=1024, nics=(Nic(queues=nq),),
                       trace_events=BC.TRACE_EVENTS)
        g = Guest(a.kernel, cfg, driver="ours", module=a.module, name="stream-ab")
        try:
            g.boot()
            for cname in a.cells.split(","):
                w = M.CELLS[cname].workload()
                B.start_servers(g, w, ncpu)
                g.run("rm -f /tmp/bench-w*", timeout=30, quiet=True)
                bg = g.run_bg(B.load_script(g, w, 3600, ncpu))
                time.sleep(3.0)
                for rnd in range(a.rounds):
                    for sname, val in values.items():
                        g.run_ok(f"echo {val} > {PARAMS}/{a.param}", timeout=30)
                        time.sleep(0.5)
                        c0 = tx_counts(g)
                        t0 = B.tap_counters(g.proc.pid, g.nics[0].tap)
                        ts = time.monotonic()
                        time.sleep(a.seconds)
                        t1 = B.tap_counters(g.proc.pid, g.nics[0].tap)
                        dt = time.monotonic() - ts
                        c1 = tx_counts(g)
                        d = {k: c1[k] - c0[k] for k in c0}
                        mbit = (t1["guest_tx_bytes"] - t0["guest_tx_bytes"]) * 8e-6 / dt
                        pk = max(d["packets"], 1)
                        rec = {"boot": boot, "cell": cname, "round": rnd, "setting": sname,
                               "tx_mbit": round(mbit, 1), **d}
                        res.append(rec)
                        print(f"{boot} {cname:<11} r{rnd} {sname:<5} {mbit:7.1f} Mbit/s "
                              f"pkts {d['packets']:>7} kicks/pkt {d['kicks'] / pk:.3f} "
                              f"released/pkt {d['released_at_send'] / pk:.3f}", flush=True)
                g.run("killall -INT iperf3 2>/dev/null; true", timeout=30, quiet=True)
                time.sleep(1)
                g.run("killall -KILL iperf3 2>/dev/null; true", timeout=30, quiet=True)
        finally:
            g.shutdown()
        (a.out / "windows.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
