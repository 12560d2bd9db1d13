# SPDX-License-Identifier: GPL-2.0-only
"""The common frame of the investigation scripts (docs/investigations/*-data/):
boot a matrix variant, start a cell's load as bench/matrix.py starts it,
look at something over a span, stop the load, keep the records.

    a = probe.parser(__doc__).parse_args()
    res = []
    for rep, vname in probe.boots(a):
        with probe.booted(a, vname, "tag") as g:
            for cname in a.cells.split(","):
                with probe.load(g, cname, probe.ncpu(a)) as client:
                    ...                     # measure over a.seconds
                res.append(...)
        probe.save(a.out / "name.json", res)

Unlike bench/matrix.py these scripts may run guest commands during the
span (ethtool -S, /proc/vmstat, tracing): their figures are for
comparing variants within one run, not with the matrix's.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import time
from pathlib import Path

from benchlib import matrix as M
from benchlib import workloads as B


def parser(doc: str, variants: str | None = "stock-notx,ours",
           seconds: float = 5.0) -> argparse.ArgumentParser:
    """KERNEL TOPO CELLS OUT --module KO [--variants V,...] [--runs N] [--seconds S]."""
    ap = argparse.ArgumentParser(description=doc.strip().split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=doc)
    ap.add_argument("kernel")
    ap.add_argument("topo")
    ap.add_argument("cells", help="comma separated matrix cells")
    ap.add_argument("out", type=Path)
    ap.add_argument("--module", type=Path, required=True)
    if variants is not None:
        ap.add_argument("--variants", default=variants)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=seconds)
    return ap


def boots(a) -> list[tuple[int, str]]:
    """(repeat, variant) in boot order: the variants alternate inside each repeat."""
    return [(rep, v) for rep in range(a.runs) for v in a.variants.split(",")]


def ncpu(a) -> int:
    return B.topo_parse(a.topo)[0]


@contextlib.contextmanager
def booted(a, vname: str, tag: str, cmdline: str = "", servers: bool = True,
           variant: M.Variant | None = None):
    """A booted guest of matrix variant vname (stock, ours, stock-notx...)
    or of variant, the echo servers started; shut down on exit."""
    v = variant or {x.name: x for x in M.variants(which=(vname,))}[vname]
    g = M.variant_guest(a.kernel, v, a.module, a.topo, f"{tag}-{vname}")
    if cmdline:
        g.cfg = dataclasses.replace(g.cfg, cmdline=cmdline)
    try:
        g.boot()
        if servers:
            M.start_guest_servers(g, ncpu(a))
        yield g
    finally:
        g.shutdown()


@contextlib.contextmanager
def load(g, cname: str, ncpu: int, ramp: float = 1.0):
    """Cell cname's load, running and past its ramp: the vnet-load client
    (its latency window just reset) for request/response and open-loop
    cells, None for streams (iperf3 in the guest)."""
    cell = M.CELLS[cname]
    client = None
    if cell.kind == "stream":
        w = cell.workload()
        B.start_servers(g, w, ncpu)
        g.run("rm -f /tmp/bench-w*", timeout=30, quiet=True)
        g.run_bg(B.load_script(g, w, 3600, ncpu))
    else:
        client = M.LoadClient(g, cell, ncpu)
    try:
        time.sleep(ramp)
        if client:
            client.window()
        yield client
    finally:
        if client:
            client.stop()
        else:
            g.run("killall -INT iperf3 2>/dev/null; true", timeout=30, quiet=True)
            time.sleep(1)
            g.run("killall -KILL iperf3 2>/dev/null; true", timeout=30, quiet=True)


def save(path: Path, res: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res, indent=1) + "\n")
