#!/usr/bin/env python3
"""Where QEMU's host CPU goes per variant: `perf record -e cpu-clock` on
the QEMU process over SECONDS of each cell (one boot per variant), then
`perf report` by symbol (QEMU exports its functions dynamically; code
TCG generated shows as bare addresses).  Samples per transaction make
variants comparable.

perf_qemu.py KERNEL TOPO CELL[,CELL...] OUT --module KO [--variants stock-notx,ours]
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # the repository root
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from benchlib import probe  # noqa: E402


def main() -> None:
    a = probe.parser(__doc__).parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    res = []
    for rep, vname in probe.boots(a):
        with probe.booted(a, vname, "perf") as g:
            for cname in a.cells.split(","):
                data = a.out / f"{rep}-{vname}-{cname}.perf.data"
                with probe.load(g, cname, probe.ncpu(a)) as client:
                    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000",
                                    "-o", str(data), "-p", str(g.proc.pid), "--",
                                    "sleep", str(a.seconds)], check=True, stdout=subprocess.DEVNULL)
                    lat = client.window()
                text = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--sort", "sym",
                                       "-n", "--percent-limit", "0.3"],
                                      capture_output=True, text=True).stdout
                (a.out / f"{rep}-{vname}-{cname}.report.txt").write_text(text)
                data.unlink()
                rows = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
                rec = {"rep": rep, "variant": vname, "cell": cname,
                       "answers": lat.get("recv"), "report": rows[:60]}
                res.append(rec)
                print(json.dumps(rec, indent=1), flush=True)
        probe.save(a.out / "perf.json", res)


if __name__ == "__main__":
    main()
