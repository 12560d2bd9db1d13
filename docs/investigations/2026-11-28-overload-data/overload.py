#!/usr/bin/env python3
"""Open-loop UDP overload (the matrix's ol-udp-30000): per window, where
the work ran.  Each round starts a new client (a new flow, so a new
server by SO_REUSEPORT hash and possibly a new receive queue) and records
answers, the CPU each pinned server used, interrupts and NET_RX softirqs
per vCPU, ksoftirqd CPU time, UDP receive-buffer drops and, for ours,
the per-queue ethtool -S deltas.

overload.py KERNEL TOPO OUT --module KO [--drivers stock,ours] [--boots N]
            [--rounds N] [--seconds S] [--cell ol-udp-30000]
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

from harness import net  # noqa: E402
from benchlib import workloads as B  # noqa: E402
from benchlib import matrix as M  # noqa: E402

SNAP = r"""
for p in $(pidof vnet-load); do
  echo "srv $p $(awk '{print $39, $14+$15}' /proc/$p/stat) $(tr '\0' ' ' < /proc/$p/cmdline)"
done
for p in $(pgrep ksoftirqd); do echo "ksi $(awk '{print $2, $39, $14+$15}' /proc/$p/stat)"; done
grep -E 'virtio|LOC|CAL|RES' /proc/interrupts | sed 's/^/irq /'
grep -E 'NET_RX|NET_TX|TIMER' /proc/softirqs | sed 's/^/sirq /'
awk '/^Udp:/ {print "udp", $0}' /proc/net/snmp
"""


def snap(g) -> dict:
    out = g.run_ok(SNAP, timeout=30)
    d = {"srv": {}, "ksi": {}, "irq": {}, "sirq": {}, "udp": []}
    for line in out.splitlines():
        kind, _, rest = line.partition(" ")
        f = rest.split()
        if kind == "srv":
            port = re.search(r"-p (\d+)", rest)
            d["srv"][f[0]] = {"cpu": int(f[1]), "ticks": int(f[2]),
                             "port": port.group(1) if port else "?"}
        elif kind == "ksi":
            d["ksi"][f[0]] = {"cpu": int(f[1]), "ticks": int(f[2])}
        elif kind == "irq":
            name = f[0].rstrip(":")
            nums = [int(x) for x in f[1:] if x.isdigit()]
            d["irq"][name + (" " + f[-1] if not name.isalpha() else "")] = nums
        elif kind == "sirq":
            d["sirq"][f[0].rstrip(":")] = [int(x) for x in f[1:]]
        elif kind == "udp":
            d["udp"].append(f[1:])
    return d


def delta(a: dict, b: dict) -> dict:
    out = {"srv_ticks": {}, "ksi_ticks": {}, "irq": {}, "sirq": {}}
    for pid, s in b["srv"].items():
        t = s["ticks"] - a["srv"].get(pid, s)["ticks"]
        if t:
            out["srv_ticks"][f"{pid}@cpu{s['cpu']}:{s['port']}"] = t
    for pid, s in b["ksi"].items():
        out["ksi_ticks"][f"cpu{s['cpu']}"] = s["ticks"] - a["ksi"].get(pid, s)["ticks"]
    for k, v in b["irq"].items():
        w = a["irq"].get(k, v)
        dv = [x - y for x, y in zip(v, w)]
        if any(dv):
            out["irq"][k] = dv
    for k, v in b["sirq"].items():
        out["sirq"][k] = [x - y for x, y in zip(v, a["sirq"][k])]
    hdr, va, vb = b["udp"][0], a["udp"][1], b["udp"][1]
    out["udp"] = {h: int(y) - int(x) for h, x, y in zip(hdr, va, vb)
                  if h in ("InDatagrams", "RcvbufErrors", "InErrors", "OutDatagrams")}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernel")
    ap.add_argument("topo")
    ap.add_argument("out", type=Path)
    ap.add_argument("--module", type=Path, required=True)
    ap.add_argument("--drivers", default="stock,ours")
    ap.add_argument("--boots", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--cell", default="ol-udp-30000")
    ap.add_argument("--setup", default="", help="shell run in the guest after boot ($IF: the NIC)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    ncpu, _ = B.topo_parse(a.topo)
    cell = M.CELLS[a.cell]
    res = []
    for boot in range(a.boots):
        for driver in a.drivers.split(","):
            v = M.Variant(driver, driver, setup=a.setup)
            g = M.variant_guest(a.kernel, v, a.module, a.topo, f"ovl-{driver}")
            try:
                g.boot()
                M.variant_setup(g, v, net.ifname(g))
                M.start_guest_servers(g, ncpu)
                for rnd in range(a.rounds):
                    client = M.LoadClient(g, cell, ncpu)
                    time.sleep(1.0)
                    client.window()
                    s0, e0 = snap(g), net.ethtool_stats(g)
                    time.sleep(a.seconds)
                    w = client.window()
                    s1, e1 = snap(g), net.ethtool_stats(g)
                    client.stop()
                    d = delta(s0, s1)
                    ed = {k: e1[k] - e0.get(k, 0) for k in e1 if e1[k] != e0.get(k, 0)}
                    rec = {"boot": boot, "driver": driver, "round": rnd, "load": w,
                           "guest": d, "ethtool": ed}
                    res.append(rec)
                    virt = {k: v for k, v in d["irq"].items() if "virtio" in k}
                    print(f"{boot} {driver:<5} r{rnd} answers {w['recv']:>6} "
                          f"srv {d['srv_ticks']} ksoftirqd {d['ksi_ticks']} "
                          f"NET_RX {d['sirq'].get('NET_RX')} irqs {virt} udp {d['udp']}",
                          flush=True)
                    time.sleep(0.5)
            finally:
                g.shutdown()
            (a.out / "windows.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
