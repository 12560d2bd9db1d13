#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where a guest's IPIs come from: the stock virtio_net against ours.

The benchmark counts IPIs (guest /proc/interrupts RES + CAL, the receiving
side); this tool says who sent them.  It boots the benchmark's guest
(exit-cost plugin with the reference costs, so the timing is the
benchmark's), runs one workload of bench/bench.py or one cell of the
traffic matrix (--cell, started as bench/matrix.py starts it, with the
matrix's comparators as --drivers: stock, ours, stock-notx, ...), and
for a window of it puts kprobes on the
guest kernel's three IPI senders of x86:

  native_send_call_func_single_ipi   CAL, one CPU (wakelist wakeups, ...)
  native_send_call_func_ipi          CAL, several CPUs (TLB shootdowns, ...)
  native_smp_send_reschedule         RES, one CPU

with a histogram trigger keyed by sending CPU, receiving CPU and kernel
stack (hist triggers: Debian's 6.1 and later kernels have them, 5.10
does not).  Each IPI is put under a cause read off its stack (e.g. "socket
data wakeup": TCP received data for a task on another CPU; "idle-balance
kick (tick)"; the histogram keeps 16 frames) and under the classes of its
two CPUs: "rx" = a CPU that took the NIC's receive interrupts in the
window, "other" = one that did not.  Figures are per
transaction (rr workloads; host-side bytes / message size) or per guest
packet, medians over the runs.  The probes are checked against the
guest's own count: the IPIs they saw from the reading of /proc/interrupts
at the window's start to the one at its end (kprobe_profile) against the
RES + CAL that CPUs received in between.  They agree to a few in a
thousand here (or 1-2 IPIs where there are few); more received than
seen would mean a sender the probes miss (a paravirtual one, say), and
the run line says so.

  bench/ipi-sources.py                                   # 4:2, rr16, 3 runs
  bench/ipi-sources.py --topology 4 --runs 5
  bench/ipi-sources.py --ours-coalesce 'tx-frames 1'     # a setting of ours
  bench/ipi-sources.py --drivers ours --out build/ipi/x  # one driver only
  bench/ipi-sources.py --report build/ipi/x/results.json # the tables again
  bench/ipi-sources.py --topology 2 --cell ol-udp-300 --drivers stock,stock-notx,ours --runs 1

Results (every run's histogram, parsed) go to --out (default
build/ipi/<timestamp>/results.json); the table to stdout.  The kprobes cost
the guest some time per IPI (a few thousand per second here): compare the
two drivers with each other, not with the benchmark's own counts.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shlex
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))                 # benchlib
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # harness

from harness import Guest, Nic, VMConfig, net  # noqa: E402
from benchlib import matrix as M  # noqa: E402
from benchlib import probe  # noqa: E402
from benchlib import workloads as B  # noqa: E402
from harness.util import REPO_ROOT, CheckFailed, VmTestError  # noqa: E402

TRACEFS = "/sys/kernel/tracing"
# probe name -> (kernel function, kind, receiving CPU argument or None)
PROBES = {
    "ipi_cfs": ("native_send_call_func_single_ipi", "CAL", "cpu=%di:s32"),
    "ipi_cfm": ("native_send_call_func_ipi", "CAL", None),
    "ipi_res": ("native_smp_send_reschedule", "RES", "cpu=%di:s32"),
}
HIST_SIZE = 8192

# (cause, frames that identify it).  The stack is read from the IPI
# outwards and the first frame that names a cause wins: an IPI sent by the
# tick that interrupted a receive is the tick's.
CAUSES = [
    ("socket data wakeup", ("sock_def_readable", "tcp_data_ready")),
    ("socket wakeup, send space", ("sk_stream_write_space", "sock_def_write_space",
                                   "tcp_check_space")),
    ("skb freed on another CPU", ("skb_attempt_defer_free", "kick_defer_list_purge")),
    ("RPS/RFS", ("net_rps_send_ipi", "rps_trigger_softirq")),
    # Debian's 6.1 inlines kick_ilb() up to the tick: there the idle-balance
    # kick is the tick's one asynchronous call-function IPI
    ("idle-balance kick (tick)", ("kick_ilb", "nohz_balancer_kick", "trigger_load_balance",
                                  "update_process_times")),
    ("TLB shootdown", ("flush_tlb_mm_range", "flush_tlb_func", "native_flush_tlb_multi")),
    ("workqueue wakeup", ("__queue_work", "queue_work_on")),
    ("RCU", ("rcu_core", "rcu_gp_kthread_wake", "swake_up_one")),
    ("timer wakes a task", ("hrtimer_wakeup", "process_timeout", "call_timer_fn")),
    ("timer queued for an idle CPU", ("__mod_timer", "add_timer_on")),
    ("signal", ("complete_signal",)),
    ("pipe or epoll wakeup", ("pipe_write", "pipe_read", "ep_poll_callback")),
]
CAUSE_OF_FRAME = {f: cause for cause, marks in CAUSES for f in marks}


def cause_of(frames: list[str]) -> str:
    for a, b in zip(frames, frames[1:] + [""]):
        # kick_ilb() is inlined: the tick calls smp_call_function_single_async()
        # itself only to kick the idle-balance CPU.
        if a == "smp_call_function_single_async" and b in ("update_process_times",
                                                           "scheduler_tick"):
            return "idle-balance kick (tick)"
        if a in CAUSE_OF_FRAME:
            return CAUSE_OF_FRAME[a]
    for f in frames:        # else the first frame above the IPI machinery
        if not f.startswith(("native_send", "native_smp", "kprobe", "0x", "__smp_call",
                             "generic_exec", "smp_call", "ttwu", "try_to_wake", "__wake_up",
                             "wake_up", "resched_curr", "check_preempt", "__ttwu",
                             "default_wake", "autoremove", "ttwu_do")):
            return "other: " + f
    return "other"


HIST_ENTRY = re.compile(r"\{ common_cpu:\s*(\d+),(?: cpu:\s*(-?\d+),)? stacktrace:\n(.*?)\}"
                        r" hitcount:\s*(\d+)", re.S)


def parse_hist(text: str) -> list[tuple[int, int | None, list[str], int]]:
    """hist file -> [(sending cpu, receiving cpu or None, frames, count)]."""
    out = []
    for src, dst, stack, n in HIST_ENTRY.findall(text):
        frames = [ln.strip().split("+")[0] for ln in stack.strip().splitlines()]
        out.append((int(src), int(dst) if dst else None, frames, int(n)))
    return out


def rx_cpus(before: dict, after: dict) -> list[int]:
    """CPUs that took at least 5% of some NIC receive vector's interrupts."""
    cpus = set()
    for name, cnt in after.items():
        if not re.match(r"virtio\d+-input\.\d+$", name):
            continue
        d = [a - b for a, b in zip(cnt, before.get(name, [0] * len(cnt)))]
        tot = sum(d)
        cpus.update(c for c, x in enumerate(d) if tot and x >= 0.05 * tot)
    return sorted(cpus)


def sh(g, cmd: str, timeout: float = 60) -> str:
    """Run in the guest, quietly; rc 0 required -> stdout."""
    return g.run(cmd, timeout, check=True, quiet=True).out


def setup_probes(g) -> None:
    g.run(f"mount -t tracefs none {TRACEFS} 2>/dev/null; true", quiet=True)
    if g.run(f"test -e {TRACEFS}/events/sched/sched_switch/hist", quiet=True).rc:
        raise VmTestError("the guest kernel has no hist triggers (CONFIG_HIST_TRIGGERS; "
                          "Debian's 5.10 lacks them): use 6.1 or later")
    funcs = "|".join(f for f, _, _ in PROBES.values())
    have = set(sh(g, f"grep -E '^({funcs})$' {TRACEFS}/available_filter_functions; true")
               .split())
    missing = [f for f, _, _ in PROBES.values() if f not in have]
    if missing:
        raise VmTestError(f"guest kernel cannot probe {', '.join(missing)} (a paravirtual IPI "
                          f"sender, or not x86): this tool knows only the native ones")
    for name, (func, _, arg) in PROBES.items():
        probe = f"p:{name} {func} {arg}" if arg else f"p:{name} {func}"
        sh(g, f"echo {shlex.quote(probe)} >> {TRACEFS}/kprobe_events")
    # Attached paused: arming a probe patches kernel text, which sends IPIs
    # of its own; that is done here, before any window.
    sh(g, "; ".join(f"echo '{hist_spec(n)}:pause' > {TRACEFS}/events/kprobes/{n}/trigger"
                    for n in PROBES))


def hist_spec(name: str) -> str:
    keys = "common_cpu,cpu,stacktrace" if PROBES[name][2] else "common_cpu,stacktrace"
    return f"hist:keys={keys}:sort=hitcount:size={HIST_SIZE}"


def window_edge(g, ifname: str, start: bool) -> tuple[dict, int]:
    """Open or close the window in one guest command, so the histograms
    and the interrupt counts cover the same time: read /proc/interrupts
    and let the histograms count, or pause them and read.  -> ({"irq":
    interrupt counts, "probes": {name: (hits, missed)}}, guest packets so
    far)."""
    cmds = [f"echo '{hist_spec(n)}:{'continue' if start else 'pause'}' >> "
            f"{TRACEFS}/events/kprobes/{n}/trigger" for n in PROBES]
    stats = (f"cat /sys/class/net/{ifname}/statistics/rx_packets "
             f"/sys/class/net/{ifname}/statistics/tx_packets {TRACEFS}/kprobe_profile "
             f"/proc/interrupts")
    probes = "; ".join(cmds)
    lines = sh(g, f"{stats}; {probes}" if start else f"{probes}; {stats}").splitlines()
    prof, i = {}, 2
    while i < len(lines) and lines[i].split()[0] != "CPU0":    # kprobe_profile
        name, hits, missed = lines[i].split()
        prof[name] = (int(hits), int(missed))
        i += 1
    if not set(PROBES) <= set(prof):
        raise VmTestError(f"kprobe_profile lacks our probes: {prof}")
    return ({"irq": B.parse_interrupts(lines[i:]), "probes": prof},
            int(lines[0]) + int(lines[1]))


def guest_of(args, driver: str, w, ncpu: int, nq: int, ec):
    """The benchmark's guest (a workload), or the matrix's (a cell; driver
    is then one of its comparators)."""
    qemu_args = ec.qemu_args() if ec else ()
    if args.cell:
        v = {x.name: x for x in M.variants(which=(driver,))}[driver]
        return M.variant_guest(args.kernel, v, Path(args.module), B.topo_key(args.topology),
                               f"ipi-{driver}", qemu_args)
    cfg = VMConfig(smp=ncpu, memory=B.guest_memory_mb([w], args.seconds), nics=(Nic(queues=nq),),
                   qemu_args=qemu_args)
    return Guest(args.kernel, cfg, driver=driver, module=args.module if driver == "ours" else None)


def traced_window(g, args, ifname: str) -> tuple:
    """The window's edges (interrupts, probe hits) and the histograms."""
    i0, pk0 = window_edge(g, ifname, True)
    time.sleep(args.seconds)
    i1, pk1 = window_edge(g, ifname, False)
    hists = {n: sh(g, f"cat {TRACEFS}/events/kprobes/{n}/hist", timeout=60) for n in PROBES}
    return i0, pk0, i1, pk1, hists


def one_run(args, driver: str, w, ncpu: int, nq: int) -> dict:
    ec = B.make_exitcost(args.kernel, "ref")
    g = guest_of(args, driver, w, ncpu, nq, ec)
    try:
        g.boot()
        if ec:
            ec.attach(g)
        ifname = net.ifname(g)
        if args.ours_coalesce and driver == "ours":
            g.run_ok(shlex.join(["ethtool", "-C", ifname] + args.ours_coalesce.split()))
        setup_probes(g)
        if args.cell:
            M.start_guest_servers(g, ncpu)
            with probe.load(g, args.cell, ncpu) as client:
                time.sleep(B.SETTLE_S)
                if client:
                    client.window()
                i0, pk0, i1, pk1, hists = traced_window(g, args, ifname)
                lat = client.window() if client else None
            units = lat["recv"] if lat else pk1 - pk0
            return summarise(driver, units, i0, i1, hists)
        B.start_servers(g, w, ncpu)
        t0 = time.monotonic()
        bg = g.run_bg(B.load_script(g, w, args.seconds + B.LOAD_EXTRA_S, ncpu))
        B.wait_ramp(SimpleNamespace(g=g, ncpu=ncpu), w, bg, t0)   # uses only these two
        time.sleep(B.SETTLE_S)
        s0 = B.server_sockets(g, w, ncpu)
        i0, pk0, i1, pk1, hists = traced_window(g, args, ifname)
        s1 = B.server_sockets(g, w, ncpu)
        g.run("killall -INT sockperf iperf3 2>/dev/null; true", timeout=30, quiet=True)
        try:
            bg.wait(timeout=60, interval=0.5)
        except VmTestError:
            pass
    finally:
        g.shutdown()
    units = ((s1["rx_bytes"] - s0["rx_bytes"]) / w.msg if w.kind == "rr" else pk1 - pk0)
    return summarise(driver, units, i0, i1, hists)


def summarise(driver: str, units, i0, i1, hists) -> dict:
    """One run's record: the window's IPIs by sender, receiver and cause."""
    if units <= 0:
        raise VmTestError(f"{driver}: no traffic in the window")
    rcpu = rx_cpus(i0["irq"], i1["irq"])
    received = {k: sum(a - b for a, b in zip(i1["irq"][k], i0["irq"][k])) for k in ("RES", "CAL")}
    missed = sum(i1["probes"][n][1] - i0["probes"][n][1] for n in PROBES)
    hits = {n: i1["probes"][n][0] - i0["probes"][n][0] for n in PROBES}
    rows = []
    for name, text in hists.items():
        kind = PROBES[name][1]
        dropped = re.search(r"Dropped:\s*(\d+)", text)
        if dropped and int(dropped.group(1)):
            raise VmTestError(f"{driver}: histogram {name} dropped entries; raise HIST_SIZE")
        entries = parse_hist(text)
        total = re.search(r"Hits:\s*(\d+)", text)
        if not total or int(total.group(1)) != sum(e[3] for e in entries):
            raise VmTestError(f"{driver}: histogram {name}: parsed "
                              f"{sum(e[3] for e in entries)} hits, it says "
                              f"{total.group(1) if total else '?'}")
        for src, dst, frames, n in entries:
            def cls(c):
                return "?" if c is None else ("rx" if c in rcpu else "other")
            rows.append({"kind": kind, "cause": cause_of(frames), "src": src, "dst": dst,
                         "path": f"{cls(src)}->{cls(dst) if dst is not None else 'several'}",
                         "count": n, "stack": frames[:24]})
    return {"driver": driver, "units": units, "rx_cpus": rcpu, "received": received,
            "missed": missed, "probe_hits": hits, "rows": rows,
            "sent": {k: sum(r["count"] for r in rows if r["kind"] == k) for k in ("RES", "CAL")}}


def per_unit(run: dict, key) -> Counter:
    c: Counter = Counter()
    for r in run["rows"]:
        c[key(r)] += r["count"] / run["units"]
    return c


def med(runs: list[dict], key, k) -> float:
    return statistics.median(per_unit(r, key).get(k, 0.0) for r in runs)


def report(runs: dict[str, list[dict]], unit: str, top: int) -> str:
    drivers = [d for d in runs if runs[d]]
    # x = ours / stock when both ran
    ratio = ("stock" in drivers and "ours" in drivers
             and (drivers.index("stock"), drivers.index("ours")))
    width = max([9] + [len(d) + 1 for d in drivers])
    out = []

    def x_of(vals) -> str:
        return f"{vals[ratio[1]] / vals[ratio[0]]:9.2f}" if ratio and vals[ratio[0]] else ""

    def table(title, key):
        keys: Counter = Counter()
        for d in drivers:
            for r in runs[d]:
                keys.update(per_unit(r, key))
        out.append(f"\n{title} per {unit} (median of runs)")
        out.append(f"  {'':58s}" + "".join(f"{d:>{width}s}" for d in drivers)
                   + ("        x" if ratio else ""))
        for k, _ in keys.most_common(top):
            vals = [med(runs[d], key, k) for d in drivers]
            out.append(f"  {str(k)[:58]:58s}" + "".join(f"{v:{width}.4f}" for v in vals)
                       + x_of(vals))
        tot = [statistics.median(sum(per_unit(r, key).values()) for r in runs[d])
               for d in drivers]
        out.append(f"  {'all':58s}" + "".join(f"{v:{width}.4f}" for v in tot) + x_of(tot))

    table("IPIs by cause", lambda r: r["cause"])
    table("IPIs by cause and path (rx = a CPU taking NIC receive interrupts)",
          lambda r: f"{r['cause']}, {r['kind']} {r['path']}")
    out.append("")
    for d in drivers:
        for i, r in enumerate(runs[d]):
            seen = sum(r["probe_hits"].values())
            got = sum(r["received"].values())
            out.append(f"  {d} run {i + 1}: {r['units']:.0f} {unit}s, receive interrupts on CPUs "
                       f"{r['rx_cpus']}; IPIs in the histograms {sum(r['sent'].values())}, "
                       f"seen by the probes {seen} (missed {r['missed']}), received {got}"
                       + ("  ** a sender the probes miss?" if got > seen * 1.02 + 5 else ""))
    return "\n".join(out)


def unit_of(cfg: dict) -> str:
    if cfg.get("cell"):
        return "packet" if M.CELLS[cfg["cell"]].kind == "stream" else "answer"
    return "transaction" if B.WORKLOADS[cfg["workload"]].kind == "rr" else "packet"


def header(cfg: dict) -> str:
    ncpu, nq = B.topo_parse(B.topo_key(cfg["topology"]))
    return (f"{cfg.get('cell') or cfg['workload']} on {ncpu} vCPUs, {nq} queue pairs, kernel {cfg['kernel']}"
            + (f", ours with ethtool -C {cfg['ours_coalesce']}" if cfg.get("ours_coalesce")
               else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", default="6.1")
    ap.add_argument("--module", help="our virtio_net.ko (default build/<kernel>/virtio_net.ko)")
    ap.add_argument("--topology", default="4:2", help="VCPUS:PAIRS or N (default 4:2)")
    ap.add_argument("--workload", default="rr16", help="a workload of bench/bench.py")
    ap.add_argument("--cell", help="a cell of the traffic matrix instead (bench/matrix.py --list)")
    ap.add_argument("--runs", type=int, default=3, help="boots per driver (default 3)")
    ap.add_argument("--seconds", type=int, default=8, help="traced window (default 8)")
    ap.add_argument("--drivers", default="stock,ours",
                    help="stock, ours or both; with --cell any of the matrix's comparators")
    ap.add_argument("--ours-coalesce", default="", metavar="'NAME VALUE ...'",
                    help="ethtool -C settings for ours after each boot")
    ap.add_argument("--top", type=int, default=12, help="rows per table (default 12)")
    ap.add_argument("--out", help="result directory (default build/ipi/<timestamp>)")
    ap.add_argument("--report", metavar="RESULTS.json",
                    help="print the tables of an earlier run again (no run)")
    args = ap.parse_args()
    if args.report:
        saved = json.loads(Path(args.report).read_text())
        for runs in saved["runs"].values():
            for r in runs:
                for row in r["rows"]:
                    row["cause"] = cause_of(row["stack"])
        cfg = saved["config"]
        print(header(cfg) + report(saved["runs"], unit_of(cfg), args.top))
        return 0
    root = REPO_ROOT
    args.module = args.module or str(root / "build" / args.kernel / "virtio_net.ko")
    if args.cell and args.cell not in M.CELLS:
        ap.error(f"unknown cell {args.cell!r} (bench/matrix.py --list)")
    if args.workload not in B.WORKLOADS:
        ap.error(f"unknown workload {args.workload!r}; known: {', '.join(B.WORKLOADS)}")
    w = B.WORKLOADS[args.workload]
    ncpu, nq = B.topo_parse(B.topo_key(args.topology))
    drivers = [d.strip() for d in args.drivers.split(",") if d.strip()]
    known = {v.name for v in M.variants()} if args.cell else {"stock", "ours"}
    if not drivers or set(drivers) - known:
        ap.error(f"--drivers: some of {', '.join(sorted(known))}")
    if "ours" in drivers and not Path(args.module).is_file():
        ap.error(f"no module at {args.module} (tests/build-matrix.sh {args.kernel})")
    outdir = Path(args.out or root / "build" / "ipi" / dt.datetime.now().strftime("%Y%m%d-%H%M%S"))
    outdir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[dict]] = {d: [] for d in drivers}
    for rep in range(args.runs):
        for d in drivers:              # alternate, as the benchmark does
            t = time.monotonic()
            r = one_run(args, d, w, ncpu, nq)
            runs[d].append(r)
            print(f"[ipi-sources] run {rep + 1}/{args.runs} {d}: {sum(r['sent'].values())} IPIs "
                  f"sent, {sum(r['received'].values())} received, {r['units']:.0f} units "
                  f"({time.monotonic() - t:.0f}s)", file=sys.stderr)
            (outdir / "results.json").write_text(json.dumps(
                {"argv": sys.argv, "config": vars(args), "runs": runs}, indent=1))
    text = header(vars(args)) + report(runs, unit_of(vars(args)), args.top)
    (outdir / "report.txt").write_text(text + "\n")
    print(text)
    print(f"\n[ipi-sources] {outdir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (VmTestError, CheckFailed) as e:
        print(f"ipi-sources: {e}", file=sys.stderr)
        sys.exit(1)
