# SPDX-License-Identifier: GPL-2.0-only
"""Benchmark machinery behind bench/bench.py: workloads, counters, one run.

A *run* = one workload measured once in a booted guest, over a steady-state
window that leaves out the load's start-up (process start, connection
set-up, sockperf's sample-array allocation, TCP slow start) and its end:

  guest: start the load in the background, -t LONG (output to files)
  host:  wait until every connection is established and carries data
         (ss in the namespace), then SETTLE_S more
  edge 0 host: ss/tap counters, trace.log offset, plugin snapshot, host CPU
         guest: /proc/interrupts, /proc/net/dev, ethtool -S -> /tmp/bench-s0
         host: ss/tap counters again
  ... sleep --seconds ...
  edge 1 host: ss/tap counters; guest: counters -> /tmp/bench-s1;
         host: trace.log offset, plugin snapshot, host CPU, ss/tap counters
  guest: SIGINT the load (sockperf and iperf3 print their summaries), then
         cat the counter files and the summaries

Two windows: the HOST window (trace events: kicks and interrupts; plugin
counts: timer arms, cost) and the GUEST window (/proc/interrupts: timer
interrupts, IPIs; packets; ethtool -S) which lies inside it, one agent
round trip shorter at each end. Each count is divided by the units of
its own window: host window: transactions = bytes_received of the server
sockets (ss -ti in the namespace) / message size, packets = the tap's
(/proc/<qemu>/net/dev); guest window: packets = the guest's /proc/net/dev,
transactions = its received packets x the host window's transactions per
received packet.

Host-side counting (QEMU trace events, log backend):
  virtio_queue_notify vdev P n N vq Q   guest kick of queue N (RX i = 2i,
                                         TX i = 2i+1, control = 2*pairs)
  virtio_notify vdev P vq Q             interrupt sent to the guest for vq Q
The vq pointer -> queue index map is learnt from the notify events (every
queue is kicked at least once: RX queues when they are first filled) and,
for pointers never kicked, from the constant stride of QEMU's VirtQueue
array.
"""

from __future__ import annotations

import os
import re
import statistics
import shlex
import time
from collections import Counter
from dataclasses import dataclass, field

from harness import net
from harness.util import CheckFailed, VmTestError

from .report import DRIVER_COUNTERS

try:    # the exit-cost plugin (bench/exitcost/, bench/benchlib/exitcost.py)
    from . import exitcost as _exitcost
    EXITCOST_ERROR = None
except Exception as _e:     # pragma: no cover - integration point
    _exitcost = None
    EXITCOST_ERROR = f"{type(_e).__name__}: {_e}"

# --- exit-cost models ---------------------------------------------------------------
KINDS = ("kick", "irq", "timer_irq", "ipi_irq", "timer_arm", "ipi", "hlt")
# Fallback only; the real defaults come from benchlib.exitcost.DEFAULT_COSTS_US
# (documented in bench/exitcost/README.md).
FALLBACK_REF_US = {"kick": 20.0, "irq": 30.0, "timer_irq": 30.0, "ipi_irq": 30.0,
                   "timer_arm": 10.0, "ipi": 15.0, "hlt": 20.0}
MODEL_HELP = {
    "none": "no plugin (no timer-arm counts, no cost)",
    "zero": "plugin counting only, every cost 0",
    "ref": "plugin with the reference costs",
    "ref-noirq": "reference costs, injected interrupts free (posted interrupts: "
                 "irq, timer_irq, ipi_irq = 0)",
    "modern": "a current KVM host: posted interrupts and IPI virtualisation (irq, ipi_irq, "
              "ipi = 0), ioeventfd fast-path kick, TSC-deadline timer fast path and halt "
              "polling (kick, timer_irq, timer_arm, hlt = 5 us); docs/benchmarks-matrix.md",
}
# the "modern" model's costs (us): each fast-path exit ~1 us natively, x5 for TCG
MODERN_US = {"kick": 5.0, "irq": 0.0, "timer_irq": 5.0, "ipi_irq": 0.0, "timer_arm": 5.0,
             "ipi": 0.0, "hlt": 5.0}
MODELS = tuple(MODEL_HELP)


# bench.py --cost: reference costs replaced for one run (and for a result
# file's recomputation, from its config)
_ref_override: dict[str, float] = {}


def set_ref_override(costs: dict[str, float] | None) -> None:
    _ref_override.clear()
    _ref_override.update(costs or {})


def parse_costs(text: str) -> dict[str, float]:
    """'irq=0,kick=25' -> {'irq': 0.0, 'kick': 25.0} (us per event)."""
    out: dict[str, float] = {}
    for part in (x.strip() for x in (text or "").split(",")):
        if not part:
            continue
        kind, sep, val = part.partition("=")
        kind = kind.strip()
        if not sep or kind not in KINDS:
            raise VmTestError(f"--cost {part!r}: want KIND=US with KIND one of {', '.join(KINDS)}")
        try:
            us = float(val)
        except ValueError:
            us = -1.0
        if not 0 <= us <= 10000:
            raise VmTestError(f"--cost {part!r}: the cost must be 0..10000 us")
        out[kind] = us
    return out


def ref_costs() -> dict[str, float]:
    if _exitcost is not None and hasattr(_exitcost, "DEFAULT_COSTS_US"):
        c = dict(_exitcost.DEFAULT_COSTS_US)
    else:
        c = dict(FALLBACK_REF_US)
    c.update(_ref_override)
    return c


def model_costs(model: str) -> dict[str, float] | None:
    """Plugin costs (us per event) of a model; None = no plugin."""
    if model == "none":
        return None
    if model == "zero":
        return {k: 0.0 for k in KINDS}
    c = ref_costs()
    if model == "ref":
        return c
    if model == "ref-noirq":
        c.update(irq=0.0, timer_irq=0.0, ipi_irq=0.0)
        return c
    if model == "modern":
        return dict(MODERN_US)
    raise VmTestError(f"unknown exit-cost model {model!r} (one of {', '.join(MODELS)})")


def model_weights(model: str) -> dict[str, float]:
    """Weights of the cost-weighted exit total: the model's costs; for the
    counting-only models (zero, none) the reference costs, i.e. what the
    reference model would charge for the counted events."""
    return model_costs(model) if model in ("ref", "ref-noirq", "modern") else ref_costs()


def make_exitcost(kernel, model: str, workdir=None):
    """ExitCost instance for a model, or None for 'none'.

    INTEGRATION POINT with bench/benchlib/exitcost.py (owned by the exit-cost
    work): ExitCost(kernel, costs={kind: us}) -> .qemu_args(), .attach(g),
    .snapshot() -> Counts(.kinds, .stall_ns, .hooks, .vcpus), .cleanup()."""
    costs = model_costs(model)
    if costs is None:
        return None
    if _exitcost is None:
        raise VmTestError(f"exit-cost model {model!r} needs bench/benchlib/exitcost.py "
                          f"({EXITCOST_ERROR}); use --model none")
    return _exitcost.ExitCost(kernel, costs=costs, workdir=workdir)


# --- workloads ----------------------------------------------------------------------------
SOCKPERF_PORT = 11111
IPERF_BASE_PORT = 5201


@dataclass(frozen=True)
class Workload:
    name: str
    kind: str            # "rr" (sockperf ping-pong clients) or "stream" (iperf3)
    flows: int
    msg: int | None      # bytes per write / message; None = iperf3 default (128 KiB)
    direction: str = "tx"  # stream: tx = guest sends, rx = guest receives (-R)
    desc: str = ""
    cpu: int = 0         # stream: the vCPU of the first iperf3 client (then round robin)
    proto: str = "tcp"   # stream: udp = iperf3 -u, as fast as it sends (-b 0)
    bitrate: str = ""    # stream: iperf3 -b per flow ("" = TCP unpaced, UDP -b 0)
    window: str = ""     # stream: iperf3 -w (socket buffers at both ends; "" = default)

    @property
    def unit(self) -> str:
        """What exits are counted per: transactions or packets."""
        return "tx" if self.kind == "rr" else "pkt"


WORKLOADS = {w.name: w for w in (
    Workload("pingpong", "rr", 1, 256, desc="sockperf TCP ping-pong 256 B, 1 flow"),
    Workload("rr16", "rr", 16, 256, desc="16 sockperf TCP ping-pong 256 B clients, one server"),
    Workload("rr100", "rr", 100, 256,
             desc="100 sockperf TCP ping-pong 256 B clients, one server (seed 000's TCP_RR load)"),
    Workload("tx256x4", "stream", 4, 256, "tx", "iperf3 TCP -l 256, 4 flows, guest sends"),
    Workload("rx256x4", "stream", 4, 256, "rx", "iperf3 TCP -l 256, 4 flows, guest receives"),
    Workload("tx256x16", "stream", 16, 256, "tx", "iperf3 TCP -l 256, 16 flows, guest sends"),
    Workload("rx256x16", "stream", 16, 256, "rx", "iperf3 TCP -l 256, 16 flows, guest receives"),
    Workload("bulk_tx", "stream", 1, None, "tx", "iperf3 TCP default length, 1 flow, guest sends"),
    Workload("bulk_rx", "stream", 1, None, "rx", "iperf3 TCP default length, 1 flow, guest receives"),
)}
DEFAULT_WORKLOADS = tuple(WORKLOADS)
QUICK_WORKLOADS = ("pingpong", "rr16", "tx256x4", "bulk_rx")


# The load runs with -t LOAD_MAX_S + --seconds and is interrupted once the
# window is measured; the ramp-up (all connections carrying data) must
# happen within RAMP_MAX_S.
RAMP_MAX_S = 60
SETTLE_S = 1.0
LOAD_EXTRA_S = RAMP_MAX_S + 30
# sockperf preallocates 32 bytes per possible message: (-t + 1) x --mps.
# The default (--mps max) means ~9.5 MB per second of -t and client, so cap
# the rate far above what a TCG guest reaches (~4000/s per flow): the cap
# only paces (busy-waits) when a client is faster than it.
SOCKPERF_MPS = 10000


def guest_memory_mb(workloads, seconds: int) -> int:
    """Guest RAM: ~300 MB for the guest plus every sockperf client's sample array."""
    rr = max((w.flows for w in workloads if w.kind == "rr"), default=0)
    arrays = rr * (seconds + LOAD_EXTRA_S + 1) * SOCKPERF_MPS * 32 / (1 << 20)
    need = 768 + arrays
    return max(1024, int(-(-need // 512) * 512))


def select_workloads(spec: str) -> list[str]:
    import fnmatch
    out: list[str] = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        hits = [n for n in WORKLOADS if fnmatch.fnmatchcase(n, part)]
        if not hits:
            raise VmTestError(f"unknown workload {part!r}; known: {', '.join(WORKLOADS)}")
        out += [h for h in hits if h not in out]
    return out


def topo_parse(t) -> tuple[int, int]:
    """A topology key -> (vCPUs, queue pairs). Keys: N (int or "N") = N
    vCPUs and N pairs; "C:P" = C vCPUs, a NIC with P pairs."""
    c, sep, p = str(t).partition(":")
    cpus, pairs = int(c), int(p if sep else c)
    if cpus < 1 or pairs < 1:
        raise VmTestError(f"topology {t!r}: need at least one vCPU and one queue pair")
    return cpus, pairs


def topo_key(spec: str):
    """--topology item -> the key stored in results: int N when vCPUs =
    pairs (as results always had), else "C:P"."""
    try:
        cpus, pairs = topo_parse(spec.strip())
    except ValueError:
        raise VmTestError(f"topology {spec!r}: N or VCPUS:PAIRS (e.g. 4 or 4:2)") from None
    return cpus if cpus == pairs else f"{cpus}:{pairs}"


def iperf_split(w: Workload, ncpu: int) -> list[tuple[int, int]]:
    """(cpu, flows) per iperf3 client process: one pinned process per vCPU
    (iperf3 3.12 is single-threaded and XPS picks the TX queue by CPU);
    cpu -1 when w.cpu < 0: one process, left to the scheduler."""
    if w.cpu < 0:
        return [(-1, w.flows)]
    procs = max(1, min(ncpu, w.flows))
    base, extra = divmod(w.flows, procs)
    return [((w.cpu + i) % ncpu, base + (1 if i < extra else 0)) for i in range(procs)]


def start_servers(g, w: Workload, ncpu: int) -> None:
    """Host-side servers for w (once per guest; kept until shutdown)."""
    if w.kind == "rr":
        host_sockperf_server(g)
        return
    for i, _ in enumerate(iperf_split(w, ncpu)):
        net.host_iperf_server(g, IPERF_BASE_PORT + i)


def host_sockperf_server(g):
    """sockperf TCP server in the namespace, epoll-multiplexed (-F needs a
    feed file): with its default for one address (blocking recvfrom) most
    of 16 concurrent clients get no answer."""
    servers = net._iperf_servers(g)
    key = ("bench-sockperf", SOCKPERF_PORT)
    p = servers.get(key)
    if p and p.alive():
        return p
    feed = g.workdir / "sockperf-feed.txt"
    feed.write_text(f"T:{g.nics[0].host_ip}:{SOCKPERF_PORT}\n")
    p = g.host_bg(["sockperf", "server", "-f", str(feed), "-F", "epoll"],
                  name=f"sockperf-{SOCKPERF_PORT}")
    net._wait_listen(g, SOCKPERF_PORT, p)
    servers[key] = p
    return p


def load_script(g, w: Workload, seconds: int, ncpu: int) -> str:
    """Guest shell commands running the load for `seconds`, output in /tmp/bench-w*."""
    host = g.nics[0].host_ip
    if w.kind == "rr":
        one = (f"sockperf ping-pong --tcp -m {w.msg} -i {host} -p {SOCKPERF_PORT} -t {seconds} "
               f"--mps {SOCKPERF_MPS}")
        if w.flows == 1:
            return f"taskset -c {1 % ncpu} {one} >/tmp/bench-w0 2>&1"
        return (f"for i in $(seq 0 {w.flows - 1}); do taskset -c $((i % {ncpu})) {one} "
                f">/tmp/bench-w$i 2>&1 & done; wait")
    parts = []
    for i, (cpu, flows) in enumerate(iperf_split(w, ncpu)):
        pin = f"taskset -c {cpu} " if cpu >= 0 else ""
        c = (f"{pin}iperf3 -c {host} -p {IPERF_BASE_PORT + i} -t {seconds} -i 0 -f m "
             f"--connect-timeout 5000 -P {flows}")
        if w.msg:
            c += f" -l {w.msg}"
        if w.proto == "udp":
            c += " -u"
        if w.bitrate or w.proto == "udp":
            c += f" -b {w.bitrate or 0}"
        if w.window:
            c += f" -w {w.window}"
        if w.direction == "rx":
            c += " -R"
        parts.append(f"{c} >/tmp/bench-w{i} 2>&1 &")
    return " ".join(parts) + " wait"


def summary_script(w: Workload) -> str:
    """Guest commands printing the load's summary lines, per output file."""
    if w.kind == "rr":
        pat = ("Total Run|Valid Duration|Summary|percentile (99.000|50.000|99.900) |ERROR|rror|"
               "interrupted|No messages|too high")
    else:
        pat = "(sender|receiver)$|error|interrupt"
    return (f"for f in /tmp/bench-w*; do echo \"@@W $f\"; grep -E '{pat}' $f | "
            f"sed -e 's/\\x1b\\[[0-9;]*m//g' | tail -n 24; done")


# --- parsing ------------------------------------------------------------------------------
SP_TOTAL = re.compile(r"\[Total Run\] RunTime=([\d.]+) sec; Warm up time=(\d+) msec; "
                      r"SentMessages=(\d+); ReceivedMessages=(\d+)")
SP_VALID = re.compile(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=(\d+); "
                      r"ReceivedMessages=(\d+)")
SP_AVG = re.compile(r"Summary: Latency is ([\d.]+) usec")
SP_PCT = re.compile(r"percentile ([\d.]+) =\s*([\d.]+)")


def split_files(out: str) -> dict[str, str]:
    res: dict[str, list[str]] = {}
    cur = None
    for line in out.splitlines():
        if line.startswith("@@W "):
            cur = line[4:].strip()
            res[cur] = []
        elif cur is not None:
            res[cur].append(line)
    return {k: "\n".join(v) for k, v in res.items()}


def parse_sockperf(text: str) -> dict:
    d: dict = {}
    m = SP_TOTAL.search(text)
    if m:
        d.update(run_s=float(m.group(1)), warmup_ms=int(m.group(2)), sent=int(m.group(3)),
                 received=int(m.group(4)))
    m = SP_VALID.search(text)
    if m:
        d.update(valid_s=float(m.group(1)), valid_sent=int(m.group(2)),
                 valid_received=int(m.group(3)))
    m = SP_AVG.search(text)
    if m:
        d["avg_us"] = float(m.group(1))
    for pm in SP_PCT.finditer(text):
        d[f"p{float(pm.group(1)):g}_us"] = float(pm.group(2))
    return d


def parse_load(w: Workload, out: str) -> dict:
    """What the load's own tools say (latency percentiles, their throughput
    over their whole run): {"clients"|"procs": [...], p50_us...}."""
    files = split_files(out)
    if w.kind == "rr":
        clients = [parse_sockperf(t) for _, t in sorted(files.items())]
        res: dict = {"clients": clients,
                     "clients_without_summary": sum(1 for c in clients if "avg_us" not in c)}
        for key in ("p50_us", "p99_us", "p99.9_us", "avg_us"):
            vals = sorted(c[key] for c in clients if key in c)
            if vals:
                # one flow: its percentile; several: the median over the clients
                res[key] = statistics.median(vals)
                if len(vals) > 1:
                    res[key.replace("_us", "_max_us")] = vals[-1]
        return res
    procs = [net.parse_iperf_text(t) for _, t in sorted(files.items())]
    return {"procs": procs,
            "iperf_receiver_mbps": sum(p.get("receiver", {}).get("bps", 0) for p in procs) / 1e6,
            "iperf_sender_mbps": sum(p.get("sender", {}).get("bps", 0) for p in procs) / 1e6}


# guest counters ------------------------------------------------------------------------------
def snap_script(ifname: str, path: str) -> str:
    """Guest counters into path with as few processes as possible (under
    load every exec in a TCG guest is slow): uptime + /proc/interrupts,
    /proc/net/dev, ethtool -S."""
    return ("{ cat /proc/uptime /proc/interrupts; echo @@NETDEV; cat /proc/net/dev; "
            f"echo @@ETHTOOL; ethtool -S {ifname} 2>&1; }} >{path}")


def parse_interrupts(lines: list[str]) -> dict[str, list[int]]:
    """/proc/interrupts lines -> name -> per-CPU counts; a numbered IRQ is
    keyed by its action name (virtio0-input.0), the others by theirs (RES)."""
    irq: dict[str, list[int]] = {}
    ncpu = 0
    for line in lines:
        if line.strip().startswith("CPU"):
            ncpu = len(line.split())
            continue
        name, _, rest = line.partition(":")
        f = rest.split()
        vals = []
        for x in f[:ncpu]:
            if not x.isdigit():
                break
            vals.append(int(x))
        key = name.strip()
        if key.isdigit():
            key = f[-1] if f else key
        irq[key] = vals
    return irq


def parse_snap(text: str, ifname: str) -> dict:
    sect: dict[str, list[str]] = {"IRQ": []}
    cur = "IRQ"
    for line in text.splitlines():
        if line.startswith("@@"):
            cur = line[2:].strip()
            sect[cur] = []
        else:
            sect.setdefault(cur, []).append(line)
    first = sect["IRQ"][:1]
    uptime = float(first[0].split()[0]) if first and first[0].strip() else 0.0
    irq = parse_interrupts(sect["IRQ"][1:])
    dev = {}
    for line in sect.get("NETDEV", []):
        if line.strip().startswith(ifname + ":"):
            f = line.split(":", 1)[1].split()
            if len(f) >= 16:
                dev = {"rx_bytes": int(f[0]), "rx_packets": int(f[1]), "rx_errs": int(f[2]),
                       "rx_drop": int(f[3]), "tx_bytes": int(f[8]), "tx_packets": int(f[9]),
                       "tx_errs": int(f[10]), "tx_drop": int(f[11])}
    eth = {}
    for line in sect.get("ETHTOOL", []):
        k, sep, v = line.partition(":")
        v = v.strip()
        if sep and re.fullmatch(r"-?\d+", v):
            eth[k.strip()] = int(v)
    return {"irq": irq, "dev": dev, "ethtool": eth, "uptime": uptime}


def _delta(a: dict, b: dict) -> dict:
    return {k: b[k] - a.get(k, 0) for k in b if isinstance(b[k], int)}


def snap_delta(s0: dict, s1: dict) -> dict:
    irq = {}
    for k, v in s1["irq"].items():
        before = s0["irq"].get(k, [0] * len(v))
        d = [x - (before[i] if i < len(before) else 0) for i, x in enumerate(v)]
        if any(d):
            irq[k] = d
    return {"irq": irq, "dev": _delta(s0["dev"], s1["dev"]),
            "ethtool": {k: v for k, v in _delta(s0["ethtool"], s1["ethtool"]).items() if v},
            "guest_s": round(s1["uptime"] - s0["uptime"], 3)}


# host trace ---------------------------------------------------------------------------------
QN_RE = re.compile(rb"virtio_queue_notify vdev (0x[0-9a-f]+) n (\d+) vq (0x[0-9a-f]+)")
NT_RE = re.compile(rb"virtio_notify vdev (0x[0-9a-f]+) vq (0x[0-9a-f]+)")


class TraceState:
    """Incremental reader of a guest's trace.log: learns vq pointer -> index
    from every kick seen so far and counts events inside windows."""

    def __init__(self, path):
        self.path = path
        self.pos = 0
        self.vq_index: dict[str, int] = {}

    def _scan(self, start: int, end: int, count: bool):
        kicks: Counter = Counter()
        notes: Counter = Counter()
        if end <= start:
            return kicks, notes
        with open(self.path, "rb") as f:
            f.seek(start)
            left = end - start
            carry = b""
            while left > 0:
                chunk = f.read(min(left, 32 << 20))
                if not chunk:
                    break
                left -= len(chunk)
                data = carry + chunk
                cut = data.rfind(b"\n") + 1
                data, carry = data[:cut], data[cut:]
                for (_vd, n, vq), c in Counter(QN_RE.findall(data)).items():
                    self.vq_index.setdefault(vq.decode(), int(n))
                    if count:
                        kicks[int(n)] += c
                if count:
                    for (_vd, vq), c in Counter(NT_RE.findall(data)).items():
                        notes[vq.decode()] += c
        return kicks, notes

    def offset(self) -> int:
        try:
            return os.path.getsize(self.path)
        except FileNotFoundError:
            return 0

    def window(self, start: int, end: int) -> dict:
        """Counts between byte offsets start and end (learning the map from
        everything before as well)."""
        if start > self.pos:
            self._scan(self.pos, start, count=False)
        kicks, notes = self._scan(start, end, count=True)
        self.pos = max(self.pos, end)
        return {"kicks": dict(sorted(kicks.items())), "notify_vq": dict(notes)}

    def resolve(self, vq: str) -> int | None:
        return resolve_vq(self.vq_index, vq)


def resolve_vq(vq_index: dict[str, int], vq: str) -> int | None:
    """Queue index of a vq pointer: a kicked queue's is known; the others
    follow from the array's stride (VirtQueues are one array: index =
    (ptr - ptr0) / stride)."""
    if vq in vq_index:
        return vq_index[vq]
    known = sorted((n, int(p, 16)) for p, n in vq_index.items())
    if len(known) >= 2:
        (n0, p0), (n1, p1) = known[0], known[-1]
        if n1 != n0 and (p1 - p0) % (n1 - n0) == 0:
            stride = (p1 - p0) // (n1 - n0)
            off = int(vq, 16) - p0
            if stride and off % stride == 0:
                return n0 + off // stride
    return None


def classify_queue(n: int, pairs: int) -> str:
    if n == 2 * pairs:
        return "ctrl"
    if n > 2 * pairs:
        return "other"
    return "tx" if n % 2 else "rx"


# host CPU ---------------------------------------------------------------------------------------
def _proc_jiffies(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return int(rest[11]) + int(rest[12])
    except (OSError, IndexError, ValueError):
        return None


def host_cpu(pid: int | None, helpers=()) -> dict:
    """Host CPU jiffies: busy (all CPUs), the QEMU process, our host-side
    helpers (servers in the namespace), PSI cpu 'some' stall (us)."""
    d = {"t": time.monotonic()}
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    d["busy"] = v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)
    if pid:
        q = _proc_jiffies(pid)
        if q is not None:
            d["qemu"] = q
    d["helpers"] = {h: j for h in helpers if (j := _proc_jiffies(h)) is not None}
    try:
        with open("/proc/pressure/cpu") as f:
            m = re.search(r"some .*total=(\d+)", f.read())
            if m:
                d["psi_us"] = int(m.group(1))
    except OSError:
        pass
    return d


def host_cpu_delta(a: dict, b: dict) -> dict:
    """CPU seconds over the window: busy, qemu, helpers, and foreign = the
    rest (other sessions' load on a shared host, the benchmark's Python)."""
    hz = os.sysconf("SC_CLK_TCK")
    wall = b["t"] - a["t"]
    out = {"wall_s": round(wall, 3), "busy_s": (b["busy"] - a["busy"]) / hz,
           "ncpu": os.cpu_count()}
    helpers = sum(b["helpers"][h] - a["helpers"].get(h, b["helpers"][h]) for h in b["helpers"]) / hz
    out["helpers_s"] = helpers
    if "qemu" in a and "qemu" in b:
        out["qemu_s"] = (b["qemu"] - a["qemu"]) / hz
        out["foreign_s"] = round(out["busy_s"] - out["qemu_s"] - helpers, 2)
    if "psi_us" in a and "psi_us" in b:
        out["psi_some_s"] = round((b["psi_us"] - a["psi_us"]) / 1e6, 3)
    return out


def host_busy_cpus(interval: float = 1.0) -> float:
    """Average number of busy host CPUs over interval seconds."""
    a = host_cpu(None)
    time.sleep(interval)
    b = host_cpu(None)
    return (b["busy"] - a["busy"]) / os.sysconf("SC_CLK_TCK") / (b["t"] - a["t"])


# --- host-side counters of the window edges ---------------------------------------------
SS_BYTES = re.compile(r"bytes_received:(\d+)")
SS_ACKED = re.compile(r"bytes_acked:(\d+)")


def tap_counters(qemu_pid: int, tap: str) -> dict:
    """The tap's counters from QEMU's network namespace (/proc/PID/net/dev)."""
    with open(f"/proc/{qemu_pid}/net/dev") as f:
        for line in f:
            name, sep, rest = line.partition(":")
            if sep and name.strip() == tap:
                v = [int(x) for x in rest.split()]
                # the tap's rx is what the guest sent
                return {"guest_tx_bytes": v[0], "guest_tx_packets": v[1],
                        "guest_rx_bytes": v[8], "guest_rx_packets": v[9]}
    raise VmTestError(f"{tap} not in /proc/{qemu_pid}/net/dev")


def server_sockets(g, w: Workload, ncpu: int) -> dict:
    """Established connections on the host-side server ports and the bytes
    their server ends received: {"conns": N, "rx_bytes": B}."""
    if w.kind == "rr":
        flt = f"( sport = :{SOCKPERF_PORT} )"
    else:
        last = IPERF_BASE_PORT + len(iperf_split(w, ncpu)) - 1
        flt = f"( sport >= :{IPERF_BASE_PORT} and sport <= :{last} )"
    r = g.host(["ss", "-tinH", "state", "established", flt], check=False, timeout=30)
    if r.returncode != 0:
        raise VmTestError(f"ss failed: {r.stderr}")
    b = [int(x) for x in SS_BYTES.findall(r.stdout)]
    acked = [int(x) for x in SS_ACKED.findall(r.stdout)]
    conns = sum(1 for ln in r.stdout.splitlines() if ln and not ln[0].isspace())
    return {"conns": conns, "rx_bytes": sum(b), "acked_bytes": sum(acked)}


def expected_conns(w: Workload, ncpu: int) -> int:
    """rr: one per client; iperf3: a control connection per process + its
    TCP flows (UDP flows are not connections)."""
    if w.kind == "rr":
        return w.flows
    return len(iperf_split(w, ncpu)) + (w.flows if w.proto == "tcp" else 0)


@dataclass
class BootCtx:
    g: object
    ec: object | None
    trace: TraceState
    ncpu: int
    pairs: int
    ifname: str
    model: str
    info: dict = field(default_factory=dict)


def _counters(ctx: BootCtx, w: Workload) -> dict:
    d = {"t": time.monotonic(), "tap": tap_counters(ctx.g.proc.pid, ctx.g.nics[0].tap)}
    d.update(server_sockets(ctx.g, w, ctx.ncpu))
    return d


def _host_snap(ctx: BootCtx) -> dict:
    g = ctx.g
    helpers = [p.p.pid for p in getattr(g.netns, "procs", []) if p.alive()]
    return {"t": time.monotonic(), "trace": ctx.trace.offset(),
            "ec": ctx.ec.snapshot() if ctx.ec else None,
            "cpu": host_cpu(g.proc.pid if g.proc else None, helpers)}


def _edge(ctx: BootCtx, w: Workload, path: str, first: bool) -> dict:
    """Host counters, guest snapshot, host counters; the host snapshot
    (trace, plugin, CPU) outside the guest one so the host window holds it."""
    e = {"pre": _counters(ctx, w)}
    if first:
        e["host"] = _host_snap(ctx)
    r = ctx.g.run(snap_script(ctx.ifname, path), timeout=60, quiet=True)
    if r.rc != 0:
        raise CheckFailed(f"guest counter snapshot failed: {r.out[-500:]}{r.err[-500:]}")
    if not first:
        e["host"] = _host_snap(ctx)
    e["post"] = _counters(ctx, w)
    return e


def wait_ramp(ctx: BootCtx, w: Workload, bg, t0: float) -> dict:
    """Wait until every connection of the load is established and has
    carried data (UDP: the tap has); -> the last server_sockets() reading."""
    want = expected_conns(w, ctx.ncpu)
    last: dict = {}
    seen_bytes = None
    while time.monotonic() - t0 < RAMP_MAX_S:
        last = server_sockets(ctx.g, w, ctx.ncpu)
        if last["conns"] >= want:
            moved = last["rx_bytes"] + last["acked_bytes"]
            if w.proto == "udp":
                # the datagrams, through the tap in either direction
                tap = tap_counters(ctx.g.proc.pid, ctx.g.nics[0].tap)
                moved = tap["guest_tx_bytes"] + tap["guest_rx_bytes"]
            if seen_bytes is not None and moved > seen_bytes:
                return last
            seen_bytes = moved
        # (no guest commands here: the agent is slow while the load starts;
        # a load that died shows as missing connections)
        time.sleep(0.25)
    raise CheckFailed(f"{w.name}: only {last.get('conns')} of {want} connections carrying data "
                      f"after {RAMP_MAX_S}s")


def run_workload(ctx: BootCtx, w: Workload, seconds: int) -> dict:
    """Measure workload w once in the booted guest -> run record."""
    g = ctx.g
    start_servers(g, w, ctx.ncpu)
    g.run("rm -f /tmp/bench-w* /tmp/bench-s0 /tmp/bench-s1", timeout=30, quiet=True)
    t0 = time.monotonic()
    bg = g.run_bg(load_script(g, w, seconds + LOAD_EXTRA_S, ctx.ncpu))
    try:
        wait_ramp(ctx, w, bg, t0)
        ramp_s = time.monotonic() - t0
        time.sleep(SETTLE_S)
        e0 = _edge(ctx, w, "/tmp/bench-s0", True)
        time.sleep(max(0.0, e0["host"]["t"] + seconds - time.monotonic()))
        e1 = _edge(ctx, w, "/tmp/bench-s1", False)
    finally:
        g.run("killall -INT sockperf iperf3 2>/dev/null; true", timeout=30, quiet=True)
    try:
        bg.wait(timeout=60, interval=0.5)
    except VmTestError:
        g.run("killall -KILL sockperf iperf3 2>/dev/null; true", timeout=30, quiet=True)
        bg.wait(timeout=30)
    try:
        bg.result(timeout=5)     # removes the agent's files of the background command
    except VmTestError:
        pass
    want = expected_conns(w, ctx.ncpu)
    if e1["post"]["conns"] < want:
        raise CheckFailed(f"{w.name}: the load did not last the window ({e1['post']['conns']} of "
                          f"{want} connections at its end)")
    out = g.run(f"cat /tmp/bench-s0; echo @@END; cat /tmp/bench-s1; echo @@END; "
                f"{summary_script(w)}", timeout=60)
    parts = out.out.split("@@END\n")
    if len(parts) < 3:
        raise CheckFailed(f"{w.name}: counter snapshots missing:\n{out.out[-1500:]}{out.err[-500:]}")
    s0, s1 = parse_snap(parts[0], ctx.ifname), parse_snap(parts[1], ctx.ifname)
    h0, h1 = e0["host"], e1["host"]
    rec = {"workload": w.name, "ok": True, "ramp_s": round(ramp_s, 2),
           "step_wall_s": round(time.monotonic() - t0, 2),
           "window": window_units(w, e0, e1, s0, s1),
           "load": parse_load(w, parts[2]), "guest": snap_delta(s0, s1)}
    rec.update(host_window(ctx, h0, h1))
    if ctx.info.get("virtio_dev"):
        rec["virtio_dev"] = ctx.info["virtio_dev"]
    if ctx.info.get("plan"):
        rec["plan"] = ctx.info["plan"]
    rec["metrics"] = metrics(rec, w, ctx.pairs, ctx.model, ctx.ncpu)
    return rec


def host_window(ctx: BootCtx, h0: dict, h1: dict) -> dict:
    """What two host snapshots (_host_snap) say about the window between
    them: kicks and interrupts per queue (trace), the plugin's counts, host CPU."""
    out = {"trace": ctx.trace.window(h0["trace"], h1["trace"]),
           "host_cpu": host_cpu_delta(h0["cpu"], h1["cpu"])}
    irq_q: dict[str, int] = {}
    for vq, c in out["trace"]["notify_vq"].items():
        n = ctx.trace.resolve(vq)
        key = str(n) if n is not None else vq
        irq_q[key] = irq_q.get(key, 0) + c
    out["trace"]["notify"] = irq_q
    if h0["ec"] is not None and h1["ec"] is not None:
        d = h1["ec"] - h0["ec"]
        out["exitcost"] = {"kinds": d.kinds, "stall_ns": d.stall_ns,
                           "hooks": {k: v for k, v in d.hooks.items() if v},
                           "vcpus": {str(c): {k: v for k, v in kv.items() if v}
                                     for c, kv in d.vcpus.items()},
                           "elapsed_ns": d.elapsed_ns}
    return out


def window_units(w: Workload, e0: dict, e1: dict, s0: dict, s1: dict) -> dict:
    """Durations and units (transactions or packets) of the two windows."""
    def tapd(a, b):
        return {k: b["tap"][k] - a["tap"][k] for k in b["tap"]}

    def mid(e, k):
        return (e["pre"][k] + e["post"][k]) / 2

    host = {"seconds": round(e1["host"]["t"] - e0["host"]["t"], 3),
            "tap": tapd(e0["pre"], e1["post"]),
            "server_rx_bytes": e1["post"]["rx_bytes"] - e0["pre"]["rx_bytes"],
            "server_acked_bytes": e1["post"]["acked_bytes"] - e0["pre"]["acked_bytes"],
            # how long the guest snapshots took (agent round trips) at each edge
            "edge_s": [round(e["post"]["t"] - e["pre"]["t"], 3) for e in (e0, e1)]}
    guest = {"seconds": round(s1["uptime"] - s0["uptime"], 3),
             "server_rx_bytes_interpolated": mid(e1, "rx_bytes") - mid(e0, "rx_bytes")}
    if w.kind == "rr":
        host["transactions"] = host["server_rx_bytes"] / w.msg
    return {"host": host, "guest": guest}


def _sum_row(irq: dict, *names) -> int:
    return sum(sum(irq.get(n, [])) for n in names)


def _div(a, b):
    return a / b if (a is not None and b) else None


MAX_CPU_METRICS = 8     # dev_irqs_cpuN_per_unit for N below this


def queue_vectors(irq: dict, vdev: str | None) -> dict[str, list[int]]:
    """'input.N'/'output.N' -> per-CPU counts of the NIC's queue vectors
    (names from /proc/interrupts: <virtio dev>-input.N). Without the
    device name: every virtioX- queue vector."""
    out = {}
    for name, counts in irq.items():
        dev, sep, q = name.rpartition("-")
        if not sep or not (q.startswith("input.") or q.startswith("output.")):
            continue
        if (vdev and dev == vdev) or (not vdev and dev.startswith("virtio")):
            out[q] = counts
    return out


def plan_share(vecs: dict[str, list[int]], plan: dict | None,
               min_irqs: int = 10) -> tuple[float | None, float | None]:
    """(% of the queue vectors' interrupts on their planned CPU, the worst
    single vector's %, over vectors with at least min_irqs interrupts);
    plan: {pair as str: irq cpu}. (None, None) without a plan."""
    if not plan:
        return None, None
    on = total = 0
    worst = None
    for q, counts in vecs.items():
        cpu = plan.get(q.partition(".")[2])
        n = sum(counts)
        if cpu is None or not n:
            continue
        here = counts[cpu] if cpu < len(counts) else 0
        on += here
        total += n
        if n >= min_irqs:
            share = 100.0 * here / n
            worst = share if worst is None else min(worst, share)
    return (100.0 * on / total if total else None), worst


def parse_plan(text: str | None) -> dict[str, int] | None:
    """Our driver's /sys/class/net/<dev>/virtio_net/affinity -> {pair: irq cpu}."""
    if not text:
        return None
    plan = {}
    for line in text.splitlines():
        m = re.match(r"pair (\d+) irq (\d+) xps \S+$", line.strip())
        if m:
            plan[m.group(1)] = int(m.group(2))
    return plan or None


_QUEUE_PREFIX = re.compile(r"^(rx|tx)(?:_queue_)?_?\d+_")


def driver_counters(ethtool: dict | None) -> dict:
    """{'drv_tx_kicks_held_per_pkt': ...} from an ethtool -S delta of ours
    (both the rx_queue_N_* and the rxN_* spelling); {} for stock."""
    if not ethtool:
        return {}
    tot: dict[str, int] = {}
    for k, v in ethtool.items():
        m = _QUEUE_PREFIX.match(k)
        if m and isinstance(v, (int, float)):
            name = f"{m.group(1)}_{k[m.end():]}"
            tot[name] = tot.get(name, 0) + v
    if "tx_kicks_held" not in tot:      # not ours
        return {}
    out = {}
    for name in DRIVER_COUNTERS:   # bench_report's list, per packet of its direction
        pkts = tot.get(name[:3] + "packets")
        out[f"drv_{name}_per_pkt"] = _div(tot.get(name), pkts) if name in tot else None
    return out


def metrics(rec: dict, w: Workload, pairs: int, model: str, ncpu: int | None = None) -> dict:
    """Flat derived metrics of one run record (None where not measurable).

    Host-window counts (kicks, device interrupts, timer arms, cost) are
    divided by host-window units, guest-window counts (timer interrupts,
    IPIs, per-CPU device interrupts) by guest-window units. U =
    transaction (rr) or packet (streams: guest rx + tx)."""
    m: dict = {}
    win = rec["window"]
    hw = win["host"]
    tap = hw["tap"]
    dev = rec["guest"]["dev"]
    irq = rec["guest"]["irq"]
    h_tx, h_rx = tap["guest_tx_packets"], tap["guest_rx_packets"]
    g_tx, g_rx = dev.get("tx_packets", 0), dev.get("rx_packets", 0)
    m["tx_pkts"], m["rx_pkts"] = g_tx, g_rx
    m["tap_tx_pkts"], m["tap_rx_pkts"] = h_tx, h_rx
    m["window_s"] = hw["seconds"]
    if w.kind == "rr":
        # guest window: its packets x the host window's transactions per packet
        # (the agent round trip around a guest snapshot can take a second
        # under load, too long to interpolate the server's byte counters)
        u_host = hw["transactions"]
        u_guest = g_rx * u_host / h_rx if h_rx else None
        m["tps"] = _div(u_host, hw["seconds"])
        m["tps_per_flow_max"] = None
        for k in ("p50_us", "p99_us", "avg_us", "p99_max_us"):
            m[k] = rec["load"].get(k)
        m["mbps"] = _div((tap["guest_tx_bytes"] + tap["guest_rx_bytes"]) * 8 / 1e6, hw["seconds"])
    else:
        u_host, u_guest = h_tx + h_rx, g_tx + g_rx
        data = tap["guest_tx_bytes"] if w.direction == "tx" else tap["guest_rx_bytes"]
        m["mbps"] = _div(data * 8 / 1e6, hw["seconds"])     # L2 bytes of the data direction
        m["pkts_per_s"] = _div(u_host, hw["seconds"])
        m["iperf_mbps"] = rec["load"].get("iperf_receiver_mbps") or None
    m["units"], m["units_guest"] = u_host, u_guest
    m["edge_s_max"] = max(hw.get("edge_s") or [0])
    tr = rec["trace"]
    kicks = {"rx": 0, "tx": 0, "ctrl": 0, "other": 0}
    for n, c in tr["kicks"].items():
        kicks[classify_queue(int(n), pairs)] += c
    irqs = {"rx": 0, "tx": 0, "ctrl": 0, "other": 0}
    for n, c in tr["notify"].items():
        irqs[classify_queue(int(n), pairs) if n.isdigit() else "other"] += c
    for d in ("tx", "rx", "ctrl"):
        m[f"kicks_{d}"] = kicks[d]
        m[f"irqs_{d}"] = irqs[d]
    m["irqs_other"] = irqs["other"]
    m["kicks"] = sum(kicks.values())
    m["irqs"] = sum(irqs.values())
    m["kicks_per_txpkt"] = _div(kicks["tx"], h_tx)
    m["kicks_rx_per_rxpkt"] = _div(kicks["rx"], h_rx)
    m["irqs_per_pkt"] = _div(m["irqs"], h_tx + h_rx)
    m["irqs_tx_per_txpkt"] = _div(irqs["tx"], h_tx)
    m["irqs_rx_per_rxpkt"] = _div(irqs["rx"], h_rx)
    m["timer_irqs"] = _sum_row(irq, "LOC")
    m["ipis"] = _sum_row(irq, "RES", "CAL")
    m["guest_dev_irqs"] = sum(sum(v) for k, v in irq.items() if k.startswith("virtio"))
    # the NIC's queue vectors: interrupts per CPU, and (ours) on the planned CPU
    vecs = queue_vectors(irq, rec.get("virtio_dev"))
    ncols = max((len(v) for v in vecs.values()), default=0)
    per_cpu = [sum(v[i] for v in vecs.values() if i < len(v)) for i in range(ncols)]
    for i in range(min(ncpu or ncols, MAX_CPU_METRICS)):
        m[f"dev_irqs_cpu{i}_per_unit"] = _div(per_cpu[i] if i < ncols else 0, u_guest)
    m["irq_on_plan_pct"], m["irq_on_plan_min_pct"] = plan_share(vecs, rec.get("plan"))
    ec = rec.get("exitcost")
    m["timer_arms"] = ec["kinds"].get("timer_arm") if ec else None
    # HLT: an idle vCPU's exit on KVM (the plugin counts HLT/MWAIT executions)
    m["hlts"] = ec["kinds"].get("hlt") if ec else None
    per = {"kicks": (m["kicks"], u_host), "irqs": (m["irqs"], u_host),
           "timer_arms": (m["timer_arms"], u_host), "timer_irqs": (m["timer_irqs"], u_guest),
           "ipis": (m["ipis"], u_guest), "hlts": (m["hlts"], u_host)}
    for k, (v, u) in per.items():
        m[f"{k}_per_unit"] = _div(v, u)
    parts = [m[f"{k}_per_unit"] for k in per]
    m["exits_per_unit"] = sum(p for p in parts if p is not None) if (u_host and u_guest) else None
    m["exits_complete"] = all(p is not None for p in parts)
    if ec:
        wts = model_weights(model)
        cost = weighted_cost(ec["kinds"], wts)
        m["cost_us"] = cost
        m["cost_us_per_unit"] = _div(cost, u_host)
        m["stall_s"] = sum(ec["stall_ns"].values()) / 1e9
        for k in KINDS:
            m[f"ec_{k}_per_unit"] = _div(ec["kinds"].get(k, 0), u_host)
    else:
        m["cost_us"] = m["cost_us_per_unit"] = m["stall_s"] = None
    m.update(driver_counters(rec["guest"].get("ethtool")))
    hc = rec["host_cpu"]
    perf = m.get("tps") if w.kind == "rr" else m.get("mbps")
    # TCG speed follows the host CPU time QEMU gets (other sessions share
    # the host): the same performance per QEMU CPU-second is steadier
    m["perf_per_qemu_cpu"] = _div(perf * hw["seconds"], hc.get("qemu_s")) if perf else None
    m["host_foreign_cpu"] = _div(hc.get("foreign_s"), hc["wall_s"])
    m["qemu_cpu_s"] = hc.get("qemu_s")
    return m


def weighted_cost(kinds: dict, weights: dict) -> float:
    """The exit cost (us) of plugin counts under weights: count x weight per
    kind; hlt is charged per wake-up (WAKES), as the plugin does."""
    wakes = getattr(_exitcost, "WAKES", "hlt_wakes")
    return sum((kinds.get(wakes, 0) if k == "hlt" else kinds.get(k, 0)) * weights.get(k, 0)
               for k in KINDS)


# --- one boot ---------------------------------------------------------------------------------
def guest_info(g, ifname: str) -> dict:
    """ethtool -i, kernel, the NIC's virtio device, our driver's plan (if
    any) and the affinity of each queue vector after boot."""
    r = g.run(f"ethtool -i {ifname}; echo @@; uname -r; echo @@; "
              f"cat /sys/class/net/{ifname}/queues/tx-0/xps_cpus 2>/dev/null; "
              f"ethtool -l {ifname} | tail -n 4; echo @@; "
              f"d=$(basename $(readlink /sys/class/net/{ifname}/device)); echo $d; echo @@; "
              f"cat /sys/class/net/{ifname}/virtio_net/affinity 2>/dev/null; echo @@; "
              f"grep -E \" $d-(input|output)\\.[0-9]+$\" /proc/interrupts | "
              f"while read n rest; do n=${{n%:}}; "
              f"echo \"${{rest##* }} $(cat /proc/irq/$n/smp_affinity_list) "
              f"$(cat /proc/irq/$n/effective_affinity_list)\"; done",
              timeout=30, quiet=True)
    parts = r.out.split("@@")
    info = {}
    for line in parts[0].splitlines():
        k, sep, v = line.partition(":")
        if sep:
            info[k.strip()] = v.strip()
    info["uname"] = parts[1].strip() if len(parts) > 1 else ""
    if len(parts) > 5:
        info["virtio_dev"] = parts[3].strip()
        plan = parse_plan(parts[4])
        if plan:
            info["plan"] = plan
        # affinity and effective affinity of each queue vector right after
        # boot; on x86 a vector's move takes effect (and shows in
        # effective_affinity_list) when it next fires, so the effective
        # CPU here may still be the one before the driver's placement
        aff = {}
        for line in parts[5].splitlines():
            f = line.split()
            if len(f) == 3:
                aff[f[0].rpartition("-")[2]] = {"affinity": f[1], "effective": f[2]}
        info["irq_affinity_at_boot"] = aff
    return info


def shell_join(argv) -> str:
    return " ".join(shlex.quote(str(a)) for a in argv)
