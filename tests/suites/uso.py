# SPDX-License-Identifier: GPL-2.0-only
"""UDP segmentation offload on a device that offers it (part of the functional suite).

QEMU 7.2 offers no USO; these tests boot with QEMU from bookworm-backports
(VMConfig qemu="backports", fetched by tests/setup/qemu-backports.sh: 10.0 at
the time of writing), whose virtio-net offers host_uso, guest_uso4 and
guest_uso6 by default.  Datagrams carry a pattern (guest-tools/vnet-udpgso.c
and the host scripts below speak the same one), so a lost, cut or corrupted
datagram shows.

* uso.tx   guest -> host: 100 sends of 20 x 1400-byte datagrams with
           UDP_SEGMENT.  With tx-udp-segmentation on, the driver transmits
           one packet per send (the device cuts it) and the host gets every
           datagram intact; off, the stack cuts it and the driver sends
           every datagram.  Kernels without USO in their virtio-net header
           helpers (before 6.2: 5.10, 6.1) must not negotiate the features;
           there the test checks that and the software path.
* uso.rx   host -> guest: the same with the host sending; with rx-gro-hw on
           the device hands over coalesced UDP frames (GUEST_USO4), so the
           driver receives fewer packets than there are datagrams, and the
           socket still gets every datagram intact; with rx-gro-hw off it
           receives each datagram.
"""

from __future__ import annotations

import time

from harness import net
from harness.guest import Nic, VMConfig
from harness.runner import Ctx
from harness.util import timeout_scale

from .functional import check, grew, suite

USO = VMConfig(smp=2, memory=1024, nics=(Nic(queues=2),), qemu="backports")
BITS = {"guest_uso4": 54, "guest_uso6": 55, "host_uso": 56}
GSO, SEGS, SENDS = 1400, 20, 100
DGRAMS = SEGS * SENDS
PORT_TX, PORT_RX = 9100, 9101

HOST_RECV = r"""
import socket, struct, sys, time
ip, port, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind((ip, port))
s.settimeout(0.1)
print("ready", flush=True)
good = bad = nbytes = 0
start, first = time.time(), None
while time.time() - start < secs * 3 and (first is None or time.time() - first < secs):
    try:
        d = s.recv(65536)
    except socket.timeout:
        continue
    first = first or time.time()
    n = struct.unpack("!I", d[:4])[0] if len(d) >= 4 else None
    if n is not None and d[4:] == bytes((n + k) & 0xff for k in range(4, len(d))):
        good += 1
    else:
        bad += 1
    nbytes += len(d)
print("good %d bad %d bytes %d" % (good, bad, nbytes), flush=True)
"""

HOST_SEND = r"""
import socket, struct, sys, time
dst, port, sends, gso, segs = sys.argv[1], int(sys.argv[2]), *map(int, sys.argv[3:6])
pause = float(sys.argv[6])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(17, 103, gso)   # SOL_UDP, UDP_SEGMENT
n = 0
for i in range(sends):
    s.sendto(b"".join(struct.pack("!I", n + j) +
                      bytes((n + j + k) & 0xff for k in range(4, gso)) for j in range(segs)),
             (dst, port))
    n += segs
    time.sleep(pause)
print(n)
"""


def features(g, ifn: str, bits: dict[str, int]) -> dict[str, bool]:
    """Which of the feature bits {name: bit} the device and driver negotiated."""
    got = g.run_ok(f"cat /sys/class/net/{ifn}/device/features").strip()
    return {name: len(got) > b and got[b] == "1" for name, b in bits.items()}


def _feature(g, ifn: str, name: str) -> str:
    """on/off of one ethtool -k feature ("" if not listed)."""
    for line in g.run_ok(f"ethtool -k {ifn}").splitlines():
        if line.startswith(f"{name}:"):
            return line.split()[1]
    return ""


def _parse(out: str) -> dict[str, int]:
    words = out.split()
    i = words.index("good")
    return {"good": int(words[i + 1]), "bad": int(words[i + 3]), "bytes": int(words[i + 5])}


def negotiated(ctx: Ctx, ifn: str, bits: dict[str, int], since: tuple[int, int],
               what: str) -> bool:
    """Whether all of `bits` were negotiated; ours must negotiate them
    exactly on kernels `since` and later (what: their name in messages)."""
    g = ctx.g
    f = features(g, ifn, bits)
    rel = g.run_ok("uname -r").strip()
    major, minor = (int(x) for x in rel.split(".")[:2])
    can = (major, minor) >= since
    if ctx.driver == "ours":
        want = {k: can for k in bits}
        check(f == want, f"{what} negotiated {f} on {rel}, expected {want}")
    return all(f.values())


def _offered(ctx: Ctx, ifn: str) -> bool:
    return negotiated(ctx, ifn, BITS, (6, 2), "USO features")


def _tx_round(g, ifn: str, gap_us: int = 2000) -> tuple[dict[str, int], int]:
    n = g.nics[0]
    recv = g.host_bg(["python3", "-u", "-c", HOST_RECV, n.host_ip, str(PORT_TX), "3"],
                     name="uso-recv")
    deadline = time.monotonic() + 10
    while "ready" not in recv.output() and time.monotonic() < deadline:
        time.sleep(0.1)
    before = net.sysfs_stats(g, names=("tx_packets",))["tx_packets"]
    r = g.run_ok(f"vnet-udpgso send {n.host_ip} {PORT_TX} {SENDS} {GSO} {SEGS} {gap_us}",
                 timeout=120)
    check(r.strip() == str(DGRAMS), f"vnet-udpgso sent {r.strip()}, expected {DGRAMS}")
    after = net.sysfs_stats(g, names=("tx_packets",))["tx_packets"]
    recv.wait(60)
    return _parse(recv.output()), after - before


def _rx_round(g, ifn: str) -> tuple[dict[str, int], int]:
    n = g.nics[0]
    # the receiver asks for a 4 MiB buffer, enough for the whole burst
    # should it fall behind (a starved guest lost 200-400 datagrams in
    # the default 208 KiB); rmem_max caps what it gets
    g.run_ok("echo 4194304 > /proc/sys/net/core/rmem_max")
    bg = g.run_bg(f"vnet-udpgso recv {PORT_RX} {int(3 * timeout_scale())}")
    time.sleep(1.0)
    before = net.sysfs_stats(g, names=("rx_packets",))["rx_packets"]
    # paced for the guest: a slower one (debug kernel) would drop datagrams
    pause = 0.002 * timeout_scale()
    r = g.host(["python3", "-c", HOST_SEND, n.guest_ip, str(PORT_RX), str(SENDS), str(GSO),
                str(SEGS), str(pause)], timeout=120 * timeout_scale())
    check(r.stdout.strip() == str(DGRAMS), f"host sent {r.stdout.strip()}, expected {DGRAMS}")
    res = bg.result(timeout=60)
    after = net.sysfs_stats(g, names=("rx_packets",))["rx_packets"]
    check(res.rc == 0, f"vnet-udpgso recv failed (rc={res.rc}): {res.out}{res.err}")
    return _parse(res.out), after - before


def _intact(what: str, got: dict[str, int]) -> None:
    check(got["bad"] == 0, f"{what}: {got['bad']} datagrams arrived cut or corrupted")
    check(got["good"] >= DGRAMS * 0.95,
          f"{what}: {got['good']} of {DGRAMS} datagrams arrived intact")


def _rounds(ctx: Ctx, ifn: str, feature: str, offered: bool, round_fn, verb: str) -> list[str]:
    """One round per setting of FEATURE (on, then off; only the kernel's
    default when USO was not negotiated): every datagram arrives intact, and
    the driver handles one packet per send with USO, one per datagram
    without."""
    g = ctx.g
    modes = [("on", True), ("off", False)] if offered else [("", False)]
    notes = []
    try:
        for mode, uso in modes:
            if mode:
                g.run_ok(f"ethtool -K {ifn} {feature} {mode}")
            got, pkts = round_fn(g, ifn)
            what = f"{feature} {mode or 'n/a'}"
            _intact(what, got)
            if uso:
                check(pkts < DGRAMS / 4, f"{what}: the driver {verb} {pkts} packets for "
                                         f"{DGRAMS} datagrams in {SENDS} sends")
            else:
                check(pkts >= got["good"], f"{what}: the driver {verb} {pkts} packets for "
                                           f"{got['good']} datagrams")
            notes.append(f"{mode or 'no USO'}: {pkts} packets for {got['good']}/{DGRAMS} "
                         "datagrams")
    finally:
        if offered:
            g.run(f"ethtool -K {ifn} {feature} on")
    return notes


@suite.test("uso.tx", USO, "uso", smoke=True)
def t_uso_tx(ctx: Ctx):
    """UDP GSO sends: one packet per send with USO on, every datagram intact either way."""
    g = ctx.g
    ifn = net.ifname(g)
    offered = _offered(ctx, ifn)
    if offered and ctx.driver == "ours":
        on = _feature(g, ifn, "tx-udp-segmentation")
        check(on == "on", f"tx-udp-segmentation is {on!r} by default")
    notes = _rounds(ctx, ifn, "tx-udp-segmentation", offered, _tx_round, "sent")
    ctx.note(("USO negotiated; " if offered else "USO not negotiated (kernel < 6.2); ") +
             ", ".join(notes))


@suite.test("uso.rx", USO, "uso", smoke=True)
def t_uso_rx(ctx: Ctx):
    """Coalesced UDP frames from the device (GUEST_USO4) reach the socket as intact datagrams."""
    ifn = net.ifname(ctx.g)
    offered = _offered(ctx, ifn)
    ctx.note(", ".join(_rounds(ctx, ifn, "rx-gro-hw", offered, _rx_round, "received")))


@suite.test("uso.paced", USO, "uso", smoke=True)
def t_uso_paced(ctx: Ctx):
    """A sender of datagram batches whose task sleeps between them (a QUIC
    server pacing its bursts) is not held by the kick policy: with USO on,
    100 sends of 20 x 1400 B, 500 us apart (a batch every 0.5 ms, dense
    enough for holding to start on bulk), no notification is held
    (kicks_held stays put) and every datagram arrives intact.  Main before
    the rule took every GSO packet that is not TCP for bulk and held them.
    Without USO (kernels before 6.2) the stack cuts the datagrams and the
    driver never sees such a packet: only their arrival is checked."""
    g = ctx.g
    ifn = net.ifname(g)
    offered = _offered(ctx, ifn)
    held_names = [k for k in net.ethtool_stat_names(g) if k.endswith("_kicks_held")]
    st0 = net.ethtool_stats(g)
    got, pkts = _tx_round(g, ifn, gap_us=500)
    st1 = net.ethtool_stats(g)
    _intact("paced sends", got)
    held = grew(st0, st1, held_names)
    ctx.note(f"{'USO' if offered else 'no USO'}: {pkts} packets for {got['good']}/{DGRAMS} "
             f"datagrams, {held} held")
    if ctx.driver != "ours" or not offered:
        return
    check(bool(held_names), "no *_kicks_held counters")
    check(pkts < DGRAMS / 4, f"{pkts} packets sent for {DGRAMS} datagrams in {SENDS} sends")
    check(held == 0, f"{held} of {pkts} packets of a paced datagram sender held")
