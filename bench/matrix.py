#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Traffic matrix: stock virtio_net, its knobs and ours over many traffic shapes.

Boots QEMU/TCG guests, one comparator per boot (stock at its defaults, stock
with napi_tx=0, stock with napi_defer_hard_irqs + gro_flush_timeout, ours),
interleaved per repeat (stock, ours, ...) so host drift hits all; in each
boot every cell of the topology runs once and measures one window per
exit-cost model (switched at run time). See docs/benchmarks-matrix.md.

  bench/matrix.py --out DIR                      # the full matrix (~3 h)
  bench/matrix.py --screen --out DIR             # the screen: cells likely to show harm or gain (<30 min)
  bench/matrix.py --screen --ours-coalesce 'tx-usecs 50' --out DIR   # A/B of an ethtool -C setting
  bench/matrix.py --screen --ours-modopts 'kick_policy=off' --out DIR # A/B of module options
  bench/matrix.py --cells 'rr-tcp-*,mixed' --topology 2,2:1 --runs 2 --out DIR
  bench/matrix.py --knob-search --out DIR        # the search that chose stock-tuned's values
  bench/matrix.py --report DIR                   # heat map, tables, targets again (no run)
  bench/matrix.py --list                         # cells, topologies, variants, models

Cells run on the topologies of the plan (--plan full/screen) unless --cells
and --topology say otherwise. Output in DIR: results.json (every window),
and from bench/benchlib/heatmap.py: heatmap.svg, matrix.md (the same numbers,
best/worst cells, significance, PASS/FAIL per target), targets.txt.
Exit status: 0 ok, 1 some windows failed, 2 usage/setup error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))                 # benchlib, bench.py
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # harness

import bench as BC  # noqa: E402  (bench/bench.py: progress, host/git info, idle wait)
from harness import (CheckFailed, VmTestError, install_signal_handlers,  # noqa: E402
                    resolve_kernel)
from benchlib import workloads as B  # noqa: E402
from benchlib import report as R  # noqa: E402
from benchlib import heatmap as H  # noqa: E402
from harness import logcheck, net  # noqa: E402
from benchlib import matrix as M  # noqa: E402
from harness.util import REPO_ROOT, log, set_verbose  # noqa: E402

MODELS = ("zero", "ref-noirq", "ref", "modern")
MAIN = 2          # 2 vCPUs / 2 queue pairs: every cell
# topology -> cells; the other topologies get the cells whose behaviour
# depends on the number of pairs per CPU and flows per pair
# Streams: every size x flow count for TX (where the kick and reclaim policies
# act); RX at 64/256 B and bulk x 1/4/16 flows and 1400 B x 4 (RX moderation
# sees packets, not writes: 1400 B writes arrive as bulk does); UDP floods
# into the guest at 64 B x 4 and 1400 B x 4; streams paced by iperf3 (-b)
# and bounded by small socket buffers (-w) both ways
RX_CELLS = ({f"rx-{s}x{n}" for s in ("64", "256", "bulk") for n in (1, 4, 16)}
            | {"rx-1400x4", "udp-rx-64x4", "udp-rx-1400x4"}
            | {n for n, c in M.CELLS.items()
               if c.kind == "stream" and c.direction == "rx" and (c.bitrate or c.window)})
OTHER_TOPO_CELLS = ["rr-tcp-4", "rr-tcp-128", "ol-udp-3000", "tx-256x4", "rx-256x4", "tx-bulkx2"]
# One-way paced senders: two rungs of each ladder, a factor of 10 apart (the
# full ladders would add ~16 min to the ~3 h; the screen has two more) and one
# from a sender that leaves Nagle on
PUB_CELLS = {"pub-1400-1000", "pub-1400-10000", "pub-16k-300", "pub-16k-3000", "pubn-1400-3000"}
FULL_PLAN = {
    MAIN: [n for n, c in M.CELLS.items() if c.kind != "mixed" and n != "dns-1000"
           and not (c.kind == "stream" and c.direction == "rx" and n not in RX_CELLS)
           and not (c.kind == "pub" and n not in PUB_CELLS)],
    "2:1": ["mixed", "mixed-c1", "mixed-free", "rr-tcp-4", "ol-udp-3000", "tx-256x4", "tx-bulkx2"],
    "4:2": OTHER_TOPO_CELLS,
    4: ["rr-tcp-4", "rr-tcp-128", "ol-udp-3000", "tx-256x4"],
}
# the known bad cells of issue 20, a closed loop of large answers, a publisher
# that leaves Nagle on, a UDP sender bound by its send buffer, streams bound
# by a fixed 128 KiB window both ways, and the gain to keep
SCREEN_PLAN = {
    MAIN: ["rr-tcp-4", "rr-udp-4", "rr-tcp-1-2w", "rr-tcp-1-16k", "ol-udp-1000", "ol-udp-3000", "ol-udp-10000",
           "ol-tcp-3000", "pub-1400-3000", "pubn-1400-3000", "pub-16k-1000", "tx-bulkx2", "tx-256x4", "rx-256x4",
           "udp-tx-1400x4", "tx-bulkx1-w128k", "rx-bulkx1-w128k", "dns-2000", "dns-3000", "http-1000"],
    "2:1": ["mixed", "mixed-c1", "mixed-free"],
}
# repeats per variant: stock and ours carry the significance test (an exact
# Mann-Whitney U needs 4 per side to reach p < 0.05); the knob comparators run
# on the main topology only, once in the full matrix (2 more runs of each
# would add ~28 min to the ~3 h) and twice (napi_tx=0) in the screen
PLANS = {"full": (FULL_PLAN, {"stock": 4, "ours": 4, "stock-notx": 1, "stock-tuned": 1}),
         "screen": (SCREEN_PLAN, {"stock": 4, "ours": 4, "stock-notx": 2, "stock-tuned": 2})}
KNOB_CELLS = ["rr-tcp-16", "rr-udp-4", "ol-udp-3000", "tx-256x4", "rx-256x4"]
# step durations measured in short runs here (2 vCPUs, a busy shared host):
# boot + guest setup; per window: settle + edges (app cells: + generator
# start and exit); per cell: load start/stop (streams: iperf3 in the guest)
PRIOR_BOOT_S = 20.0
PRIOR_WINDOW_OVERHEAD_S = 0.55
PRIOR_APP_WINDOW_S = 2.6
PRIOR_CELL_OVERHEAD_S = {"rr": 1.9, "ol": 1.0, "pub": 1.5, "mixed": 3.5, "stream": 4.8, "app": 0.0}


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--out", type=Path, help="result directory (required for a run)")
    ap.add_argument("--screen", action="store_true", help="the screen plan instead of the full one")
    ap.add_argument("--knob-search", action="store_true",
                    help="stock with each napi_defer_hard_irqs/gro_flush_timeout setting of the grid "
                         "on a few cells (model ref)")
    ap.add_argument("--cells", help="comma separated cell names or globs (default: the plan's)")
    ap.add_argument("--topology", help="comma separated: N or C:P (default: the plan's); "
                                       "with --cells every cell runs on each")
    ap.add_argument("--model", help=f"comma separated (default {','.join(MODELS)}): "
                                    + ", ".join(B.MODELS))
    ap.add_argument("--variants", help="comma separated: stock,ours,stock-notx,stock-tuned,"
                                       "stock-threaded (default the first four)")
    ap.add_argument("--runs", type=int, help="repeats for every variant (default: the plan's, "
                                             "4 for stock and ours, 2 for the knobs)")
    ap.add_argument("--seconds", type=float, default=M.DEFAULT_WINDOW_S,
                    help=f"window per model and cell (default {M.DEFAULT_WINDOW_S}; open-loop cells "
                         f"get up to 10 s for {M.OL_MIN_SAMPLES} samples)")
    ap.add_argument("--tuned", default=",".join(map(str, M.TUNED_DEFAULT)),
                    metavar="DEFER,NS", help="stock-tuned's napi_defer_hard_irqs,gro_flush_timeout "
                                             f"(default {M.TUNED_DEFAULT[0]},{M.TUNED_DEFAULT[1]})")
    ap.add_argument("--ours-coalesce", metavar="'NAME VALUE ...'",
                    help="ethtool -C settings for ours after each boot (A/B against its defaults)")
    ap.add_argument("--ours-modopts", metavar="'OPT=V ...'", default="",
                    help="module options for ours (A/B)")
    ap.add_argument("--ours-setup", type=Path, metavar="SCRIPT",
                    help="guest shell script run after each boot of ours (IF = the interface)")
    ap.add_argument("--setup", type=Path, metavar="SCRIPT",
                    help="guest shell script run after each boot of every variant, before the "
                         "variant's own (IF = the interface): a guest configuration to measure "
                         "all drivers in, e.g. a qdisc or a TCP congestion control")
    ap.add_argument("--ours-b-module", type=Path, metavar="KO",
                    help="variant ours-b: this virtio_net.ko (default: the one of ours)")
    ap.add_argument("--ours-b-coalesce", metavar="'NAME VALUE ...'", default="",
                    help="variant ours-b: ethtool -C settings after each boot")
    ap.add_argument("--ours-b-modopts", metavar="'OPT=V ...'", default="",
                    help="variant ours-b: module options")
    ap.add_argument("--ours-b-setup", type=Path, metavar="SCRIPT",
                    help="variant ours-b: guest shell script after each boot (IF = the interface)")
    ap.add_argument("--kernel", default="6.1", help="kernel key (default 6.1)")
    ap.add_argument("--module", type=Path, help="our virtio_net.ko (default build/<KEY>/virtio_net.ko)")
    ap.add_argument("--guest-stats", action="store_true",
                    help="record each window's ethtool -S and queue interrupt changes in the guest "
                         "(results.json: window.guest_stats; two agent calls per window)")
    ap.add_argument("--keep-logs", action="store_true",
                    help="keep every boot's logs in OUT/logs/, with QEMU's trace stamped "
                         "(-msg timestamp=on) and these trace events too: "
                         f"{','.join(M.TIMELINE_EVENTS)} (bench/timeline.py reads them)")
    ap.add_argument("--wait-idle", type=float, default=20, metavar="S",
                    help="before each boot wait up to S s for the shared host to calm down")
    ap.add_argument("--idle-cpus", type=float, default=0.5, metavar="N")
    ap.add_argument("--report", type=Path, metavar="DIR", help="regenerate the picture and tables")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the boots, windows and the time estimate; no run")
    ap.add_argument("--list", action="store_true", help="cells, plans, variants, models")
    ap.add_argument("--self-check", action="store_true",
                    help="check vnet-load on loopback and the target logic on known cases (~15 s)")
    ap.add_argument("-v", "--verbose", action="count", default=0)
    return ap.parse_args(argv)


def build_plan(a) -> tuple[dict, dict, list]:
    """-> ({topology: [cells]}, {variant: runs}, [Variant])."""
    if a.knob_search:
        vs = M.knob_variants()
        cells = M.select_cells(a.cells) if a.cells else KNOB_CELLS
        topos = [B.topo_key(t) for t in (a.topology or str(MAIN)).split(",")]
        return {t: cells for t in topos}, {v.name: a.runs or 2 for v in vs}, vs
    plan, runs = PLANS["screen" if a.screen else "full"]
    which = [x.strip() for x in (a.variants or ",".join(runs)).split(",")]
    tuned = tuple(int(x) for x in a.tuned.split(","))
    setup = a.ours_setup.read_text() if a.ours_setup else ""
    ours_b = None
    if a.ours_b_module or a.ours_b_coalesce or a.ours_b_modopts or a.ours_b_setup:
        ours_b = M.Variant("ours-b", "ours", a.ours_b_modopts, None,
                           tuple(BC.parse_coalesce(a.ours_b_coalesce)),
                           a.ours_b_setup.read_text() if a.ours_b_setup else "",
                           module=str(a.ours_b_module.resolve()) if a.ours_b_module else "")
        if not a.variants:
            which.insert(2, "ours-b")
    vs = M.variants(tuned, BC.parse_coalesce(a.ours_coalesce or ""), setup, a.ours_modopts, which,
                    ours_b)
    if a.setup:
        vs = M.with_common_setup(vs, a.setup.read_text())
    if a.cells or a.topology:
        topos = [B.topo_key(t) for t in (a.topology or str(MAIN)).split(",")]
        cells = M.select_cells(a.cells) if a.cells else None
        plan = {t: cells or plan.get(t, plan[MAIN]) for t in topos}
    runs = {v.name: a.runs or runs.get(v.name, runs["ours" if v.driver == "ours" else "stock"])
            for v in vs}
    return plan, runs, vs


def schedule(plan: dict, runs: dict, vs: list) -> list[tuple]:
    """Boots in order: for rep: for topology: for variant -> (rep, topo, variant),
    the variants in reverse order every second repeat, so that a drift of
    the host over the run does not always favour the same variant.  Stock's
    knob comparators run on the main topology only (unless it is not in the
    plan); ours-b, an A/B of ours, runs wherever ours does."""
    out = []
    main = MAIN if MAIN in plan else next(iter(plan))
    for rep in range(max(runs.values())):
        for topo in plan:
            for v in (vs if rep % 2 == 0 else vs[::-1]):
                knob = v.driver == "stock" and v.name != "stock"
                if rep < runs[v.name] and (topo == main or not knob or len(plan) == 1):
                    out.append((rep, topo, v))
    return out


def estimate_steps(sched, plan, models, seconds) -> list[tuple[str, float]]:
    steps = []
    for _, topo, _ in sched:
        steps.append(("boot", PRIOR_BOOT_S))
        for name in plan[topo]:
            c = M.CELLS[name]
            per = c.window_s(seconds) + (PRIOR_APP_WINDOW_S if c.kind == "app"
                                         else PRIOR_WINDOW_OVERHEAD_S)
            steps.append((f"c:{name}", PRIOR_CELL_OVERHEAD_S[c.kind] + per * len(models)))
    return steps


# --- one boot ------------------------------------------------------------------------------
def run_boot(kernel, topo, v: M.Variant, module, rep, cells, models, seconds, prog, outdir,
             seq, a) -> dict:
    ncpu, nq = B.topo_parse(topo)
    rec = {"rep": rep, "topology": topo, "variant": v.name, "driver": v.driver, "models": models,
           "loadavg_start": BC.loadavg(), "runs": []}
    label = f"rep {rep + 1} {R.topo_short(topo)} {v.name}"
    t_start = time.monotonic()
    if a.wait_idle > 0:
        rec["idle_wait_s"], rec["host_busy_before"] = BC.wait_for_idle(a.wait_idle, a.idle_cpus)
    ec = g = None
    apps = sorted({M.CELLS[c].app for c in cells if M.CELLS[c].kind == "app"})
    try:
        ec = B.make_exitcost(kernel, models[0])
        qargs = tuple(ec.qemu_args()) if ec else ()
        if a.keep_logs:
            qargs += ("-msg", "timestamp=on")
        g = M.variant_guest(kernel, v, module, topo, f"matrix-{os.getpid()}-{seq}", qargs,
                            tuple(M.APP_BINARIES[x] for x in apps),
                            M.TIMELINE_EVENTS if a.keep_logs else ())
        g.boot()
        rec["rehooked"] = ec.attach(g) if ec else []
        ifname = net.ifname(g)
        out = M.variant_setup(g, v, ifname)
        if out or v.setup_script():
            rec["setup_output"] = out
        rec["guest_info"] = B.guest_info(g, ifname)
        if v.driver == "stock":
            rec["guest_info"]["napi_tx"] = g.run(
                "cat /sys/module/virtio_net/parameters/napi_tx", timeout=20, quiet=True).out.strip()
        M.start_guest_servers(g, ncpu)
        rec["boot_s"] = round(time.monotonic() - t_start, 2)
        prog.step("boot", time.monotonic() - t_start, f"{label} booted "
                  f"({rec['guest_info'].get('driver', '?')} {rec['guest_info'].get('version', '')})")
        bctx = B.BootCtx(g=g, ec=ec, trace=B.TraceState(g.trace_path), ncpu=ncpu, pairs=nq,
                         ifname=ifname, model=models[0], info=rec["guest_info"])
        ctx = M.CellCtx(boot=bctx, models=models, window_s=seconds, workdir=outdir / "work",
                        guest_stats=a.guest_stats)
        ctx.workdir.mkdir(exist_ok=True)
        mark = g.mark()
        for i, name in enumerate(cells):
            cell = M.CELLS[name]
            k = (rep + i) % len(models)          # rotate the model order per cell and repeat
            ctx.models = models[k:] + models[:k]
            t0 = time.monotonic()
            try:
                recs = M.run_cell(ctx, cell)
                rec["runs"] += recs
                msg = " | ".join(f"{r['model']}: {M.short(cell, r['metrics'])}" for r in recs[:1])
            except (CheckFailed, VmTestError, OSError) as e:
                rec["runs"].append({"workload": name, "ok": False, "error": str(e)[-4000:]})
                msg = f"FAILED: {str(e).splitlines()[0][:150] if str(e) else type(e).__name__}"
            prog.step(f"c:{name}", time.monotonic() - t0, f"{label} {name:<14} {msg}")
            if not g.alive() or (g.agent and g.agent.broken):
                rec["error"] = "QEMU exited" if not g.alive() else f"guest agent: {g.agent.broken}"
                prog.skip(len(cells) - i - 1)
                break
        problems = logcheck.find_problems(g.new_log(mark))
        if problems:
            rec["log_problems"] = list(dict.fromkeys(problems))[:20]
    except (VmTestError, CheckFailed) as e:
        rec["error"] = str(e)[-4000:]
        if "boot_s" not in rec:
            prog.step("boot", time.monotonic() - t_start, f"{label} BOOT FAILED: {str(e)[:150]}")
            prog.skip(len(cells))
    finally:
        if g is not None:
            if a.keep_logs or "error" in rec or any(not r.get("ok") for r in rec["runs"]):
                g.save_logs(outdir / "logs" / f"{seq:03d}-{str(topo).replace(':', '-')}-{v.name}")
            g.shutdown()
        if ec is not None:
            ec.cleanup()
    rec["wall_s"] = round(time.monotonic() - t_start, 2)
    return rec


def main(argv=None) -> int:
    a = parse_args(argv)
    set_verbose(a.verbose)
    if a.list:
        for c in M.CELLS.values():
            tops = [str(t) for t, cs in FULL_PLAN.items() if c.name in cs]
            scr = [str(t) for t, cs in SCREEN_PLAN.items() if c.name in cs]
            print(f"{c.name:<14} {c.desc}  [full: {','.join(tops) or '-'}; screen: {','.join(scr) or '-'}]")
        print("\nvariants: stock, ours, stock-notx (napi_tx=0), stock-tuned "
              f"(napi_defer_hard_irqs,gro_flush_timeout = {M.TUNED_DEFAULT}), "
              "stock-threaded (threaded NAPI; only when asked for)")
        for m in MODELS:
            print(f"model {m:<10} {B.MODEL_HELP[m]}: {B.model_costs(m)}")
        return 0
    if a.report:
        print(H.write_report(a.report))
        return 0
    if a.self_check:
        probs = H.self_check() + M.self_check()
        print("\n".join(probs) or "self-check: vnet-load and the target checks OK")
        return 1 if probs else 0
    if not a.out and not a.dry_run:
        print("matrix: --out DIR is required for a run", file=sys.stderr)
        return 2
    try:
        plan, runs, vs = build_plan(a)
        default_models = "zero,ref" if a.knob_search else ",".join(MODELS)
        models = [x.strip() for x in (a.model or default_models).split(",") if x.strip()]
        for m in models:
            if m not in B.MODELS or m == "none":
                raise VmTestError(f"model {m!r}: one of {', '.join(x for x in B.MODELS if x != 'none')}")
        cells = [M.CELLS[n] for cs in plan.values() for n in cs]
        if a.dry_run:
            sched = schedule(plan, runs, vs)
            est = sum(x for _, x in estimate_steps(sched, plan, models, a.seconds))
            nwin = sum(len(plan[t]) for _, t, _ in sched) * len(models)
            for t, cs in plan.items():
                print(f"{R.topo_short(t):<8} {len(cs):>3} cells: {', '.join(cs)}")
            print(f"variants and repeats: {runs}; models: {', '.join(models)}; window {a.seconds} s")
            print(f"{len(sched)} boots, {nwin} windows, estimate {BC.hms(est)}")
            return 0
        missing = M.missing_tools(cells)
        if missing:
            raise VmTestError(f"missing {', '.join(missing)}: apt-get install -y "
                              f"--no-install-recommends {M.APP_PACKAGES}")
        if B.EXITCOST_ERROR:
            raise VmTestError(f"exit-cost plugin unavailable: {B.EXITCOST_ERROR}")
        kernel = resolve_kernel(a.kernel)
        module = None
        if any(v.driver == "ours" for v in vs):
            src = a.module or REPO_ROOT / "build" / a.kernel / "virtio_net.ko"
            if not src.is_file():
                raise VmTestError(f"{src} not found: tests/build-matrix.sh {a.kernel}, or --module")
            a.out.mkdir(parents=True, exist_ok=True)
            module = a.out / "virtio_net.ko"
            shutil.copy2(src, module)
        M.load_tool()
    except (VmTestError, OSError, ValueError) as e:
        print(f"matrix: error: {e}", file=sys.stderr)
        return 2
    install_signal_handlers()
    outdir = a.out
    outdir.mkdir(parents=True, exist_ok=True)
    sched = schedule(plan, runs, vs)
    prog = BC.Progress(estimate_steps(sched, plan, models, a.seconds))
    results = {
        "version": 1, "tool": "bench/matrix.py", "argv": sys.argv,
        "started": dt.datetime.now().isoformat(timespec="seconds"),
        "config": {"kernel": a.kernel, "release": kernel.release, "plan": "knob-search" if a.knob_search
                   else ("screen" if a.screen else "full"),
                   "cells": {str(t): cs for t, cs in plan.items()}, "topologies": list(plan),
                   "runs": runs, "seconds": a.seconds, "models": models,
                   "model_costs": {m: B.model_costs(m) for m in models},
                   "variants": [vars(v) | {"coalesce": list(v.coalesce)} for v in vs],
                   "cell_meta": {n: vars(M.CELLS[n]) for cs in plan.values() for n in cs},
                   "module": BC.module_info(module) if module else None,
                   "git": BC.git_info(), "host": BC.host_info(),
                   "order": "for rep: for topology: for variant (reversed in odd reps): one boot; "
                            "in it for cell: "
                            "one window per model (order rotated per cell and rep)"},
        "boots": []}
    log(f"matrix: {len(sched)} boots -> {outdir} (estimate {BC.hms(prog.eta())})", 0)
    rc = 0
    t0 = time.monotonic()
    rpath = outdir / "results.json"
    try:
        for seq, (rep, topo, v) in enumerate(sched):
            rec = run_boot(kernel, topo, v, module, rep, plan[topo], models, a.seconds, prog,
                           outdir, seq, a)
            results["boots"].append(rec)
            if rec.get("error") or any(not r.get("ok") for r in rec["runs"]):
                rc = 1
            results["duration_s"] = round(time.monotonic() - t0, 1)
            BC.write_json(rpath, results)
    except KeyboardInterrupt:
        results["interrupted"] = True
        rc = 130
        sys.stderr.write("\nmatrix: interrupted; partial results kept\n")
    results["finished"] = dt.datetime.now().isoformat(timespec="seconds")
    results["duration_s"] = round(time.monotonic() - t0, 1)
    BC.write_json(rpath, results)
    if results["boots"]:
        print(H.write_report(outdir))
    return rc


if __name__ == "__main__":
    sys.exit(main())
