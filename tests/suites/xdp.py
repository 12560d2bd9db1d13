# SPDX-License-Identifier: GPL-2.0-only
"""XDP tests with small BPF programs (tests/guest/bpf/xdp_test.c).

The programs are built on the host with clang -target bpf (no libbpf
headers needed), cached in build/xdp-progs/, copied into the guest and
attached in native mode with iproute2 (`ip link set dev X xdpdrv obj F
sec xdp`). One guest, two NICs: nic0 with 4 queue pairs (2 vCPUs: 2
pairs for the stack, 2 enabled for XDP transmission), nic1 with one pair
(XDP frames share the stack's queue under its lock).

* xdp.pass      XDP_PASS: ping, TCP both ways and 16 MiB integrity with a
                program attached; xdp_packets counters; channels and
                rx-gro-hw refused while attached; detach
* xdp.malformed the device reports malformed used lengths (vnet_fault) with
                XDP_PASS attached: each such frame dropped and counted once
* xdp.drop      XDP_DROP of UDP to one port: nothing reaches the socket
                layer, xdp_drops counts them, other traffic passes
* xdp.tx        XDP_TX: datagrams come back to the host sender, on the
                dedicated XDP queues of nic0 and the shared queue of nic1
* xdp.redirect  XDP_REDIRECT nic0 -> nic1 (ndo_xdp_xmit of nic1), seen on
                the host side of nic1; with and without a program on nic1
* xdp.mtu       single-buffer XDP refuses an MTU whose frames exceed a page,
                at attach and, once attached, at `ip link set mtu`
* xdp.frags     multi-buffer XDP (programs in section xdp.frags) at MTU
                9000: PASS (whole-length check in the program, TCP
                integrity), DROP, TX and REDIRECT of 8000-byte datagrams
* xdp.unload    the driver removed and loaded again with programs attached
"""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import time

from harness import net
from harness.guest import Nic, VMConfig
from harness.runner import Ctx
from harness.util import GUEST_DIR, REPO_ROOT, CheckFailed, VmTestError

from .functional import MALFORMED_DOC, check, inject_malformed, kernel_version, suite

XDP = VMConfig(smp=2, memory=1024, nics=(Nic(queues=4), Nic(queues=1)))
SRC = GUEST_DIR / "bpf" / "xdp_test.c"
PORT = {"pass": 9000, "drop": 9001, "tx": 9002, "redirect": 9003}


def build_prog(mode: str, port: int, ifindex: int = 0, frags: bool = False) -> bytes:
    """Compile xdp_test.c for MODE (cached by source and options)."""
    args = ["-O2", "-target", "bpf", "-I/usr/include/x86_64-linux-gnu", "-Wall", "-Werror",
            f"-DMODE_{mode.upper()}", f"-DPORT={port}", f"-DIFINDEX={ifindex}"]
    if frags:
        args.append("-DFRAGS")
    key = hashlib.sha256(SRC.read_bytes() + " ".join(args).encode()).hexdigest()[:16]
    out = REPO_ROOT / "build" / "xdp-progs" / f"{mode}-{key}.o"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run(["clang", *args, "-c", str(SRC), "-o", str(out)], check=True,
                           capture_output=True, text=True)
        except FileNotFoundError:
            raise VmTestError("clang not found (apt-get install clang: tests/setup/setup-host.sh)")
        except subprocess.CalledProcessError as e:
            raise VmTestError(f"clang failed for {mode}:\n{e.stderr}")
    return out.read_bytes()


def try_attach(g, nic: int, mode: str, ifindex: int = 0, frags: bool = False):
    """Attach a program (frags: loaded for multi-buffer frames); the ip command's result."""
    obj = build_prog(mode, PORT[mode], ifindex, frags)
    ifn = net.ifname(g, nic)
    path = f"/tmp/xdp-{mode}-{nic}.o"
    g.run_ok(f"echo {base64.b64encode(obj).decode()} | base64 -d > {path}")
    sec = "xdp.frags" if frags else "xdp"
    return g.run(f"/usr/sbin/ip link set dev {ifn} xdpdrv obj {path} sec {sec}")


def attach(g, nic: int, mode: str, ifindex: int = 0, frags: bool = False) -> None:
    ifn = net.ifname(g, nic)
    r = try_attach(g, nic, mode, ifindex, frags)
    check(r.rc == 0, f"attaching {mode} to {ifn} failed: {r.out}{r.err}")
    out = g.run_ok(f"/usr/sbin/ip link show dev {ifn}")
    check("xdp" in out and "prog/xdp" in out, f"no native program shown on {ifn}:\n{out}")


def detach(g, nic: int) -> None:
    g.run_ok(f"/usr/sbin/ip link set dev {net.ifname(g, nic)} xdpdrv off")


# Datagram i is "xdp test <i> " padded to SIZE bytes with a pattern of i;
# a reply counts only if it is byte for byte a datagram that was sent.
# Don't-fragment is set: a datagram larger than the path MTU fails to send
# instead of arriving as IP fragments.
SENDER = r"""
import socket, sys, time
src, dst, port, count, reply = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
size = int(sys.argv[6])
def payload(i):
    head = b"xdp test %d " % i
    return head + bytes((i + k) & 0xff for k in range(max(0, size - len(head))))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 10, 2)   # IP_MTU_DISCOVER: IP_PMTUDISC_DO
s.bind((src, 40000 + port % 1000))
s.settimeout(0.05)
seen = set()
def take():
    data, peer = s.recvfrom(65536)
    if data.startswith(b"xdp test "):
        i = int(data.split()[2])
        if data == payload(i):
            seen.add(i)
for i in range(count):
    s.sendto(payload(i), (dst, port))
    time.sleep(0.005)
    if reply:
        try:
            while True:
                take()
        except socket.timeout:
            pass
if reply:
    deadline = time.time() + 2
    s.settimeout(0.2)
    while time.time() < deadline and len(seen) < count:
        try:
            take()
        except socket.timeout:
            pass
print(len(seen))
"""

CAPTURE = r"""
import socket, struct, sys, time
ifname, port, secs, minlen = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
enough = int(sys.argv[5])   # stop once this many were seen (what the test sends)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.bind((ifname, 0))
s.settimeout(0.2)
print("ready", flush=True)
n = 0
end = time.time() + secs
while time.time() < end and n < enough:
    try:
        f = s.recv(65536)
    except socket.timeout:
        continue
    if len(f) >= max(42, minlen) and f[12:14] == b"\x08\x00" and f[23] == 17 and \
            struct.unpack("!H", f[36:38])[0] == port:
        n += 1
print(n, flush=True)
"""


def send_udp(g, nic: int, port: int, count: int, reply: bool = False, size: int = 16) -> int:
    """Send COUNT datagrams of SIZE bytes from the host; with reply, how many came back intact."""
    n = g.nics[nic]
    r = g.host(["python3", "-c", SENDER, n.host_ip, n.guest_ip, str(port), str(count),
                "1" if reply else "0", str(size)], timeout=120)
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


def t_malformed(ctx: Ctx):
    g = ctx.g
    if ctx.driver != "ours":
        ctx.note("ours only (the fault is injected into our receive path)")
        return
    _ensure_detached(g)
    before = total(stats(g, 0), "xdp_packets", "rx")
    attach(g, 0, "pass")
    try:
        note = inject_malformed(ctx)
        r = net.integrity(g, size_mb=8)
        n = total(stats(g, 0), "xdp_packets", "rx") - before
        check(n > 1000, f"rx xdp_packets grew by {n} only: the frames did not go through XDP")
    finally:
        detach(g, 0)
    ctx.note(f"{n} frames through XDP, {note}; 8 MiB intact "
             f"{r['tx_seconds']:.1f}/{r['rx_seconds']:.1f}s")


t_malformed.__doc__ = f"(ours) XDP_PASS attached to nic0: {MALFORMED_DOC}"
suite.test("xdp.malformed", XDP, "xdp", timeout=400)(t_malformed)


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
                seen, sent = redirected_to_nic1(g)
            finally:
                if prog1:
                    detach(g, 1)
            check(seen >= 95, f"{what}: {seen} of 100 redirected frames seen on "
                              f"{g.nics[1].tap} (nic1 tx xdp_tx +{sent})")
            notes.append(f"{what}: {seen}/100 out of nic1")
    finally:
        detach(g, 0)
    net.ping(g, count=2)
    net.ping(g, nic=1, count=2)
    ctx.note(", ".join(notes))


def redirected_to_nic1(g, count: int = 100) -> tuple[int, int]:
    """COUNT datagrams from the host to nic0's redirect port: how many left
    through nic1 (seen on its tap), and how far nic1's XDP transmit
    counters grew meanwhile."""
    cap = g.host_bg(["python3", "-u", "-c", CAPTURE, g.nics[1].tap,
                     str(PORT["redirect"]), "6", "0", str(count)], name="xdp-capture")
    time.sleep(1.0)
    before = stats(g, 1)
    send_udp(g, 0, PORT["redirect"], count)
    time.sleep(0.5)
    after = stats(g, 1)
    return _capture_count(cap), total(after, "xdp_tx", "tx") - total(before, "xdp_tx", "tx")


def _capture_count(cap) -> int:
    """Frames the host-side capture counted (it stops by itself, at its
    count or its deadline)."""
    cap.wait(30)
    lines = [ln for ln in cap.output().split() if ln.isdigit()]
    if not lines:
        raise CheckFailed(f"capture on the host side printed nothing: {cap.output()[-400:]}")
    return int(lines[-1])


@suite.test("xdp.mtu", XDP, "xdp")
def t_mtu(ctx: Ctx):
    """Single-buffer XDP: an MTU whose frames exceed a page is refused, at attach and after."""
    g = ctx.g
    ifn = net.ifname(g, 1)
    _ensure_detached(g)
    g.run_ok(f"/usr/sbin/ip link set dev {ifn} mtu 4000")
    try:
        r = try_attach(g, 1, "pass")
        check(r.rc != 0, "XDP attached with MTU 4000")
        msg = (r.out + r.err).strip().splitlines()[-1:] or [""]
    finally:
        g.run_ok(f"/usr/sbin/ip link set dev {ifn} mtu 1500")
    attach(g, 1, "pass")
    try:
        r = g.run(f"/usr/sbin/ip link set dev {ifn} mtu 4000")
        mtu = g.run_ok(f"cat /sys/class/net/{ifn}/mtu").strip()
    finally:
        g.run(f"/usr/sbin/ip link set dev {ifn} mtu 1500")
        detach(g, 1)
    if ctx.driver == "ours":
        check(r.rc != 0 and mtu == "1500",
              f"MTU 4000 accepted with a single-buffer program attached (MTU now {mtu})")
        log = g.run_ok("dmesg | grep 'MTU 4000 refused' | tail -n 1")
        check("single-buffer" in log, f"no log line naming the reason: {log!r}")
        after = "MTU 4000 refused while attached"
    else:
        after = f"MTU 4000 while attached: {'refused' if r.rc else 'accepted'}"
    net.ping(g, nic=1, count=2)
    ctx.note(f"MTU 4000 refused at attach ({msg[0][:60]}); {after}")


JUMBO = 9000
BIG_DGRAM = 8000


def _set_mtu(g, mtu: int) -> None:
    """MTU on both NICs and their host ends."""
    for i, n in enumerate(g.nics):
        g.host(["ip", "link", "set", "dev", n.tap, "mtu", str(mtu)])
        g.run_ok(f"/usr/sbin/ip link set dev {net.ifname(g, i)} mtu {mtu}")


@suite.test("xdp.frags", XDP, "xdp", timeout=600)
def t_frags(ctx: Ctx):
    """Multi-buffer XDP at MTU 9000: PASS, DROP, TX, REDIRECT of frames over several buffers."""
    if kernel_version(ctx) < (5, 18):
        # the kernel loads no program for fragments (BPF_F_XDP_HAS_FRAGS)
        ctx.note("skipped: no multi-buffer XDP before 5.18")
        return
    g = ctx.g
    _ensure_detached(g)
    _set_mtu(g, JUMBO)
    notes = []
    try:
        r = try_attach(g, 0, "pass")
        check(r.rc != 0, "a single-buffer program attached at MTU 9000")
        detach(g, 0)
        r = try_attach(g, 0, "pass", frags=True)
        if ctx.driver != "ours" and r.rc != 0:
            ctx.note(f"multi-buffer XDP not offered by this driver: {(r.out + r.err).strip()[-80:]}")
            return
        check(r.rc == 0, f"attaching an xdp.frags program at MTU 9000 failed: {r.out}{r.err}")
        try:
            # PASS: the program drops any datagram whose length it sees wrong
            before, snmp0 = stats(g, 0), net.snmp(g)
            send_udp(g, 0, PORT["pass"], 200, size=BIG_DGRAM)
            time.sleep(0.5)
            after, snmp1 = stats(g, 0), net.snmp(g)
            udp = (snmp1["Udp.InDatagrams"] + snmp1["Udp.NoPorts"]) - \
                (snmp0["Udp.InDatagrams"] + snmp0["Udp.NoPorts"])
            xdp_drops = total(after, "xdp_drops", "rx") - total(before, "xdp_drops", "rx")
            check(udp >= 195 and xdp_drops == 0,
                  f"PASS: {udp} of 200 {BIG_DGRAM}-byte datagrams reached UDP, "
                  f"{xdp_drops} dropped by the program's length check")
            r = net.integrity(g, size_mb=16)
            notes.append(f"pass {udp}/200, 16 MiB TCP at MTU {JUMBO} "
                         f"{r['tx_seconds']:.1f}/{r['rx_seconds']:.1f}s")
        finally:
            detach(g, 0)

        attach(g, 0, "drop", frags=True)
        try:
            before, snmp0 = stats(g, 0), net.snmp(g)
            send_udp(g, 0, PORT["drop"], 200, size=BIG_DGRAM)
            time.sleep(0.5)
            after, snmp1 = stats(g, 0), net.snmp(g)
        finally:
            detach(g, 0)
        drops = total(after, "xdp_drops", "rx") - total(before, "xdp_drops", "rx")
        udp = (snmp1["Udp.InDatagrams"] + snmp1["Udp.NoPorts"]) - \
            (snmp0["Udp.InDatagrams"] + snmp0["Udp.NoPorts"])
        check(drops >= 200 and udp < 5, f"DROP: xdp_drops +{drops}, {udp} reached UDP")
        notes.append(f"drop {drops}")

        for nic in (0, 1):
            attach(g, nic, "tx", frags=True)
            try:
                got = send_udp(g, nic, PORT["tx"], 100, reply=True, size=BIG_DGRAM)
            finally:
                detach(g, nic)
            check(got >= 95, f"TX nic{nic}: {got} of 100 {BIG_DGRAM}-byte datagrams came "
                             "back intact")
            notes.append(f"tx nic{nic} {got}/100")

        # REDIRECT: a one-buffer frame goes out of nic1 whatever the program;
        # a multi-buffer one only where the kernel lets it (6.1 takes them to
        # a cpumap alone), else the driver drops and counts it
        ifindex = int(g.run_ok(f"cat /sys/class/net/{net.ifname(g, 1)}/ifindex").strip())
        attach(g, 0, "redirect", ifindex, frags=True)
        seen = {}
        try:
            for size in (16, BIG_DGRAM):
                cap = g.host_bg(["python3", "-u", "-c", CAPTURE, g.nics[1].tap,
                                 str(PORT["redirect"]), "6", str(size), "100"],
                                name="xdp-capture")
                time.sleep(1.0)
                before = stats(g, 0)
                send_udp(g, 0, PORT["redirect"], 100, size=size)
                time.sleep(0.5)
                after = stats(g, 0)
                seen[size] = (_capture_count(cap),
                              total(after, "xdp_drops", "rx") - total(before, "xdp_drops", "rx"))
        finally:
            detach(g, 0)
        small, big = seen[16], seen[BIG_DGRAM]
        check(small[0] >= 95, f"REDIRECT: {small[0]} of 100 one-buffer frames seen on "
                              f"{g.nics[1].tap}")
        check(big[0] >= 95 or (big[0] == 0 and big[1] >= 100),
              f"REDIRECT of {BIG_DGRAM}-byte frames: {big[0]} of 100 seen on {g.nics[1].tap}, "
              f"xdp_drops +{big[1]}: neither sent nor refused and counted")
        notes.append(f"redirect small {small[0]}/100, {BIG_DGRAM} B " +
                     (f"{big[0]}/100" if big[0] else f"refused by the kernel, {big[1]} counted"))
    finally:
        _set_mtu(g, 1500)
    net.ping(g, count=2)
    net.ping(g, nic=1, count=2)
    ctx.note(", ".join(notes))


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


TRACEFS = "/sys/kernel/tracing"


def return_counter(g, on: bool) -> None:
    """Count xdp_return_frame() calls (an XDP frame given back after it was
    sent) with a kprobe; read with returned()."""
    ev = f"{TRACEFS}/events/vnet_xdp/vnet_xdp_ret/enable"
    if on:
        g.run(f"mount -t tracefs none {TRACEFS} 2>/dev/null; true")
        g.run_ok(f"echo 0 > {ev} 2>/dev/null; echo '-:vnet_xdp/vnet_xdp_ret' >> {TRACEFS}/kprobe_events "
                 f"2>/dev/null; echo 'p:vnet_xdp/vnet_xdp_ret xdp_return_frame' >> "
                 f"{TRACEFS}/kprobe_events && echo 1 > {ev}")
    else:
        g.run(f"echo 0 > {ev}; echo '-:vnet_xdp/vnet_xdp_ret' >> {TRACEFS}/kprobe_events")


# kprobe_profile names a probe by its event name alone
RETURNED = f"awk '$1 == \"vnet_xdp_ret\" {{ print $2 }}' {TRACEFS}/kprobe_profile"


def returned(g) -> int:
    out = g.run_ok(RETURNED).strip()
    return int(out) if out.isdigit() else -1


def wait_returned(g, target: int, seconds: float) -> tuple[int, float]:
    """Poll the count in the guest (every ~10 ms) until it reaches target or
    seconds pass; returns (count, seconds waited)."""
    n = int(seconds * 100)
    out = g.run_ok(f"t0=$(cut -d' ' -f1 /proc/uptime); i=0; while [ $i -lt {n} ]; do "
                   f"c=$({RETURNED}); [ \"$c\" -ge {target} ] && break; usleep 10000; "
                   f"i=$((i+1)); done; echo $c $t0 $(cut -d' ' -f1 /proc/uptime)",
                   timeout=seconds + 30)
    c, t0, t1 = out.split()
    return int(c), float(t1) - float(t0)


# A sent XDP frame waits at most tx-usecs-irq (1 ms) rounded up to the tick
# (4 ms at HZ=250) once the device has finished with it; the rest is slack
# for TCG (the poll below starts when the host has sent its last frame).
XDP_RETURN_BOUND_S = 0.5


@suite.test("xdp.tx_reclaim", XDP, "xdp")
def t_tx_reclaim(ctx: Ctx):
    """Frames redirected into nic0 (nic1's program -> nic0's ndo_xdp_xmit) are
    given back (xdp_return_frame) within the bound once sent: on nic0's
    dedicated XDP queues (a program on nic0), on its stack queues (none), and
    when nic0 goes down right after the burst."""
    g = ctx.g
    if ctx.driver != "ours":
        ctx.note("ours only (the in-tree driver frees sent XDP frames at the next transmit)")
        return
    _ensure_detached(g)
    ifn0 = net.ifname(g, 0)
    ifindex = int(g.run_ok(f"cat /sys/class/net/{ifn0}/ifindex").strip())
    return_counter(g, True)
    notes = []
    attach(g, 1, "redirect", ifindex)
    try:
        for what, prog0, down in (("dedicated queues", True, False),
                                  ("stack queues", False, False),
                                  ("dedicated queues, nic0 down at once", True, True)):
            if prog0:
                attach(g, 0, "pass")
            try:
                r0, s0 = returned(g), stats(g, 0)
                send_udp(g, 1, PORT["redirect"], 100)
                if down:
                    g.run_ok(f"/usr/sbin/ip link set dev {ifn0} down")
                count, waited = wait_returned(g, r0 + 100, XDP_RETURN_BOUND_S)
                back = count - r0
                sent = total(stats(g, 0), "xdp_tx", "tx") - total(s0, "xdp_tx", "tx")
            finally:
                if down:
                    g.run_ok(f"/usr/sbin/ip link set dev {ifn0} up")
                if prog0:
                    detach(g, 0)
            check(sent >= 95, f"{what}: nic0 sent {sent} of 100 redirected frames")
            check(r0 >= 0, "the xdp_return_frame kprobe is not counting")
            check(back >= sent, f"{what}: {back} of the {sent} XDP frames nic0 sent were "
                                f"given back within {XDP_RETURN_BOUND_S} s")
            notes.append(f"{what}: {back}/{sent} back in {waited:.2f}s")
            net.ping(g, count=1)
    finally:
        detach(g, 1)
        return_counter(g, False)
    ctx.note(", ".join(notes))


SUSPEND = ("echo devices >/sys/power/pm_test && echo mem >/sys/power/state; rc=$?; "
           "echo none >/sys/power/pm_test; exit $rc")


@suite.test("xdp.failed_restore", XDP, "xdp", timeout=400)
def t_failed_restore(ctx: Ctx):
    """A restore that fails (vnet_fault fails the virtqueue setup of both NICs:
    their restore order varies) while a program with dedicated XDP queues is
    attached to nic0: detaching it works (no virtqueues touched), attaching
    one is refused with a reason, and the next suspend/resume brings the NICs
    back, where XDP works again."""
    g = ctx.g
    if ctx.driver != "ours":
        ctx.note("ours only (the failure is injected into our restore)")
        return
    from .functional import put_kmod
    _ensure_detached(g)
    ifn0 = net.ifname(g, 0)
    ko = put_kmod(ctx, "vnet_fault")
    attach(g, 0, "pass")
    mark = g.mark()
    g.run_ok(f"insmod {ko} func=vnet_vqs_init times=2")
    g.run(SUSPEND, timeout=120)  # the PM core reports the failure, not the write
    n = g.run_ok("cat /sys/module/vnet_fault/parameters/injected; rmmod vnet_fault").strip()
    check(n == "2", f"the failure was injected {n} times:\n{g.new_log(mark)[-1500:]}")
    # ethtool is refused on a detached device
    failed = [i for i in range(2) if g.run(f"ethtool -i {net.ifname(g, i)}").rc != 0]
    check(failed == [0, 1], f"NICs whose restore failed: {failed}, expected both:\n"
                            f"{g.new_log(mark)[-1500:]}")
    r = g.run(f"/usr/sbin/ip link set dev {ifn0} xdpdrv off", timeout=60)
    check(r.rc == 0, f"detaching XDP from nic0 without virtqueues failed (rc={r.rc}"
                     f"{', timed out' if r.timed_out else ''}): {r.out}{r.err}")
    out = g.run_ok(f"/usr/sbin/ip link show dev {ifn0}")
    check("prog/xdp" not in out, f"program still attached:\n{out}")
    r = try_attach(g, 0, "pass")
    check(r.rc != 0, "XDP attached to nic0 without virtqueues")
    why = (r.out + r.err).strip().splitlines()[-1:] or [""]
    check(why[0] != "", "attach refused without a message")
    g.run_ok(SUSPEND, timeout=120)
    net.ping(g, count=3)
    net.ping(g, nic=1, count=2)
    check(net.channels(g).get("combined") == 2, f"nic0 channels {net.channels(g)} after restore")
    attach(g, 0, "pass")
    net.ping(g, count=2)
    detach(g, 0)
    net.tcp_both(g, seconds=2)
    ctx.note(f"detach without virtqueues ok, attach refused ({why[0][-70:]}); "
             f"the next restore brought both NICs back")


@suite.test("xdp.affinity", XDP, "xdp")
def t_affinity(ctx: Ctx):
    """Attaching a program enables nic0's dedicated XDP pairs: the affinity plan
    covers them (XDP pair 2 + n on CPU n, where CPU n sends its XDP frames; no
    XPS: the stack does not use them) and the stack's pairs keep theirs;
    detaching goes back to the stack's plan."""
    g = ctx.g
    if ctx.driver != "ours":
        ctx.note("ours only (the in-tree driver's affinity is not planned this way)")
        return
    _ensure_detached(g)
    ifn = net.ifname(g, 0)

    def plan() -> dict[int, tuple[int, str]]:
        out = g.run_ok(f"cat /sys/class/net/{ifn}/virtio_net/affinity")
        return {int(m.group(1)): (int(m.group(2)), m.group(3)) for m in
                re.finditer(r"^pair (\d+) irq (\d+) xps ?(\S*)$", out, re.M)}

    def irq_cpus() -> dict[str, str]:
        """/proc/irq/N/smp_affinity_list of nic0's queue interrupts by name."""
        dev = g.run_ok(f"basename $(readlink /sys/class/net/{ifn}/device)").strip()
        out = g.run_ok(f"grep -E ' {dev}-(in|out)put\\.[0-9]+$' /proc/interrupts | "
                       f"while read n rest; do "
                       f"echo ${{rest##* }} $(cat /proc/irq/${{n%:}}/smp_affinity_list); done")
        return dict(ln.split() for ln in out.splitlines() if len(ln.split()) == 2)

    before = plan()
    check(sorted(before) == [0, 1], f"plan before XDP: {before}")
    attach(g, 0, "pass")
    try:
        time.sleep(0.5)
        during = plan()
        irqs = irq_cpus()
    finally:
        detach(g, 0)
    time.sleep(0.5)
    after = plan()
    check(sorted(during) == [0, 1, 2, 3],
          f"with XDP attached the plan covers pairs {sorted(during)}, 4 are enabled: {during}")
    check({p: during[p] for p in (0, 1)} == before,
          f"the stack's pairs moved when XDP came: {before} -> {during}")
    for n in (0, 1):
        check(during[2 + n] == (n, ""),
              f"XDP pair {2 + n}: irq cpu {during[2 + n][0]}, xps '{during[2 + n][1]}'; "
              f"expected CPU {n}, no XPS")
    want = {f"{q}.{p}": str(during[p][0]) for p in range(4) for q in ("input", "output")}
    got = {k.split("-", 1)[1]: v for k, v in irqs.items()}
    wrong = {k: (v, got.get(k)) for k, v in want.items() if got.get(k) != v}
    check(not wrong, f"queue interrupts not on the planned CPUs (planned, smp_affinity_list): "
                     f"{wrong}")
    check(after == before, f"after detaching the plan is {after}, before it was {before}")
    ctx.note(f"XDP pairs 2,3 planned on CPUs {during[2][0]},{during[3][0]}; back to "
             f"{len(after)} pairs at detach")


@suite.test("xdp.qstats_totals", XDP, "xdp", timeout=200)
def t_qstats_totals(ctx: Ctx):
    """Netlink queue stats (6.10+) add up to the device's totals while a
    program has nic0's dedicated XDP pairs: the stack then has fewer send
    queues than active pairs, and what those pairs sent before (as the
    stack's queues 2 and 3, with 4 channels) must count in the base.  The
    device-wide qstats tx-packets and rx-packets lie between two reads of
    the interface's sysfs counters taken around them.  Until 2026-12 the
    base started at the active pair count and those packets were missing."""
    g = ctx.g
    if ctx.driver != "ours":
        ctx.note("ours only (dedicated XDP pairs are ours)")
        return
    _ensure_detached(g)
    ifn = net.ifname(g, 0)
    if net.nl_qstats(g) is None:
        ctx.note("no netlink queue stats on this kernel")
        return
    g.run_ok(f"ethtool -L {ifn} combined 4")
    xps = f"/sys/class/net/{ifn}/queues/tx-*/xps_cpus"
    saved = g.run_ok(f"for f in {xps}; do echo $f $(cat $f); done").split("\n")
    # no XPS: the flows' hashes spread over all four send queues
    g.run_ok(f"for f in {xps}; do echo 0 > $f; done")
    try:
        net.iperf(g, "tx", seconds=2, extra="-P 8")
        st = net.ethtool_stats(g)
        late = sum(v for k, v in st.items()
                   if re.fullmatch(r"tx(_queue_)?[23]_packets", k))
        check(late > 0, f"no packet left through send queues 2 and 3: {st}")
        g.run_ok(f"ethtool -L {ifn} combined 2")
        attach(g, 0, "pass")
        try:
            sysfs = f"/sys/class/net/{ifn}/statistics"
            s1 = net.sysfs_stats(g, names=("rx_packets", "tx_packets"))
            q = net.nl_qstats(g)["device"]
            s2 = net.sysfs_stats(g, names=("rx_packets", "tx_packets"))
            for d in ("rx", "tx"):
                v = q.get(f"{d}-packets")
                check(v is not None and s1[f"{d}_packets"] <= v <= s2[f"{d}_packets"],
                      f"qstats {d}-packets {v}, {sysfs}/{d}_packets {s1[f'{d}_packets']}.."
                      f"{s2[f'{d}_packets']} (send queues 2 and 3 sent {late})")
        finally:
            detach(g, 0)
    finally:
        for line in saved:
            if len(line.split()) == 2:
                g.run(f"echo {line.split()[1]} > {line.split()[0]}")
        g.run_ok(f"ethtool -L {ifn} combined 2")
    ctx.note(f"with XDP pairs 2-3: qstats tx {q.get('tx-packets')} / rx {q.get('rx-packets')} "
             f"within sysfs; queues 2 and 3 had sent {late}")


@suite.test("xdp.tx_counted", XDP, "xdp", timeout=200)
def t_tx_counted(ctx: Ctx):
    """What XDP_TX sends counts in the interface's totals (sysfs tx_packets
    and tx_bytes, and the netlink queue stats where the kernel has them), as
    the in-tree driver counts it: on nic0's dedicated XDP pairs and nic1's
    shared one.  Reclaim may come late (delayed reclaim): the totals are
    polled for 5 s.  Until 2026-12 our reclaim counted skbs only.  The
    in-tree driver leaves the last frames of a burst unreclaimed until its
    next XDP send: up to 8 may be missing there."""
    g = ctx.g
    _ensure_detached(g)
    notes = []
    names = ("tx_packets", "tx_bytes")
    for nic in (0, 1):
        attach(g, nic, "tx")
        try:
            s0 = net.sysfs_stats(g, nic, names=names)
            got = send_udp(g, nic, PORT["tx"], 100, reply=True, size=200)
            check(got >= 95, f"nic{nic}: {got} of 100 datagrams came back")
            # 200 B of UDP payload: 242 B frames, Ethernet header included.
            # The in-tree driver takes back XDP frames only at its next XDP
            # send: the last few stay uncounted there.
            n = got if ctx.driver == "ours" else got - 8
            want = (s0["tx_packets"] + n, s0["tx_bytes"] + n * 242)
            s1 = s0
            end = time.monotonic() + 5
            while time.monotonic() < end:
                s1 = net.sysfs_stats(g, nic, names=names)
                if (s1["tx_packets"], s1["tx_bytes"]) >= want:
                    break
                time.sleep(0.5)
            check(s1["tx_packets"] >= want[0] and s1["tx_bytes"] >= want[1],
                  f"nic{nic}: {got} datagrams sent back by XDP_TX, tx_packets grew by "
                  f"{s1['tx_packets'] - s0['tx_packets']}, tx_bytes by "
                  f"{s1['tx_bytes'] - s0['tx_bytes']}")
            q = net.nl_qstats(g, nic)
            if q is not None:
                s2 = net.sysfs_stats(g, nic, names=names)
                v = q["device"].get("tx-packets")
                check(v is not None and s1["tx_packets"] <= v <= s2["tx_packets"],
                      f"nic{nic}: qstats tx-packets {v}, sysfs {s1['tx_packets']}.."
                      f"{s2['tx_packets']}")
        finally:
            detach(g, nic)
        notes.append(f"nic{nic}: {got} back, tx_packets +{s1['tx_packets'] - s0['tx_packets']}")
    ctx.note("; ".join(notes))
