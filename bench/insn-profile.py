#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Guest instructions per packet, per function: where two drivers' CPU goes.

Under TCG a closed loop's transactions per second follow what each one
costs the vCPUs: the exits the exit-cost plugin charges and the guest
instructions executed.  When two drivers send the same exits per packet
and still differ in throughput (ours and stock with napi_tx=0 on rr-tcp-4,
for instance), the difference is in their instructions.  This tool boots
the matrix's guest with the exit-cost plugin and bench/exitcost/insnprof.c
next to it, gives insnprof the guest's text symbols (its /proc/kallsyms:
the guest runs nokaslr, and Debian's System.map is a stub), runs one
or more matrix cells under one exit model, and counts guest instructions
per packet (sent or received by the guest) over a steady span: all of them, user space,
the kernel, each module, and each function.

  bench/insn-profile.py --cells rr-tcp-4 --runs 2 --module build/6.1/virtio_net.ko --out DIR
  bench/insn-profile.py --count time --model zero --cells rr-tcp-4 --out DIR
  bench/insn-profile.py --report DIR/results.json [--top 40]
  bench/insn-profile.py --variants stock,ours,ours-b --ours-b-modopts 'tx_frames=1' ...
  bench/insn-profile.py --lines --variants ours --cells rr-udp-1 --out DIR

--lines also splits ours' functions by source line: the module's
disassembly with its line table (objdump -dl) gives, for each instruction
of each function, the source line it came from (an inlined helper's own
line), and every run of instructions from one line is loaded as a symbol
of its own.  The function table adds them up again; a second table lists
the source lines of ours that cost most per packet.

--count blocks counts executed translated-block pieces instead (each costs
TCG a dispatch besides its instructions: a chained jump, or a lookup for a
return or indirect call); --count time the vCPU threads' host time (each
piece charges the host TSC ticks since the vCPU's previous piece),
reported in nanoseconds per packet: instructions are not all a vCPU
spends, an emulated device access (the clocksource, the interrupt
controller, the virtqueue notify) costs thousands of instructions' time.
The halt of an idle vCPU lands in the idle functions ([idle]); run time
profiles under the zero model, or exitcost's stalls land in the function
before them.

A span is the time between the ends of two windows of the same model
(matrix.run_cell with the model twice): the second window and the settle
before it, traffic running throughout.  The counting slows the guest
(one callback per translated block piece): compare drivers with each
other in the same run, not with the matrix's throughput.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))                 # benchlib, bench.py
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # harness

from harness import VmTestError, resolve_kernel  # noqa: E402
from harness import net  # noqa: E402
from harness.util import cache_dir, log, run, set_verbose  # noqa: E402
from benchlib import matrix as M  # noqa: E402
from benchlib import workloads as B  # noqa: E402
from benchlib.exitcost import ctl_request  # noqa: E402
from harness.util import BENCH_DIR, REPO_ROOT  # noqa: E402

PLUGIN_BUILD = BENCH_DIR / "exitcost" / "build.sh"
GROUPS = ("[user]", "[kernel]")
# where the halt instruction of an idle vCPU is (time mode: its sleep)
IDLE_FUNCS = ("default_idle", "amd_e400_idle", "acpi_safe_halt", "acpi_idle_do_entry",
              "mwait_idle", "intel_idle", "native_safe_halt")


def plugin_path() -> Path:
    cp = run([str(PLUGIN_BUILD), "insnprof"], timeout=900)
    p = Path(cp.stdout.strip().splitlines()[-1])
    if not p.is_file():
        raise VmTestError(f"insnprof build did not produce {p}:\n{cp.stderr}")
    return p


class InsnProf:
    """The insnprof plugin of one boot: qemu_args(), load_symbols(g), snapshot()."""

    def __init__(self, workdir: Path, count: str = "insns"):
        self.count = count
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.out, self.ctl = self.dir / "insns.json", self.dir / "insns.ctl"
        self.so = plugin_path()

    def qemu_args(self) -> tuple:
        return ("-plugin", f"file={self.so},out={self.out},ctl={self.ctl}"
                           + f",mode={self.count}")

    def _request(self, lines: list[str], timeout: float = 30.0) -> dict:
        return ctl_request(self.ctl, self.out, lines, timeout)

    def load_symbols(self, g, release: str, split: dict | None = None) -> int:
        """The guest's text symbols, kernel and modules, from its
        /proc/kallsyms (Debian's System.map is a stub).  The guest runs
        nokaslr, so the kernel's part is fetched once per release (2 MB,
        a minute and a half through the agent) and cached; the modules'
        part at every boot."""
        text = "awk '$2 ~ /^[tTwW]$/' /proc/kallsyms"
        cache = cache_dir() / "exitcost" / f"kallsyms-text-{release}.txt"
        if not cache.is_file():
            kernel = g.run_ok(f"{text} | grep -vF '['", timeout=300)
            tmp = cache.with_suffix(".tmp")
            tmp.write_text(kernel)
            os.replace(tmp, cache)
        path = self.dir / "syms.txt"
        mods = g.run_ok(f"{text} | grep -F '['", timeout=60)
        if split:
            mods += split_symbols(mods, split)
        path.write_text(cache.read_text() + mods)
        d = self._request([f"syms {path}"])
        if not d.get("symbols"):
            raise VmTestError("insnprof loaded no symbols")
        return d["symbols"]

    def snapshot(self) -> dict:
        return self._request([])


# --- source lines (--lines) -------------------------------------------------------------
LINE_SEP = "+0x"   # a piece of a function: NAME+0xOFFSET


def line_table(ko: Path) -> dict[str, list[tuple[int, str]]]:
    """For each function of the module @ko: where each run of instructions
    from one source line starts, as (offset in the function, FILE:LINE),
    from objdump -dl.  FILE is shortened to what follows the repository's
    or the kernel headers' tree."""
    cp = run(["objdump", "-dl", "--no-show-raw-insn", str(ko)], timeout=300)
    table: dict[str, list[tuple[int, str]]] = {}
    func, base, loc, last = None, 0, "?", None
    for line in cp.stdout.splitlines():
        if line.endswith(">:") and " <" in line:
            addr, name = line.split(" <", 1)
            func, base, last = name[:-2], int(addr, 16), None
            table[func] = []
        elif line.startswith("/") and ":" in line:
            path, _, num = line.rpartition(":")
            num = num.split()[0]
            for cut, keep in (("/src/src/", "src/"), ("/src/include/", "include/"),
                              ("/include/", "include/")):
                if cut in path:
                    path = keep + path.split(cut, 1)[1]
                    break
            loc = f"{path}:{num}"
        elif func and line[:1] == " " and ":\t" in line:
            addr = line.split(":", 1)[0].strip()
            if loc != last:
                table[func].append((int(addr, 16) - base, loc))
                last = loc
    return {f: runs for f, runs in table.items() if runs}


def split_symbols(kallsyms: str, table: dict) -> str:
    """Extra symbols for the functions of @table found in @kallsyms (the
    guest's module text symbols): one at each run's start but the first."""
    out = []
    for line in kallsyms.splitlines():
        w = line.split()
        if len(w) >= 4 and w[2] in table:
            addr = int(w[0], 16)
            out += [f"{addr + off:x} t {w[2]}{LINE_SEP}{off:x} {w[3]}"
                    for off, _ in table[w[2]] if off]
    return "\n".join(out) + "\n" if out else ""


def line_of(name: str, lines: dict) -> tuple[str, str] | None:
    """(function, FILE:LINE) of a symbol of ours' module; None for others."""
    sym, _, mod = name.partition(" [")
    func, sep, off = sym.partition(LINE_SEP)
    runs = lines.get(func)
    if not runs:
        return None
    o = int(off, 16) if sep else 0
    loc = runs[0][1]
    for start, where in runs:
        if start > o:
            break
        loc = where
    return func + (" [" + mod if mod else ""), loc


def fold_lines(counts: dict, lines: dict) -> tuple[dict, dict]:
    """@counts by function (pieces added up) and by (function, line)."""
    funcs: dict[str, float] = {}
    by_line: dict[str, float] = {}
    for k, v in counts.items():
        fl = line_of(k, lines) if lines else None
        f = fl[0] if fl else k
        funcs[f] = funcs.get(f, 0) + v
        if fl:
            key = f"{fl[1]} ({fl[0].split(' [')[0]})"
            by_line[key] = by_line.get(key, 0) + v
    return funcs, by_line


def diff(a: dict, b: dict) -> dict:
    return {k: v - a.get(k, 0) for k, v in b.items() if v - a.get(k, 0)}


def run_boot(kernel, topo, v: M.Variant, module, cells, model, seconds, workdir,
             count: str = "insns", lines: dict | None = None) -> dict:
    ncpu, nq = B.topo_parse(topo)
    rec = {"variant": v.name, "topology": topo, "model": model, "spans": []}
    ec = B.make_exitcost(kernel, model)
    prof = InsnProf(workdir, count)
    # app cells (dns, http, kv) need their server in the guest, as in bench/matrix.py
    apps = sorted({M.CELLS[c].app for c in cells if M.CELLS[c].kind == "app"})
    g = M.variant_guest(kernel, v, module, topo, f"insnprof-{os.getpid()}-{v.name}",
                        (ec.qemu_args() if ec else ()) + prof.qemu_args(),
                        tuple(M.APP_BINARIES[x] for x in apps))
    try:
        g.boot()
        rec["rehooked"] = ec.attach(g) if ec else []
        ifname = net.ifname(g)
        M.variant_setup(g, v, ifname)
        rec["guest_info"] = B.guest_info(g, ifname)
        split = lines if v.driver == "ours" and not v.module else None
        rec["symbols"] = prof.load_symbols(g, kernel.release, split)
        M.start_guest_servers(g, ncpu)
        bctx = B.BootCtx(g=g, ec=ec, trace=B.TraceState(g.trace_path), ncpu=ncpu, pairs=nq,
                         ifname=ifname, model=model, info=rec["guest_info"])
        ctx = M.CellCtx(boot=bctx, models=[model, model], window_s=seconds,
                        workdir=workdir / "work")
        ctx.workdir.mkdir(exist_ok=True)
        for name in cells:
            marks = []

            def on_window(cell, _model, wrec, marks=marks):
                marks.append((time.monotonic(), B.tap_counters(g.proc.pid, g.nics[0].tap),
                              prof.snapshot(), wrec))

            M.run_cell(ctx, M.CELLS[name], on_window=on_window)
            (t0, tap0, s0, _), (t1, tap1, s1, w1) = marks[0], marks[-1]
            rec["spans"].append({
                "cell": name, "seconds": round(t1 - t0, 3),
                "tap": {k: tap1[k] - tap0[k] for k in tap1},
                "per_vcpu": [b - a for a, b in zip(s0["per_vcpu"], s1["per_vcpu"])],
                "insns": diff(s0["insns"], s1["insns"]),
                "unit": s1.get("unit", "insns"), "tsc_hz": s1.get("tsc_hz", 0),
                "window_metrics": w1.get("metrics", {}),
                "exits": w1.get("exitcost", {}).get("kinds", {})})
            log(f"{v.name} {name}: {rec['spans'][-1]['tap']['guest_tx_packets']} packets, "
                f"{sum(per_packet(rec['spans'][-1]).values()):.0f} {unit_of(rec['spans'][-1])}/packet", 0)
    finally:
        g.shutdown()
        if ec is not None:
            ec.cleanup()
    return rec


# --- report -------------------------------------------------------------------------------
def group_of(name: str) -> str:
    if name in GROUPS:
        return name
    if name in IDLE_FUNCS:
        return "[idle]"
    if name.endswith("]") and " [" in name:
        return "[" + name.rsplit(" [", 1)[1]
    return "[vmlinux]"


def unit_of(span: dict) -> str:
    return {"tsc": "ns", "blocks": "blocks"}.get(span.get("unit"), "insns")


def per_packet(span: dict, lines: dict | None = None) -> dict[str, float]:
    """Instructions, blocks, or host nanoseconds (time), per packet, by
    function (the pieces of a function split by --lines added up)."""
    return fold_lines(per_packet_raw(span), lines or {})[0]


def per_packet_raw(span: dict) -> dict[str, float]:
    n = max(1, span["tap"]["guest_tx_packets"] + span["tap"]["guest_rx_packets"])
    scale = 1e9 / span["tsc_hz"] if span.get("unit") == "tsc" and span.get("tsc_hz") else 1.0
    return {k: v * scale / n for k, v in span["insns"].items()}


def line_report(res: dict, top: int) -> list[str]:
    """The source lines of ours that cost most per packet, per cell and
    variant (median over boots); empty without --lines."""
    lines = res.get("lines")
    if not lines:
        return []
    by: dict[tuple, list[dict]] = {}
    for b in res["boots"]:
        for s in b["spans"]:
            _, per_line = fold_lines(per_packet_raw(s), lines)
            if per_line:
                by.setdefault((s["cell"], b["variant"]), []).append(per_line)
    out = []
    for (cell, v), runs in by.items():
        keys = {k for r in runs for k in r}
        meds = {k: statistics.median(r.get(k, 0.0) for r in runs) for k in keys}
        out.append(f"\n## {cell}, {v}: the {top} source lines of ours costing most per packet "
                   f"(n={len(runs)}; total {sum(meds.values()):.0f})\n")
        out.append("| line (function) | per packet |")
        out.append("| --- | --- |")
        for k in sorted(keys, key=lambda k: -meds[k])[:top]:
            out.append(f"| `{k}` | {meds[k]:.1f} |")
    return out


def report(res: dict, top: int) -> str:
    by: dict[tuple, list[dict]] = {}
    units = set()
    for b in res["boots"]:
        for s in b["spans"]:
            by.setdefault((s["cell"], b["variant"]), []).append(per_packet(s, res.get("lines")))
            units.add(unit_of(s))
    what = {"ns": "host ns (vCPU threads)", "blocks": "executed translated-block pieces"}.get(
        units.pop() if len(units) == 1 else "", "guest instructions")
    out = []
    for cell in dict.fromkeys(c for c, _ in by):
        vs = [v for c, v in by if c == cell]
        out.append(f"\n## {cell}: {what} per packet, sent or received, "
                   f"(median over {', '.join(f'{v} n={len(by[(cell, v)])}' for v in vs)})\n")
        groups = sorted({group_of(k) for v in vs for p in by[(cell, v)] for k in p})

        def med(v, pick):
            return statistics.median(sum(x for k, x in p.items() if pick(k)) for p in by[(cell, v)])

        out.append("| | " + " | ".join(vs) + " |")
        out.append("| --- |" + " --- |" * len(vs))
        out.append("| all | " + " | ".join(f"{med(v, lambda k: True):.0f}" for v in vs) + " |")
        if "[idle]" in groups:
            out.append("| all but [idle] | " + " | ".join(
                f"{med(v, lambda k: group_of(k) != '[idle]'):.0f}" for v in vs) + " |")
        for gname in groups:
            out.append(f"| {gname} | " + " | ".join(
                f"{med(v, lambda k, gname=gname: group_of(k) == gname):.0f}" for v in vs) + " |")
        funcs = {k for v in vs for p in by[(cell, v)] for k in p}
        meds = {(v, f): statistics.median(p.get(f, 0.0) for p in by[(cell, v)])
                for v in vs for f in funcs}
        spread = sorted(funcs, key=lambda f: -(max(meds[(v, f)] for v in vs) -
                                               min(meds[(v, f)] for v in vs)))
        out.append(f"\nThe {top} functions whose counts differ most between the variants:\n")
        out.append("| function | " + " | ".join(vs) + " |")
        out.append("| --- |" + " --- |" * len(vs))
        for f in spread[:top]:
            out.append(f"| `{f}` | " + " | ".join(f"{meds[(v, f)]:.0f}" for v in vs) + " |")
    return "\n".join(out + line_report(res, top))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", default="6.1")
    ap.add_argument("--topology", default="2")
    ap.add_argument("--cells", default="rr-tcp-4")
    ap.add_argument("--variants", default="stock,ours,stock-notx")
    ap.add_argument("--model", default="ref", choices=("zero", "ref-noirq", "ref", "modern"))
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--module", help="ours: virtio_net.ko (default: build/<kernel>)")
    ap.add_argument("--ours-b-modopts", metavar="'OPT=V ...'", default="",
                    help="variant ours-b: ours loaded with these module options")
    ap.add_argument("--out", help="result directory")
    ap.add_argument("--report", metavar="RESULTS_JSON", help="print the tables of a run again")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--count", choices=("insns", "blocks", "time"), default="insns",
                    help="what to count per function: guest instructions, executed "
                         "block pieces, or host time (ns per packet)")
    ap.add_argument("--lines", action="store_true",
                    help="also count ours' functions per source line (objdump -dl of the module)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    set_verbose(1 if a.verbose else 0)
    if a.report:
        print(report(json.loads(Path(a.report).read_text()), a.top))
        return 0
    if not a.out:
        ap.error("--out is needed for a run")
    kernel = resolve_kernel(a.kernel)
    cells = M.select_cells(a.cells)
    module = Path(a.module) if a.module else REPO_ROOT / "build" / a.kernel / "virtio_net.ko"
    ours_b = M.Variant("ours-b", "ours", a.ours_b_modopts) if a.ours_b_modopts else None
    vs = M.variants(which=tuple(a.variants.split(",")), ours_b=ours_b)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    res = {"tool": "bench/insn-profile.py", "argv": sys.argv[1:],
           "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "kernel": kernel.release, "boots": []}
    lines = line_table(module) if a.lines else None
    if lines:
        res["lines"] = lines
    for rep in range(a.runs):
        for v in vs:
            b = run_boot(kernel, a.topology, v, module, cells, a.model, a.seconds,
                         out / "work" / f"{rep}-{v.name}", a.count, lines)
            b["rep"] = rep
            res["boots"].append(b)
            (out / "results.json").write_text(json.dumps(res, indent=1) + "\n")
    text = report(res, a.top)
    (out / "report.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
