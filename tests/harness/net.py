# SPDX-License-Identifier: GPL-2.0-only
"""Traffic helpers between a guest and its network namespace.

Conventions: "tx"/"rx" are from the guest's point of view (tx = guest sends).
Host-side servers run in the guest's namespace and are stopped at shutdown.
"""

from __future__ import annotations

import hashlib
import os
import re
import time

from .guest import Guest
from .util import CheckFailed, VmTestError, log, timeout_scale

IPERF_PORT = 5201
MB = 1 << 20


def ifname(g: Guest, nic: int = 0) -> str:
    name = g.nics[nic].ifname
    if not name:
        g.refresh_nics()
        name = g.nics[nic].ifname
    if not name:
        raise VmTestError(f"NIC {nic} has no guest interface")
    return name


def ping(g: Guest, nic: int = 0, count: int = 3, size: int | None = None,
         timeout: float = 30, wait: int = 3) -> None:
    """Guest pings the host side of NIC nic; every reply must arrive (within
    `wait` seconds)."""
    n = g.nics[nic]
    opt = f" -s {size}" if size else ""
    r = g.run(f"ping -c {count} -i 0.2 -W {wait}{opt} {n.host_ip}", timeout=timeout)
    m = re.search(r"(\d+) packets transmitted, (\d+) packets received", r.out)
    if r.rc != 0 or not m or m.group(1) != m.group(2):
        raise CheckFailed(f"ping {n.host_ip} from the guest failed (rc={r.rc}):\n{r.out}{r.err}")


def host_ping(g: Guest, nic: int = 0, count: int = 3, size: int | None = None,
              wait: int = 3) -> None:
    """The namespace pings the guest (every reply within `wait` seconds)."""
    n = g.nics[nic]
    # busybox ping: iputils is not needed on the host
    argv = ["busybox", "ping", "-c", str(count), "-W", str(wait), "-i", "0.2"]
    if size:
        argv += ["-s", str(size)]
    r = g.host(argv + [n.guest_ip], check=False, timeout=60)
    if r.returncode != 0:
        raise CheckFailed(f"ping {n.guest_ip} from the host side failed:\n{r.stdout}{r.stderr}")


# --- iperf3 ------------------------------------------------------------------------
def _iperf_servers(g: Guest) -> dict:
    if not hasattr(g, "_iperf_servers"):
        g._iperf_servers = {}
    return g._iperf_servers


def _host_tcp_states(g: Guest, port: int) -> list[str]:
    """The states (LISTEN, ESTAB, ...) of the namespace's TCP sockets on
    local port @port."""
    return [ln.split()[0] for ln in
            g.host(["ss", "-tanH", f"sport = :{port}"], check=False).stdout.splitlines()
            if ln.strip()]


def _iperf_server_idle(g: Guest, port: int) -> bool:
    """The server on @port listens and holds no connection of a test: it
    is ready for the next client."""
    states = _host_tcp_states(g, port)
    return "LISTEN" in states and not {"ESTAB", "CLOSE-WAIT", "SYN-RECV"} & set(states)


def host_iperf_server(g: Guest, port: int = IPERF_PORT):
    """Start (once per guest and port) an iperf3 server in the namespace;
    one already running is waited for until its last test is over.  The
    server ends a test only once the client's last message has arrived,
    after the client has exited, and meanwhile refuses a new client
    (usually as a reset of the control connection): a guest whose device
    holds transmitted packets (x-txtimer) started its next client before
    that (faults.tx_drops, CI 2026-12-02)."""
    servers = _iperf_servers(g)
    p = servers.get(port)
    if p and p.alive():
        t0 = time.monotonic()
        while not _iperf_server_idle(g, port) and time.monotonic() < t0 + 10 * timeout_scale():
            time.sleep(0.05)
        if time.monotonic() - t0 > 0.04:
            log(f"  iperf3 server on port {port}: waited {time.monotonic() - t0:.2f}s "
                f"for its last test to end", 1)
        return p
    p = g.host_bg(["iperf3", "-s", "-p", str(port)], name=f"iperf3-s-{port}")
    # wait until it listens
    for _ in range(50):
        if _iperf_server_idle(g, port):
            break
        if not p.alive():
            raise VmTestError(f"iperf3 server on port {port} died:\n{p.output()}")
        time.sleep(0.1)
    servers[port] = p
    return p


IPERF_SUMMARY = re.compile(
    r"\[\s*(?:\d+|SUM)\]\s+[\d.]+-([\d.]+)\s+sec\s+([\d.]+)\s+(\w?)Bytes\s+([\d.]+)\s+(\w?)bits/sec"
    r"(.*?)\s+(sender|receiver)\s*$", re.M)
UNIT = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
BUNIT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_iperf_text(out: str) -> dict:
    """Sender/receiver summary of iperf3's text output ([SUM] lines win)."""
    res = {}
    for m in IPERF_SUMMARY.finditer(out):
        line = m.group(0)
        key = m.group(7)
        if key in res and "[SUM]" not in line:
            continue
        d = {"seconds": float(m.group(1)),
             "bytes": float(m.group(2)) * BUNIT[m.group(3)],
             "bps": float(m.group(4)) * UNIT[m.group(5)]}
        lost = re.search(r"(\d+)/(\d+)\s+\(([\d.e+-]+)%\)", m.group(6))
        if lost:
            d["lost"], d["total"], d["loss_pct"] = int(lost.group(1)), int(lost.group(2)), float(lost.group(3))
        res[key] = d
    return res


def iperf_cmd(server_ip: str, direction: str = "tx", udp: bool = False, seconds: int = 3,
              port: int = IPERF_PORT, cpu: int | None = None, bitrate: str = "50M",
              extra: str = "") -> str:
    c = f"iperf3 -c {server_ip} -p {port} -t {seconds} -f m --connect-timeout 5000"
    if direction == "rx":
        c += " -R"
    if udp:
        c += f" -u -b {bitrate}"
    if extra:
        c += " " + extra
    if cpu is not None:
        c = f"taskset -c {cpu} {c}"
    return c


def iperf(g: Guest, direction: str = "tx", udp: bool = False, seconds: int = 3, nic: int = 0,
          port: int = IPERF_PORT, min_bytes: int = 64 * 1024, bitrate: str = "50M",
          extra: str = "", max_loss_pct: float | None = None,
          server_ip: str | None = None) -> dict:
    """iperf3 client in the guest against a server in the namespace, at
    the namespace's address on NIC @nic or at @server_ip (a tunnel's end).

    direction "tx": guest sends, "rx": guest receives (-R). Returns the
    receiver summary {seconds, bytes, bps[, lost, total, loss_pct]}."""
    n = g.nics[nic]
    host_iperf_server(g, port)
    cmd = iperf_cmd(server_ip or n.host_ip, direction, udp, seconds, port, bitrate=bitrate,
                    extra=extra)
    r = g.run(cmd, timeout=seconds + 40)
    res = parse_iperf_text(r.out)
    what = f"iperf3 {'UDP' if udp else 'TCP'} {direction}"
    if r.rc != 0 or "receiver" not in res:
        raise CheckFailed(f"{what} failed (rc={r.rc}):\n{r.out[-1500:]}{r.err[-1500:]}")
    recv = res["receiver"]
    if recv["bytes"] < min_bytes:
        raise CheckFailed(f"{what}: only {recv['bytes']:.0f} bytes received:\n{r.out[-1500:]}")
    if udp and max_loss_pct is not None and recv.get("loss_pct", 0) > max_loss_pct:
        raise CheckFailed(f"{what}: {recv['loss_pct']}% loss > {max_loss_pct}%:\n{r.out[-1500:]}")
    log(f"  {what}: {recv['bps'] / 1e6:.0f} Mbit/s, {recv['bytes'] / MB:.1f} MiB"
        + (f", loss {recv['loss_pct']}%" if "loss_pct" in recv else ""), 1)
    return recv


def tcp_both(g: Guest, nic: int = 0, seconds: int = 3) -> tuple[dict, dict]:
    return iperf(g, "tx", seconds=seconds, nic=nic), iperf(g, "rx", seconds=seconds, nic=nic)


# --- data integrity ---------------------------------------------------------------------
def _sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def integrity(g: Guest, nic: int = 0, size_mb: int = 16, port: int = 5300,
              timeout: float = 180) -> dict:
    """Send size_mb of random data each way over TCP (busybox nc in the guest,
    socat in the namespace) and compare sha256 on both sides."""
    n = g.nics[nic]
    work = g.workdir
    out = {}
    size = size_mb * MB
    # guest -> host
    g.run_ok(f"head -c {size} /dev/urandom >/tmp/vnet-tx.bin", timeout=120)
    g_sum = g.run_ok("sha256sum /tmp/vnet-tx.bin", timeout=120).split()[0]
    rx_file = work / "integrity-rx.bin"
    srv = g.host_bg(["socat", "-u", f"TCP-LISTEN:{port},reuseaddr", f"OPEN:{rx_file},creat,trunc"],
                    name="socat-rx")
    wait_host_listen(g, port, srv)
    t0 = time.monotonic()
    r = g.run(f"nc {n.host_ip} {port} </tmp/vnet-tx.bin", timeout=timeout)
    if r.rc != 0:
        raise CheckFailed(f"guest->host transfer failed (rc={r.rc}): {r.out}{r.err}")
    srv.wait(30)
    out["tx_seconds"] = time.monotonic() - t0
    h_sum = _sha256_file(rx_file)
    got = os.path.getsize(rx_file)
    os.unlink(rx_file)
    g.run("rm -f /tmp/vnet-tx.bin")
    if h_sum != g_sum:
        raise CheckFailed(f"guest->host data corrupted: {got} of {size} bytes, sha256 guest "
                          f"{g_sum} host {h_sum}")
    # host -> guest
    tx_file = work / "integrity-tx.bin"
    with open(tx_file, "wb") as f:
        f.write(os.urandom(size))
    h_sum = _sha256_file(tx_file)
    bg = g.run_bg(f"nc -l -p {port} >/tmp/vnet-rx.bin")
    t0 = time.monotonic()
    g.host(["socat", "-u", f"OPEN:{tx_file}", f"TCP:{n.guest_ip}:{port},retry=50,interval=0.2"],
           timeout=timeout)
    res = bg.result(timeout=60)
    out["rx_seconds"] = time.monotonic() - t0
    os.unlink(tx_file)
    if res.rc != 0:
        raise CheckFailed(f"guest nc -l failed (rc={res.rc}): {res.out}{res.err}")
    r = g.run_ok("wc -c </tmp/vnet-rx.bin; sha256sum /tmp/vnet-rx.bin; rm -f /tmp/vnet-rx.bin",
                 timeout=120).split()
    if r[1] != h_sum:
        raise CheckFailed(f"host->guest data corrupted: {r[0]} of {size} bytes, sha256 host "
                          f"{h_sum} guest {r[1]}")
    log(f"  integrity {size_mb} MiB: tx {out['tx_seconds']:.1f}s rx {out['rx_seconds']:.1f}s", 1)
    return out


def wait_host_listen(g: Guest, port: int, proc, timeout: float = 10) -> None:
    """Wait until the namespace's listener @proc (a HostProc) listens on
    TCP port @port; VmTestError if it dies or is not there in time."""
    deadline = time.monotonic() + timeout * timeout_scale()
    while time.monotonic() < deadline:
        if "LISTEN" in _host_tcp_states(g, port):
            return
        if not proc.alive():
            raise VmTestError(f"host listener on {port} died: {proc.output()}")
        time.sleep(0.1)
    raise VmTestError(f"host listener on {port} not ready")


# --- counters ----------------------------------------------------------------------------------
QUEUE_STAT = re.compile(r"^\s*(rx|tx)(?:_queue_|)(\d+)_packets:\s*(\d+)", re.M)


def queue_packets(g: Guest, nic: int = 0) -> dict[str, dict[int, int]]:
    """Per-queue packet counters: {"rx": {N: packets}, "tx": {N: packets}, "source": ...}.

    From ethtool -S, accepting rx_queue_N_packets/tx_queue_N_packets (older
    kernels) and rxN_packets/txN_packets; kernels whose virtio_net reports
    them only through netlink queue stats (7.x: ethtool -S has no per-queue
    packets any more) are read with /vnet/vnet-nl qstats (NETDEV_CMD_QSTATS_GET)."""
    dev = ifname(g, nic)
    out = g.run_ok(f"ethtool -S {dev}")
    res: dict[str, dict[int, int]] = {"rx": {}, "tx": {}}
    for m in QUEUE_STAT.finditer(out):
        res[m.group(1)][int(m.group(2))] = int(m.group(3))
    if res["rx"] and res["tx"]:
        res["source"] = "ethtool -S"
        return res
    qs = nl_qstats(g, nic) or {}
    for key, fields in qs.items():
        if isinstance(key, tuple) and f"{key[0]}-packets" in fields:
            res[key[0]][key[1]] = fields[f"{key[0]}-packets"]
    if not res["rx"] or not res["tx"]:
        raise CheckFailed(f"no per-queue packet counters in ethtool -S nor netlink qstats "
                          f"({qs}):\n{out[:1500]}")
    res["source"] = "netlink qstats"
    return res


def counter_delta(before: dict, after: dict) -> dict:
    """after - before for {"rx": {q: n}, "tx": {q: n}} dicts (other keys dropped)."""
    return {d: {q: after[d].get(q, 0) - before[d].get(q, 0) for q in after[d]}
            for d in ("rx", "tx") if d in after}


def snmp(g: Guest, where: str = "guest", files: tuple[str, ...] = ("snmp",)) -> dict[str, int]:
    """IP/ICMP/TCP/UDP counters from /proc/net/snmp (guest or namespace), as
    "Tcp.InSegs"...; files=("snmp", "netstat") adds TcpExt/IpExt ones."""
    paths = [f"/proc/net/{f}" for f in files]
    if where == "guest":
        text = g.run_ok("cat " + " ".join(paths))
    else:
        text = g.host(["cat", *paths]).stdout
    lines = text.splitlines()
    out = {}
    for hdr, val in zip(lines[::2], lines[1::2]):
        proto, keys = hdr.split(":", 1)
        _, vals = val.split(":", 1)
        for k, v in zip(keys.split(), vals.split()):
            out[f"{proto}.{k}"] = int(v)
    return out


def ethtool_info(g: Guest, nic: int = 0) -> dict[str, str]:
    out = g.run_ok(f"ethtool -i {ifname(g, nic)}")
    return {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in out.splitlines()) if k}


def channels(g: Guest, nic: int = 0) -> dict[str, int]:
    """Current combined/rx/tx channel counts from ethtool -l."""
    out = g.run_ok(f"ethtool -l {ifname(g, nic)}")
    cur = out.split("Current hardware settings:")[-1]
    res = {}
    for k in ("RX", "TX", "Other", "Combined"):
        m = re.search(rf"^{k}:\s*(\d+)", cur, re.M)
        if m:
            res[k.lower()] = int(m.group(1))
    return res



# --- sockperf --------------------------------------------------------------------------
SOCKPERF_PORT = 11111


def host_sockperf_server(g: Guest, port: int = SOCKPERF_PORT, tcp: bool = False, nic: int = 0):
    """Start (once per guest, port and protocol) a sockperf server in the namespace."""
    servers = _iperf_servers(g)
    key = ("sockperf", port, tcp)
    p = servers.get(key)
    if p and p.alive():
        return p
    argv = ["sockperf", "server", "-i", g.nics[nic].host_ip, "-p", str(port)]
    if tcp:
        argv.append("--tcp")
    p = g.host_bg(argv, name=f"sockperf-{port}")
    time.sleep(0.3)
    if not p.alive():
        raise VmTestError(f"sockperf server died: {p.output()}")
    servers[key] = p
    return p


SOCKPERF_LAT = re.compile(r"Summary: Latency is ([\d.]+) usec")
SOCKPERF_PCT = re.compile(r"percentile ([\d.]+)\s*=\s*([\d.]+)")
SOCKPERF_TOTAL = re.compile(r"\[Total Run\].*SentMessages=(\d+); ReceivedMessages=(\d+)")


def sockperf_pingpong(g: Guest, seconds: int = 3, nic: int = 0, tcp: bool = False,
                      msg_size: int = 64, port: int = SOCKPERF_PORT, cpu: int | None = None) -> dict:
    """Guest-side sockperf ping-pong against the namespace: {'avg_us', 'p50_us', 'p99_us'...,
    'sent', 'received'} (messages of the whole run, warm-up included).
    Latency is half the round trip, as sockperf reports it."""
    host_sockperf_server(g, port, tcp, nic)
    c = (f"sockperf ping-pong -i {g.nics[nic].host_ip} -p {port} -t {seconds} -m {msg_size}"
         + (" --tcp" if tcp else ""))
    if cpu is not None:
        c = f"taskset -c {cpu} {c}"
    r = g.run(c, timeout=seconds + 30)
    m = SOCKPERF_LAT.search(r.out)
    if r.rc != 0 or not m:
        raise CheckFailed(f"sockperf ping-pong failed (rc={r.rc}):\n{r.out[-1500:]}{r.err[-800:]}")
    res = {"avg_us": float(m.group(1))}
    tm = SOCKPERF_TOTAL.search(r.out + r.err)
    if tm:
        res["sent"], res["received"] = int(tm.group(1)), int(tm.group(2))
    for pm in SOCKPERF_PCT.finditer(r.out):
        res[f"p{float(pm.group(1)):g}_us"] = float(pm.group(2))
    return res


# --- link-layer helpers ---------------------------------------------------------------
def tap_mac(g: Guest, nic: int = 0) -> str:
    """The MAC address of the host's tap behind NIC @nic."""
    return g.host(["cat", f"/sys/class/net/{g.nics[nic].tap}/address"]).stdout.strip()


def ethtool_stat_names(g: Guest, nic: int = 0) -> list[str]:
    """The counter names of `ethtool -S`, in order."""
    out = g.run_ok(f"ethtool -S {ifname(g, nic)}")
    return [m.group(1) for m in re.finditer(r"^\s+(\S+): \d+$", out, re.M)]


def ethtool_stats(g: Guest, nic: int = 0) -> dict[str, int]:
    out = g.run_ok(f"ethtool -S {ifname(g, nic)}")
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+(\S+): (\d+)$", out, re.M)}


def link_settings(g: Guest, nic: int = 0) -> dict[str, str]:
    """`ethtool IFACE` fields (Speed, Duplex, Link detected...)."""
    out = g.run_ok(f"ethtool {ifname(g, nic)}")
    return {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in out.splitlines()[1:])
            if v.strip()}


def sysfs_stats(g: Guest, nic: int = 0, names=("rx_packets", "rx_bytes")) -> dict[str, int]:
    d = f"/sys/class/net/{ifname(g, nic)}/statistics"
    out = g.run_ok(" ".join(f"cat {d}/{n};" for n in names))
    return dict(zip(names, map(int, out.split())))


# Counts gratuitous ARPs (request or reply whose sender and target IP are
# both IP, sent from MAC) seen on IFACE for SECONDS; prints "ready" once the
# socket listens and the count at the end. Runs in the guest's namespace.
_GARP_COUNTER = r"""
import socket, sys, time
iface, mac, ip, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
mac = bytes.fromhex(mac.replace(":", ""))
ip = socket.inet_aton(ip)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0806))
s.bind((iface, 0))
s.settimeout(0.1)
print("ready", flush=True)
end = time.monotonic() + secs
n = 0
while time.monotonic() < end:
    try:
        p = s.recv(2048)
    except socket.timeout:
        continue
    if len(p) >= 42 and p[22:28] == mac and p[28:32] == ip and p[38:42] == ip:
        n += 1
print("garps", n, flush=True)
"""


def wait_ready(bg, tool: str, secs: float = 30) -> None:
    """Wait until a guest tool started with run_bg prints "ready"."""
    end = time.time() + secs
    while time.time() < end:
        if "ready" in bg.output():
            return
        if bg.poll() is not None:
            raise CheckFailed(f"{tool} ended early: {bg.output()}{bg.stderr()}")
        time.sleep(0.3)
    raise CheckFailed(f"{tool} not ready after {secs} s: {bg.output()}{bg.stderr()}")


def start_garp_counter(g: Guest, nic: int = 0, seconds: float = 5.0):
    """Start counting the guest's gratuitous ARPs on the tap of NIC nic;
    returns a function that waits for the end and returns the count."""
    n = g.nics[nic]
    p = g.host_bg(["python3", "-c", _GARP_COUNTER, n.tap, n.mac, n.guest_ip, str(seconds)],
                  name="garp-counter")
    deadline = time.monotonic() + 10
    while "ready" not in p.output():
        if not p.alive() or time.monotonic() > deadline:
            raise VmTestError(f"ARP counter did not start: {p.output()}")
        time.sleep(0.05)

    def finish() -> int:
        p.wait(seconds + 10)
        m = re.search(r"^garps (\d+)", p.output(), re.M)
        if not m:
            raise VmTestError(f"ARP counter failed: {p.output()}")
        return int(m.group(1))
    return finish


# --- what a stuck transfer looks like ---------------------------------------------------
_QUEUE_NAME = re.compile(r"^(rx|tx)(?:_queue_)?(\d+)_(.+)$")


def _per_queue(stats: dict[str, int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for name, v in stats.items():
        m = _QUEUE_NAME.match(name)
        if m:
            out.setdefault(f"{m.group(1)}{m.group(2)}", {})[m.group(3)] = v
    return out


def stall_probe(g: Guest, nic: int = 0, ports: tuple[int, ...] = (), gap: float = 2.0) -> str:
    """For a transfer that stopped moving: the driver's per-queue counters
    twice, gap seconds apart (which queues still move), what each send queue
    has given the device and not got back, the qdisc backlog, both ends of
    the TCP connections on ports and the virtio interrupt lines (ss and tc
    by full path: busybox's applets would shadow them).  Most telling lines
    first: a failure message shows only its head."""
    dev = ifname(g, nic)
    lines = []
    try:
        a = _per_queue(ethtool_stats(g, nic))
        time.sleep(gap)
        b = _per_queue(ethtool_stats(g, nic))
        lines.append(f"driver counters per queue ({gap:.0f} s apart; value(+change), zeros left out):")
        for q in sorted(b, key=lambda k: (k[:2], int(k[2:]))):
            c = b[q]
            flags = ""
            if not any(c.get(k, 0) != a.get(q, {}).get(k, 0) for k in c):
                flags = " idle"
            vals = " ".join(f"{k}={v}" + (f"(+{v - a[q][k]})" if q in a and v != a[q].get(k, v) else "")
                            for k, v in c.items() if v)
            lines.append(f"  {q}{flags}: {vals}")
    except Exception as e:   # noqa: BLE001 - a diagnostic must not mask the failure
        lines.append(f"ethtool -S failed: {e}")
    try:
        bql = g.run(f"cd /sys/class/net/{dev}/queues && grep -H '' tx-*/byte_queue_limits/inflight "
                    f"tx-*/byte_queue_limits/limit tx-*/tx_timeout 2>/dev/null",
                    timeout=15, quiet=True).out
        tq: dict[str, dict[str, str]] = {}
        for m in re.finditer(r"^(tx-\d+)/(?:byte_queue_limits/)?(\w+):(\d+)$", bql, re.M):
            tq.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
        lines.append("TX queues, bytes given to the device and not completed / BQL limit, "
                     "timeouts: " + "; ".join(
                         f"{q} {v.get('inflight')}/{v.get('limit')}, {v.get('tx_timeout')}"
                         for q, v in sorted(tq.items())))
    except Exception as e:   # noqa: BLE001
        lines.append(f"BQL: {e}")
    flt = ("'( " + " or ".join(f"sport = :{p} or dport = :{p}" for p in ports) + " )'"
           if ports else "")
    which = "ports " + " ".join(map(str, ports)) if ports else "all"
    for where, run in (("guest", lambda: g.run(f"/usr/bin/ss -tin {flt}", timeout=15,
                                                 quiet=True).out),
                       ("host", lambda: g.host(f"ss -tin {flt}", check=False,
                                               timeout=15).stdout)):
        lines.append(f"{where} TCP ({which}):")
        try:
            lines += ["  " + ln.strip() for ln in run().splitlines()[1:] if ln.strip()]
        except Exception as e:   # noqa: BLE001
            lines.append(f"  ss failed: {e}")
    try:
        tc = g.run(f"/usr/sbin/tc -s qdisc show dev {dev}", timeout=15, quiet=True).out
        lines.append("qdisc backlog: " + "; ".join(
            f"{m.group(1)} {m.group(2)}" for m in
            re.finditer(r"^qdisc \S+ \S+ (root|parent \S+).*?backlog (\S+ \S+ requeues \d+)",
                        tc, re.M | re.S)))
        lines.append("virtio interrupts:")
        lines += ["  " + " ".join(ln.split()) for ln in
                  g.run("grep virtio /proc/interrupts", timeout=15, quiet=True).out.splitlines()]
    except Exception as e:   # noqa: BLE001
        lines.append(f"qdisc/interrupts failed: {e}")
    return "\n".join(lines)


# --- netdev generic netlink (/vnet/vnet-nl) --------------------------------------


def _nl(g: Guest, args: str) -> str | None:
    """Output of `vnet-nl ARGS`; None where the kernel has no netdev family
    or not this operation (exit status 2)."""
    r = g.run(f"vnet-nl {args}")
    if r.rc == 2:
        return None
    if r.rc != 0:
        raise CheckFailed(f"vnet-nl {args} failed (rc={r.rc}): {r.out}{r.err}")
    return r.out


def _nl_fields(words: list[str]) -> dict[str, int | bool]:
    out: dict[str, int | bool] = {}
    for w in words:
        k, _, v = w.partition("=")
        out[k] = int(v, 0) if v else True
    return out


def nl_dev(g: Guest, nic: int = 0) -> dict[str, int] | None:
    """dev-get: {xdp-features: ..., xdp-zc-max-segs: ..., ...}."""
    out = _nl(g, f"dev {ifname(g, nic)}")
    return None if out is None else _nl_fields(out.split())


def nl_queues(g: Guest, nic: int = 0) -> dict[tuple[str, int], dict] | None:
    """queue-get dump: {(rx|tx, id): {napi-id: N, xsk: True, ...}}."""
    out = _nl(g, f"queues {ifname(g, nic)}")
    if out is None:
        return None
    res = {}
    for line in out.splitlines():
        w = line.split()
        if len(w) >= 2:
            res[(w[0], int(w[1]))] = _nl_fields(w[2:])
    return res


def nl_napis(g: Guest, nic: int = 0) -> dict[int, dict] | None:
    """napi-get dump: {napi id: {irq: N, defer-hard-irqs: N, ...}}."""
    out = _nl(g, f"napis {ifname(g, nic)}")
    if out is None:
        return None
    res = {}
    for line in out.splitlines():
        w = line.split()
        if len(w) >= 2 and w[0] == "napi":
            res[int(w[1])] = _nl_fields(w[2:])
    return res


def nl_qstats(g: Guest, nic: int = 0) -> dict | None:
    """qstats-get: {"device": {name: value}, (rx|tx, queue): {name: value}};
    None where the kernel has none."""
    out = _nl(g, f"qstats {ifname(g, nic)}")
    if out is None:
        return None
    res: dict = {}
    for line in out.splitlines():
        w = line.split()
        if not w:
            continue
        if w[0] == "device":
            res["device"] = _nl_fields(w[1:])
        elif len(w) >= 2:
            res[(w[0], int(w[1]))] = _nl_fields(w[2:])
    return res


def nl_qstats_names(g: Guest, nic: int = 0) -> dict[str, list[str]] | None:
    """qstats-get, attribute names only: {"device": [...], "rx 0": [...], ...}."""
    qs = nl_qstats(g, nic)
    if qs is None:
        return None
    return {k if k == "device" else f"{k[0]} {k[1]}": sorted(v) for k, v in qs.items()}


def nl_pools(g: Guest) -> list[dict] | None:
    """page-pool-get dump (6.8+), every pool of every device: [{id: N,
    ifindex: N, napi-id: N, inflight: N, detach-time: N, ...}]; a pool shows
    detach-time once its driver destroyed it while pages were still out.
    None where the kernel lists no pools."""
    out = _nl(g, "pools lo")
    if out is None:
        return None
    res = []
    for line in out.splitlines():
        w = line.split()
        if len(w) >= 2 and w[0] == "pool":
            res.append({"id": int(w[1]), **_nl_fields(w[2:])})
    return res


def nl_pool_stats(g: Guest) -> dict[int, dict] | None:
    """page-pool-stats-get dump (CONFIG_PAGE_POOL_STATS): {pool id: {alloc-fast:
    N, ...}}; None where the kernel has none."""
    out = _nl(g, "pool-stats lo")
    if out is None:
        return None
    res = {}
    for line in out.splitlines():
        w = line.split()
        if len(w) >= 2 and w[0] == "pool" and w[1].isdigit():
            res[int(w[1])] = _nl_fields(w[2:])
    return res


def nl_napi_set(g: Guest, napi_id: int, **settings: int) -> bool:
    """napi-set (6.13+); False where the kernel has no such operation."""
    args = " ".join(f"{k.replace('_', '-')} {v}" for k, v in settings.items())
    return _nl(g, f"napi-set {napi_id} {args}") is not None


VIRTIO_IRQ_LINE = re.compile(r"^\s*(\d+):.*\s(virtio\d+)-(input|output)\.(\d+)\s*$", re.M)


def queue_irqs(g: Guest) -> dict[tuple[str, int], int]:
    """IRQ of each virtqueue with its own vector, from /proc/interrupts names:
    {(rx|tx, queue): irq}."""
    out = g.run_ok("cat /proc/interrupts")
    return {("rx" if m.group(3) == "input" else "tx", int(m.group(4))): int(m.group(1))
            for m in VIRTIO_IRQ_LINE.finditer(out)}
