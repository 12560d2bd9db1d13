# SPDX-License-Identifier: GPL-2.0-only
"""The traffic matrix behind bench/matrix.py: cells, comparators, one cell run.

A *cell* is one traffic shape; a *variant* is one driver configuration
(stock at its defaults, stock with napi_tx=0, stock with
napi_defer_hard_irqs + gro_flush_timeout, ours). A boot runs one variant on
one topology; in it every cell of that topology runs once, and each cell
measures one window per exit-cost model while its load keeps running (the
plugin's costs are switched between windows, the order rotated per cell and
repeat):

  start the load; wait until it carries data
  for each model: set the plugin's costs; SETTLE_S; host edge; W seconds;
                  host edge
  stop the load

Edges are host-side only (the tap's counters, QEMU's trace offset, the
plugin's counters, host CPU; for the request/response loads a SIGUSR1 that
closes the load generator's latency window): no guest command runs inside a
measured window, so no agent round trip falls into it or stretches it.

Kinds of cells (tx/rx and "client"/"server" from the guest's point of view):
  rr      closed-loop request/response, N flows, 256 B: vnet-load clients in
          the namespace, vnet-load echo servers in the guest (one per vCPU,
          SO_REUSEPORT); transactions/s, p50/p99/p99.9 RTT
  ol      open-loop fixed-rate stream of 64 B messages, each answered by the
          guest: vnet-load client -r RATE in the namespace; achieved rate,
          p50/p99/p99.9 RTT
  pub     open-loop fixed-rate one-way TCP stream from the guest (a telemetry
          or market-data publisher): vnet-load client -r RATE -s SIZE in the
          guest, vnet-load sink in the namespace, nothing answered; achieved
          rate, p50/p99/p99.9 one-way delay above its least (see vnet-load);
          the sender sets TCP_NODELAY, pubn-* cells leave Nagle on
  stream  iperf3 in the guest (the benchmark's stream workloads): TCP,
          N flows, -l 64/256/1400 or the default (bulk), tx or rx; Mbit/s
  mixed   one queue pair shared by a bulk TCP sender (iperf3 in the guest)
          and a TCP ping-pong (vnet-load, 1 flow): both reported; the
          sender pinned to vCPU 0 (mixed) or 1 (mixed-c1): with one pair
          on two vCPUs, on the queue's interrupt CPU or off it
  app     a server in the guest and its usual load generator in the
          namespace, at fixed rates and at saturation: dnsmasq + dnsperf,
          nginx + wrk, memcached + memcaslap (libmemcached-tools)
"""

from __future__ import annotations

import math
import os
import re
import shlex
import signal
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.initramfs import GUEST_TOOLS, build_guest_tool
from harness.util import CheckFailed, VmTestError

from . import workloads as B

MSG_RR = 256            # closed-loop message size (as the benchmark's rr workloads)
MSG_RR_LARGE = 16384    # closed-loop cells with large messages (an HTTP-like answer)
MSG_OL = 64             # open-loop message size
LOAD_PORT = 7000        # vnet-load echo servers in the guest: LOAD_PORT (reuseport, one per vCPU)
LOAD_WRITES = (1, 2)    # ... answering in this many writes, on LOAD_PORT + index
PUB_PORT = 7100         # vnet-load sink in the namespace (pub cells)
SETTLE_S = 0.3          # after a cost switch, before the window
RAMP_S = 0.5            # after the load generator started, before the first window
DEFAULT_WINDOW_S = 2.0
OL_MIN_SAMPLES = 500    # open loop: windows long enough for a p99 from 5 samples above it (max 10 s)


@dataclass(frozen=True)
class Cell:
    name: str
    kind: str                    # rr, ol, pub, stream, mixed, app
    proto: str = "tcp"           # rr/ol: tcp or udp
    flows: int = 1
    msg: int | None = None       # bytes per message or write; None = iperf3 default (bulk)
    rate: int = 0                # ol/app: target per second; 0 = saturation (closed loop)
    direction: str = "tx"        # stream: tx = guest sends
    app: str = ""                # app: dns, http, kv
    desc: str = ""
    cpu: int = 0                 # mixed: the vCPU the bulk sender is pinned to (-1: none)
    writes: int = 1              # rr: the guest's server answers in this many writes
    nagle: bool = False          # pub: the sender leaves Nagle's algorithm on (no TCP_NODELAY)
    bitrate: str = ""            # stream: iperf3 -b per flow (a paced stream)
    window: str = ""             # stream: iperf3 -w (a window-limited stream)

    @property
    def unit(self) -> str:
        return "pkt" if self.kind in ("stream", "mixed") else "tx"

    @property
    def latency(self) -> bool:
        return self.kind in ("rr", "ol", "pub", "mixed", "app")

    def window_s(self, base: float) -> float:
        if self.kind in ("ol", "pub") and self.rate:
            return round(min(10.0, max(base, OL_MIN_SAMPLES / self.rate)), 1)
        return base

    def workload(self) -> B.Workload:
        """The benchmark's stream workload (stream cells, the mixed cell's bulk flow)."""
        if self.kind == "mixed":
            return B.Workload(self.name, "stream", 1, None, "tx", cpu=self.cpu)
        return B.Workload(self.name, "stream", self.flows, self.msg, self.direction,
                          proto=self.proto, bitrate=self.bitrate, window=self.window)


def _cells() -> dict[str, Cell]:
    out = []
    for proto in ("tcp", "udp"):
        for n in (1, 2, 4, 8, 16, 32, 128):
            out.append(Cell(f"rr-{proto}-{n}", "rr", proto, n, MSG_RR,
                            desc=f"closed-loop {proto.upper()} request/response, {n} flows, "
                                 f"{MSG_RR} B, guest answers"))
    # answers in two writes (a header, then a body: each write a packet of its own with
    # TCP_NODELAY), the second one small while the first is unacknowledged and unreclaimed
    for n in (1, 4):
        out.append(Cell(f"rr-tcp-{n}-2w", "rr", "tcp", n, MSG_RR, writes=2,
                        desc=f"closed-loop TCP request/response, {n} flows, {MSG_RR} B, "
                             f"guest answers in two writes"))
    # large answers: each one bulk for the kick policy, a closed loop waiting on its tail
    for n in (1, 8):
        out.append(Cell(f"rr-tcp-{n}-16k", "rr", "tcp", n, MSG_RR_LARGE,
                        desc=f"closed-loop TCP request/response, {n} flows, "
                             f"{MSG_RR_LARGE} B each way, guest answers"))
    for proto in ("tcp", "udp"):
        for r in OL_RATES:
            out.append(Cell(f"ol-{proto}-{r}", "ol", proto, 1, MSG_OL, rate=r,
                            desc=f"open-loop {proto.upper()} stream, {r} msgs/s of {MSG_OL} B, "
                                 f"each answered by the guest"))
    # one-way streams from the guest at a fixed rate, only pure
    # acknowledgments coming back: each segment large (or GSO) but nothing
    # queued behind it (the kick policy held them by size until 2026-12)
    for size, rates in PUB_RATES.items():
        for r in rates:
            tag = "16k" if size == 16384 else str(size)
            out.append(Cell(f"pub-{tag}-{r}", "pub", "tcp", 1, size, rate=r,
                            desc=f"open-loop one-way TCP stream from the guest, {r} msgs/s of "
                                 f"{size} B, not answered"))
    # the same from an application that leaves Nagle's algorithm on
    for size, rates in PUBN_RATES.items():
        for r in rates:
            tag = "16k" if size == 16384 else str(size)
            out.append(Cell(f"pubn-{tag}-{r}", "pub", "tcp", 1, size, rate=r, nagle=True,
                            desc=f"as pub-{tag}-{r}, the sender without TCP_NODELAY"))
    for d in ("tx", "rx"):
        for size in (64, 256, 1400, None):
            for n in (1, 2, 4, 16):
                tag = "bulk" if size is None else str(size)
                out.append(Cell(f"{d}-{tag}x{n}", "stream", "tcp", n, size, direction=d,
                                desc=f"iperf3 TCP {'-l ' + str(size) if size else 'default writes'}, "
                                     f"{n} flows, guest {'sends' if d == 'tx' else 'receives'}"))
    # UDP streams, as fast as iperf3 sends: nothing about them is TCP's (no
    # small queues, no acknowledgments), the sender's socket waits only on
    # its send buffer, which the reclaim gives back
    for d in ("tx", "rx"):
        for size in (64, 1400):
            for n in (1, 4):
                out.append(Cell(f"udp-{d}-{size}x{n}", "stream", "udp", n, size, direction=d,
                                desc=f"iperf3 UDP -l {size} -b 0, {n} flows, guest "
                                     f"{'sends' if d == 'tx' else 'receives'}"))
    # streams as users tune them: paced by iperf3 (-b: TCP at a share of
    # what TCG carries, UDP at fixed packet rates), and bounded by small
    # socket buffers (-w: a window-limited flow, whose next data waits on
    # the acknowledgment of what is held)
    for d, proto, size, rate in PACED_STREAMS:
        tag = "bulk" if size is None else str(size)
        kind = "udp-" if proto == "udp" else ""
        out.append(Cell(f"{kind}{d}-{tag}x1-b{rate.lower()}", "stream", proto, 1, size,
                        direction=d, bitrate=rate,
                        desc=f"iperf3 {proto.upper()} "
                             f"{'-l ' + str(size) if size else 'default writes'} -b {rate}, "
                             f"1 flow, guest {'sends' if d == 'tx' else 'receives'}"))
    for d in ("tx", "rx"):
        for win in WINDOWS:
            out.append(Cell(f"{d}-bulkx1-w{win.lower()}", "stream", "tcp", 1, None, direction=d,
                            window=win,
                            desc=f"iperf3 TCP default writes -w {win}, 1 flow, guest "
                                 f"{'sends' if d == 'tx' else 'receives'}"))
    for cpu in (0, 1, -1):
        out.append(Cell("mixed" + {0: "", -1: "-free"}.get(cpu, f"-c{cpu}"), "mixed", "tcp", 1,
                        MSG_RR, cpu=cpu,
                        desc="one queue pair: iperf3 bulk TCP from the guest ("
                             + (f"pinned to vCPU {cpu}" if cpu >= 0 else "not pinned")
                             + f") + a TCP ping-pong ({MSG_RR} B) answered by the guest"))
    for name, app, rate, flows, what in APPS:
        out.append(Cell(name, "app", flows=flows, rate=rate, app=app, desc=what))
    return {c.name: c for c in out}


OL_RATES = (100, 300, 1000, 3000, 10000, 30000)
PUB_RATES = {200: (1000, 3000), 600: (3000,), 1400: (300, 1000, 3000, 10000),
             16384: (100, 300, 1000, 3000)}
PUBN_RATES = {600: (3000,), 1400: (1000, 3000), 16384: (1000,)}
# (direction, proto, write size (None: iperf3's default), iperf3 -b): TCP at
# about a tenth and a third of a flow's TCG rate, UDP at about 5000 and
# 10000 datagrams/s of 1400 B and 64 B
PACED_STREAMS = (("tx", "tcp", None, "100M"), ("tx", "tcp", None, "400M"),
                 ("rx", "tcp", None, "100M"), ("rx", "tcp", None, "400M"),
                 ("tx", "udp", 1400, "56M"), ("tx", "udp", 1400, "112M"),
                 ("rx", "udp", 1400, "56M"), ("rx", "udp", 1400, "112M"),
                 ("tx", "udp", 64, "2560K"), ("tx", "udp", 64, "5120K"),
                 ("rx", "udp", 64, "2560K"), ("rx", "udp", 64, "5120K"))
WINDOWS = ("32K", "128K")
# (cell, app, fixed rate/s (0: as fast as the generator goes), connections, what)
APPS = (("dns-1000", "dns", 1000, 4, "dnsmasq in the guest, dnsperf at 1000 queries/s"),
        ("dns-2000", "dns", 2000, 4, "dnsmasq in the guest, dnsperf at 2000 queries/s"),
        ("dns-3000", "dns", 3000, 4, "dnsmasq in the guest, dnsperf at 3000 queries/s"),
        ("dns-sat", "dns", 0, 32, "dnsmasq in the guest, dnsperf with 32 queries outstanding"),
        ("http-300", "http", 300, 4, "nginx in the guest (100 B page), wrk offering 300 "
                                     "requests/s on 4 connections"),
        ("http-1000", "http", 1000, 4, "nginx in the guest (100 B page), wrk offering 1000 "
                                       "requests/s on 4 connections"),
        ("http-sat", "http", 0, 16, "nginx in the guest, wrk with 16 connections"),
        # memcaslap's --tps does not pace (libmemcached-tools 1.1.4: --tps=1k ran 55k ops/s
        # on loopback), so the light key-value load is one connection, closed loop
        ("kv-1conn", "kv", 0, 1, "memcached in the guest, memcaslap get/set on 1 connection"),
        ("kv-sat", "kv", 0, 32, "memcached in the guest, memcaslap get/set on 32 connections"))
CELLS = _cells()


def select_cells(spec: str) -> list[str]:
    """Comma separated names or globs -> cell names, in CELLS order."""
    import fnmatch
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    for p in parts:
        if not any(fnmatch.fnmatchcase(n, p) for n in CELLS):
            raise VmTestError(f"unknown cell {p!r} (see --list)")
    return [n for n in CELLS if any(fnmatch.fnmatchcase(n, p) for p in parts)]


# --- comparators -------------------------------------------------------------------------
# stock's own knobs for the "tuned" comparator: (napi_defer_hard_irqs, gro_flush_timeout ns),
# chosen by bench/matrix.py --knob-search (docs/benchmarks-matrix.md)
TUNED_DEFAULT = (1, 10000)
KNOB_GRID = ((1, 10000), (2, 20000), (2, 50000), (8, 100000))


@dataclass(frozen=True)
class Variant:
    name: str
    driver: str                  # stock or ours
    modopts: str = ""            # module options at load
    defer: tuple | None = None   # (napi_defer_hard_irqs, gro_flush_timeout ns) via sysfs
    coalesce: tuple = ()         # ours: ethtool -C arguments
    setup: str = ""              # guest script after boot (IF = interface)
    module: str = ""             # ours-b: its own virtio_net.ko (else the run's)

    def setup_script(self) -> str:
        """Guest commands after boot (IF = the interface)."""
        cmds = []
        if self.defer:
            cmds += [f"echo {self.defer[0]} > /sys/class/net/$IF/napi_defer_hard_irqs",
                     f"echo {self.defer[1]} > /sys/class/net/$IF/gro_flush_timeout"]
        if self.coalesce:
            cmds.append("ethtool -C $IF " + shlex.join(self.coalesce))
        if self.setup:
            cmds.append(self.setup)
        return "\n".join(cmds)


def tuned_name(defer: tuple) -> str:
    return f"stock-defer{defer[0]}-{defer[1] // 1000}us"


def variants(tuned=TUNED_DEFAULT, ours_coalesce=(), ours_setup="", ours_modopts="",
             which=("stock", "ours", "stock-notx", "stock-tuned"),
             ours_b: Variant | None = None) -> list[Variant]:
    """The comparators in boot order (stock and ours first: they carry the
    significance test and alternate like the benchmark's boots).  ours_b:
    a second build or setting of ours, for A/Bs measured in the same run."""
    known = {"stock": Variant("stock", "stock"),
             "ours": Variant("ours", "ours", ours_modopts, None, tuple(ours_coalesce), ours_setup),
             "stock-notx": Variant("stock-notx", "stock", "napi_tx=0"),
             "stock-tuned": Variant("stock-tuned", "stock", defer=tuple(tuned)),
             # threaded NAPI (sysfs, 5.12+): polls in a kernel thread the
             # scheduler shares the CPU with, not in softirq context
             "stock-threaded": Variant("stock-threaded", "stock",
                                       setup='echo 1 > "/sys/class/net/$IF/threaded"')}
    if ours_b:
        known["ours-b"] = ours_b
    out = []
    for w in which:
        if w not in known:
            raise VmTestError(f"unknown variant {w!r}: {', '.join(known)}")
        out.append(known[w])
    return out


# Modules a --setup script may load with "vnet modprobe" (qdiscs, TCP
# congestion controls users pick)
SETUP_MODULES = ("sch_fq", "sch_fq_codel", "sch_netem", "tcp_bbr")


def with_common_setup(vs: list[Variant], script: str) -> list[Variant]:
    """Every variant runs @script first after boot (bench/matrix.py --setup):
    the same guest configuration for all drivers."""
    return [replace(v, setup=script + ("\n" + v.setup if v.setup else "")) for v in vs]


# bench/matrix.py --keep-logs: QEMU trace events beside TRACE_EVENTS for
# bench/timeline.py (when the device publishes used buffers, when it takes
# the guest's; the guest's writes to its local APIC: end of interrupt,
# timer, IPIs)
TIMELINE_EVENTS = ("virtqueue_flush", "virtqueue_pop", "apic_mem_writel")


def variant_guest(kernel, v: Variant, module: Path | None, topo, name: str,
                  qemu_args: tuple = (), extra_binaries: tuple = (), extra_trace: tuple = ()):
    """An unbooted guest for variant v: the topology's vCPUs and pairs, the
    benchmark's trace events (and extra_trace), v's module options, and for
    ours v's own module if it has one, else module."""
    from harness import Guest, Nic, VMConfig
    from bench import TRACE_EVENTS
    ncpu, nq = B.topo_parse(topo)
    cfg = VMConfig(smp=ncpu, memory=1024, nics=(Nic(queues=nq),),
                   trace_events=tuple(TRACE_EVENTS) + tuple(extra_trace),
                   qemu_args=tuple(qemu_args), modopts=v.modopts,
                   extra_binaries=tuple(extra_binaries), extra_modules=SETUP_MODULES)
    mod = Path(v.module) if v.module else module
    return Guest(kernel, cfg, driver=v.driver, module=mod if v.driver == "ours" else None,
                 name=name)


def variant_setup(g, v: Variant, ifname: str) -> str:
    """Run v's setup script in the booted guest; its output."""
    script = v.setup_script()
    if not script:
        return ""
    g.put_file(script.encode(), "/tmp/variant-setup.sh", 0o755)
    return g.run_ok(f"IF={shlex.quote(ifname)} sh -e /tmp/variant-setup.sh", timeout=60)


def knob_variants() -> list[Variant]:
    """--knob-search: stock at its defaults and each setting of KNOB_GRID."""
    return [Variant("stock", "stock")] + [Variant(tuned_name(k), "stock", defer=k) for k in KNOB_GRID]


# --- guest-side servers --------------------------------------------------------------------
APP_BINARIES = {"dns": "/usr/sbin/dnsmasq", "http": "/usr/sbin/nginx", "kv": "/usr/bin/memcached"}
APP_GENERATORS = {"dns": "dnsperf", "http": "wrk", "kv": "memcaslap"}
APP_PACKAGES = "dnsmasq-base nginx-light memcached dnsperf wrk libmemcached-tools"
DNS_NAME = "matrix.test"
NGINX_CONF = """daemon off; master_process off; worker_processes 1; user root;
error_log stderr error; pid /tmp/nginx/nginx.pid;
events { worker_connections 1024; }
http { access_log off; keepalive_requests 1000000;
  client_body_temp_path /tmp/nginx/body; proxy_temp_path /tmp/nginx/proxy;
  fastcgi_temp_path /tmp/nginx/fastcgi; uwsgi_temp_path /tmp/nginx/uwsgi;
  scgi_temp_path /tmp/nginx/scgi;
  server { listen 80 reuseport; location / { default_type text/plain; return 200 "%s"; } } }
"""


def load_tool() -> Path:
    """vnet-load built for the host (the guest gets the same static binary as /vnet/vnet-load)."""
    exe = build_guest_tool(GUEST_TOOLS / "vnet-load.c")
    if not exe:
        raise VmTestError("cannot build vnet-load (apt-get install gcc libc6-dev)")
    return exe


def missing_tools(cells: list[Cell]) -> list[str]:
    import shutil
    need = set()
    for c in cells:
        if c.kind == "app":
            need |= {APP_BINARIES[c.app], APP_GENERATORS[c.app]}
    return sorted(n for n in need if not shutil.which(n) and not Path(n).exists())


def start_guest_servers(g, ncpu: int) -> None:
    """vnet-load echo servers, one per vCPU, pinned (the kernel spreads the
    flows over them by SO_REUSEPORT hash), one set per LOAD_WRITES."""
    g.run_ok(" ".join(f"taskset -c {i} /vnet/vnet-load server -p {LOAD_PORT + k} -w {w} "
                      f">/tmp/vnet-load-srv{i}-{w}.log 2>&1 &"
                      for k, w in enumerate(LOAD_WRITES) for i in range(ncpu)) + " sleep 0.3; "
             f"/usr/bin/ss -ltnH 'sport = :{LOAD_PORT}' | wc -l", timeout=60)


def start_app(g, app: str, ncpu: int) -> None:
    """The app's server in the guest (once per boot)."""
    ip = g.nics[0].guest_ip
    if app == "dns":
        cmd = (f"dnsmasq -k -u root -p 53 --no-resolv --no-hosts --pid-file= --listen-address={ip} "
               f"--bind-interfaces --address=/{DNS_NAME}/10.99.0.1 --cache-size=1000 "
               f">/tmp/app-dns.log 2>&1 &")
        port, proto = 53, "u"
    elif app == "http":
        g.put_file((NGINX_CONF % ("x" * 100)).encode(), "/tmp/nginx.conf")
        cmd = ("mkdir -p /tmp/nginx /var/lib/nginx /var/log/nginx; "
               "nginx -e stderr -p /tmp/nginx -c /tmp/nginx.conf >/tmp/app-http.log 2>&1 &")
        port, proto = 80, "t"
    elif app == "kv":
        cmd = (f"memcached -u root -t {ncpu} -p 11211 -U 0 -l {ip} -c 4096 -m 64 "
               f">/tmp/app-kv.log 2>&1 &")
        port, proto = 11211, "t"
    else:
        raise VmTestError(f"unknown app {app}")
    g.run_ok(cmd + " sleep 0.5", timeout=60)
    for _ in range(40):
        r = g.run(f"/usr/bin/ss -l{proto}nH 'sport = :{port}'", timeout=30, quiet=True)
        if r.out.strip():
            return
        time.sleep(0.25)
    raise CheckFailed(f"{app} server did not start in the guest:\n"
                      f"{g.run(f'cat /tmp/app-{app}.log', quiet=True).out[-1500:]}")


# --- the load generator in the namespace (vnet-load client) --------------------------------
WINDOW_RE = re.compile(r"^(W|END) (\d+) ([\d.]+) sent (\d+) recv (\d+) skipped (\d+) p50 (\S+) "
                       r"p90 (\S+) p99 (\S+) p999 (\S+) max (\d+) mean (\S+) carried (\d+)$",
                       re.M)


def parse_windows(text: str) -> list[dict]:
    out = []
    for m in WINDOW_RE.finditer(text):
        d = {"tag": m.group(1), "seq": int(m.group(2)), "seconds": float(m.group(3)),
             "sent": int(m.group(4)), "recv": int(m.group(5)), "skipped": int(m.group(6)),
             "max_us": float(m.group(11)), "carried": int(m.group(13))}
        for k, i in (("p50_us", 7), ("p90_us", 8), ("p99_us", 9), ("p99.9_us", 10), ("mean_us", 12)):
            v = float(m.group(i))
            d[k] = v if v >= 0 else None
        out.append(d)
    return out


class LoadClient:
    """vnet-load client in the guest's namespace; window() = SIGUSR1 + its line."""

    def __init__(self, g, cell: Cell, ncpu: int):
        port = LOAD_PORT + LOAD_WRITES.index(cell.writes)
        argv = [str(load_tool()), "client", "-c", g.nics[0].guest_ip, "-p", str(port),
                "-n", str(cell.flows), "-s", str(cell.msg)]
        if cell.proto == "udp":
            argv.append("-u")
        if cell.kind == "ol":
            argv += ["-r", str(cell.rate)]
        self.proc = g.host_bg(argv, name=f"vnet-load-{cell.name}")
        self.seen = 0
        # SIGUSR1 before its handler is installed would end the client
        self._wait_ready("vnet-load client did not connect")

    def _wait_ready(self, failure: str) -> float:
        """Until the host-side vnet-load says READY (30 s) -> the deadline."""
        deadline = time.monotonic() + 30
        while "READY" not in self.proc.output():
            if not self.proc.alive() or time.monotonic() > deadline:
                raise CheckFailed(f"{failure}:\n{self.proc.output()[-1500:]}")
            time.sleep(0.02)
        return deadline

    def window(self, timeout: float = 15.0) -> dict:
        os.kill(self.proc.pid, signal.SIGUSR1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            wins = parse_windows(self.proc.output())
            if len(wins) > self.seen:
                self.seen = len(wins)
                return wins[-1]
            if not self.proc.alive():
                break
            time.sleep(0.01)
        raise CheckFailed(f"vnet-load client gave no window line:\n{self.proc.output()[-1500:]}")

    def stop(self) -> None:
        self.proc.stop(signal.SIGTERM)


class PubStream(LoadClient):
    """pub cells: vnet-load client -r RATE in the guest, its messages taken
    by vnet-load sink in the namespace; window() = SIGUSR1 + the sink's line."""

    def __init__(self, g, cell: Cell):
        self.proc = g.host_bg([str(load_tool()), "sink", "-p", str(PUB_PORT), "-s", str(cell.msg)],
                              name=f"vnet-load-sink-{cell.name}")
        self.seen = 0
        deadline = self._wait_ready("vnet-load sink did not start")
        self.sender = g.run_bg(f"/vnet/vnet-load client -c {g.nics[0].host_ip} -p {PUB_PORT} "
                               f"-n 1 -s {cell.msg} -r {cell.rate}" + (" -N" if cell.nagle else ""))
        while "READY" not in self.sender.output():
            if self.sender.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise CheckFailed(f"{cell.name}: the guest's sender did not connect (rc "
                                  f"{self.sender.rc}):\n{self.sender.stderr()[-1500:]}")
            time.sleep(0.05)

    def stop(self) -> None:
        self.sender.kill()
        super().stop()


# --- app load generators -------------------------------------------------------------------
def app_argv(g, cell: Cell, seconds: float, workdir: Path) -> list[str]:
    ip = g.nics[0].guest_ip
    secs = max(1, int(round(seconds)))
    if cell.app == "dns":
        qf = workdir / "dns-queries.txt"
        qf.write_text("".join(f"h{i}.{DNS_NAME} A\n" for i in range(200)))
        argv = ["dnsperf", "-s", ip, "-d", str(qf), "-l", str(secs), "-c", "4", "-t", "2"]
        # paced: -v, a line per answer with its latency (the percentiles;
        # at saturation there would be too many lines)
        return argv + (["-Q", str(cell.rate), "-q", "1000", "-v"] if cell.rate
                       else ["-q", str(cell.flows)])
    if cell.app == "http":
        return wrk_argv(cell, secs, workdir, f"http://{ip}:80/")
    if cell.app == "kv":
        # -S once per run: the summary with the latency statistics
        return ["memcaslap", "-s", f"{ip}:11211", "-t", f"{secs}s", "-S", f"{secs}s", "-T", "1",
                "-X", "100", "-c", str(cell.flows)]
    raise VmTestError(f"unknown app {cell.app}")


def wrk_argv(cell: Cell, secs: int, workdir: Path, url: str) -> list[str]:
    argv = ["wrk", "-t", "1", "-d", f"{secs}s", "--latency", "--timeout", "2s", "-c", str(cell.flows)]
    if cell.rate:
        script = workdir / f"wrk-pace-{cell.rate}.lua"
        script.write_text(wrk_pacer(cell.rate))
        argv += ["-s", str(script)]
    return argv + [url]


def wrk_pacer(rate: int) -> str:
    """A wrk script that offers @rate requests/s whatever the answers' latency.

    wrk asks delay() before each request it sends on any connection.  A fixed
    delay is think time after each answer: the rate then falls as latency
    grows (4 connections waiting 13.3 ms made 260/s, not 300/s, from a guest
    that answers 2000/s), and the slower driver is offered less load.  Here
    each request takes the next slot of one schedule 1/rate apart, kept on
    CLOCK_MONOTONIC through LuaJIT's FFI; a request whose slot has passed goes
    at once, and the schedule is not reset, so a guest that cannot keep up
    shows as an answered rate below the offered one."""
    return f"""local ffi = require("ffi")
ffi.cdef[[
typedef struct {{ long tv_sec; long tv_nsec; }} vnet_pace_ts;
int clock_gettime(int clk, vnet_pace_ts *ts);
]]
local ts = ffi.new("vnet_pace_ts")
local gap_ms = {1000 / rate!r}
local due_ms = nil

local function now_ms()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

function delay()
  local now = now_ms()
  due_ms = (due_ms or now) + gap_ms
  return math.max(0, due_ms - now)
end
"""


def _num(text: str, pat: str, scale: float = 1.0) -> float | None:
    m = re.search(pat, text, re.M)
    return float(m.group(1)) * scale if m else None


WRK_UNITS = {"us": 1.0, "ms": 1e3, "s": 1e6}


DNS_ANSWER = re.compile(r"^> \S+ \S+ \S+ (\d+\.\d+)$", re.M)


def dns_percentiles(out: str) -> dict:
    """dnsperf -v: the answers' latency percentiles and largest, in us
    (nearest rank); nothing without such lines."""
    lat = sorted(float(x) * 1e6 for x in DNS_ANSWER.findall(out))
    if not lat:
        return {}
    d = {f"p{p}_us": lat[min(len(lat) - 1, max(0, -(-len(lat) * pct // 1000) - 1))]
         for p, pct in (("50", 500), ("90", 900), ("99", 990), ("99.9", 999))}
    d["max_us"] = lat[-1]
    return d


def parse_app(cell: Cell, out: str) -> dict:
    """-> {"tps", "mean_us", "p50_us", "p99_us", ...} from the generator's summary."""
    d: dict = {}
    if cell.app == "dns":
        d["tps"] = _num(out, r"Queries per second:\s+([\d.]+)")
        d["mean_us"] = _num(out, r"Average Latency \(s\):\s+([\d.]+)", 1e6)
        d["lost_pct"] = _num(out, r"Queries lost:\s+\d+ \(([\d.]+)%\)")
        d["skipped"] = _num(out, r"Queries lost:\s+(\d+)")
        d.update(dns_percentiles(out))
    elif cell.app == "http":
        d["tps"] = _num(out, r"Requests/sec:\s+([\d.]+)")
        for pct, key in (("50", "p50_us"), ("90", "p90_us"), ("99", "p99_us")):
            m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
            d[key] = float(m.group(1)) * WRK_UNITS[m.group(2)] if m else None
        m = re.search(r"Latency\s+([\d.]+)(us|ms|s)", out)
        d["mean_us"] = float(m.group(1)) * WRK_UNITS[m.group(2)] if m else None
    elif cell.app == "kv":
        m = re.search(r"Run time: [\d.]+s Ops: (\d+) TPS: (\d+)", out)
        d["tps"] = float(m.group(2)) if m else None
        # the last "Avg:" is the total's (get+set) average latency in us
        avgs = re.findall(r"Avg:\s+(\d+)", out)
        d["mean_us"] = float(avgs[-1]) if avgs else None
    if d.get("tps") is None:
        raise CheckFailed(f"{cell.name}: no result in the load generator's output:\n{out[-1500:]}")
    return d


# --- one cell ------------------------------------------------------------------------------
@dataclass
class CellCtx:
    """What a cell run needs from its boot."""
    boot: B.BootCtx
    models: list
    window_s: float
    workdir: Path
    apps_started: set = field(default_factory=set)
    guest_stats: bool = False     # record each window's ethtool -S changes


# TCP's own counters (/proc/net/netstat, TcpExt) kept with the NIC's: how
# often TCP held a small write back (autocorking, TCP Small Queues) or
# probed for a lost tail, whichever driver sends
TCPEXT_KEPT = ("TCPAutoCorking", "TCPOrigDataSent", "TCPLossProbes", "TCPTimeouts",
               "DelayedACKs", "TCPSpuriousRTOs")


def tcpext(text: str) -> dict:
    """The TCPEXT_KEPT counters of /proc/net/netstat's text, as tcpext_<name>."""
    rows = [line.split() for line in text.splitlines() if line.startswith("TcpExt:")]
    if len(rows) < 2 or len(rows[0]) != len(rows[1]):
        return {}
    return {f"tcpext_{k}": int(v) for k, v in zip(rows[0][1:], rows[1][1:])
            if k in TCPEXT_KEPT and v.isdigit()}


def guest_stats(g, ifname: str) -> dict:
    """ethtool -S of the NIC, its queues' interrupt counts (all CPUs) and
    the TCPEXT_KEPT counters."""
    r = g.run(f"ethtool -S {ifname}; d=$(basename $(readlink /sys/class/net/{ifname}/device)); "
              f"grep -E \" $d-(input|output)\\.[0-9]+$\" /proc/interrupts | "
              f"while read n rest; do set -- $rest; t=0; for x; do case $x in *[!0-9]*) break;; "
              f"esac; t=$((t + x)); done; echo \"irq_${{rest##* }}: $t\"; done; "
              f"cat /proc/net/netstat",
              timeout=30, quiet=True)
    out = tcpext(r.out)
    for line in r.out.splitlines():
        if line.startswith(("TcpExt:", "IpExt:", "MPTcpExt:")):
            continue
        k, sep, v = line.strip().rpartition(":")
        if sep and k and v.strip().lstrip("-").isdigit():
            out[k.strip()] = int(v)
    return out


def stats_delta(a: dict, b: dict) -> dict:
    """The counters that changed between two guest_stats snapshots."""
    return {k: b[k] - a.get(k, 0) for k in b if b[k] != a.get(k, 0)}


def _edge(ctx: CellCtx, last: bool = False, settle: bool = False, guest: bool = True) -> dict:
    b = ctx.boot
    want = ctx.guest_stats and guest
    # the guest's counters outside the timed window: before its start, after its end
    gs = guest_stats(b.g, b.ifname) if want and not last else None
    if gs is not None and settle:
        # The snapshot is a command in the guest: under TCG it holds a vCPU
        # for tens of ms, and an open-loop load's answers queue meanwhile.
        # The window opens once they have drained (the counters then span
        # SETTLE_S more than the window: window.guest_lead_s).
        time.sleep(SETTLE_S)
    e = {"t": time.monotonic(), "wall": time.time(),
         "tap": B.tap_counters(b.g.proc.pid, b.g.nics[0].tap),
         "host": B._host_snap(b)}
    if want and last:
        gs = guest_stats(b.g, b.ifname)
    if gs is not None:
        e["guest"] = gs
        if settle:
            e["guest_lead_s"] = SETTLE_S
    return e


def _window_record(ctx: CellCtx, cell: Cell, model: str, e0: dict, e1: dict) -> dict:
    rec = {"workload": cell.name, "model": model, "ok": True,
           "window": {"seconds": round(e1["t"] - e0["t"], 3),
                      "wall": [round(e0["wall"], 6), round(e1["wall"], 6)],
                      "tap": {k: e1["tap"][k] - e0["tap"][k] for k in e1["tap"]}}}
    if "guest" in e0 and "guest" in e1:
        rec["window"]["guest_stats"] = stats_delta(e0["guest"], e1["guest"])
        rec["window"]["guest_lead_s"] = e0.get("guest_lead_s", 0.0)
    rec.update(B.host_window(ctx.boot, e0["host"], e1["host"]))
    return rec


def run_cell(ctx: CellCtx, cell: Cell, on_window=None) -> list[dict]:
    """Run one cell: one window per model -> run records (one per model)."""
    b = ctx.boot
    g = b.g
    win = cell.window_s(ctx.window_s)
    if cell.kind == "app":
        return _run_app(ctx, cell, win, on_window)
    client = bg = None
    w = cell.workload() if cell.kind in ("stream", "mixed") else None
    recs = []
    try:
        if w is not None:
            B.start_servers(g, w, b.ncpu)
            g.run("rm -f /tmp/bench-w*", timeout=30, quiet=True)
            t0 = time.monotonic()
            bg = g.run_bg(B.load_script(g, w, 3600, b.ncpu))
            B.wait_ramp(b, w, bg, t0)
        if cell.kind in ("rr", "ol", "mixed"):
            client = LoadClient(g, cell, b.ncpu)
        elif cell.kind == "pub":
            client = PubStream(g, cell)
        time.sleep(RAMP_S)
        for model in ctx.models:
            t_step = time.monotonic()
            if b.ec is not None:
                b.ec.set_costs(B.model_costs(model))
            b.model = model
            time.sleep(SETTLE_S)
            e0 = _edge(ctx, settle=client is not None)
            if client:
                client.window()          # drops what came before (ramp, settle)
            time.sleep(max(0.0, e0["t"] + win - time.monotonic()))
            lat = client.window() if client else None
            e1 = _edge(ctx, last=True)
            rec = _window_record(ctx, cell, model, e0, e1)
            if lat:
                rec["load"] = lat
            rec["metrics"] = cell_metrics(rec, cell, b.pairs, model)
            rec["step_s"] = round(time.monotonic() - t_step, 2)
            recs.append(rec)
            if on_window:
                on_window(cell, model, rec)
    finally:
        if client:
            client.stop()
        if bg is not None:
            g.run("killall -INT iperf3 2>/dev/null; true", timeout=30, quiet=True)
            try:
                bg.wait(timeout=30, interval=0.5)
                bg.result(timeout=5)
            except VmTestError:
                g.run("killall -KILL iperf3 2>/dev/null; true", timeout=30, quiet=True)
    if client and not client.proc.alive() and client.proc.p.returncode not in (0, -15, 143):
        raise CheckFailed(f"{cell.name}: vnet-load client failed:\n{client.proc.output()[-1500:]}")
    return recs


def _run_app(ctx: CellCtx, cell: Cell, win: float, on_window) -> list[dict]:
    """App cells: one generator run per model (their tools report once, at the end)."""
    b = ctx.boot
    g = b.g
    if cell.app not in ctx.apps_started:
        start_app(g, cell.app, b.ncpu)
        ctx.apps_started.add(cell.app)
    recs = []
    for model in ctx.models:
        t_step = time.monotonic()
        if b.ec is not None:
            b.ec.set_costs(B.model_costs(model))
        b.model = model
        # The generator times its whole run: the guest's counters are read
        # around it, not within (the read holds a vCPU for tens of ms).
        g0 = guest_stats(g, b.ifname) if ctx.guest_stats else None
        p = g.host_bg(app_argv(g, cell, win + 2 * RAMP_S, ctx.workdir), name=f"{cell.name}-{model}")
        time.sleep(RAMP_S)
        e0 = _edge(ctx, guest=False)
        time.sleep(win)
        e1 = _edge(ctx, last=True, guest=False)
        p.wait(timeout=win + 60)
        if g0 is not None:
            e0["guest"], e1["guest"] = g0, guest_stats(g, b.ifname)
        rec = _window_record(ctx, cell, model, e0, e1)
        if g0 is not None:
            rec["window"]["guest_span"] = "generator"
        rec["load"] = parse_app(cell, p.output())
        rec["load_output"] = p.output()[-3000:]
        rec["metrics"] = cell_metrics(rec, cell, b.pairs, model)
        rec["step_s"] = round(time.monotonic() - t_step, 2)
        recs.append(rec)
        if on_window:
            on_window(cell, model, rec)
    return recs


# --- metrics ---------------------------------------------------------------------------------
def cell_metrics(rec: dict, cell: Cell, pairs: int, model: str) -> dict:
    """Flat metrics of one window; every count from the host window. U =
    transaction (answers received) for rr/ol/mixed/app, packet (guest tx + rx)
    for streams. EXITS = kicks + device interrupts (trace) + timer arms +
    timer interrupts + IPIs received + HLTs (plugin)."""
    m: dict = {}
    secs = rec["window"]["seconds"]
    tap = rec["window"]["tap"]
    h_tx, h_rx = tap["guest_tx_packets"], tap["guest_rx_packets"]
    load = rec.get("load") or {}
    m["window_s"] = secs
    m["tx_pkts"], m["rx_pkts"] = h_tx, h_rx
    m["pkts_per_s"] = B._div(h_tx + h_rx, secs)
    if cell.kind == "stream" or cell.kind == "mixed":
        data = tap["guest_tx_bytes"] if cell.workload().direction == "tx" else tap["guest_rx_bytes"]
        m["mbps"] = B._div(data * 8 / 1e6, secs)
    if cell.kind in ("stream", "mixed"):
        units = h_tx + h_rx          # mixed: the bulk flow's packets dominate the counts
        if cell.kind == "mixed":
            m["tps"] = B._div(load.get("recv", 0), load.get("seconds"))
    elif cell.kind == "app":
        m["tps"] = load.get("tps")
        m["lost_pct"] = load.get("lost_pct")
        if cell.rate:
            m["rate_ratio"] = B._div(m["tps"], cell.rate)
        units = (m["tps"] or 0) * secs
    else:
        units = load.get("recv", 0)
        m["tps"] = B._div(units, load.get("seconds"))
        m["skipped"] = load.get("skipped")
        if cell.kind in ("ol", "pub"):
            m["rate_ratio"] = B._div(m["tps"], cell.rate)
    for k in ("p50_us", "p90_us", "p99_us", "p99.9_us", "mean_us", "max_us"):
        if load.get(k) is not None:
            m[k] = load[k]
    m["units"] = units
    kicks = {"rx": 0, "tx": 0, "ctrl": 0, "other": 0}
    for n, c in rec["trace"]["kicks"].items():
        kicks[B.classify_queue(int(n), pairs)] += c
    irqs = {"rx": 0, "tx": 0, "ctrl": 0, "other": 0}
    for n, c in rec["trace"]["notify"].items():
        irqs[B.classify_queue(int(n), pairs) if n.isdigit() else "other"] += c
    m["kicks"], m["irqs"] = sum(kicks.values()), sum(irqs.values())
    m["kicks_per_txpkt"] = B._div(kicks["tx"], h_tx)
    m["irqs_per_pkt"] = B._div(m["irqs"], h_tx + h_rx)
    m["irqs_tx_per_txpkt"] = B._div(irqs["tx"], h_tx)
    m["irqs_rx_per_rxpkt"] = B._div(irqs["rx"], h_rx)
    ec = rec.get("exitcost")
    if ec:
        k = ec["kinds"]
        parts = {"kicks": m["kicks"], "irqs": m["irqs"], "timer_arms": k.get("timer_arm", 0),
                 "timer_irqs": k.get("timer_irq", 0), "ipis": k.get("ipi_irq", 0),
                 "hlts": k.get("hlt", 0)}
        for name, v in parts.items():
            m[f"{name}_per_unit"] = B._div(v, units)
        m["exits_per_unit"] = B._div(sum(parts.values()), units)
        m["ipis_sent_per_unit"] = B._div(k.get("ipi", 0), units)
        m["hlt_wakes_per_unit"] = B._div(k.get("hlt_wakes", 0), units)
        m["cost_us_per_unit"] = B._div(B.weighted_cost(k, B.model_weights(model)), units)
        m["stall_s"] = sum(ec["stall_ns"].values()) / 1e9
    hc = rec["host_cpu"]
    perf = m.get("mbps") if cell.kind in ("stream", "mixed") else m.get("tps")
    m["perf_per_qemu_cpu"] = B._div(perf * secs, hc.get("qemu_s")) if perf else None
    m["host_foreign_cpu"] = B._div(hc.get("foreign_s"), hc["wall_s"])
    m["qemu_cpu_s"] = hc.get("qemu_s")
    return m


def short(cell: Cell, m: dict) -> str:
    """One progress line's numbers."""
    def f(k, spec=".0f"):
        v = m.get(k)
        return "-" if v is None else format(v, spec)
    if cell.kind == "stream":
        perf = (f"{f('mbps')} Mbit/s kicks/txpkt {f('kicks_per_txpkt', '.3f')} "
                f"irqs/pkt {f('irqs_per_pkt', '.3f')}")
    elif cell.kind == "mixed":
        perf = f"bulk {f('mbps')} Mbit/s, ping-pong {f('tps')}/s p50 {f('p50_us')} p99 {f('p99_us')} us"
    else:
        perf = f"{f('tps')}/s p50 {f('p50_us')} p99 {f('p99_us')} us"
    return f"{perf}; EXITS/{cell.unit} {f('exits_per_unit', '.2f')} IPIs {f('ipis_per_unit', '.3f')}"


def self_check() -> list[str]:
    """vnet-load on loopback (host): closed loop keeps one message per flow in
    flight (Little: mean RTT ~ flows / rate), open loop holds its rate,
    windows come on SIGUSR1 -> problems."""
    import subprocess
    exe = str(load_tool())
    port = 20000 + os.getpid() % 20000
    srv = subprocess.Popen([exe, "server", "-p", str(port)])
    probs = []
    kept = tcpext(Path("/proc/net/netstat").read_text())
    if sorted(kept) != sorted(f"tcpext_{k}" for k in TCPEXT_KEPT):
        probs.append(f"/proc/net/netstat here gives {sorted(kept)}, not every one of {TCPEXT_KEPT}")
    try:
        time.sleep(0.3)
        for args, check in ((["-n", "8", "-s", "256"], "little"), (["-u", "-n", "8", "-s", "256"], "little"),
                            (["-u", "-r", "2000", "-s", "64"], "rate"), (["-r", "2000", "-s", "64"], "rate"),
                            (["-N", "-r", "2000", "-s", "64"], "rate")):
            p = subprocess.Popen([exe, "client", "-c", "127.0.0.1", "-p", str(port), *args, "-d", "3"],
                                 stdout=subprocess.PIPE, text=True)
            time.sleep(1.0)
            p.send_signal(signal.SIGUSR1)
            out = p.communicate(timeout=30)[0]
            wins = parse_windows(out)
            if len(wins) != 2 or wins[0]["tag"] != "W" or wins[1]["tag"] != "END":
                probs.append(f"{args}: want a W and an END window: {out!r}")
                continue
            w = wins[1]
            rate = w["recv"] / w["seconds"]
            if check == "little":
                mean = 8 / rate * 1e6
                if not 0.7 < w["mean_us"] / mean < 1.3:
                    probs.append(f"{args}: mean RTT {w['mean_us']} us, Little says {mean:.0f} us")
            elif not 0.95 < rate / 2000 < 1.05:
                probs.append(f"{args}: {rate:.0f} answers/s for 2000/s offered")
    finally:
        srv.terminate()
        srv.wait(5)
    probs += _wrk_pacer_check()
    import timeline                 # bench/timeline.py
    probs += timeline.self_check()
    probs += _paired_check()
    # dnsperf -v answers 1..1000 us, shuffled, amid its other lines
    lines = [f"> NOERROR h{i}.bench.test A {i / 1e6:.6f}" for i in range(1000, 0, -1)]
    got = dns_percentiles("[Status] Sending queries\n" + "\n".join(lines) + "\nStatistics:\n")
    want = {"p50_us": 500, "p90_us": 900, "p99_us": 990, "p99.9_us": 999, "max_us": 1000}
    if {k: round(v) for k, v in got.items()} != want or dns_percentiles("no answers") != {}:
        probs.append(f"dns_percentiles: {got}, want {want}")
    return probs


def _paired_check() -> list[str]:
    """report.paired_ratio_interval() on cases with known answers: six
    pairs all the same way reach p = 2/64 (so the paired check can fail at
    six repeats), four cannot (1/8); ten pairs drop 8 Walsh averages at
    each end (signed-rank critical value 8 at 5%, two-sided)."""
    from benchlib import report as R
    probs = []
    six = R.paired_ratio_interval([(1.1 + i / 100, 1.0) for i in range(6)])
    four = R.paired_ratio_interval([(1.1 + i / 100, 1.0) for i in range(4)])
    if not (six and abs(six["p"] - 2 / 64) < 1e-9 and six["lo"] > 1
            and abs(six["level"] - 62 / 64) < 1e-9):
        probs.append(f"paired_ratio_interval, six pairs one way: {six}")
    if not (four and abs(four["p"] - 0.125) < 1e-9 and four["level"] < 0.95):
        probs.append(f"paired_ratio_interval, four pairs: {four}")
    d = [0.10, 0.21, -0.05, 0.15, 0.32, 0.05, 0.12, -0.02, 0.08, 0.25]
    ten = R.paired_ratio_interval([(math.exp(x), 1.0) for x in d])
    walsh = sorted((x + y) / 2 for i, x in enumerate(d) for y in d[i:])
    if not (ten and abs(math.log(ten["lo"]) - walsh[8]) < 1e-9
            and abs(math.log(ten["hi"]) - walsh[-9]) < 1e-9):
        probs.append(f"paired_ratio_interval, ten pairs: {ten}, want {walsh[8]:.4f}..{walsh[-9]:.4f}")
    return probs


def _wrk_pacer_check() -> list[str]:
    """wrk with wrk_pacer() offers its rate to a loopback server that takes
    10 ms an answer: 4 connections could carry 400/s, think time of 4/300 s
    after each answer would give ~170/s."""
    import http.server
    import shutil
    import subprocess
    import tempfile
    import threading

    if not shutil.which("wrk"):
        return ["wrk not found (tests/setup/apt-packages.txt installs it): the HTTP pacer is unchecked"]

    class Slow(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True    # headers and body are two writes

        def do_GET(self):
            time.sleep(0.010)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            pass    # wrk closing its connections at the end

    srv = Server(("127.0.0.1", 0), Slow)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        with tempfile.TemporaryDirectory() as d:
            cell = Cell("http-check", "app", flows=4, rate=300, app="http")
            argv = wrk_argv(cell, 3, Path(d), f"http://127.0.0.1:{srv.server_port}/")
            out = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
        tps = parse_app(cell, out).get("tps")
        if tps is None or not 0.95 < tps / 300 < 1.05:
            return [f"wrk_pacer: {tps} requests/s for 300/s offered: {out[-300:]!r}"]
        return []
    finally:
        srv.shutdown()
        srv.server_close()
