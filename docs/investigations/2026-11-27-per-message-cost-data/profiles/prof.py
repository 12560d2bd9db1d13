#!/usr/bin/env python3
"""Profile the guest (perf record -a -g, cpu-clock) while a matrix cell runs.

prof.py KERNEL TOPO VARIANT[,VARIANT] CELL[,CELL] OUTDIR [--module KO] [--seconds S]
VARIANT: stock | stock-notx | ours | ours:<modopts>

The host's /usr/bin/perf goes into the guest's initramfs.  perf itself
slows the guest (latencies under it are not comparable with the
matrix's); the profiles are what counts.  The files next to this script
came from: prof.py 6.1 2 stock-notx,stock,ours ol-udp-10000,rr-udp-4 OUT
--seconds 5 --freq 1000
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from harness import Guest, Nic, VMConfig  # noqa: E402
from harness import net  # noqa: E402
from benchlib import workloads as B  # noqa: E402
from benchlib import matrix as M  # noqa: E402
import bench as BC  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernel")
    ap.add_argument("topo")
    ap.add_argument("variants")
    ap.add_argument("cells")
    ap.add_argument("out", type=Path)
    ap.add_argument("--module", type=Path, default=REPO / "build/6.1/virtio_net.ko")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--freq", type=int, default=2000)
    ap.add_argument("--model", default="zero")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    ncpu, nq = B.topo_parse(a.topo)
    for vspec in a.variants.split(","):
        name, _, opts = vspec.partition(":")
        driver = "ours" if name.startswith("ours") else "stock"
        if name == "stock-notx":
            opts = "napi_tx=0"
        ec = B.make_exitcost(a.kernel, a.model)
        cfg = VMConfig(smp=ncpu, memory=1024, nics=(Nic(queues=nq),),
                       trace_events=BC.TRACE_EVENTS,
                       qemu_args=ec.qemu_args() if ec else (), modopts=opts,
                       extra_binaries=("/usr/bin/perf",))
        g = Guest(a.kernel, cfg, driver=driver,
                  module=a.module if driver == "ours" else None, name=f"prof-{name}")
        try:
            g.boot()
            if ec:
                ec.attach(g)
                ec.set_costs(B.model_costs(a.model))
            ifname = net.ifname(g)
            M.start_guest_servers(g, ncpu)
            g.run("echo 0 > /proc/sys/kernel/kptr_restrict; "
                  "echo -1 > /proc/sys/kernel/perf_event_paranoid", timeout=20)
            for cname in a.cells.split(","):
                cell = M.CELLS[cname]
                client = M.LoadClient(g, cell, ncpu)
                time.sleep(1.0)
                client.window()
                t0 = time.monotonic()
                r = g.run(f"perf record -q -e cpu-clock -F {a.freq} -a -g -o /tmp/p.data "
                          f"-- sleep {a.seconds} 2>&1 | tail -3", timeout=a.seconds * 10 + 60)
                lat = client.window()
                el = time.monotonic() - t0
                client.stop()
                tag = f"{name}-{cname}"
                rep = g.run("perf report -i /tmp/p.data --stdio --no-children -g none "
                            "--sort sym --percent-limit 0.3 2>&1 | grep -v '^$' | head -120",
                            timeout=600).out
                repc = g.run("perf report -i /tmp/p.data --stdio --no-children -g none "
                             "--sort cpu,comm --percent-limit 1 2>&1 | grep -v '^#' | "
                             "grep -v '^$' | head -40", timeout=600).out
                repd = g.run("perf report -i /tmp/p.data --stdio --children -g none "
                             "--sort sym --percent-limit 2 2>&1 | grep -v '^$' | head -100",
                             timeout=600).out
                stats = g.run(f"ethtool -S {ifname} 2>&1 | head -400", timeout=60).out
                (a.out / f"{tag}.txt").write_text(
                    f"# {tag} model={a.model} window={el:.1f}s\n# load: {json.dumps(lat)}\n"
                    f"# perf: {r.out}\n\n## self by symbol\n{rep}\n\n## by cpu,comm\n{repc}\n\n"
                    f"## children by symbol\n{repd}\n\n## ethtool -S\n{stats}\n")
                print(f"{tag}: load {lat}", flush=True)
        finally:
            g.shutdown()
            if ec:
                ec.cleanup()


if __name__ == "__main__":
    main()
