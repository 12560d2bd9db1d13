#!/usr/bin/env python3
"""Who sends the IPIs of matrix cells (bench/ipi-sources.py does this for
bench.py's workloads): per variant one boot, each cell's load started as
bench/matrix.py starts it, then for SECONDS the function tracer on the two
IPI senders (native_send_call_func_single_ipi, native_smp_send_reschedule)
with stack traces, the stacks counted in the guest (top FRAMES frames),
and the CAL/RES/IWI deltas of /proc/interrupts over the same span.

ipi_sources.py KERNEL TOPO CELL[,CELL...] OUT --module KO [--variants stock,stock-notx,ours]
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

T = "/sys/kernel/tracing"
FUNCS = "native_send_call_func_single_ipi native_smp_send_reschedule"
# one key per stack: the traced function and the FRAMES frames below it
AWK = r"""awk -v n=%d '
/<stack trace>/ { inst = 1; key = fn; k = 0; next }
/: native_/ { if (inst && key != "") c[key]++; inst = 0; fn = $0; sub(/.*: /, "", fn); sub(/ <-.*/, "", fn); next }
inst && /=>/ { if (k < n) { f = $2; key = key " < " f; k++ }; next }
inst { c[key]++; inst = 0 }
END { if (inst) c[key]++; for (s in c) print c[s], s }' %s/trace | sort -rn | head -25"""


def ipi_counts(g) -> dict[str, int]:
    out = g.run_ok("grep -E '^ *(CAL|RES|IWI):' /proc/interrupts", timeout=30)
    res = {}
    for ln in out.splitlines():
        p = ln.split()
        res[p[0].rstrip(":")] = sum(int(x) for x in p[1:] if x.isdigit())
    return res


def main() -> None:
    ap = probe.parser(__doc__, variants="stock,stock-notx,ours", seconds=8.0)
    ap.add_argument("--frames", type=int, default=7)
    a = ap.parse_args()
    res = []
    for _rep, vname in probe.boots(a):
        with probe.booted(a, vname, "ipi") as g:
            g.run_ok(f"echo 0 > {T}/tracing_on; echo 4096 > {T}/buffer_size_kb; "
                     f"echo '{FUNCS}' > {T}/set_ftrace_filter; echo 1 > {T}/options/func_stack_trace; "
                     f"echo function > {T}/current_tracer", timeout=60)
            for cname in a.cells.split(","):
                with probe.load(g, cname, a) as client:
                    i0 = ipi_counts(g)
                    g.run_ok(f": > {T}/trace; echo 1 > {T}/tracing_on", timeout=30)
                    t0 = time.time()
                    time.sleep(a.seconds)
                    g.run_ok(f"echo 0 > {T}/tracing_on", timeout=30)
                    dt = time.time() - t0
                    i1 = ipi_counts(g)
                    lat = client.window()
                stacks = g.run_ok(AWK % (a.frames, T), timeout=120)
                rec = {"variant": vname, "cell": cname, "seconds": round(dt, 2),
                       "ipis": {k: i1[k] - i0[k] for k in i0},
                       "answers": lat.get("recv"), "p50_us": lat.get("p50_us"),
                       "p99_us": lat.get("p99_us"), "stacks": stacks.splitlines()}
                res.append(rec)
                print(json.dumps(rec, indent=1), flush=True)
                time.sleep(1.0)
        probe.save(a.out / "ipi_sources.json", res)


if __name__ == "__main__":
    main()
