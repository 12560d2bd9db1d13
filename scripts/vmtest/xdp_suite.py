"""XDP tests with small BPF programs (scripts/vmtest/xdp/xdp_test.c).

The programs are built on the host with clang -target bpf (no libbpf
headers needed), cached in build/xdp-progs/, copied into the guest and
attached in native mode with iproute2 (`ip link set dev X xdpdrv obj F
sec xdp`). One guest, two NICs: nic0 with 4 queue pairs (2 vCPUs: 2
pairs for the stack, 2 enabled for XDP transmission), nic1 with one pair
(XDP frames share the stack's queue under its lock).

* xdp.pass      XDP_PASS: ping, TCP both ways and 16 MiB integrity with a
                program attached; xdp_packets counters; channels and
                rx-gro-hw refused while attached; detach
* xdp.drop      XDP_DROP of UDP to one port: nothing reaches the socket
                layer, xdp_drops counts them, other traffic passes
* xdp.tx        XDP_TX: datagrams come back to the host sender, on the
                dedicated XDP queues of nic0 and the shared queue of nic1
* xdp.redirect  XDP_REDIRECT nic0 -> nic1 (ndo_xdp_xmit of nic1), seen on
                the host side of nic1; with and without a program on nic1
* xdp.mtu       single-buffer XDP refuses an MTU whose frames exceed a page
* xdp.unload    the driver removed and loaded again with programs attached
"""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import time
from pathlib import Path

from . import net
from .functional import check, suite
from .guest import Nic, VMConfig
from .runner import Ctx
from .util import REPO_ROOT, CheckFailed, VmTestError

XDP = VMConfig(smp=2, memory=1024, nics=(Nic(queues=4), Nic(queues=1)))
SRC = Path(__file__).resolve().parent / "xdp" / "xdp_test.c"
PORT = {"pass": 9000, "drop": 9001, "tx": 9002, "redirect": 9003}


def build_prog(mode: str, port: int, ifindex: int = 0) -> bytes:
    """Compile xdp_test.c for MODE (cached by source and options)."""
    args = ["-O2", "-target", "bpf", "-I/usr/include/x86_64-linux-gnu", "-Wall", "-Werror",
            f"-DMODE_{mode.upper()}", f"-DPORT={port}", f"-DIFINDEX={ifindex}"]
    key = hashlib.sha256(SRC.read_bytes() + " ".join(args).encode()).hexdigest()[:16]
    out = REPO_ROOT / "build" / "xdp-progs" / f"{mode}-{key}.o"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run(["clang", *args, "-c", str(SRC), "-o", str(out)], check=True,
                           capture_output=True, text=True)
        except FileNotFoundError:
            raise VmTestError("clang not found (apt-get install clang: scripts/setup-host.sh)")
        except subprocess.CalledProcessError as e:
            raise VmTestError(f"clang failed for {mode}:\n{e.stderr}")
    return out.read_bytes()


def attach(g, nic: int, mode: str, ifindex: int = 0) -> None:
    obj = build_prog(mode, PORT[mode], ifindex)
    ifn = net.ifname(g, nic)
    path = f"/tmp/xdp-{mode}-{nic}.o"
    g.run_ok(f"echo {base64.b64encode(obj).decode()} | base64 -d > {path}")
    r = g.run(f"/usr/sbin/ip link set dev {ifn} xdpdrv obj {path} sec xdp")
    check(r.rc == 0, f"attaching {mode} to {ifn} failed: {r.out}{r.err}")
    out = g.run_ok(f"/usr/sbin/ip link show dev {ifn}")
    check("xdp" in out and "prog/xdp" in out, f"no native program shown on {ifn}:\n{out}")


def detach(g, nic: int) -> None:
    g.run_ok(f"/usr/sbin/ip link set dev {net.ifname(g, nic)} xdpdrv off")


SENDER = r"""
import socket, sys, time
src, dst, port, count, reply = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((src, 40000 + port % 1000))
s.settimeout(0.05)
got = 0
for i in range(count):
    s.sendto(b"xdp test %d" % i, (dst, port))
    time.sleep(0.005)
    if reply:
        try:
            while True:
                data, peer = s.recvfrom(2048)
                if data.startswith(b"xdp test"):
                    got += 1
        except socket.timeout:
            pass
if reply:
    deadline = time.time() + 2
    s.settimeout(0.2)
    while time.time() < deadline and got < count:
        try:
            data, peer = s.recvfrom(2048)
            if data.startswith(b"xdp test"):
                got += 1
        except socket.timeout:
            pass
print(got)
"""

CAPTURE = r"""
import socket, struct, sys, time
ifname, port, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.bind((ifname, 0))
s.settimeout(0.2)
print("ready", flush=True)
n = 0
end = time.time() + secs
while time.time() < end:
    try:
        f = s.recv(4096)
    except socket.timeout:
        continue
    if len(f) >= 42 and f[12:14] == b"\x08\x00" and f[23] == 17 and \
            struct.unpack("!H", f[36:38])[0] == port:
        n += 1
print(n, flush=True)
"""


def send_udp(g, nic: int, port: int, count: int, reply: bool = False) -> int:
    n = g.nics[nic]
    r = g.host(["python3", "-c", SENDER, n.host_ip, n.guest_ip, str(port), str(count),
                "1" if reply else "0"], timeout=120)
    return int(r.stdout.strip() or 0) if reply else count


def stats(g, nic: int) -> dict[str, int]:
    out = g.run_ok(f"ethtool -S {net.ifname(g, nic)}")
    return {k: int(v) for k, v in re.findall(r"^\s*([\w]+):\s*(\d+)$", out, re.M)}


def total(st: dict[str, int], suffix: str, prefix: str = "") -> int:
    """Sum of the per-queue counters ending in _suffix (both name styles)."""
    rx = re.compile(rf"^{prefix}(?:_queue_)?\d+_{suffix}$")
    return sum(v for k, v in st.items() if rx.match(k))


def _ensure_detached(g) -> None:
    for i in range(len(g.nics)):
        g.run(f"/usr/sbin/ip link set dev {net.ifname(g, i)} xdpdrv off")


@suite.test("xdp.pass", XDP, "xdp", timeout=400)
def t_pass(ctx: Ctx):
    """XDP_PASS: traffic and integrity with a program attached; refusals; detach."""
    g = ctx.g
    ifn = net.ifname(g)
    _ensure_detached(g)
    before = stats(g, 0)
    attach(g, 0, "pass")
    try:
        net.ping(g, count=3)
        net.host_ping(g, count=3)
        tx, rx = net.tcp_both(g, seconds=2)
        r = net.integrity(g, size_mb=16)
        after = stats(g, 0)
        n = total(after, "xdp_packets", "rx") - total(before, "xdp_packets", "rx")
        check(n > 1000, f"rx xdp_packets grew by {n} only")
        ch = net.channels(g)
        # ours shows the stack's channels; the in-tree driver includes XDP's
        want = 2 if ctx.driver == "ours" else 4
        check(ch.get("combined") == want, f"ethtool -l combined {ch} with XDP (expected {want})")
        r2 = g.run(f"ethtool -L {ifn} combined 1")
        check(r2.rc != 0, "ethtool -L accepted while XDP is attached")
        r3 = g.run(f"ethtool -K {ifn} rx-gro-hw off")
        check(r3.rc != 0 or "Could not change" in r3.err + r3.out,
              f"rx-gro-hw change accepted while XDP is attached: {r3.out}{r3.err}")
    finally:
        detach(g, 0)
    out = g.run_ok(f"/usr/sbin/ip link show dev {ifn}")
    check("prog/xdp" not in out, f"program still attached:\n{out}")
    check(net.channels(g).get("combined") == 2, "channels changed by detaching")
    net.ping(g, count=2)
    net.tcp_both(g, seconds=2)
    ctx.note(f"{n} frames through XDP; tcp tx {tx['bps'] / 1e6:.0f} rx {rx['bps'] / 1e6:.0f} "
             f"Mbit/s, 16 MiB {r['tx_seconds']:.1f}/{r['rx_seconds']:.1f}s")


@suite.test("xdp.drop", XDP, "xdp")
def t_drop(ctx: Ctx):
    """XDP_DROP: datagrams to the port never reach UDP; the rest passes."""
    g = ctx.g
    _ensure_detached(g)
    attach(g, 0, "drop")
    try:
        before, snmp0 = stats(g, 0), net.snmp(g)
        send_udp(g, 0, PORT["drop"], 200)
        time.sleep(0.5)
        after, snmp1 = stats(g, 0), net.snmp(g)
        drops = total(after, "xdp_drops", "rx") - total(before, "xdp_drops", "rx")
        udp = (snmp1["Udp.InDatagrams"] + snmp1["Udp.NoPorts"]) - \
            (snmp0["Udp.InDatagrams"] + snmp0["Udp.NoPorts"])
        check(drops >= 200, f"xdp_drops grew by {drops}, 200 sent")
        check(udp < 5, f"{udp} datagrams reached UDP despite XDP_DROP")
        net.ping(g, count=3)
    finally:
        detach(g, 0)
    ctx.note(f"{drops} dropped by XDP, {udp} reached UDP")


@suite.test("xdp.tx", XDP, "xdp")
def t_tx(ctx: Ctx):
    """XDP_TX: datagrams reflected to the host, dedicated queues (nic0) and shared (nic1)."""
    g = ctx.g
    _ensure_detached(g)
    notes = []
    for nic, what in ((0, "dedicated queues"), (1, "shared queue")):
        attach(g, nic, "tx")
        try:
            before = stats(g, nic)
            got = send_udp(g, nic, PORT["tx"], 100, reply=True)
            after = stats(g, nic)
        finally:
            detach(g, nic)
        sent = total(after, "xdp_tx", "tx") - total(before, "xdp_tx", "tx")
        check(got >= 95, f"nic{nic} ({what}): {got} of 100 datagrams came back")
        check(sent >= got, f"nic{nic}: tx xdp_tx counters grew by {sent}, {got} came back")
        if nic == 0:
            # the XDP pairs are the last ones: queues 2 and 3
            per_q = {q: after.get(f"tx_queue_{q}_xdp_tx", after.get(f"tx{q}_xdp_tx", 0)) -
                     before.get(f"tx_queue_{q}_xdp_tx", before.get(f"tx{q}_xdp_tx", 0))
                     for q in range(4)}
            check(per_q[0] == 0 and per_q[1] == 0 and per_q[2] + per_q[3] >= got,
                  f"XDP_TX on nic0 not on the XDP queues 2-3: {per_q}")
        notes.append(f"nic{nic} {what}: {got}/100 back")
    net.ping(g, count=2)
    ctx.note(", ".join(notes))


@suite.test("xdp.redirect", XDP, "xdp")
def t_redirect(ctx: Ctx):
    """XDP_REDIRECT nic0 -> nic1: frames leave through nic1 (its ndo_xdp_xmit)."""
    g = ctx.g
    _ensure_detached(g)
    ifindex = int(g.run_ok(f"cat /sys/class/net/{net.ifname(g, 1)}/ifindex").strip())
    notes = []
    cases = [("program on nic1", True)]
    if ctx.driver == "ours":
        # ours transmits XDP frames without a program on the target too
        cases.insert(0, ("no program on nic1", False))
    attach(g, 0, "redirect", ifindex)
    try:
        for what, prog1 in cases:
            if prog1:
                attach(g, 1, "pass")
            try:
                cap = g.host_bg(["python3", "-u", "-c", CAPTURE, g.nics[1].tap,
                                 str(PORT["redirect"]), "6"], name="xdp-capture")
                time.sleep(1.0)
                before = stats(g, 1)
                send_udp(g, 0, PORT["redirect"], 100)
                time.sleep(0.5)
                after = stats(g, 1)
            finally:
                if prog1:
                    detach(g, 1)
            seen = _capture_count(cap)
            sent = total(after, "xdp_tx", "tx") - total(before, "xdp_tx", "tx")
            check(seen >= 95, f"{what}: {seen} of 100 redirected frames seen on "
                              f"{g.nics[1].tap} (nic1 tx xdp_tx +{sent})")
            notes.append(f"{what}: {seen}/100 out of nic1")
    finally:
        detach(g, 0)
    net.ping(g, count=2)
    net.ping(g, nic=1, count=2)
    ctx.note(", ".join(notes))


def _capture_count(cap) -> int:
    """Frames the host-side capture counted (it stops by itself)."""
    cap.wait(30)
    lines = [ln for ln in cap.output().split() if ln.isdigit()]
    if not lines:
        raise CheckFailed(f"capture on the host side printed nothing: {cap.output()[-400:]}")
    return int(lines[-1])


@suite.test("xdp.mtu", XDP, "xdp")
def t_mtu(ctx: Ctx):
    """Single-buffer XDP: an MTU whose frames exceed a page is refused, 1500 is not."""
    g = ctx.g
    ifn = net.ifname(g, 1)
    _ensure_detached(g)
    g.run_ok(f"/usr/sbin/ip link set dev {ifn} mtu 4000")
    try:
        obj = build_prog("pass", PORT["pass"])
        g.run_ok(f"echo {base64.b64encode(obj).decode()} | base64 -d > /tmp/xdp-mtu.o")
        r = g.run(f"/usr/sbin/ip link set dev {ifn} xdpdrv obj /tmp/xdp-mtu.o sec xdp")
        check(r.rc != 0, "XDP attached with MTU 4000")
        msg = (r.out + r.err).strip().splitlines()[-1:] or [""]
    finally:
        g.run_ok(f"/usr/sbin/ip link set dev {ifn} mtu 1500")
    attach(g, 1, "pass")
    detach(g, 1)
    net.ping(g, nic=1, count=2)
    ctx.note(f"MTU 4000 refused ({msg[0][:80]})")


@suite.test("xdp.unload", XDP, "xdp")
def t_unload(ctx: Ctx):
    """Programs attached to both NICs while the driver is removed and loaded again."""
    g = ctx.g
    _ensure_detached(g)
    attach(g, 0, "tx")
    attach(g, 1, "pass")
    got = send_udp(g, 0, PORT["tx"], 20, reply=True)
    check(got >= 19, f"{got} of 20 reflected before the reload")
    r = g.run("vnet reload", timeout=120)
    check(r.rc == 0, f"vnet reload with XDP attached failed: {r.out}{r.err}")
    g.refresh_nics()
    for i in range(2):
        out = g.run_ok(f"/usr/sbin/ip link show dev {net.ifname(g, i)}")
        check("prog/xdp" not in out, f"nic{i} has a program after the reload:\n{out}")
    net.ping(g, count=2)
    net.ping(g, nic=1, count=2)
    ctx.note(f"{got}/20 reflected, reload clean")
