#!/usr/bin/env python3
"""Where each vCPU's time went while a matrix cell ran: the share of
softirq, hard irq, system, user and idle ticks (/proc/stat, tick-sampled:
Debian's 6.1 has no IRQ_TIME_ACCOUNTING) per vCPU, over one window per
cell; for ours also each RX queue's share of the window spent in its polls
(ethtool -S rxN_poll_ns) and its packets per poll; with --irq-context
also what each receive interrupt interrupted (the idle loop or a task:
irq_handler_entry's task, event enabled once per boot).  The question: does the softirq share of the busiest vCPU separate
receive overload (ol-udp-10000/30000) from saturated closed loops and
streams, as a detector for switching NAPI to threaded mode would need?

softirq_share.py KERNEL TOPO CELL[,CELL...] OUT --module KO [--drivers ours,stock]
                 [--boots N] [--seconds S] [--setup SCRIPT]
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

TRACE = "/sys/kernel/tracing"
IRQ_EV = f"{TRACE}/events/irq/irq_handler_entry"


def irq_trace_setup(g) -> None:
    g.run_ok(f"echo 0 > {TRACE}/tracing_on; echo 8192 > {TRACE}/buffer_size_kb; "
             f"echo 'name ~ \"virtio*input*\"' > {IRQ_EV}/filter; echo 1 > {IRQ_EV}/enable",
             timeout=60)


def irq_trace_start(g) -> None:
    g.run_ok(f": > {TRACE}/trace; echo 1 > {TRACE}/tracing_on", timeout=30)


# counted in the guest: the trace of a busy window is megabytes
IRQ_AWK = (r"""awk '/irq_handler_entry:/ { if ($1 == "<idle>-0") i++; else { b++; """
           r"""n = split($1, a, "-"); t[a[1]]++ } } END { printf "idle %d busy %d", i, b; """
           r"""for (k in t) printf " %s=%d", k, t[k]; print "" }'""")


def irq_trace_stop(g) -> dict:
    """Receive interrupts of the window: how many hit the idle loop, how
    many a task, and the tasks hit most."""
    out = g.run_ok(f"echo 0 > {TRACE}/tracing_on; {IRQ_AWK} {TRACE}/trace", timeout=120)
    m = re.search(r"idle (\d+) busy (\d+)(.*)", out)
    idle, busy = int(m.group(1)), int(m.group(2))
    tasks = {k: int(v) for k, v in re.findall(r"(\S+)=(\d+)", m.group(3))}
    top = dict(sorted(tasks.items(), key=lambda x: -x[1])[:3])
    return {"idle": idle, "busy": busy,
            "busy_share": round(busy / (idle + busy), 3) if idle + busy else None, "top": top}


FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq")


def cpu_ticks(g) -> dict[str, list[int]]:
    out = g.run_ok("grep -E '^cpu[0-9]' /proc/stat", timeout=30)
    return {f[0]: [int(x) for x in f[1:8]] for f in (ln.split() for ln in out.splitlines())}


def poll_shares(a: dict, b: dict, seconds: float) -> dict[str, list[float]]:
    """RX queue -> [share of the window in its polls, packets per poll]."""
    out = {}
    for k, v in b.items():
        m = re.fullmatch(r"rx(?:_queue_)?(\d+)_poll_ns", k)
        if not m:
            continue
        q = m.group(1)
        polls = sum(b[n] - a.get(n, 0) for n in b
                    if re.fullmatch(rf"rx(?:_queue_)?{q}_napi_polls", n))
        pk = sum(b[n] - a.get(n, 0) for n in b if re.fullmatch(rf"rx(?:_queue_)?{q}_packets", n))
        out[f"rx{q}"] = [round((v - a.get(k, 0)) / (seconds * 1e9), 3),
                         round(pk / polls, 1) if polls else 0.0]
    return out


def shares(a: dict, b: dict) -> dict[str, dict[str, float]]:
    res = {}
    for cpu, v in b.items():
        d = [y - x for x, y in zip(a[cpu], v)]
        tot = max(sum(d), 1)
        res[cpu] = {k: round(x / tot, 3) for k, x in zip(FIELDS, d)}
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernel")
    ap.add_argument("topo")
    ap.add_argument("cells")
    ap.add_argument("out", type=Path)
    ap.add_argument("--module", type=Path, required=True)
    ap.add_argument("--drivers", default="ours")
    ap.add_argument("--boots", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--setup", default="", help="shell run in the guest after boot ($IF: the NIC)")
    ap.add_argument("--irq-context", action="store_true",
                    help="trace what each receive interrupt interrupted")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    ncpu, _ = B.topo_parse(a.topo)
    res = []
    for boot in range(a.boots):
        for driver in a.drivers.split(","):
            v = M.Variant(driver, driver, setup=a.setup)
            g = M.variant_guest(a.kernel, v, a.module, a.topo, f"sirq-{driver}")
            try:
                g.boot()
                M.variant_setup(g, v, net.ifname(g))
                if a.irq_context:
                    irq_trace_setup(g)
                M.start_guest_servers(g, ncpu)
                for cname in a.cells.split(","):
                    cell = M.CELLS[cname]
                    client = bg = None
                    if cell.kind == "stream":
                        w = cell.workload()
                        B.start_servers(g, w, ncpu)
                        g.run("rm -f /tmp/bench-w*", timeout=30, quiet=True)
                        bg = g.run_bg(B.load_script(g, w, 3600, ncpu))
                    else:
                        client = M.LoadClient(g, cell, ncpu)
                    time.sleep(2.0)
                    if client:
                        client.window()
                    if a.irq_context:
                        irq_trace_start(g)
                    s0, e0 = cpu_ticks(g), net.ethtool_stats(g)
                    t0 = time.monotonic()
                    time.sleep(a.seconds)
                    s1, e1 = cpu_ticks(g), net.ethtool_stats(g)
                    ictx = irq_trace_stop(g) if a.irq_context else None
                    ps = poll_shares(e0, e1, time.monotonic() - t0)
                    lat = client.window() if client else {}
                    if client:
                        client.stop()
                    if bg is not None:
                        g.run("killall -INT iperf3 2>/dev/null; true", timeout=30, quiet=True)
                        time.sleep(1)
                        g.run("killall -KILL iperf3 2>/dev/null; true", timeout=30, quiet=True)
                    sh = shares(s0, s1)
                    top = max(sh.values(), key=lambda x: x["softirq"])
                    rec = {"boot": boot, "driver": driver, "cell": cname, "shares": sh,
                           "poll_share_per_poll": ps, "irq_context": ictx,
                           "answers_per_s": round(lat.get("recv", 0) / a.seconds) if lat else None}
                    res.append(rec)
                    print(f"{boot} {driver:<5} {cname:<14} max softirq {top['softirq']:.2f} "
                          f"(irq {top['irq']:.2f} sys {top['system']:.2f} user {top['user']:.2f} "
                          f"idle {top['idle']:.2f}) polls {json.dumps(ps)} irqs {json.dumps(ictx)} "
                          f"all {json.dumps(sh)} "
                          f"ans/s {rec['answers_per_s']}", flush=True)
                    time.sleep(1.0)
            finally:
                g.shutdown()
            (a.out / "shares.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
