#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Benchmark: the stock virtio_net against ours, counting VM exits.

Boots the same QEMU/TCG guest alternately with the in-tree driver and with
ours (stock, ours, stock, ours...; every topology inside each repeat, so slow
drift of the host hits both drivers alike), runs every workload in each boot
once per exit-cost model (the plugin's costs are switched at run time), and
compares the medians over the repeats.

  bench/bench.py                                   # 6.1, 5 runs x 8 s, everything
  bench/bench.py --quick                           # smoke: 3 runs x 5 s, 4 workloads, 2q
  bench/bench.py --kernel 6.12 --workloads pingpong,rr16 --topology 4 --runs 7
  bench/bench.py --topology 4,4:2 --workloads rr16   # 4 vCPUs with 4 and with 2 queue pairs
  bench/bench.py --model zero,ref,ref-noirq        # exit-cost models (default zero,ref)
  bench/bench.py --model ref --cost kick=40,irq=60 # other costs per kind (us)
  bench/bench.py --ours-coalesce 'rx-usecs 8000'  # ethtool -C for ours after boot (A/B)
  bench/bench.py --ours-setup FILE                 # a guest script for ours after boot (A/B)
  bench/bench.py --check-repro build/bench/<ts>/results.json   # same config again + compare
  bench/bench.py --compare OLD.json NEW.json       # compare two result files, no run
  bench/bench.py --report build/bench/<ts>/results.json        # tables + chart again
  bench/bench.py --list                            # workloads and models

Per workload and driver: transactions/s (sockperf) or Mbit/s (iperf3),
p50/p99 latency, guest packets; host-side kicks (QEMU trace
virtio_queue_notify) and interrupts (virtio_notify) split by TX/RX queue;
timer arms (exit-cost plugin), timer interrupts and IPIs (guest
/proc/interrupts LOC, RES+CAL); the NIC's queue interrupts per vCPU (guest
/proc/interrupts, per unit) and, for ours, the share of each queue vector's
interrupts that landed on the CPU of the driver's plan (/sys/class/net/<dev>/
virtio_net/affinity, read after boot); the driver's ethtool -S deltas and the
per-CPU counts of every IRQ (raw, in the JSON). EXITS per transaction (or per packet for streams) = kicks + device
interrupts + timer arms + timer interrupts + IPIs + HLTs (an idle vCPU's exit,
counted by the plugin), unweighted; "cost" = the plugin's counts weighted by
the model's costs (the reference costs for the counting-only models; HLT per
wake-up, where the plugin charges it).

Output: progress lines with ETA on stderr, the table on stdout, and
build/bench/<timestamp>/: results.json (every raw run), report.txt (all
metrics), summary.md, chart-<model>.svg, the module that was measured.
Exit status: 0 ok, 1 runs failed (or --check-repro/--compare found medians
outside the spread), 2 usage/setup error, 130 interrupted (partial results
are kept).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))                 # benchlib
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # harness

from harness import (CheckFailed, Guest, Nic, VMConfig, VmTestError,  # noqa: E402
                    install_signal_handlers, resolve_kernel)
from benchlib import workloads as B  # noqa: E402
from benchlib import report as R  # noqa: E402
from harness import logcheck, net  # noqa: E402
from harness.util import REPO_ROOT, log, set_verbose  # noqa: E402

DEFAULT_RUNS = 5
DEFAULT_SECONDS = 8
DEFAULT_TOPOLOGY = "2,4"
DEFAULT_MODELS = "zero,ref"
QUICK = {"runs": 3, "seconds": 5, "workloads": ",".join(B.QUICK_WORKLOADS), "topology": "2",
         "model": "ref"}
TRACE_EVENTS = ("virtio_queue_notify", "virtio_notify")
# prior step durations for the ETA before anything was measured (seconds)
PRIOR_BOOT_S = 14.0
PRIOR_OVERHEAD_S = {"rr": 7.0, "stream": 6.0}


# --- progress ------------------------------------------------------------------------------
class Progress:
    """One line per finished step on stderr: step i/N, elapsed, ETA."""

    def __init__(self, steps: list[tuple[str, float]]):
        self.steps = steps            # (kind key, prior estimate in s)
        self.done = 0
        self.t0 = time.monotonic()
        self.seen: dict[str, list[float]] = {}

    def estimate(self, key: str, prior: float) -> float:
        v = self.seen.get(key)
        return sum(v) / len(v) if v else prior

    def eta(self) -> float:
        return sum(self.estimate(k, p) for k, p in self.steps[self.done:])

    def step(self, key: str, took: float, msg: str) -> None:
        self.seen.setdefault(key, []).append(took)
        self.done += 1
        el = time.monotonic() - self.t0
        n = len(self.steps)
        sys.stderr.write(f"[{self.done:>4}/{n} {100 * self.done // max(n, 1):>3}% "
                         f"{hms(el)} ETA {hms(self.eta())}] {msg}\n")
        sys.stderr.flush()

    def skip(self, count: int) -> None:
        self.done += count


def hms(s: float) -> str:
    s = int(max(s, 0))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


# --- setup ------------------------------------------------------------------------------------
def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def git_info() -> dict:
    def git(*a):
        cp = subprocess.run(["git", "--no-optional-locks", "-C", str(REPO_ROOT), *a], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return cp.stdout.strip() if cp.returncode == 0 else None
    st = git("status", "--porcelain", "--untracked-files=no")
    return {"head": git("rev-parse", "HEAD"), "dirty": bool(st), "modified": (st or "").splitlines()}


def host_info() -> dict:
    q = subprocess.run([os.environ.get("VNET_QEMU", "qemu-system-x86_64"), "--version"], text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return {"uname": " ".join(os.uname()), "nproc": os.cpu_count(),
            "qemu": q.stdout.splitlines()[0] if q.stdout else None,
            "python": sys.version.split()[0]}


def module_info(path: Path) -> dict:
    from harness.modinfo import modinfo_field
    d = {"path": str(path), "sha256": sha256(path)}
    for f in ("version", "srcversion", "vermagic"):
        try:
            d[f] = modinfo_field(path, f)
        except Exception as e:  # noqa: BLE001 - informative only
            d[f] = f"? ({e})"
    return d


def loadavg() -> list[float]:
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


# --- one boot ------------------------------------------------------------------------------------
def wait_for_idle(max_wait: float, idle_cpus: float) -> tuple[float, float]:
    """Wait (at most max_wait s) until the host, with no guest of ours
    running, is busy on fewer than idle_cpus CPUs: other sessions share
    this machine. -> (seconds waited, busy CPUs last seen)."""
    t0 = time.monotonic()
    busy = B.host_busy_cpus(1.0)
    while busy >= idle_cpus and time.monotonic() - t0 < max_wait:
        busy = B.host_busy_cpus(2.0)
    return round(time.monotonic() - t0, 1), round(busy, 2)


def run_boot(kernel, topo, pairs: list, driver: str, module: Path | None,
             seconds: int, rep: int, prog: Progress, outdir: Path, seq: int,
             wait_idle: float = 0, idle_cpus: float = 0.5, memory: int = 1024,
             attempt: int = 0, sysctls: dict | None = None,
             coalesce: list[str] | None = None, setup: str = "") -> dict:
    """One boot running pairs = [(workload, model)] in order (plugin models
    share the boot: the plugin's costs are switched at run time)."""
    models = list(dict.fromkeys(m for _, m in pairs))
    rec = {"rep": rep, "topology": topo, "models": models, "driver": driver,
           "loadavg_start": loadavg(), "runs": []}
    if attempt:
        rec["attempt"] = attempt
    ncpu, nq = B.topo_parse(topo)
    label = f"rep {rep + 1} {R.topo_short(topo)} {driver:<5}" + (f" (retry {attempt})" if attempt else "")
    t_start = time.monotonic()
    if wait_idle > 0:
        rec["idle_wait_s"], rec["host_busy_before"] = wait_for_idle(wait_idle, idle_cpus)
    ec = None
    g = None
    t_boot = time.monotonic()
    booted = False
    try:
        ec = B.make_exitcost(kernel, models[0])
        cfg = VMConfig(smp=ncpu, memory=memory, nics=(Nic(queues=nq),), trace_events=TRACE_EVENTS,
                       qemu_args=ec.qemu_args() if ec else ())
        g = Guest(kernel, cfg, driver=driver, module=module if driver == "ours" else None,
                  name=f"bench-{os.getpid()}-{seq}")
        rec["guest_name"] = g.name
        g.boot()
        rec["rehooked"] = ec.attach(g) if ec else []
        for name, val in (sysctls or {}).items():
            g.run_ok(f"echo {shlex.quote(val)} > /proc/sys/{name.replace('.', '/')}")
        ifname = net.ifname(g)
        if coalesce and driver == "ours":
            g.run_ok(shlex.join(["ethtool", "-C", ifname] + coalesce))
        if setup and driver == "ours":
            g.put_file(setup.encode(), "/tmp/bench-setup.sh", 0o755)
            rec["setup_output"] = g.run_ok(f"IF={shlex.quote(ifname)} sh /tmp/bench-setup.sh",
                                           timeout=60)
        rec["guest_info"] = B.guest_info(g, ifname)
        booted = True
        rec["boot_s"] = round(time.monotonic() - t_boot, 2)
        waited = (f"; waited {rec['idle_wait_s']:.0f}s for the host (busy "
                  f"{rec['host_busy_before']:.1f} CPUs)" if rec.get("idle_wait_s", 0) >= 2 else "")
        prog.step("boot", time.monotonic() - t_start, f"{label} booted in {rec['boot_s']:.1f}s "
                  f"({rec['guest_info'].get('driver', '?')} {rec['guest_info'].get('version', '')})"
                  f"{waited}")
        ctx = B.BootCtx(g=g, ec=ec, trace=B.TraceState(g.trace_path), ncpu=ncpu, pairs=nq,
                        ifname=ifname, model=models[0], info=rec["guest_info"])
        mark = g.mark()
        steps_left = len(pairs)
        for w, model in pairs:
            t0 = time.monotonic()
            try:
                if ec is not None:
                    ec.set_costs(B.model_costs(model))
                ctx.model = model
                r = B.run_workload(ctx, w, seconds)
                msg = short(r["metrics"], w)
            except (CheckFailed, VmTestError) as e:
                r = {"workload": w.name, "ok": False, "error": str(e)[-4000:]}
                msg = f"FAILED: {str(e).splitlines()[0][:150]}"
            r["model"] = model
            r["step_s"] = round(time.monotonic() - t0, 2)
            rec["runs"].append(r)
            steps_left -= 1
            prog.step(f"w:{w.name}", time.monotonic() - t0,
                      f"{label} {model:<9} {w.name:<9} {msg}")
            broken = g.agent.broken if g.agent else "no agent"
            if not g.alive() or broken:
                # the rest would fail the same way: stop, bench retries in a new boot
                rec["error"] = "QEMU exited" if not g.alive() else f"guest agent: {broken}"
                prog.skip(steps_left)
                break
        try:
            problems = logcheck.find_problems(g.new_log(mark))
            if problems:
                rec["log_problems"] = list(dict.fromkeys(problems))[:20]
                sys.stderr.write(f"  warning: kernel log problems: {rec['log_problems'][:3]}\n")
        except Exception as e:  # noqa: BLE001
            rec["log_problems"] = [f"log check failed: {e}"]
    except (VmTestError, CheckFailed) as e:
        rec["error"] = str(e)[-4000:]
        if not booted:
            prog.step("boot", time.monotonic() - t_start, f"{label} BOOT FAILED: "
                      f"{str(e).splitlines()[0][:150]}")
            prog.skip(len(pairs))
    finally:
        if g is not None:
            failed = "error" in rec or any(not r.get("ok") for r in rec["runs"])
            if failed:
                g.save_logs(outdir / "logs" / f"{seq:03d}-{R.topo_short(topo).replace('/', '-')}-"
                                              f"{'+'.join(models)}-{driver}"
                                              + (f"-retry{attempt}" if attempt else ""))
            g.shutdown()
        if ec is not None:
            ec.cleanup()
    rec["wall_s"] = round(time.monotonic() - t_start, 2)   # includes the idle wait
    rec["loadavg_end"] = loadavg()
    return rec


def short(m: dict, w) -> str:
    perf = (f"{fmt_opt(m.get('tps'), '.0f')} tps p99 {fmt_opt(m.get('p99_us'), '.0f')}us"
            if w.kind == "rr" else f"{fmt_opt(m.get('mbps'), '.0f')} Mbit/s")
    cost = "" if m.get("cost_us_per_unit") is None else f" cost {m['cost_us_per_unit']:.1f}us"
    return (f"{perf}; kicks/txpkt {fmt_opt(m.get('kicks_per_txpkt'))} irqs/pkt "
            f"{fmt_opt(m.get('irqs_per_pkt'))} exits/{w.unit} {fmt_opt(m.get('exits_per_unit'), '.2f')}"
            f"{cost}")


def fmt_opt(v, f=".3f") -> str:
    return "-" if v is None else format(v, f)


# --- output ------------------------------------------------------------------------------------
def write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    tmp.replace(path)


def write_reports(results: dict, outdir: Path, full_stdout: bool) -> str:
    summ = R.summarize(results)
    full = R.table(results, summ, metrics=tuple(R.METRICS))
    short_t = R.table(results, summ)
    noise = R.noise_report(results, summ)
    brk = R.exits_breakdown(results, summ) + "\n\n" + R.irq_cpu_breakdown(results, summ)
    md = R.markdown(results, summ)
    head = describe_config(results)
    (outdir / "report.txt").write_text(f"{head}\n\n{full}\n\n{brk}\n\n{noise}\n")
    (outdir / "summary.md").write_text(md + "\n")
    charts = []
    for model in results["config"]["models"]:
        if any(k[1] == model for k in summ):
            p = outdir / f"chart-{model}.svg"
            p.write_text(R.svg_chart(results, model, summ))
            charts.append(p)
    text = (f"{head}\n\n{full if full_stdout else short_t}\n\n{brk}\n\n{noise}\n\n"
            f"files: {outdir}/results.json, report.txt (all metrics), summary.md, "
            + ", ".join(c.name for c in charts))
    return text


def describe_config(results: dict) -> str:
    c = results["config"]
    mod = c.get("module") or {}
    dur = results.get("duration_s")
    return (f"bench: kernel {c['release']}, topologies {c['topologies']}, models {c['models']}, "
            f"{c['runs']} runs x {c['seconds']} s, workloads {','.join(c['workloads'])}\n"
            f"ours: {mod.get('orig_path')} version {mod.get('version')} srcversion "
            f"{mod.get('srcversion')} sha256 {str(mod.get('sha256'))[:16]}\n"
            f"git {str((c.get('git') or {}).get('head'))[:12]}"
            f"{' (dirty)' if (c.get('git') or {}).get('dirty') else ''}; "
            f"started {results.get('started')}"
            + (f", took {hms(dur)}" if dur else "")
            + ("; INTERRUPTED" if results.get("interrupted") else "")
            + (f"\nguest sysctls {c['sysctls']}" if c.get("sysctls") else "")
            + (f"\nours: ethtool -C {' '.join(c['ours_coalesce'])}" if c.get("ours_coalesce") else "")
            + (f"\nours: setup script {c['ours_setup_path']}" if c.get("ours_setup") else "")
            + (f"\ncosts replaced (us) {c['cost_overrides']}" if c.get("cost_overrides") else ""))


def recompute(results: dict) -> dict:
    """Derive the metrics again from the raw records (so a result file
    benefits from metric fixes and additions made after it was written)."""
    B.set_ref_override(results.get("config", {}).get("cost_overrides"))
    for b in results.get("boots", []):
        for r in b.get("runs", []):
            w = B.WORKLOADS.get(r.get("workload"))
            if r.get("ok") and w and "window" in r:
                try:
                    ncpu, nq = B.topo_parse(b["topology"])
                    r["metrics"] = B.metrics(r, w, nq, r.get("model", b.get("model")), ncpu)
                except (KeyError, TypeError, ZeroDivisionError) as e:
                    sys.stderr.write(f"bench: cannot recompute {r['workload']}: {e}\n")
    return results


# --- main ------------------------------------------------------------------------------------------
def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--kernel", help="kernel key: 5.10, 6.1, 6.12 or 7.2 (default 6.1)")
    ap.add_argument("--module", type=Path, help="our virtio_net.ko (default build/<KEY>/virtio_net.ko)")
    ap.add_argument("--runs", type=int, help=f"repeats: boots per driver and topology (default {DEFAULT_RUNS})")
    ap.add_argument("--seconds", type=int, help=f"seconds per workload (default {DEFAULT_SECONDS})")
    ap.add_argument("--workloads", help="comma separated names or globs (default all; see --list)")
    ap.add_argument("--topology", help="comma separated: N = N vCPUs and N queue pairs, C:P = C vCPUs "
                                       f"and P queue pairs (default {DEFAULT_TOPOLOGY})")
    ap.add_argument("--model", help=f"exit-cost models, comma separated: {', '.join(B.MODELS)} "
                                    f"(default {DEFAULT_MODELS})")
    ap.add_argument("--cost", metavar="KIND=US,...",
                    help="replace reference costs (us per event) of the models ref and "
                         "ref-noirq and of the cost-weighted totals; kinds: " + ", ".join(B.KINDS))
    ap.add_argument("--sysctl", metavar="NAME=VALUE,...",
                    help="guest sysctls set after each boot, for both drivers "
                         "(e.g. net.core.skb_defer_max=0)")
    ap.add_argument("--ours-coalesce", metavar="'NAME VALUE ...'",
                    help="ethtool -C settings applied to our driver after each boot, e.g. "
                         "'rx-usecs 8000' (an A/B of a setting against the defaults)")
    ap.add_argument("--ours-setup", type=Path, metavar="SCRIPT",
                    help="guest shell script run after each boot of our driver (IF = the "
                         "interface), e.g. bench/setups/stock-placement-4-2.sh")
    ap.add_argument("--drivers", default="stock,ours", help="stock,ours (default) or one of them")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 3 runs x 5 s, workloads " + ",".join(B.QUICK_WORKLOADS)
                         + ", topology 2, model ref (explicit options win)")
    ap.add_argument("--wait-idle", type=float, default=20, metavar="S",
                    help="before each boot wait up to S seconds for the shared host to calm down "
                         "(default 20; 0 = never wait)")
    ap.add_argument("--idle-cpus", type=float, default=0.5, metavar="N",
                    help="'calm' = fewer than N busy host CPUs without our guest (default 0.5)")
    ap.add_argument("--retries", type=int, default=1, metavar="N",
                    help="boots to redo the missing runs of a boot whose guest or agent died "
                         "(default 1)")
    ap.add_argument("--memory", type=int, metavar="MB",
                    help="guest RAM (default: enough for the sockperf clients, >= 1024)")
    ap.add_argument("--out", type=Path, help="result directory (default build/bench/<timestamp>)")
    ap.add_argument("--check-repro", type=Path, metavar="RESULTS.json",
                    help="run again with that file's configuration (options given here win) "
                         "and say whether the medians are within its spread")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("OLD.json", "NEW.json"),
                    help="compare two result files, no run")
    ap.add_argument("--report", type=Path, metavar="RESULTS.json",
                    help="print the tables and rewrite report/summary/charts of a result file")
    ap.add_argument("--full", action="store_true", help="every metric in the stdout table")
    ap.add_argument("--list", action="store_true", help="list workloads and models")
    ap.add_argument("-v", "--verbose", action="count", default=0, help="harness details on stderr")
    return ap.parse_args(argv)


def parse_sysctls(text: str) -> dict[str, str]:
    """'net.core.skb_defer_max=0,...' -> {name: value}."""
    out = {}
    for part in (x.strip() for x in (text or "").split(",")):
        if not part:
            continue
        name, sep, val = part.partition("=")
        if not sep or not re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)+", name.strip()):
            raise VmTestError(f"--sysctl {part!r}: want NAME=VALUE, e.g. net.core.skb_defer_max=0")
        out[name.strip()] = val.strip()
    return out


def parse_coalesce(text: str) -> list[str]:
    """'rx-usecs 8000 adaptive-rx off' -> ethtool -C arguments (name value pairs)."""
    words = shlex.split(text or "")
    names = words[0::2]
    if len(words) % 2 or not all(re.fullmatch(r"[a-z][a-z0-9-]*", n) for n in names):
        raise VmTestError(f"--ours-coalesce {text!r}: want NAME VALUE pairs, e.g. 'rx-usecs 8000'")
    return words


def resolve_config(a) -> dict:
    base = {}
    if a.check_repro:
        old = json.loads(a.check_repro.read_text())["config"]
        base = {"kernel": old["kernel"], "runs": old["runs"], "seconds": old["seconds"],
                "workloads": ",".join(old["workloads"]),
                "topology": ",".join(map(str, old["topologies"])), "model": ",".join(old["models"]),
                "cost": ",".join(f"{k}={v:g}" for k, v in (old.get("cost_overrides") or {}).items()),
                "sysctl": ",".join(f"{k}={v}" for k, v in (old.get("sysctls") or {}).items()),
                "ours_coalesce": " ".join(old.get("ours_coalesce") or []),
                "ours_setup": old.get("ours_setup_path"),
                "module": (old.get("module") or {}).get("orig_path")}
    elif a.quick:
        base = dict(QUICK)

    def pick(name, default):
        v = getattr(a, name)
        return v if v is not None else base.get(name, default)

    kernel = pick("kernel", "6.1")
    cfg = {"kernel": kernel, "runs": int(pick("runs", DEFAULT_RUNS)),
           "seconds": int(pick("seconds", DEFAULT_SECONDS)),
           "workloads": B.select_workloads(pick("workloads", ",".join(B.DEFAULT_WORKLOADS))),
           "topologies": [B.topo_key(x) for x in str(pick("topology", DEFAULT_TOPOLOGY)).split(",")
                          if x.strip()],
           "models": [x.strip() for x in pick("model", DEFAULT_MODELS).split(",") if x.strip()],
           "drivers": [x.strip() for x in a.drivers.split(",") if x.strip()],
           "costs": B.parse_costs(pick("cost", "")),
           "sysctls": parse_sysctls(pick("sysctl", "")),
           "ours_coalesce": parse_coalesce(pick("ours_coalesce", ""))}
    setup = pick("ours_setup", None)
    cfg["ours_setup_path"] = str(setup) if setup else None
    try:
        cfg["ours_setup"] = Path(setup).read_text() if setup else ""
    except OSError as e:
        raise VmTestError(f"--ours-setup {setup}: {e.strerror}") from None
    mod = pick("module", None) or (REPO_ROOT / "build" / kernel / "virtio_net.ko")
    cfg["module_path"] = Path(mod)
    for m in cfg["models"]:
        if m not in B.MODELS:
            raise VmTestError(f"unknown model {m!r}: {', '.join(B.MODELS)}")
    for d in cfg["drivers"]:
        if d not in ("stock", "ours"):
            raise VmTestError(f"unknown driver {d!r}")
    if cfg["runs"] < 1 or cfg["seconds"] < 1 or not cfg["topologies"] or not cfg["workloads"]:
        raise VmTestError("need runs >= 1, seconds >= 1, a topology and a workload")
    return cfg


def main(argv=None) -> int:
    a = parse_args(argv)
    set_verbose(a.verbose)
    if a.list:
        for w in B.WORKLOADS.values():
            print(f"{w.name:<10} {w.desc}" + ("  [quick]" if w.name in B.QUICK_WORKLOADS else ""))
        print()
        for m, h in B.MODEL_HELP.items():
            print(f"model {m:<10} {h}")
        print(f"reference costs (us): {B.ref_costs()}"
              + ("" if B.EXITCOST_ERROR is None else f"  [exitcost unavailable: {B.EXITCOST_ERROR}]"))
        return 0
    if a.compare:
        old, new = (recompute(json.loads(p.read_text())) for p in a.compare)
        text, ok, total = R.compare_results(old, new)
        print(text)
        return 0 if ok == total else 1
    if a.report:
        res = recompute(json.loads(a.report.read_text()))
        print(write_reports(res, a.report.parent, a.full))
        return 0
    try:
        cfg = resolve_config(a)
    except (VmTestError, OSError, KeyError, ValueError) as e:
        print(f"bench: error: {e}", file=sys.stderr)
        return 2
    install_signal_handlers()
    try:
        results, outdir, rc = run_bench(cfg, a)
    except VmTestError as e:
        print(f"bench: error: {e}", file=sys.stderr)
        return 2
    if results is None:
        return rc
    print(write_reports(results, outdir, a.full))
    if a.check_repro:
        old = recompute(json.loads(a.check_repro.read_text()))
        text, ok, total = R.compare_results(old, results)
        (outdir / "repro.txt").write_text(text + "\n")
        print(f"\nreproducibility against {a.check_repro}:\n{text}")
        if ok != total:
            rc = rc or 1
    return rc


def run_bench(cfg: dict, a) -> tuple[dict | None, Path, int]:
    kernel = resolve_kernel(cfg["kernel"])
    workloads = [B.WORKLOADS[n] for n in cfg["workloads"]]
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    outdir = a.out or (REPO_ROOT / "build" / "bench" / stamp)
    outdir.mkdir(parents=True, exist_ok=True)
    module = None
    if "ours" in cfg["drivers"]:
        src = cfg["module_path"]
        if not src.is_file():
            raise VmTestError(f"{src} not found: build it (tests/build-matrix.sh {cfg['kernel']}) "
                              f"or give --module")
        # measure a private copy: others may rebuild build/<KEY>/ meanwhile
        module = outdir / "virtio_net.ko"
        shutil.copy2(src, module)
    if any(m != "none" for m in cfg["models"]) and B.EXITCOST_ERROR:
        raise VmTestError(f"exit-cost plugin unavailable ({B.EXITCOST_ERROR}); use --model none")
    B.set_ref_override(cfg["costs"])
    costs = {m: B.model_costs(m) for m in cfg["models"]}
    cfg["memory"] = a.memory or B.guest_memory_mb(workloads, cfg["seconds"])
    results = {
        "version": 1, "tool": "bench/bench.py", "argv": sys.argv,
        "started": dt.datetime.now().isoformat(timespec="seconds"),
        "config": {
            "kernel": cfg["kernel"], "release": kernel.release, "runs": cfg["runs"],
            "seconds": cfg["seconds"], "workloads": cfg["workloads"],
            "workload_meta": {w.name: {"kind": w.kind, "flows": w.flows, "msg": w.msg,
                                       "direction": w.direction, "desc": w.desc,
                                       "unit": w.unit} for w in workloads},
            "topologies": cfg["topologies"], "models": cfg["models"], "drivers": cfg["drivers"],
            "memory_mb": cfg["memory"],
            "cost_overrides": cfg["costs"], "sysctls": cfg["sysctls"],
            "ours_coalesce": cfg["ours_coalesce"],
            "ours_setup_path": cfg["ours_setup_path"], "ours_setup": cfg["ours_setup"],
            "model_costs": costs, "model_weights": {m: (B.model_weights(m) if costs[m] is not None
                                                        else None) for m in cfg["models"]},
            "module": dict(module_info(module), orig_path=str(cfg["module_path"])) if module else None,
            "git": git_info(), "host": host_info(), "trace_events": list(TRACE_EVENTS),
            "order": "for rep: for topology: for model group (the plugin models; 'none'): "
                     "for driver (stock, ours): one boot; in it for workload: for model "
                     "(order rotated per rep): one run",
        },
        "boots": [],
    }
    if any(costs[m] is not None for m in cfg["models"]):
        try:
            ec = B.make_exitcost(kernel, next(m for m in cfg["models"] if costs[m] is not None))
            results["config"]["exitcost"] = {"coverage": ec.coverage(), "plugin": str(ec.so)}
            ec.cleanup()
        except Exception as e:  # noqa: BLE001
            raise VmTestError(f"exit-cost plugin setup failed: {e}") from e
    # plugin models share a boot (costs switched at run time); "none" needs its own
    groups = [[m for m in cfg["models"] if costs[m] is not None]] + \
        [["none"] for m in cfg["models"] if costs[m] is None]
    groups = [grp for grp in groups if grp]
    plan = []
    for rep in range(cfg["runs"]):
        for t in cfg["topologies"]:
            for grp in groups:
                # rotate the model order per repeat: no model always runs first
                k = rep % len(grp)
                for d in cfg["drivers"]:
                    plan.append((rep, t, grp[k:] + grp[:k], d))
    steps = []
    for _, _, grp, _ in plan:
        steps.append(("boot", PRIOR_BOOT_S))
        steps += [(f"w:{w.name}", cfg["seconds"] + PRIOR_OVERHEAD_S[w.kind] + (4 if w.flows > 4 else 0))
                  for w in workloads for _ in grp]
    prog = Progress(steps)
    rpath = outdir / "results.json"
    log(f"bench: {len(plan)} boots x {len(workloads)} workloads -> {outdir} "
        f"(estimate {hms(prog.eta())})", 0)
    t0 = time.monotonic()
    rc = 0
    try:
        for seq, (rep, topo, models, driver) in enumerate(plan):
            pairs = [(w, m) for w in workloads for m in models]
            rec = run_boot(kernel, topo, pairs, driver, module, cfg["seconds"], rep,
                           prog, outdir, seq, a.wait_idle, a.idle_cpus, cfg["memory"],
                           sysctls=cfg["sysctls"], coalesce=cfg["ours_coalesce"],
                           setup=cfg["ours_setup"])
            results["boots"].append(rec)
            for attempt in range(1, a.retries + 1):
                # a boot whose guest died or whose agent stopped answering: its
                # missing runs once more in a fresh boot, right away
                if not rec.get("error"):
                    break
                done = {(r["workload"], r["model"]) for b in results["boots"][-attempt:]
                        for r in b["runs"] if r.get("ok")}
                missing = [(w, m) for w, m in pairs if (w.name, m) not in done]
                if not missing:
                    break
                prog.steps += [("boot", PRIOR_BOOT_S)] + [(f"w:{w.name}", 0.0) for w, _ in missing]
                rec = run_boot(kernel, topo, missing, driver, module, cfg["seconds"], rep,
                               prog, outdir, seq, 0, a.idle_cpus, cfg["memory"], attempt=attempt,
                               sysctls=cfg["sysctls"], coalesce=cfg["ours_coalesce"],
                               setup=cfg["ours_setup"])
                results["boots"].append(rec)
            runs = {}
            for b in results["boots"]:
                if b["rep"] == rep and b["topology"] == topo and b["driver"] == driver:
                    for r in b["runs"]:
                        if r.get("ok") and r.get("model") in models:
                            runs[(r["workload"], r["model"])] = True
            if len(runs) < len(pairs):
                rc = 1
            results["duration_s"] = round(time.monotonic() - t0, 1)
            write_json(rpath, results)
    except KeyboardInterrupt:
        results["interrupted"] = True
        rc = 130
        sys.stderr.write("\nbench: interrupted; partial results kept\n")
    results["finished"] = dt.datetime.now().isoformat(timespec="seconds")
    results["duration_s"] = round(time.monotonic() - t0, 1)
    write_json(rpath, results)
    if not results["boots"]:
        return None, outdir, rc
    return results, outdir, rc


if __name__ == "__main__":
    sys.exit(main())
