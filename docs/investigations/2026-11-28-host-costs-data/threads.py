#!/usr/bin/env python3
"""Host CPU per transaction by QEMU thread (the main loop that emulates the
device, the other threads: vCPUs and helpers; QEMU names its threads only
with debug-threads) and the time they waited for a host CPU, from
/proc/PID/task/*/schedstat, plus the host's load generator (vnet-load
client) CPU and QEMU's TCG counters (`info jit`: translations, TB and
TLB flushes), over SECONDS of each cell, per variant, one boot each,
boots alternating per repeat.

threads.py KERNEL TOPO CELL[,CELL...] OUT --module KO [--variants stock-notx,ours] [--runs N]
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

from benchlib import probe  # noqa: E402


def threads(pid: int) -> dict[str, list[int]]:
    """main / other -> [run ns, wait ns] summed over the threads."""
    res: dict[str, list[int]] = {}
    for t in Path(f"/proc/{pid}/task").iterdir():
        try:
            run, wait, _ = (int(x) for x in (t / "schedstat").read_text().split())
        except (OSError, ValueError):
            continue
        r = res.setdefault("main" if t.name == str(pid) else "other", [0, 0])
        r[0] += run
        r[1] += wait
    return res


def proc_run(pid: int) -> int:
    try:
        return sum(int((t / "schedstat").read_text().split()[0])
                   for t in Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return 0


def jit_stats(g) -> dict[str, int]:
    """QEMU's TCG counters (HMP `info jit`): translations, flushes, TLB flushes."""
    out = g.qmp("human-monitor-command", **{"command-line": "info jit"})
    res = {}
    for ln in str(out).splitlines():
        m = re.match(r"\s*([A-Za-z][A-Za-z /]*?)\s+(\d+)\s*$", ln)
        if m:
            res[m.group(1).strip()] = int(m.group(2))
    return res


def main() -> None:
    a = probe.parser(__doc__).parse_args()
    res = []
    for rep, vname in probe.boots(a):
        with probe.booted(a, vname, "thr") as g:
            for cname in a.cells.split(","):
                with probe.load(g, cname, probe.ncpu(a)) as client:
                    j0 = jit_stats(g)
                    th0, c0, w0 = threads(g.proc.pid), proc_run(client.proc.pid), time.monotonic()
                    time.sleep(a.seconds)
                    th1, c1, w1 = threads(g.proc.pid), proc_run(client.proc.pid), time.monotonic()
                    j1 = jit_stats(g)
                    lat = client.window()
                n = max(1, lat.get("recv") or 1)
                rec = {"rep": rep, "variant": vname, "cell": cname,
                       "answers_per_s": round(n / (w1 - w0)), "p50_us": lat.get("p50_us"),
                       "us_per_txn": {k: [round((th1[k][i] - th0[k][i]) / n / 1000, 2)
                                          for i in (0, 1)] for k in th1 if k in th0},
                       "client_us_per_txn": round((c1 - c0) / n / 1000, 2),
                       "jit_per_txn": {k: round((j1[k] - j0.get(k, 0)) / n, 3) for k in j1}}
                res.append(rec)
                print(json.dumps(rec), flush=True)
                time.sleep(1.0)
        probe.save(a.out / "threads.json", res)


if __name__ == "__main__":
    main()
