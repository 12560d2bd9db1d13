#!/usr/bin/env python3
"""Within one boot, switch a module parameter of an experiment build window
by window, so that flow placement and host drift hit every setting alike.

Receive skb layout (the default): main 1631cc8 + layout-ab/exp-rx-layout.patch,
exp_rx_layout 0 = head + buffer as fragment, 1 = whole frame copied when it
fits the head, 2 = skb built around the buffer.

Sparse-packet orphaning: main ec7a6f0 + sparse-orphan/sparse-orphan.patch
with a writable exp_orphan parameter read before vnet_reclaim_orphan() in
vnet_start_xmit(): --param exp_orphan --settings main=0,orphan=1.

layout_ab.py KERNEL TOPO CELL[,CELL] OUT --module KO [--rounds N] [--boots N]
             [--param NAME --settings A=V,B=W] [--drivers stock,ours]
"""
from __future__ import annotations

import argparse
import json
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernel")
    ap.add_argument("topo")
    ap.add_argument("cells")
    ap.add_argument("out", type=Path)
    ap.add_argument("--module", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--boots", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--param", default="exp_rx_layout",
                    help="the experiment build's module parameter to switch")
    ap.add_argument("--settings", default="main=0,copy=1,build=2",
                    help="NAME=VALUE,... written to --param in turn")
    ap.add_argument("--drivers", default="ours")
    ap.add_argument("--setup", default="", help="shell command run in the guest after boot "
                    "($IF is the interface)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    ncpu, nq = B.topo_parse(a.topo)
    values = dict(x.split("=", 1) for x in a.settings.split(","))
    names = list(values)
    res = []
    for boot in range(a.boots):
        for driver in a.drivers.split(","):
            cfg = VMConfig(smp=ncpu, memory=1024, nics=(Nic(queues=nq),),
                           trace_events=BC.TRACE_EVENTS)
            g = Guest(a.kernel, cfg, driver=driver,
                      module=a.module if driver == "ours" else None,
                      name=f"sab-{driver}")
            try:
                g.boot()
                ifname = net.ifname(g)
                if a.setup:
                    g.run_ok(f"IF={ifname}; {a.setup}", timeout=60)
                M.start_guest_servers(g, ncpu)
                base = g.run(f"ethtool -c {ifname}", timeout=30).out if driver == "ours" else ""
                for cname in a.cells.split(","):
                    cell = M.CELLS[cname]
                    bg = None
                    if cell.kind == "mixed":
                        w = cell.workload()
                        B.start_servers(g, w, ncpu)
                        g.run("rm -f /tmp/bench-w*", timeout=30, quiet=True)
                        bg = g.run_bg(B.load_script(g, w, 3600, ncpu))
                        time.sleep(3.0)
                    client = M.LoadClient(g, cell, ncpu)
                    time.sleep(1.0)
                    for rnd in range(a.rounds):
                        for sname in (names if driver == "ours" else ["stock"]):
                            if driver == "ours":
                                g.run_ok(f"echo {values[sname]} > {PARAMS}/{a.param}",
                                         timeout=30)
                            time.sleep(0.3)
                            client.window()
                            t0 = B.tap_counters(g.proc.pid, g.nics[0].tap)
                            ts = time.monotonic()
                            time.sleep(a.seconds)
                            w = client.window()
                            t1 = B.tap_counters(g.proc.pid, g.nics[0].tap)
                            mbit = (t1["guest_tx_bytes"] - t0["guest_tx_bytes"]) * 8e-6 / \
                                (time.monotonic() - ts)
                            rec = {"boot": boot, "driver": driver, "cell": cname,
                                   "round": rnd, "setting": sname, "tx_mbit": round(mbit), **w}
                            res.append(rec)
                            print(f"{boot} {driver:<5} {cname:<13} r{rnd} {sname:<15} "
                                  f"recv {w['recv']:>6} p50 {w['p50_us']:>7} p99 {w['p99_us']:>7}"
                                  f" tx {mbit:6.0f} Mbit/s", flush=True)
                    client.stop()
                    if bg is not None:
                        g.run("killall -INT iperf3 2>/dev/null; true", timeout=30, quiet=True)
                        time.sleep(1)
                        g.run("killall -KILL iperf3 2>/dev/null; true", timeout=30, quiet=True)
                if base:
                    (a.out / "ethtool-c.txt").write_text(base)
            finally:
                g.shutdown()
            (a.out / "windows.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
