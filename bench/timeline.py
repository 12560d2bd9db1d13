#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where a request's time goes, seen from the device: a run of
bench/matrix.py --keep-logs read back from QEMU's stamped trace.

For every window of the chosen cells it pairs the device's events in time:

  rx->irq     the device publishes a received buffer (virtqueue_flush on an
              RX queue) and interrupts for it (virtio_notify, same queue);
              the share of received batches that got an interrupt
  rx->txpop   a received batch is published, then the device takes the
              next transmit buffer (virtqueue_pop on a TX queue): for
              request/response cells, the guest's turn, from the request
              in its memory to the answer leaving it
  kick->pop   the guest kicks a TX queue, then the device takes a buffer
              from it (the host's reaction to a kick)
  txpop->rx   the device takes an answer, then publishes the next request:
              the turn of the host side and the load generator
  irq_eoi     of rx->txpop, from the device's notification to the end of
              interrupt the serving vCPU writes to its local APIC (the
              delivery)
  eoi_txpop   from there to the answer (the guest's processing)
  timer_writes, ipis   LAPIC timer programmings and IPIs sent, by any
              vCPU, between a request and its answer
  answer on other pair  answers taken from another pair's TX queue

and prints their medians and 90th percentiles per variant next to the
cell's own latency, pooled over boots (each boot's figure, then the median
of boots).  Microsecond stamps from gettimeofday in QEMU's threads.

  bench/matrix.py --keep-logs --cells http-1000 --variants stock,ours --out DIR
  bench/timeline.py DIR [--cells http-1000] [--model zero] > DIR/timeline.md
"""

import argparse
import bisect
import json
import lzma
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent),                # benchlib
                str(Path(__file__).resolve().parent.parent / "tests")]  # harness
from benchlib.workloads import resolve_vq  # noqa: E402

LINE_RE = re.compile(rb"^(\d+)@(\d+\.\d+):(\w+) (.*)$")
APIC_RE = re.compile(rb"^0x([0-9a-f]+) = 0x([0-9a-f]+)")
# local APIC registers (offsets in its page) the guest writes
APIC_EOI, APIC_ICR, APIC_TIMER = 0xb0, 0x300, 0x380
PTR_RE = re.compile(rb"vq (0x[0-9a-f]+)")
NOTIFY_N_RE = re.compile(rb"n (\d+) vq (0x[0-9a-f]+)")
COUNT_RE = re.compile(rb"count (\d+)")
# a pairing further apart than this is not the same exchange
MAX_GAP_US = 20000.0


def read_trace(path: Path):
    """-> ({vq pointer: queue index}, [(t_us, event, key, count, thread)]):
    key the vq pointer, or for apic_mem_writel "apic" with count the
    register; thread QEMU's (a vCPU's for APIC writes; kicks come on the
    main thread, through an eventfd)."""
    vq_index: dict[str, int] = {}
    events = []
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rb") as f:
        for line in f:
            m = LINE_RE.match(line)
            if not m:
                continue
            tid = int(m.group(1))
            t = float(m.group(2)) * 1e6
            ev = m.group(3).decode()
            rest = m.group(4)
            if ev == "apic_mem_writel":
                a = APIC_RE.match(rest)
                if a:
                    events.append((t, ev, "apic", int(a.group(1), 16) & 0xfff, tid))
                continue
            if ev == "virtio_queue_notify":
                n = NOTIFY_N_RE.search(rest)
                if n:
                    vq_index.setdefault(n.group(2).decode(), int(n.group(1)))
            p = PTR_RE.search(rest)
            if not p:
                continue
            c = COUNT_RE.search(rest)
            events.append((t, ev, p.group(1).decode(), int(c.group(1)) if c else 1, tid))
    return vq_index, events


def next_after(times: list[float], t: float) -> float | None:
    i = bisect.bisect_left(times, t)
    return times[i] if i < len(times) else None


def count_in(times: list[float], t0: float, t1: float) -> int:
    """How many of the sorted @times lie in [t0, t1)."""
    return bisect.bisect_left(times, t1) - bisect.bisect_left(times, t0)


def pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def window_stats(events, vq_index, pairs: int, t0: float, t1: float) -> dict:
    """The pairings of one window [t0, t1) (microseconds); @events sorted
    by time."""
    # only the window's events (and MAX_GAP_US around it) are looked at
    win = events[bisect.bisect_left(events, (t0 - MAX_GAP_US,)):
                 bisect.bisect_left(events, (t1 + MAX_GAP_US,))]
    kind, pair = {}, {}
    for ptr in {e[2] for e in win if e[2] != "apic"}:
        n = resolve_vq(vq_index, ptr)
        if n is not None and n < 2 * pairs:
            kind[ptr] = "tx" if n % 2 else "rx"
            pair[ptr] = n // 2
    rx_flush = defaultdict(list)
    rx_irq = defaultdict(list)
    tx_pop, kicks = [], defaultdict(list)
    pop_pair: dict[float, int] = {}
    tx_pop_q = defaultdict(list)
    apic = defaultdict(lambda: defaultdict(list))    # thread -> register -> times
    for t, ev, ptr, count, tid in win:
        if ev == "apic_mem_writel":
            apic[tid][count].append(t)
            continue
        if ptr not in kind:
            continue
        if not t0 <= t < t1 + MAX_GAP_US:
            continue
        k = kind[ptr]
        if ev == "virtqueue_flush" and k == "rx" and count > 0:
            rx_flush[ptr].append(t)
        elif ev == "virtio_notify" and k == "rx":
            rx_irq[ptr].append(t)
        elif ev == "virtqueue_pop" and k == "tx":
            tx_pop.append(t)
            pop_pair[t] = pair[ptr]
            tx_pop_q[ptr].append(t)
        elif ev == "virtio_queue_notify" and k == "tx":
            kicks[ptr].append(t)
    tx_pop.sort()
    # the vCPU that takes pair i's interrupts: the thread whose end of
    # interrupt most often comes first after them (kicks come through an
    # eventfd, on QEMU's main thread, so they do not say)
    vcpu_of_pair: dict[int, int] = {}
    for ptr, ts in rx_irq.items():
        votes: dict[int, int] = defaultdict(int)
        for n in ts:
            firsts = [(e - n, tid) for tid, regs in apic.items()
                      for e in [next_after(regs[APIC_EOI], n)] if e is not None]
            if firsts:
                votes[min(firsts)[1]] += 1
        if votes:
            vcpu_of_pair[pair[ptr]] = max(votes, key=votes.get)
    all_flush = sorted(t for ts in rx_flush.values() for t in ts)
    out = {"rx_batches": 0, "rx_batches_irq": 0, "rx_txpop": [], "kick_pop": [], "txpop_rx": [],
           "crossed": 0, "irq_eoi": [], "eoi_txpop": [], "timer_writes": [], "ipis": []}
    for ptr, ts in rx_flush.items():
        irqs = rx_irq.get(ptr, [])
        for t in ts:
            if t >= t1:
                continue
            out["rx_batches"] += 1
            n = next_after(irqs, t)
            if n is not None and n - t < 1000:
                out["rx_batches_irq"] += 1
            p = next_after(tx_pop, t)
            if p is None or p - t >= MAX_GAP_US:
                continue
            out["rx_txpop"].append(p - t)
            out["crossed"] += pop_pair[p] != pair[ptr]
            # the vCPU of this pair: when it acknowledged the interrupt (its
            # first end of interrupt after the notification), and what it
            # and the others wrote to their APICs until the answer left
            cpu = vcpu_of_pair.get(pair[ptr])
            if n is None or n - t >= 1000 or cpu is None or not apic:
                continue
            e = next_after(apic[cpu][APIC_EOI], n)
            if e is not None and e < p:
                out["irq_eoi"].append(e - n)
                out["eoi_txpop"].append(p - e)
            out["timer_writes"].append(sum(count_in(regs[APIC_TIMER], t, p)
                                           for regs in apic.values()))
            out["ipis"].append(sum(count_in(regs[APIC_ICR], t, p) for regs in apic.values()))
    for ptr, ts in kicks.items():
        for t in ts:
            p = next_after(tx_pop_q.get(ptr, []), t)
            if t < t1 and p is not None and p - t < MAX_GAP_US:
                out["kick_pop"].append(p - t)
    for t in tx_pop:
        r = next_after(all_flush, t)
        if t < t1 and r is not None and r - t < MAX_GAP_US:
            out["txpop_rx"].append(r - t)
    return out


def self_check() -> list[str]:
    """window_stats on a made-up trace of two exchanges on pair 0 (RX vq
    0x100, TX vq 0x200, stride 0x100) -> problems."""
    text = b"".join(b"1@%.6f:%s\n" % (t / 1e6, ev) for t, ev in (
        (1000002, b"apic_mem_writel 0xb0 = 0x00000000"),
        (1000000, b"virtio_queue_notify vdev 0x1 n 0 vq 0x100"),
        (1000001, b"virtio_queue_notify vdev 0x1 n 1 vq 0x200"),
        # exchange 1: interrupt, answer 300 us after the request, kick 20 us before the pop
        (1001000, b"virtqueue_flush vq 0x100 count 1"),
        (1001004, b"virtio_notify vdev 0x1 vq 0x100"),
        (1001050, b"apic_mem_writel 0xb0 = 0x00000000"),
        (1001100, b"apic_mem_writel 0x380 = 0x00001000"),
        (1001280, b"virtio_queue_notify vdev 0x1 n 1 vq 0x200"),
        (1001300, b"virtqueue_pop vq 0x200 elem 0x9 in_num 0 out_num 2"),
        # exchange 2: no interrupt (suppressed), answer 500 us after
        (1002000, b"virtqueue_flush vq 0x100 count 1"),
        (1002480, b"virtio_queue_notify vdev 0x1 n 1 vq 0x200"),
        (1002500, b"virtqueue_pop vq 0x200 elem 0x9 in_num 0 out_num 2"),
        (1002600, b"virtqueue_flush vq 0x100 count 0")))
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".log") as f:
        f.write(text)
        f.flush()
        vq_index, events = read_trace(Path(f.name))
    st = window_stats(sorted(events), vq_index, 1, 1000500, 1003000)
    want = {"rx_batches": 2, "rx_batches_irq": 1, "rx_txpop": [300.0, 500.0],
            "kick_pop": [20.0, 20.0], "txpop_rx": [700.0], "crossed": 0,
            "irq_eoi": [46.0], "eoi_txpop": [250.0], "timer_writes": [1], "ipis": [0]}
    got = {k: [round(x, 3) for x in v] if isinstance(v, list) else v for k, v in st.items()}
    return [] if got == want else [f"timeline.window_stats: {got}, want {want}"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("dir", type=Path, help="a bench/matrix.py --keep-logs result directory")
    ap.add_argument("--cells", help="comma separated (default: every cell of the run)")
    ap.add_argument("--model", help="comma separated models (default: all)")
    a = ap.parse_args(argv)
    res = json.loads((a.dir / "results.json").read_text())
    want_cells = set(a.cells.split(",")) if a.cells else None
    want_models = set(a.model.split(",")) if a.model else None
    # (cell, model, variant) -> figure -> [one value per boot]
    table = defaultdict(lambda: defaultdict(list))
    for seq, boot in enumerate(res["boots"]):
        logdir = a.dir / "logs" / f"{seq:03d}-{str(boot['topology']).replace(':', '-')}-{boot['variant']}"
        trace = logdir / "trace.log"
        if not trace.exists():
            trace = logdir / "trace.log.xz"     # as committed under docs/results
        if not trace.exists():
            print(f"note: no {trace}", file=sys.stderr)
            continue
        vq_index, events = read_trace(trace)
        events.sort()
        pairs = int(str(boot["topology"]).split(":")[-1])
        for run in boot["runs"]:
            wall = run.get("window", {}).get("wall")
            if not run.get("ok") or not wall:
                continue
            if want_cells and run["workload"] not in want_cells:
                continue
            if want_models and run["model"] not in want_models:
                continue
            st = window_stats(events, vq_index, pairs, wall[0] * 1e6, wall[1] * 1e6)
            row = table[(run["workload"], run["model"], boot["variant"])]
            for k in ("rx_txpop", "irq_eoi", "eoi_txpop", "kick_pop", "txpop_rx"):
                if st[k]:
                    row[f"{k} p50"].append(pct(st[k], 0.5))
                    row[f"{k} p90"].append(pct(st[k], 0.9))
            if st["rx_batches"]:
                row["rx irq share"].append(st["rx_batches_irq"] / st["rx_batches"])
            for k in ("timer_writes", "ipis"):
                if st[k]:
                    row[f"{k} per answer"].append(statistics.mean(st[k]))
            if st["rx_txpop"]:
                row["answer on other pair"].append(st["crossed"] / len(st["rx_txpop"]))
            m = run.get("metrics", {})
            for k in ("p50_us", "p99_us"):
                if m.get(k) is not None:
                    row[f"cell {k}"].append(m[k])
    if not table:
        print("no windows with stamped traces (run bench/matrix.py with --keep-logs)", file=sys.stderr)
        return 1
    figures = ["cell p50_us", "rx_txpop p50", "rx_txpop p90", "irq_eoi p50", "irq_eoi p90",
               "eoi_txpop p50", "eoi_txpop p90", "timer_writes per answer", "ipis per answer",
               "kick_pop p50", "kick_pop p90", "txpop_rx p50", "txpop_rx p90", "rx irq share",
               "answer on other pair"]
    ratio = {"rx irq share", "answer on other pair", "timer_writes per answer", "ipis per answer"}
    variants = sorted({k[2] for k in table}, key=lambda v: (v != "stock", v))
    print("| cell | model | figure | " + " | ".join(variants) + " |")
    print("| --- | --- | --- |" + " --- |" * len(variants))
    for cell, model in sorted({(k[0], k[1]) for k in table}):
        for f in figures:
            vals = []
            for v in variants:
                xs = table[(cell, model, v)].get(f, [])
                if not xs:
                    vals.append("-")
                    continue
                med = statistics.median(xs)
                vals.append(f"{med:.2f}" if f in ratio else f"{med:.0f}")
            print(f"| {cell} | {model} | {f} | " + " | ".join(vals) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
