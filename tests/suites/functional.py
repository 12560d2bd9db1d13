# SPDX-License-Identifier: GPL-2.0-only
"""The functional integration suite (tests/integration.py).

Boots, in order: "main" (4 vCPUs, one NIC with 4 queue pairs, speed/duplex
set) shared by most tests, "mtu9000" (host_mtu=9000), then one boot per
device feature set.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import time

from harness import modinfo as mi
from harness import net
from harness.guest import Nic, VMConfig
from harness.initramfs import GUEST_TOOLS, build_guest_tool
from harness.kmod import build_guest_kmod
from harness.runner import Ctx, Suite, TestCase
from harness.util import CheckFailed

suite = Suite("functional")

# 8021q and macvlan: VLAN and secondary unicast addresses for rx_filters;
# sch_netem and sch_tbf: the netem and closed_in_qdisc tests; vxlan: the
# tunnels test; bridge and veth: the bridge test
MAIN = VMConfig(smp=4, memory=1024, nics=(Nic(queues=4, props="speed=10000,duplex=full"),),
                extra_modules=("8021q", "macvlan", "sch_netem", "sch_tbf", "bridge", "veth",
                               "vxlan"))
IP = "/usr/sbin/ip"  # iproute2 (busybox's ip applet lacks maddr, vlan...)
MTU = VMConfig(smp=2, memory=1024, nics=(Nic(props="host_mtu=9000"),))

FEATURES = {
    "default": "",
    "mrg_rxbuf_off": "mrg_rxbuf=off",
    "mq_off": "mq=off",
    "no_ctrl_vq": "ctrl_vq=off,ctrl_rx=off,ctrl_vlan=off,ctrl_mac_addr=off,guest_announce=off,mq=off",
    "csum_off": "csum=off",
    "guest_tso_off": "guest_tso4=off,guest_tso6=off",
    # part of the GSO features: the device segments IPv6 TCP but not IPv4,
    # and coalesces received IPv4 TCP but not IPv6
    "gso_partial": "host_tso4=off,host_ecn=off,host_ufo=off,guest_tso6=off,guest_ecn=off",
    "event_idx_off": "event_idx=off",
    "packed": "packed=on",
    # small receive buffers (no mergeable buffers, no guest GSO) under a
    # device MTU below 1500; also no link status, with speed/duplex
    "small_buffers": "mrg_rxbuf=off,guest_tso4=off,guest_tso6=off,guest_ecn=off,"
                     "guest_ufo=off,host_mtu=1400,status=off,speed=2500,duplex=half",
}


def check(cond: bool, msg: str) -> None:
    if not cond:
        raise CheckFailed(msg)


def poll(fn, timeout: float = 10.0, interval: float = 0.2):
    """Call fn until it returns a truthy value; returns the last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(interval)


def kernel_version(ctx: Ctx) -> tuple[int, int]:
    """The guest kernel's (major, minor); (0, 0) if its release says none."""
    m = re.match(r"(\d+)\.(\d+)", ctx.kernel.release)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def put_kmod(ctx: Ctx, name: str) -> str:
    """Copy a test module of guest-kmod/ (built for the guest's kernel) into
    the guest, once per boot; returns its path there."""
    g = ctx.g
    path = f"/tmp/{name}.ko"
    if g.run(f"[ -f {path} ]").rc != 0:
        g.put_file(build_guest_kmod(ctx.kernel, name).read_bytes(), path)
    return path


def host_modinfo(path, field: str) -> str:
    """`modinfo -F field path` on the host (falls back to reading .modinfo)."""
    if shutil.which("modinfo"):
        cp = subprocess.run(["modinfo", "-F", field, str(path)], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
        if cp.returncode == 0:
            return cp.stdout.strip()
    return mi.modinfo_field(path, field)


# --- main boot -----------------------------------------------------------------
@suite.test("bind", MAIN, "main", smoke=True)
def t_bind(ctx: Ctx):
    """virtio_net is loaded and bound to every NIC; version matches the module."""
    g = ctx.g
    info = net.ethtool_info(g)
    check(info.get("driver") == "virtio_net", f"ethtool -i driver is {info.get('driver')!r}")
    drv = g.run_ok(f"readlink /sys/class/net/{net.ifname(g)}/device/driver").strip()
    check(drv.endswith("/virtio_net"), f"device bound to {drv}")
    bound = g.run_ok("ls /sys/bus/virtio/drivers/virtio_net/ | grep -c '^virtio' || true").strip()
    check(bound == str(len(g.nics)), f"{bound} devices bound to virtio_net, expected {len(g.nics)}")
    check(g.run("[ -f /sys/module/virtio_net/initstate ]").rc == 0, "virtio_net is not a module")
    # the module in the kernel is exactly the file we meant to load
    ko = ctx.module if ctx.driver == "ours" else ctx.kernel.module_path("virtio_net")
    blob = mi.read_module(ko)
    note = mi.elf_section(blob, ".note.gnu.build-id")
    if note:
        got = g.run_ok("od -An -tx1 -v /sys/module/virtio_net/notes/.note.gnu.build-id "
                       "| tr -d ' \\n'").strip()
        check(got == note.hex(), f"loaded virtio_net build-id note {got} != {note.hex()} of {ko}")
    version = info.get("version", "")
    if ctx.driver == "ours":
        want = host_modinfo(ko, "version")
        check(version == want, f"ethtool -i version {version!r} != modinfo version {want!r} of {ko}")
        want_src = host_modinfo(ko, "srcversion")
        if want_src:
            got = g.run("cat /sys/module/virtio_net/srcversion").out.strip()
            check(got == want_src, f"loaded srcversion {got!r} != {want_src!r} of {ko}")
    else:
        # stock: the in-tree driver reports VIRTNET_DRIVER_VERSION ("1.0.0"
        # on 5.10 to 7.2; the compiler may turn it into immediates, so it is not
        # searched in the .ko), a MODULE_VERSION if it ever gets one, or the
        # kernel release that the ethtool core fills in when a driver sets none
        release = g.run_ok("uname -r").strip()
        allowed = {release, "1.0.0", mi.modinfo_field(blob, "version")} - {""}
        check(version in allowed, f"stock virtio_net reports version {version!r}, "
                                  f"expected one of {sorted(allowed)}")
    ctx.note(f"version {version}, bus {info.get('bus-info')}"
             + (f", build-id {note[16:].hex()[:12]}.." if note else ""))


@suite.test("ping", MAIN, "main", smoke=True)
def t_ping(ctx: Ctx):
    """ICMP both ways."""
    net.ping(ctx.g, count=3)
    net.host_ping(ctx.g, count=3)


@suite.test("tcp", MAIN, "main", smoke=True)
def t_tcp(ctx: Ctx):
    """iperf3 TCP, guest -> host and host -> guest (3 s each)."""
    tx, rx = net.tcp_both(ctx.g, seconds=3)
    ctx.note(f"tx {tx['bps'] / 1e6:.0f} Mbit/s, rx {rx['bps'] / 1e6:.0f} Mbit/s")


@suite.test("udp", MAIN, "main")
def t_udp(ctx: Ctx):
    """iperf3 UDP both directions (3 s each at 20 Mbit/s)."""
    tx = net.iperf(ctx.g, "tx", udp=True, seconds=3, bitrate="20M", max_loss_pct=50)
    rx = net.iperf(ctx.g, "rx", udp=True, seconds=3, bitrate="20M", max_loss_pct=50)
    ctx.note(f"tx {tx['bps'] / 1e6:.0f} Mbit/s loss {tx.get('loss_pct', 0)}%, "
             f"rx {rx['bps'] / 1e6:.0f} Mbit/s loss {rx.get('loss_pct', 0)}%")


def grew(before: dict[str, int], after: dict[str, int], names) -> int:
    """How much the ethtool -S counters `names` grew, summed."""
    return sum(after[n] - before[n] for n in names)


@suite.test("udp_sndbuf", MAIN, "main")
def t_udp_sndbuf(ctx: Ctx):
    """A UDP sender bound by its send buffer is not left waiting on delayed
    reclaim (policy/reclaim.h): iperf3 UDP as fast as it goes, 1400 B
    datagrams, a 16 KiB SO_SNDBUF (about a dozen datagrams), 2 s.  Its
    packets find the buffer over half out (sndbuf_over_half grows) and the
    queue asks for completion interrupts (TX interrupts seen).  A TCP
    sender with the same buffer is not counted: TCP has its own limits.
    The stock driver (no such counters) only carries the traffic."""
    g = ctx.g
    names = [n for n in net.ethtool_stat_names(g) if n.endswith("_sndbuf_over_half")]
    # tx_queue_N_ up to 6.9, txN_ from 6.10 (the in-tree names of each)
    irqs = [n for n in net.ethtool_stat_names(g) if re.fullmatch(r"tx(_queue_)?\d+_interrupts", n)]
    st0 = net.ethtool_stats(g)
    udp = net.iperf(g, "tx", udp=True, seconds=2, bitrate="0", extra="-l 1400 -w 16K")
    if ctx.driver != "ours":
        ctx.note(f"UDP: {udp['bps'] / 1e6:.0f} Mbit/s")
        return
    check(bool(names) and bool(irqs), "no *_sndbuf_over_half or tx_queue_*_interrupts counters")
    st1 = net.ethtool_stats(g)
    over = grew(st0, st1, names)
    irq = grew(st0, st1, irqs)
    ctx.note(f"UDP: {udp['bps'] / 1e6:.0f} Mbit/s, {over} packets over half the buffer, "
             f"{irq} TX interrupts")
    check(over > 0, "a UDP sender with a 16 KiB buffer never had half of it out")
    check(irq > 0, f"{over} packets over half their buffer and no TX interrupt")
    tcp = net.iperf(g, "tx", seconds=2, extra="-w 16K")
    st2 = net.ethtool_stats(g)
    over_tcp = grew(st1, st2, names)
    ctx.note(f"TCP: {tcp['bps'] / 1e6:.0f} Mbit/s, {over_tcp} counted")
    check(over_tcp == 0, f"TCP packets counted over half their send buffer: {over_tcp}")


@suite.test("rx_fixed_rcvbuf", MAIN, "main")
def t_rx_fixed_rcvbuf(ctx: Ctx):
    """A TCP receiver whose application fixed its receive buffer is not
    left waiting on a receive deferral (policy/rx_moderation.h): iperf3
    into the guest with -w 32K (SO_RCVBUF), 2 s.  Its polls are counted
    (polls_fixed_rcvbuf grows) and defer nothing (deferrals at most 2, for
    a poll before the first acknowledgment); main's module before the
    rule deferred such a stream hundreds of times.  Without -w (a buffer
    the kernel tunes) nothing is counted.  The stock driver only carries
    the traffic."""
    g = ctx.g
    names = net.ethtool_stat_names(g)
    fixed = [n for n in names if n.endswith("_polls_fixed_rcvbuf")]
    # rx_queue_N_ up to 6.9, rxN_ from 6.10 (the in-tree names of each)
    defers = [n for n in names if re.fullmatch(r"rx(_queue_)?\d+_deferrals", n)]
    st0 = net.ethtool_stats(g)
    small = net.iperf(g, "rx", seconds=2, extra="-w 32K")
    if ctx.driver != "ours":
        ctx.note(f"-w 32K: {small['bps'] / 1e6:.0f} Mbit/s")
        return
    check(bool(fixed) and bool(defers), "no *_polls_fixed_rcvbuf or rx_queue_*_deferrals counters")
    st1 = net.ethtool_stats(g)
    polls = grew(st0, st1, fixed)
    deferred = grew(st0, st1, defers)
    ctx.note(f"-w 32K: {small['bps'] / 1e6:.0f} Mbit/s, {polls} polls counted, "
             f"{deferred} deferrals")
    check(polls > 0, "a receiver with a 32 KiB buffer was never counted")
    check(deferred <= 2, f"{deferred} deferrals while a receiver with a fixed buffer was active")
    # the last fixed-buffer acknowledgment's window (8-12 ms) may reach
    # into the next run's first polls
    time.sleep(0.1)
    st2 = net.ethtool_stats(g)
    tuned = net.iperf(g, "rx", seconds=2)
    st3 = net.ethtool_stats(g)
    polls_tuned = grew(st2, st3, fixed)
    ctx.note(f"default buffer: {tuned['bps'] / 1e6:.0f} Mbit/s, {polls_tuned} polls counted, "
             f"{grew(st2, st3, defers)} deferrals")
    check(polls_tuned == 0, f"polls counted for a receiver the kernel tunes: {polls_tuned}")


@suite.test("integrity", MAIN, "main")
def t_integrity(ctx: Ctx):
    """16 MiB of random data each way, sha256 compared on both sides."""
    r = net.integrity(ctx.g, size_mb=16)
    ctx.note(f"16 MiB tx {r['tx_seconds']:.1f}s, rx {r['rx_seconds']:.1f}s")


@suite.test("queues", MAIN, "main")
def t_queues(ctx: Ctx):
    """4 queue pairs on 4 vCPUs: every RX and TX queue carries packets."""
    g = ctx.g
    nq = g.nics[0].queues
    ch = net.channels(g)
    check(ch.get("combined") == nq, f"ethtool -l combined {ch.get('combined')}, expected {nq}")
    ncpu = int(g.run_ok("nproc").strip())
    before = net.queue_packets(g)
    ports = [net.IPERF_PORT + i for i in range(nq)]
    for p in ports:
        net.host_iperf_server(g, p)
    for direction in ("tx", "rx"):
        bgs = [g.run_bg(net.iperf_cmd(g.nics[0].host_ip, direction, seconds=3, port=p,
                                      cpu=i % ncpu))
               for i, p in enumerate(ports)]
        for b in bgs:
            res = b.result(timeout=60)
            check(res.rc == 0, f"pinned iperf3 {direction} failed: {res.out[-800:]}{res.err[-800:]}")
    after = net.queue_packets(g)
    delta = net.counter_delta(before, after)
    ctx.note(f"[{after['source']}] rx " + "/".join(str(delta["rx"].get(q, 0)) for q in range(nq))
             + " tx " + "/".join(str(delta["tx"].get(q, 0)) for q in range(nq)))
    idle = [f"{d}{q}" for d in ("rx", "tx") for q in range(nq) if delta[d].get(q, 0) <= 0]
    check(not idle, f"queues without packets: {', '.join(idle)} (deltas {delta})")


def _qstats(g) -> dict[tuple[str, int], dict[str, int]] | None:
    """Per-queue netlink stats {(rx|tx, queue): {name: value}}; None if the
    kernel has none."""
    qs = net.nl_qstats(g)
    return None if qs is None else {k: v for k, v in qs.items() if isinstance(k, tuple)}


@suite.test("qstats", MAIN, "main", smoke=True)
def t_qstats(ctx: Ctx):
    """Netlink per-queue stats (NETDEV_CMD_QSTATS_GET, 6.10+): every active queue
    reported, and (ours) each one's packets bracket its ethtool -S packets."""
    g = ctx.g
    nq = net.channels(g).get("combined", 1)
    net.ping(g, count=5)
    q1 = _qstats(g)
    if q1 is None:
        ctx.note("no netlink queue stats on this kernel")
        return
    want = {(d, q) for d in ("rx", "tx") for q in range(nq)}
    check(want <= set(q1), f"qstats queues {sorted(q1)}, expected {sorted(want)}")
    for key in want:
        check(f"{key[0]}-packets" in q1[key], f"qstats {key} has no packets: {q1[key]}")
    check(any(q1[k][f"{k[0]}-packets"] for k in want), f"qstats all zero after ping: {q1}")
    if ctx.driver != "ours":
        ctx.note(f"{len(q1)} queues")
        return
    st = net.ethtool_stats(g)
    q2 = _qstats(g)
    for d, q in sorted(want):
        e = st.get(f"{d}{q}_packets")
        check(e is not None, f"ethtool -S has no {d}{q}_packets")
        lo, hi = q1[(d, q)][f"{d}-packets"], q2[(d, q)][f"{d}-packets"]
        check(lo <= e <= hi, f"{d}{q}: ethtool -S packets {e} outside qstats {lo}..{hi}")
    ctx.note(f"{len(q2)} queues; ethtool -S packets within the netlink values")


STAT_QUEUE = re.compile(r"^(rx|tx)(?:_queue_)?(\d+)_(.+)$")


def _stat_groups(names: list[str]) -> dict[str, list[str]]:
    """ethtool -S names grouped by queue ("rx0", "tx3"; "device" for the rest),
    groups and names in order."""
    groups: dict[str, list[str]] = {}
    for n in names:
        m = STAT_QUEUE.match(n)
        key, short = (f"{m.group(1)}{m.group(2)}", m.group(3)) if m else ("device", n)
        groups.setdefault(key, []).append(short)
    return groups


@suite.test("stats_names", MAIN, "main", smoke=True)
def t_stats_names(ctx: Ctx):
    """ethtool -S: the in-tree driver's names (loaded in the same guest) come
    first, in its order, in every group (device, each queue); ours follow."""
    g = ctx.g
    ours = net.ethtool_stat_names(g)
    if ctx.driver != "ours":
        ctx.note(f"{len(ours)} names (stock only)")
        return
    r = g.run("VNET_USE_DRIVER=stock vnet reload", timeout=120)
    check(r.rc == 0, f"loading the in-tree virtio_net failed: {r.out}{r.err}")
    try:
        g.refresh_nics()
        stock = net.ethtool_stat_names(g)
    finally:
        r = g.run("vnet reload", timeout=120)
        g.refresh_nics()
    check(r.rc == 0, f"reloading ours failed: {r.out}{r.err}")
    want = host_modinfo(ctx.module, "version")
    check(net.ethtool_info(g).get("version") == want, "ours is not loaded again")
    og, sg = _stat_groups(ours), _stat_groups(stock)
    check(list(sg) == [k for k in og if k in sg],
          f"group order differs: stock {list(sg)}, ours {list(og)}")
    for key, names in sg.items():
        check(key in og, f"stock group {key} missing in ours")
        check(og[key][:len(names)] == names,
              f"{key}: stock names {names} are not the start of ours {og[key]}")
    extra = [k for k in og if k not in sg and k != "device"]
    check(not extra, f"queue groups only in ours: {extra}")
    ctx.note(f"stock's {len(stock)} names first and in order among our {len(ours)}")


@suite.test("promisc_mac", MAIN, "main")
def t_promisc_mac(ctx: Ctx):
    """promisc on/off and a MAC change are seen by the device (query-rx-filter)."""
    g = ctx.g
    n = g.nics[0]
    ifn = net.ifname(g)

    def rxf():
        return g.qmp("query-rx-filter", name=n.id)[0]

    check(poll(lambda: rxf()["promiscuous"] is False, 5),
          f"device promiscuous before the test: {rxf()}")
    g.run_ok(f"ip link set dev {ifn} promisc on")
    check(poll(lambda: rxf()["promiscuous"] is True, 10), f"promisc on not seen: {rxf()}")
    g.run_ok(f"ip link set dev {ifn} promisc off")
    check(poll(lambda: rxf()["promiscuous"] is False, 10), f"promisc off not seen: {rxf()}")

    new = "52:54:00:77:00:aa"
    for mac in (new, n.mac):
        g.run_ok(f"ip link set dev {ifn} address {mac}")
        got = g.run_ok(f"cat /sys/class/net/{ifn}/address").strip()
        check(got == mac, f"guest MAC is {got}, expected {mac}")
        check(poll(lambda: rxf()["main-mac"] == mac, 10),
              f"device main-mac {rxf()['main-mac']} != {mac}")
        # the namespace still has the old MAC cached
        g.host(["ip", "neigh", "flush", "dev", n.tap], check=False)
        net.ping(g, count=2)
        net.host_ping(g, count=2)
        net.iperf(g, "tx", seconds=2)
        net.iperf(g, "rx", seconds=2)


@suite.test("rx_filters", MAIN, "main")
def t_rx_filters(ctx: Ctx):
    """allmulti, the unicast and multicast MAC tables and the VLAN filter as
    the device sees them (QMP query-rx-filter)."""
    g = ctx.g
    n = g.nics[0]
    ifn = net.ifname(g)

    def rxf():
        return g.qmp("query-rx-filter", name=n.id)[0]

    def wait_for(what, cond):
        check(poll(lambda: cond(rxf()), 10), f"{what} not seen by the device: {rxf()}")

    g.run_ok("vnet modprobe 8021q && vnet modprobe macvlan")
    g.run_ok(f"{IP} link set dev {ifn} allmulticast on")
    wait_for("allmulti on", lambda f: f["multicast"] == "all")
    g.run_ok(f"{IP} link set dev {ifn} allmulticast off")
    wait_for("allmulti off", lambda f: f["multicast"] == "normal")

    mc = "01:00:5e:01:02:03"
    g.run_ok(f"{IP} maddr add {mc} dev {ifn}")
    wait_for(f"multicast {mc} added", lambda f: mc in f["multicast-table"])
    uc = "52:54:00:77:00:a1"
    g.run_ok(f"{IP} link add link {ifn} name mv0 address {uc} type macvlan && "
             f"{IP} link set mv0 up")
    wait_for(f"unicast {uc} added", lambda f: uc in f["unicast-table"])
    g.run_ok(f"{IP} link add link {ifn} name {ifn}.100 type vlan id 100 && "
             f"{IP} link set {ifn}.100 up")
    wait_for("VLAN 100 added", lambda f: 100 in f["vlan-table"] and f["vlan"] == "normal")
    full = rxf()
    net.ping(g, count=2)

    g.run_ok(f"{IP} link del {ifn}.100; {IP} link del mv0; {IP} maddr del {mc} dev {ifn}")
    wait_for("VLAN 100 removed", lambda f: 100 not in f["vlan-table"])
    wait_for(f"unicast {uc} removed", lambda f: uc not in f["unicast-table"])
    wait_for(f"multicast {mc} removed", lambda f: mc not in f["multicast-table"])
    net.ping(g, count=2)
    ctx.note(f"seen: unicast {full['unicast-table']}, vlan {full['vlan-table']}, "
             f"{len(full['multicast-table'])} multicast")


@suite.test("link", MAIN, "main")
def t_link(ctx: Ctx):
    """Speed/duplex from the device (speed=10000,duplex=full) in ethtool; 3 link
    flaps through QMP set_link: carrier and operstate follow, traffic after.
    Runs after stats_names bound and unbound the in-tree driver, which on 6.11+
    leaves config changes held back unless our probe releases them."""
    g = ctx.g
    ifn = net.ifname(g)

    def speed_ok(when):
        ls = net.link_settings(g)
        check(ls.get("Speed") == "10000Mb/s" and ls.get("Duplex") == "Full",
              f"{when}: ethtool shows speed {ls.get('Speed')!r} duplex {ls.get('Duplex')!r}, "
              f"expected 10000Mb/s Full")

    def carrier():
        return g.run(f"cat /sys/class/net/{ifn}/carrier /sys/class/net/{ifn}/operstate"
                     ).out.split()

    speed_ok("after boot")
    for i in range(3):
        g.set_link(0, False)
        check(poll(lambda: carrier() == ["0", "down"], 10),
              f"flap {i + 1}: carrier/operstate {carrier()} after set_link off")
        g.set_link(0, True)
        check(poll(lambda: carrier() == ["1", "up"], 10),
              f"flap {i + 1}: carrier/operstate {carrier()} after set_link on")
        net.ping(g, count=2)
    speed_ok("after the flaps")
    net.tcp_both(g, seconds=2)
    ctx.note("3 flaps, carrier followed")


@suite.test("announce", MAIN, "main")
def t_announce(ctx: Ctx):
    """QMP announce-self (3 rounds): the guest answers each with a gratuitous
    ARP, counted on the host side of the tap."""
    g = ctx.g
    rounds = 3
    mark = g.mark()
    finish = net.start_garp_counter(g, seconds=4)
    g.qmp("announce-self", initial=100, max=300, rounds=rounds, step=100)
    garps = finish()
    check(garps >= rounds, f"{garps} gratuitous ARPs for {rounds} announce rounds")
    log = g.new_log(mark)
    check("announce" not in log, f"announce problems in the kernel log:\n{log[-1500:]}")
    net.ping(g, count=2)
    ctx.note(f"{garps} gratuitous ARPs for {rounds} rounds")


def _rx_frame_size(g, seconds: int = 2) -> float:
    """Average size of the frames the driver receives during a host -> guest
    TCP transfer (the interface counters count frames as the device delivers
    them, before GRO)."""
    a = net.sysfs_stats(g)
    net.iperf(g, "rx", seconds=seconds)
    b = net.sysfs_stats(g)
    return (b["rx_bytes"] - a["rx_bytes"]) / max(1, b["rx_packets"] - a["rx_packets"])


@suite.test("gro_hw", MAIN, "main")
def t_gro_hw(ctx: Ctx):
    """ethtool -K rx-gro-hw off/on reaches the device: with it off the device
    stops delivering coalesced (larger than MTU) frames, with it on it resumes."""
    g = ctx.g
    ifn = net.ifname(g)

    def gro_hw():
        m = re.search(r"^rx-gro-hw: (\w+)", g.run_ok(f"ethtool -k {ifn}"), re.M)
        return m.group(1) if m else None

    check(gro_hw() == "on", f"rx-gro-hw is {gro_hw()!r} after boot")
    on = _rx_frame_size(g)
    g.run_ok(f"ethtool -K {ifn} rx-gro-hw off")
    check(gro_hw() == "off", f"rx-gro-hw is {gro_hw()!r} after turning it off")
    off = _rx_frame_size(g)
    g.run_ok(f"ethtool -K {ifn} rx-gro-hw on")
    check(gro_hw() == "on", f"rx-gro-hw is {gro_hw()!r} after turning it on")
    on2 = _rx_frame_size(g)
    ctx.note(f"average RX frame {on:.0f} / {off:.0f} / {on2:.0f} bytes (on/off/on)")
    check(off <= 1514 + 64, f"rx-gro-hw off: the device still sends {off:.0f}-byte frames")
    check(on > 2 * 1514 and on2 > 2 * 1514,
          f"rx-gro-hw on: frames of {on:.0f}/{on2:.0f} bytes, expected coalesced ones")


@suite.test("rx_tcp_fast_path", MAIN, "main")
def t_rx_tcp_fast_path(ctx: Ctx):
    """Small TCP segments received take TCP's fast path (header prediction,
    TcpExt TCPHPHits): a segment's skb must not be larger than the socket's
    forward allocation, which 6.1 keeps under a page, so a frame is not to
    be carried in a skb head plus a whole receive buffer.  One TCP
    ping-pong per message size.  Counted against the data segments, one
    per answer sockperf received (a message fits a segment and only one is
    in flight), not the segments in, which may hold pure ACKs too.  At
    least half must take the fast path: the layout this test was written
    for gave 2% (255 of 14241); stock 6.1 gives 78% at 200 bytes on this
    project's 2-core hosts and ours 69-99%, the rest slow-path entries of
    TCP's own, more on a slower host, so a threshold near those figures
    would fail on the host's speed."""
    g = ctx.g
    for size in (200, 700):
        c0 = net.snmp(g, files=("snmp", "netstat"))
        res = net.sockperf_pingpong(g, seconds=3, tcp=True, msg_size=size)
        c1 = net.snmp(g, files=("snmp", "netstat"))
        segs = c1["Tcp.InSegs"] - c0["Tcp.InSegs"]
        hits = c1["TcpExt.TCPHPHits"] - c0["TcpExt.TCPHPHits"]
        data = res.get("received")
        check(data is not None, "sockperf printed no message counts")
        ctx.note(f"{size} B messages: {segs} segments in, {data} answers, "
                 f"{hits} segments on the fast path")
        check(data >= 500, f"{size} B ping-pong: only {data} answers received")
        check(hits >= 0.5 * data,
              f"{size} B ping-pong: {hits} of {data} answers took the fast path")


AUTOCORK_PORT = 7100
LOAD_END = re.compile(r"^END \S+ \S+ sent (\d+) recv (\d+) skipped (\d+) p50 ([\d.]+) "
                      r"p90 [\d.]+ p99 ([\d.]+)", re.M)


@suite.test("tcp_autocork", MAIN, "main")
def t_tcp_autocork(ctx: Ctx):
    """TCP answers are not held back behind the reclaim.  TCP autocorks a
    small write while an earlier packet of the socket is unfreed and
    unacknowledged, and sends it when that packet is freed: at once with a
    completion interrupt, only at the next reclaim with delayed reclaim,
    unless the earlier packet, the last segment of an answer, gave its
    memory back when sent (policy/reclaim.h).  vnet-load echo servers in the
    guest, 64 B messages, 4 s each:
    - an open-loop client at 3000 requests/s (two requests often arrive
      together, so two answers go back to back): at most 3% of the answers
      autocorked (20-25% before answers gave their memory back at send,
      stock under 1%), and at least half the segments sent released at send;
    - a closed-loop client whose server answers in two writes (a header,
      then a body; TCP_NODELAY): at least 1000 answers, 4 ms each at the
      most (before: 484, the second write waiting 8 ms for the reclaim
      deadline; stock 8469, though it corks nearly every second write too,
      for the few microseconds to its completion interrupt)."""
    g = ctx.g
    exe = build_guest_tool(GUEST_TOOLS / "vnet-load.c")
    check(exe is not None, "vnet-load could not be built on the host")
    ncpu = int(g.run_ok("nproc").strip())
    # (what, writes per answer, client arguments, largest share autocorked)
    loads = (("open loop, 3000/s", 1, ["-r", "3000"], 0.03),
             ("closed loop, answers in two writes", 2, [], None))
    g.run_ok(" ".join(f"taskset -c {i} /vnet/vnet-load server -p {AUTOCORK_PORT + k} -w {load[1]} "
                      f">/dev/null 2>&1 &" for k, load in enumerate(loads)
                      for i in range(ncpu)) + " sleep 0.3")
    released = [n for n in net.ethtool_stat_names(g) if n.endswith("_released_at_send")]
    try:
        for k, (what, _, args, cork_max) in enumerate(loads):
            st0 = net.ethtool_stats(g)
            c0 = net.snmp(g, files=("snmp", "netstat"))
            cp = g.host([str(exe), "client", "-c", g.nics[0].guest_ip,
                         "-p", str(AUTOCORK_PORT + k), "-n", "1", "-s", "64", "-d", "4"] + args,
                        timeout=60)
            c1 = net.snmp(g, files=("snmp", "netstat"))
            st1 = net.ethtool_stats(g)
            m = LOAD_END.search(cp.stdout)
            check(m is not None, f"vnet-load client said: {cp.stdout[-800:]}{cp.stderr[-800:]}")
            sent, recv = int(m.group(1)), int(m.group(2))
            corked = c1["TcpExt.TCPAutoCorking"] - c0["TcpExt.TCPAutoCorking"]
            rel = grew(st0, st1, released)
            out = c1["Tcp.OutSegs"] - c0["Tcp.OutSegs"]
            ctx.note(f"{what}: {sent} requests, {recv} answers (p50 {m.group(4)} us, "
                     f"p99 {m.group(5)} us), {corked} autocorked, {out} segments out, "
                     f"{rel} released at send")
            if cork_max is not None:
                check(corked <= cork_max * recv, f"{what}: {corked} of {recv} answers autocorked")
            check(recv >= 1000 and recv >= 0.9 * sent, f"{what}: {recv} answers to {sent} requests")
            # Per segment, not per answer: the server echoes what one read
            # returned in one write, so requests that arrive together (more
            # of them on a slow host) go back in one segment.
            if released:
                check(rel >= 0.5 * out,
                      f"{what}: only {rel} of {out} segments out released at send")
    finally:
        g.run("pkill -x vnet-load")


PUB_SINK_PORT = 7150
PUB_END = re.compile(r"^END \S+ \S+ sent (\d+) ", re.M)
# (message size, messages/s): segments the kick policy counts as large,
# and two sizes below its 1 KiB
PUB_LOADS = ((1400, 1000), (200, 1000), (600, 1000))


def pub_sink(g, exe, size: int, name: str):
    """A vnet-load sink for SIZE-byte messages in the namespace, ready; the
    caller stops it."""
    sink = g.host_bg([str(exe), "sink", "-p", str(PUB_SINK_PORT), "-s", str(size)], name=name)
    deadline = time.monotonic() + 10
    while "READY" not in sink.output():
        if not sink.alive() or time.monotonic() > deadline:
            sink.stop()
            check(False, f"vnet-load sink did not start: {sink.output()[-500:]}")
        time.sleep(0.05)
    return sink


def publish(ctx: Ctx, exe, released: list, size: int, rate: int) -> list[str]:
    """tcp_autocork_publisher: one publisher; what went wrong."""
    g = ctx.g
    what = f"publisher of {size} B at {rate}/s"
    sink = pub_sink(g, exe, size, f"vnet-load-sink-autocork-{size}-{rate}")
    try:
        st0 = net.ethtool_stats(g)
        c0 = net.snmp(g, files=("snmp", "netstat"))
        out = g.run_ok(f"/vnet/vnet-load client -c {g.nics[0].host_ip} -p {PUB_SINK_PORT} "
                       f"-n 1 -s {size} -r {rate} -d 4", timeout=60)
        c1 = net.snmp(g, files=("snmp", "netstat"))
        st1 = net.ethtool_stats(g)
        m = PUB_END.search(out)
        check(m is not None, f"vnet-load client said: {out[-800:]}")
        sent = int(m.group(1))
        corked = c1["TcpExt.TCPAutoCorking"] - c0["TcpExt.TCPAutoCorking"]
        rel = grew(st0, st1, released)
        segs = c1["Tcp.OutSegs"] - c0["Tcp.OutSegs"]
        ctx.note(f"{what}: {sent} messages, {segs} segments out, {corked} autocorked, "
                 f"{rel} released at send")
    finally:
        sink.stop()
    probs = []
    if sent < 3 * rate:
        probs.append(f"{what}: only {sent} messages in 4 s")
    if released and rel < 0.7 * segs:
        probs.append(f"{what}: only {rel} of {segs} segments released at send")
    if corked > 0.10 * sent:
        probs.append(f"{what}: {corked} of {sent} messages autocorked")
    return probs


@suite.test("tcp_autocork_publisher", MAIN, "main")
def t_tcp_autocork_publisher(ctx: Ctx):
    """A paced publisher's messages are not held back behind the reclaim
    either: the guest writes messages on one TCP connection to a sink in
    the namespace, its task sleeping between them, for 4 s each: 1400 B,
    200 B and 600 B, at 1000/s.  The last segment of each message gives
    its memory back when sent (policy/reclaim.h: its task slept within
    the socket's last few segments), so TCP does not autocork the next one
    until a reclaim: for each, at least 70% of the segments sent are
    released at send and at most 10% of the messages are autocorked.  On
    6.1: 1400 B 3115-3869 of about 4000 segments released, 21-188
    messages autocorked (the most on a loaded machine, where the late
    publisher sent two messages without sleeping, the second not released
    before the run count of 2026-12-05); 200 B and 600 B 3614-3651 of about 3950 released, 80-87
    autocorked, with another guest's test suite running beside.  Before
    2026-12-04 no segment was released (1400 B: 751 of 3971 autocorked,
    and half the 2 s windows of the pub-1400-1000 benchmark cell had a
    p99 one-way delay above 1 ms); until 2026-12-05 only sockets the kick
    policy remembered as bulk senders were asked, and the 200 B publisher
    released 7 of about 4000 segments on a quiet machine, 1937 of 3905
    beside another suite (a backlog now and then made its socket
    remembered).  A bulk stream releases nothing: 2 s of iperf3 from the
    guest, fewer than 1% of its segments released."""
    g = ctx.g
    exe = build_guest_tool(GUEST_TOOLS / "vnet-load.c")
    check(exe is not None, "vnet-load could not be built on the host")
    # None with the stock driver: only the autocorking is checked then.
    released = [n for n in net.ethtool_stat_names(g) if n.endswith("_released_at_send")]
    probs = [p for load in PUB_LOADS for p in publish(ctx, exe, released, *load)]
    check(not probs, "; ".join(probs))
    st0 = net.ethtool_stats(g)
    c0 = net.snmp(g, files=("snmp", "netstat"))
    net.iperf(g, "tx", seconds=2)
    c1 = net.snmp(g, files=("snmp", "netstat"))
    st1 = net.ethtool_stats(g)
    rel = grew(st0, st1, released)
    segs = c1["Tcp.OutSegs"] - c0["Tcp.OutSegs"]
    ctx.note(f"bulk stream: {segs} segments out, {rel} released at send")
    check(segs >= 1000, f"bulk stream: only {segs} segments out")
    check(rel < 0.01 * segs, f"bulk stream: {rel} of {segs} segments released at send")


def kick_counts(g, run) -> dict:
    """The TX queues' kick counters summed over the queues, changed by run()."""
    names = ("timer_flushes", "waiting_kicks", "window_kicks", "batch_kicks")
    st0 = net.ethtool_stats(g)
    run()
    st1 = net.ethtool_stats(g)
    return {k: sum(st1[n] - st0.get(n, 0) for n in st1 if n.endswith("_" + k))
            for k in names}


@suite.test("tx_window_limited", MAIN, "main")
def t_tx_window_limited(ctx: Ctx):
    """A TCP sender bounded by small fixed windows is not left waiting on
    its held batches' flush timer (policy/kick.h): iperf3 from the guest
    with -w 128K at both ends, 3 s.  With a window's worth out and held,
    TCP keeps its next segment back until an acknowledgment, so such a
    batch goes out as its sender waits (window_kicks grows) and the timer
    flushes at most one batch a second; main's module before the rule for
    senders that keep a segment back (9390841) left it 13 in 3 s on 6.1
    (5-14 a second in the matrix on 7.2).  The stock driver only carries
    the traffic."""
    g = ctx.g
    seconds = 3
    got = {}
    c = kick_counts(g, lambda: got.update(net.iperf(g, "tx", seconds=seconds,
                                                    extra="-w 128K")))
    ctx.note(f"-w 128K: {got['bps'] / 1e6:.0f} Mbit/s, {c}")
    if ctx.driver != "ours":
        return
    check(c["window_kicks"] > 0, f"no batch of a window-limited sender went out as it waited ({c})")
    check(c["timer_flushes"] <= seconds,
          f"batches of a window-limited sender waited for their flush timer: {c} in {seconds} s")


@suite.test("tcp_waiting_sender", MAIN, "main")
def t_tcp_waiting_sender(ctx: Ctx):
    """A held batch that holds all its TCP socket has unacknowledged goes
    out at once when the sender would rather it went (policy/kick.h): the
    socket can send nothing more until it does (autocorking, Nagle's
    algorithm, TCP Small Queues, a full congestion window).  Such a sender
    has TCP_NODELAY, or its task sleeps between its writes (a publisher); a
    stream that leaves Nagle on and writes without sleeping keeps its
    batches.  3 s of each from the guest: an iperf3 stream with -N
    (TCP_NODELAY) and a publisher of 1400 B messages at 3000/s with Nagle
    on (vnet-load client -N) have batches sent by that rule
    (waiting_kicks), and fewer of their batches run to the timer than go
    by the rule (on 6.1, in CI beside other work, the stream 0-14% of
    them; the publisher 8-44% until the rule watched the batch's first
    segment and allowed one unacknowledged segment before it, 0-5% in 3
    quiet runs since: docs/results/2026-12-05-ab-watch-first-6.1); a
    default iperf3 stream has more batches end by the timer or by the
    rules for a sender whose windows leave it no room (window_kicks: on
    5.10 and 7.2, 4 vCPUs, nearly all of them since those rules) than by
    the eager rule, which an eager rule for every sender (ab-waiting-all)
    would fail.  Without the rule (main at 483574e) the -N stream's
    batches ran to the timer like the other's (239 timer flushes against
    203 batches notified at their target), and a publisher whose socket
    waited on one lost 4-8 ms (docs/results/2026-12-05-pub-tail-openers-6.1);
    with it for TCP_NODELAY only (7428793) the Nagle-on publisher at
    3000/s had 60-72 batches a 2 s window run to the timer and a p99 of
    9-10 ms (docs/results/2026-12-05-pubn-6.1).  The publisher again with
    tx-usecs-irq 0 (the stock reclaim), first and on a freshly loaded
    module: the same checks (the driver before 9dd6ab3 fails them there:
    77 timer flushes, no waiting kick).  Since a socket whose batch
    yielded too little is spared for a while (policy/kick.h), the
    publishers have 0-21 waiting kicks in 3 s instead of about 390 (none
    held at all in one of four runs on 7.2), so for them the check is that
    fewer batches ran to the timer than went for the sender, or none."""
    g = ctx.g
    exe = build_guest_tool(GUEST_TOOLS / "vnet-load.c")
    check(exe is not None, "vnet-load could not be built on the host")

    def publisher() -> dict:
        sink = pub_sink(g, exe, 1400, "vnet-load-sink-waiting")
        try:
            return kick_counts(g, lambda: g.run_ok(
                f"/vnet/vnet-load client -c {g.nics[0].host_ip} -p {PUB_SINK_PORT} "
                f"-n 1 -s 1400 -r 3000 -d 3 -N", timeout=60))
        finally:
            sink.stop()

    # The stock reclaim (tx-usecs-irq 0) keeps the rule: until 2026-12-06
    # it did not learn which sockets are paced there, and the publisher's
    # batches ran to the timer (docs/results/2026-12-06-pubn-reclaim-off-6.1).
    # First, on a freshly loaded module: a socket at the address of one
    # the senders table remembers from earlier traffic would count as
    # paced from that entry, and the check would pass on that old driver.
    from .coalescing import coalesce, set_coal  # imports this module
    g.run_ok("vnet unload && vnet load && vnet nicup", timeout=90)
    g.refresh_nics()
    ifn = net.ifname(g)
    irq_usecs = coalesce(g, ifn).get("tx-usecs-irq")
    check(irq_usecs is not None, "ethtool -c shows no tx-usecs-irq")
    set_coal(g, ifn, "tx-usecs-irq 0")
    try:
        pub_stock = publisher()
    finally:
        set_coal(g, ifn, f"tx-usecs-irq {irq_usecs}")
    nodelay = kick_counts(g, lambda: net.iperf(g, "tx", seconds=3, extra="-N"))
    nagle = kick_counts(g, lambda: net.iperf(g, "tx", seconds=3))
    pub = publisher()
    ctx.note(f"TCP_NODELAY stream: {nodelay}; Nagle-on publisher: {pub}, with "
             f"tx-usecs-irq 0: {pub_stock}; Nagle-on stream: {nagle}")
    check(nodelay["waiting_kicks"] > 0,
          f"TCP_NODELAY stream: no batch went out for its waiting sender ({nodelay})")
    # A publisher spared since its earlier batches (above) may have none
    # held in 3 s: then none ran to the timer either.
    for what, c in (("TCP_NODELAY stream", nodelay), ("Nagle-on publisher", pub),
                    ("Nagle-on publisher, tx-usecs-irq 0", pub_stock)):
        check(c["timer_flushes"] == 0 or c["timer_flushes"] < c["waiting_kicks"],
              f"{what}: as many batches ran to the flush timer as went for it ({c})")
    check(nagle["timer_flushes"] + nagle["window_kicks"] > nagle["waiting_kicks"],
          f"Nagle-on stream: fewer batches ran to their timer or went for its windows than "
          f"went for an eager sender ({nagle})")


def sockets_used(g, netns: str = "") -> int:
    """/proc/net/sockstat's "sockets: used": sockets not yet freed (a socket
    counts until its last packet has given its memory back), of the guest's
    own network namespace or of @netns (counted per namespace)."""
    run = f"{IP} netns exec {netns} " if netns else ""
    m = re.search(r"^sockets: used (\d+)", g.run_ok(f"{run}cat /proc/net/sockstat"), re.M)
    check(m is not None, "no 'sockets: used' line in /proc/net/sockstat")
    return int(m.group(1))


@suite.test("netem", MAIN, "main", timeout=300)
def t_netem(ctx: Ctx):
    """A qdisc that takes packets over from their sockets: netem (1 ms delay,
    1% loss) on the guest's NIC, under TCP request/response both ways (the
    guest's sockperf ping-pong against the namespace, 256 B; the namespace's
    vnet-load client against the guest's server, 16 KiB answers) and TCP
    bulk both ways.  netem gives each packet's memory back to its socket at
    enqueue and keeps a reference to the socket instead; the last segment
    of an answer must not give back that memory a second time.  The
    runner's kernel log check fails the test on any refcount, WARN or BUG
    line (until 2026-12: "refcount_t: underflow; use-after-free" within
    seconds, then "saturated; leaking memory"), and every socket the
    traffic opened must be freed again afterwards ("sockets: used" back to
    its start).  Ours: answers' memory went back at send under netem too
    (released_at_send grew)."""
    g = ctx.g
    ifn = net.ifname(g)
    exe = build_guest_tool(GUEST_TOOLS / "vnet-load.c")
    check(exe is not None, "vnet-load could not be built on the host")
    released = [n for n in net.ethtool_stat_names(g) if n.endswith("_released_at_send")]
    used0 = sockets_used(g)
    st0 = net.ethtool_stats(g)
    g.run_ok("vnet modprobe sch_netem")
    g.run_ok(f"/usr/sbin/tc qdisc replace dev {ifn} root netem delay 1ms loss 1%")
    g.run_ok(f"/vnet/vnet-load server -p {AUTOCORK_PORT} >/dev/null 2>&1 & sleep 0.3")
    try:
        pp = net.sockperf_pingpong(g, seconds=4, tcp=True, msg_size=256)
        cp = g.host([str(exe), "client", "-c", g.nics[0].guest_ip, "-p", str(AUTOCORK_PORT),
                     "-n", "2", "-s", "16384", "-d", "3"], timeout=60)
        m = LOAD_END.search(cp.stdout)
        check(m is not None, f"vnet-load client said: {cp.stdout[-800:]}{cp.stderr[-800:]}")
        tx, rx = net.tcp_both(g, seconds=3)
    finally:
        g.run("kill $(pidof vnet-load); while pidof vnet-load >/dev/null; do sleep 0.1; done",
              timeout=30)
        g.run(f"/usr/sbin/tc qdisc del dev {ifn} root")
    st1 = net.ethtool_stats(g)
    rel = grew(st0, st1, released)
    freed = poll(lambda: sockets_used(g) <= used0, timeout=30)
    check(freed, f"sockets not freed: {sockets_used(g)} in use 30 s after the traffic, "
                f"{used0} before it:\n" + g.run("cat /proc/net/sockstat; ss -tuanpe").out[-2500:])
    if released:
        check(rel > 0, "no answer's memory went back at send under netem: the path under "
                       "test did not run")
    ctx.note(f"under netem: ping-pong {pp.get('received', '?')} answers, 16 KiB closed loop "
             f"{m.group(2)} answers, bulk tx {tx['bps'] / 1e6:.0f} / rx {rx['bps'] / 1e6:.0f} "
             f"Mbit/s, {rel} released at send; sockets in use {used0} -> {sockets_used(g)}")


ABORT_PORT = 7160


@suite.test("closed_in_qdisc", MAIN, "main", timeout=300)
def t_closed_in_qdisc(ctx: Ctx):
    """TCP sockets reset while their segments still wait in a qdisc: tbf at
    20 Mbit/s on the guest's NIC, and 1500 connections from the guest to
    the namespace one after another, each writing up to 64 KiB and reset at
    once (vnet-load abort: SO_LINGER 0).  A segment in a qdisc holds its
    socket's write memory but no reference to the socket, which is freed
    (its reference count at zero) while the segment waits, and reaches the
    driver so.  Ours with kicks held (adaptive-tx off, tx-frames 32,
    tx-usecs 500): a held batch's first TCP segment is watched for the
    waiting rule, which took a socket reference; on such a socket that
    revived a socket being freed ("refcount_t: addition on 0;
    use-after-free" in vnet_start_xmit, then "underflow", first seen in
    faults.mtu in CI on 2026-12-06).  The runner's kernel log check fails
    the test on them; every socket is freed afterwards ("sockets: used"
    back to its start) and TCP traffic flows again."""
    g = ctx.g
    ifn = net.ifname(g)
    exe = build_guest_tool(GUEST_TOOLS / "vnet-load.c")
    check(exe is not None, "vnet-load could not be built on the host")
    from .coalescing import kicks_held  # imports this module
    ours = ctx.driver == "ours"
    used0 = sockets_used(g)
    server = g.host_bg([str(exe), "server", "-p", str(ABORT_PORT)], name="vnet-load-abort")
    g.run_ok("vnet modprobe sch_tbf")
    g.run_ok(f"/usr/sbin/tc qdisc replace dev {ifn} root tbf rate 20mbit burst 32kb "
             f"latency 400ms")
    try:
        time.sleep(0.3)
        with kicks_held(g, ifn) if ours else contextlib.nullcontext():
            st0 = net.ethtool_stats(g)
            out = g.run_ok(f"/vnet/vnet-load abort -c {g.nics[0].host_ip} -p {ABORT_PORT} "
                           f"-n 1500 -s 65536", timeout=180)
            st1 = net.ethtool_stats(g)
    finally:
        g.run(f"/usr/sbin/tc qdisc del dev {ifn} root")
        server.stop()
    m = re.search(r"^ABORTED (\d+) (\d+)", out, re.M)
    check(m is not None, f"vnet-load abort said: {out[-800:]}")
    held = sum(st1[n] - st0.get(n, 0) for n in st1 if n.endswith("_kicks_held"))
    freed = poll(lambda: sockets_used(g) <= used0, timeout=30)
    check(freed, f"sockets not freed: {sockets_used(g)} in use 30 s after the resets, "
                f"{used0} before them")
    tx, _ = net.tcp_both(g, seconds=2)
    ctx.note(f"{m.group(1)} connections reset with {int(m.group(2)) >> 20} MiB written, "
             f"{held} kicks held; sockets in use {used0} -> {sockets_used(g)}; "
             f"then tx {tx['bps'] / 1e6:.0f} Mbit/s")
    if ours:
        check(held > 0, "no kick was held: the path under test did not run")


TUNNEL_IP = "10.79.0"  # the vxlan's subnet: .1 the namespace's end, .2 the guest's


@suite.test("tunnels", MAIN, "main", timeout=300)
def t_tunnels(ctx: Ctx):
    """TCP through a VXLAN tunnel over the NIC, as guests carry overlay
    networks (the device offers no tunnel GSO here, so the stack segments
    and checksums the inner packets; tunnel.vxlan_tx covers a device that
    does, sending only).  iperf3 2 s each way with the boot's settings,
    and 2 s from the guest with kicks held (ours: adaptive-tx off,
    tx-frames 32, tx-usecs 500: the kick policy reads a segment's TCP
    header and socket through the encapsulation); at least 1 MiB each
    time, and the runner's kernel log check fails the test on any
    refcount/WARN/BUG line.  (GRE and IPIP too would be worth it, but the
    CI host's kernel has no GRE or IPIP for the namespace's end.)"""
    g = ctx.g
    n = g.nics[0]
    ifn = net.ifname(g)
    from .coalescing import kicks_held  # imports this module
    link = "vxlan id 4343 local {0} remote {1} dstport 4790 dev {2}"
    g.host(["sh", "-c", f"ip link del tn-vx 2>/dev/null; "
                        f"ip link add tn-vx type {link.format(n.host_ip, n.guest_ip, n.tap)} && "
                        f"ip addr add {TUNNEL_IP}.1/24 dev tn-vx && ip link set tn-vx up"])
    try:
        g.run_ok(f"vnet modprobe vxlan && "
                 f"{IP} link add tn-vx type {link.format(n.guest_ip, n.host_ip, ifn)} && "
                 f"{IP} addr add {TUNNEL_IP}.2/24 dev tn-vx && {IP} link set tn-vx up")
        r = g.run(f"ping -c 3 -W 2 {TUNNEL_IP}.1", timeout=30)
        check(r.rc == 0, f"no ping through the tunnel:\n{r.out}{r.err}")
        got = {d: net.iperf(g, d, seconds=2, min_bytes=1 << 20, server_ip=f"{TUNNEL_IP}.1")
               for d in ("tx", "rx")}
        if ctx.driver == "ours":
            with kicks_held(g, ifn):
                got["tx, kicks held"] = net.iperf(g, "tx", seconds=2, min_bytes=1 << 20,
                                                  server_ip=f"{TUNNEL_IP}.1")
    finally:
        g.run(f"{IP} link del tn-vx")
        g.host(["sh", "-c", "ip link del tn-vx 2>/dev/null; true"])
    ctx.note("Mbit/s through the VXLAN tunnel: " +
             ", ".join(f"{w} {r['bps'] / 1e6:.0f}" for w, r in got.items()))


CT_NS = "ct"
CT_IP = "10.77.0.3"  # the container's address, in the NIC's subnet


@suite.test("bridge", MAIN, "main", timeout=300)
def t_bridge(ctx: Ctx):
    """A container behind a Linux bridge, as Docker's, LXC's or libvirt's
    bridged networking sets it up: the NIC becomes a port of bridge br0
    (which turns its promiscuous mode on: the device must now deliver
    frames for other MAC addresses), the guest's address moves to br0, and
    a network namespace sits on the bridge behind a veth pair with an
    address of its own in the NIC's subnet.  From the namespace: ping,
    TCP bulk both ways and UDP against the host's namespace, a TCP
    ping-pong, and the host's vnet-load client against a server in the
    namespace (16 KiB answers).  Its sockets' packets reach the driver
    through veth and the bridge still owned by them, so the transmit path
    reads and releases the memory of sockets of another namespace.  The
    runner's log check fails the test on any WARN, refcount or BUG line;
    the namespace's sockets must all be freed once its programs ended,
    and after the bridge is taken down the NIC is back out of promiscuous
    mode and carries the guest's own traffic again."""
    g = ctx.g
    ifn = net.ifname(g)
    n = g.nics[0]
    exe = build_guest_tool(GUEST_TOOLS / "vnet-load.c")
    check(exe is not None, "vnet-load could not be built on the host")
    released = [x for x in net.ethtool_stat_names(g) if x.endswith("_released_at_send")]
    st0 = net.ethtool_stats(g)
    ct = f"{IP} netns exec {CT_NS}"
    g.run_ok("vnet modprobe bridge && vnet modprobe veth")
    g.run_ok(f"{IP} link add br0 type bridge && {IP} link set br0 up && "
             f"{IP} addr flush dev {ifn} && {IP} link set {ifn} master br0 && "
             f"{IP} addr add {n.guest_ip}/{n.prefix} dev br0")
    try:
        promisc = int(g.run_ok(f"cat /sys/class/net/{ifn}/flags"), 16) & 0x100
        check(promisc != 0, f"{ifn} is not promiscuous as a bridge port")
        g.run_ok(f"{IP} netns add {CT_NS} && "
                 f"{IP} link add vh0 type veth peer name vc0 && "
                 f"{IP} link set vc0 netns {CT_NS} && {IP} link set vh0 master br0 up && "
                 f"{ct} {IP} link set lo up && {ct} {IP} link set vc0 up && "
                 f"{ct} {IP} addr add {CT_IP}/{n.prefix} dev vc0")
        used0 = sockets_used(g, CT_NS)
        r = g.run(f"{ct} ping -c 3 -W 5 {n.host_ip}", timeout=30)
        check(r.rc == 0, f"the container cannot ping the host through the bridge:\n{r.out}{r.err}")
        res = {}
        for what, direction, udp in (("tx", "tx", False), ("rx", "rx", False),
                                     ("udp", "tx", True)):
            net.host_iperf_server(g)
            r = g.run(f"{ct} " + net.iperf_cmd(n.host_ip, direction, udp), timeout=60)
            summary = net.parse_iperf_text(r.out)
            check(r.rc == 0 and "receiver" in summary and summary["receiver"]["bytes"] > 0,
                  f"iperf3 {what} from the container failed (rc={r.rc}):\n"
                  f"{r.out[-1200:]}{r.err[-800:]}")
            res[what] = summary["receiver"]["bps"] / 1e6
        net.host_sockperf_server(g, tcp=True)
        r = g.run(f"{ct} sockperf ping-pong -i {n.host_ip} -p {net.SOCKPERF_PORT} -t 3 "
                  f"-m 256 --tcp", timeout=40)
        pm = net.SOCKPERF_TOTAL.search(r.out + r.err)
        check(r.rc == 0 and pm is not None and int(pm.group(2)) > 0,
              f"sockperf ping-pong from the container failed (rc={r.rc}):\n"
              f"{r.out[-1200:]}{r.err[-800:]}")
        g.run_ok(f"{ct} /vnet/vnet-load server -p {AUTOCORK_PORT} >/dev/null 2>&1 & sleep 0.3")
        cp = g.host([str(exe), "client", "-c", CT_IP, "-p", str(AUTOCORK_PORT),
                     "-n", "2", "-s", "16384", "-d", "3"], timeout=60)
        m = LOAD_END.search(cp.stdout)
        check(m is not None and int(m.group(2)) > 0,
              f"vnet-load client against the container said: {cp.stdout[-800:]}"
              f"{cp.stderr[-800:]}")
        g.run("kill $(pidof vnet-load); while pidof vnet-load >/dev/null; do sleep 0.1; done",
              timeout=30)
        freed = poll(lambda: sockets_used(g, CT_NS) <= used0, timeout=30)
        check(freed, f"the container's sockets not freed: {sockets_used(g, CT_NS)} in use 30 s "
                     f"after its traffic, {used0} before it:\n"
                     + g.run(f"{ct} cat /proc/net/sockstat; {ct} ss -tuanpe").out[-2500:])
    finally:
        g.run("kill $(pidof vnet-load) 2>/dev/null", timeout=30)
        g.run(f"{IP} netns del {CT_NS}; {IP} link del vh0; {IP} link set {ifn} nomaster; "
              f"{IP} link del br0; {IP} addr add {n.guest_ip}/{n.prefix} dev {ifn}", timeout=30)
    promisc = int(g.run_ok(f"cat /sys/class/net/{ifn}/flags"), 16) & 0x100
    check(promisc == 0, f"{ifn} still promiscuous after leaving the bridge")
    net.ping(g)
    st1 = net.ethtool_stats(g)
    rel = sum(st1[x] - st0[x] for x in released)
    if released:
        check(rel > 0, "no segment of the container's answers was released at send: the "
                       "path under test did not run")
    ctx.note(f"container behind br0: tcp tx {res['tx']:.0f} rx {res['rx']:.0f} Mbit/s, "
             f"udp {res['udp']:.0f} Mbit/s, ping-pong {pm.group(2)} answers, 16 KiB closed "
             f"loop {m.group(2)} answers, {rel} released at send; container sockets back "
             f"to {used0}")


@suite.test("channels", MAIN, "main")
def t_channels(ctx: Ctx):
    """ethtool -L combined N, several times during an iperf3 transfer."""
    g = ctx.g
    ifn = net.ifname(g)
    nq = g.nics[0].queues
    net.host_iperf_server(g)
    bg = g.run_bg(net.iperf_cmd(g.nics[0].host_ip, "tx", seconds=10))
    seq = [1, 3, 2, nq, 1, nq]
    for c in seq:
        time.sleep(1.0)
        g.run_ok(f"ethtool -L {ifn} combined {c}")
        cur = net.channels(g).get("combined")
        check(cur == c, f"ethtool -l reports combined {cur} after setting {c}")
    res = bg.result(timeout=60)
    summary = net.parse_iperf_text(res.out)
    check(res.rc == 0 and "receiver" in summary,
          f"iperf3 during channel changes failed (rc={res.rc}): {res.out[-800:]}{res.err[-800:]}")
    check(summary["receiver"]["bytes"] > 0, "no data received during channel changes")
    net.ping(g, count=2)
    net.tcp_both(g, seconds=2)
    ctx.note(f"combined {'->'.join(map(str, seq))}, "
             f"{summary['receiver']['bps'] / 1e6:.0f} Mbit/s during changes")


def _rx_napi_view(g, nq: int) -> tuple[dict[int, int], dict[int, dict]]:
    """{rx queue: its NAPI id} for the active queues, and the napi-get dump."""
    queues = net.nl_queues(g) or {}
    ids = {q: queues.get(("rx", q), {}).get("napi-id") for q in range(nq)}
    check(all(ids.values()), f"queue-get: RX queues without a NAPI id: {queues}")
    return ids, net.nl_napis(g) or {}


@suite.test("napi_config", MAIN, "main")
def t_napi_config(ctx: Ctx):
    """Netlink NAPI view (6.9+): each RX queue's NAPI shows the IRQ of its
    virtqueue (/proc/interrupts); with per-NAPI configuration (napi-set,
    6.13+) a queue keeps its NAPI id and its defer-hard-irqs and
    gro-flush-timeout across ethtool -L down and up, threaded on and off,
    ifdown/up and suspend/resume (IRQs linked again after it)."""
    g = ctx.g
    ifn = net.ifname(g)
    nq = net.channels(g).get("combined", 1)
    if net.nl_napis(g) is None:
        ctx.note("skipped: this kernel has no netlink napi-get (6.9+)")
        return
    ids, napis = _rx_napi_view(g, nq)
    missing = [i for i in ids.values() if i not in napis]
    check(not missing, f"napi-get does not list the queues' NAPIs {missing}: {napis}")
    def check_irqs(napis: dict, after: str) -> str:
        irqs = net.queue_irqs(g)
        with_irq = {q: napis[i].get("irq") for q, i in ids.items()}
        if ctx.driver != "ours" and not any(with_irq.values()):
            return "no irq (in-tree driver)"
        for q, irq in with_irq.items():
            check(irq is not None,
                  f"{after}: NAPI {ids[q]} of rx queue {q} has no irq: {napis[ids[q]]}")
            check(irqs.get(("rx", q)) == irq,
                  f"{after}: NAPI {ids[q]} of rx queue {q} says irq {irq}, /proc/interrupts "
                  f"gives input.{q} irq {irqs.get(('rx', q))}")
        return "irq of input.N"

    irq_note = check_irqs(napis, "at boot")
    settings = {q: {"defer-hard-irqs": 2 + q, "gro-flush-timeout": 20000 + 1000 * q}
                for q in range(nq)}
    for q, i in ids.items():
        if not net.nl_napi_set(g, i, **settings[q]):
            ctx.note(f"{irq_note}; persistence skipped: this kernel has no napi-set (6.13+)")
            return

    def same(after: str) -> None:
        now, napis = _rx_napi_view(g, nq)
        check(now == ids, f"NAPI ids after {after}: {now}, before: {ids}")
        for q, i in ids.items():
            got = {k: napis.get(i, {}).get(k) for k in settings[q]}
            check(got == settings[q], f"NAPI {i} (rx {q}) after {after}: {got}, set {settings[q]}")

    try:
        same("napi-set")
        g.run_ok(f"ethtool -L {ifn} combined 1")
        g.run_ok(f"ethtool -L {ifn} combined {nq}")
        net.ping(g, count=2)
        same(f"ethtool -L combined 1 then {nq}")
        threaded = f"/sys/class/net/{ifn}/threaded"
        g.run_ok(f"echo 1 > {threaded}; echo 0 > {threaded}")
        same("threaded 1 then 0")
        g.run_ok(f"ip link set dev {ifn} down; ip link set dev {ifn} up")
        net.ping(g, count=2)
        same("ifdown/up")
        r = g.run("echo devices >/sys/power/pm_test && echo mem >/sys/power/state; rc=$?; "
                  "echo none >/sys/power/pm_test; exit $rc", timeout=120)
        check(r.rc == 0, f"suspend/resume failed (rc={r.rc}): {r.out}{r.err}")
        net.ping(g, count=2)
        same("suspend/resume")
        check_irqs(net.nl_napis(g) or {}, "after suspend/resume")
    finally:
        g.run(f"ethtool -L {ifn} combined {nq}")
        for i in (net.nl_napis(g) or {}):
            net.nl_napi_set(g, i, defer_hard_irqs=0, gro_flush_timeout=0)
    ctx.note(f"{nq} RX NAPIs: {irq_note}, ids {sorted(ids.values())} and settings kept")


def _rings(g, ifn: str) -> dict[str, int]:
    out = g.run_ok(f"ethtool -g {ifn}")
    mx, _, cur = out.partition("Current hardware settings:")
    res = {}
    for tag, text in (("max", mx), ("cur", cur)):
        for k in ("RX", "TX"):
            m = re.search(rf"^{k}:\s*(\d+)", text, re.M)
            res[f"{tag}_{k.lower()}"] = int(m.group(1)) if m else -1
    return res


@suite.test("ring_resize", MAIN, "main", smoke=True)
def t_ring_resize(ctx: Ctx):
    """ethtool -G during iperf3 both ways (sizes read back with -g), invalid
    sizes refused, and a resize while the refill work holds a pair (vnet_fault);
    before 6.0 (no virtqueue_resize) the documented EOPNOTSUPP instead."""
    g = ctx.g
    ifn = net.ifname(g)
    r0 = _rings(g, ifn)
    mx_rx, mx_tx = r0["max_rx"], r0["max_tx"]
    half_rx, half_tx = mx_rx // 2, mx_tx // 2
    mark = g.mark()
    r = g.run(f"ethtool -G {ifn} rx {half_rx} tx {half_tx}")
    if ctx.driver == "ours" and r.rc != 0:
        msg = "ring resize needs kernel 6.0 or later (virtqueue_resize)"
        said = r.out + r.err + g.new_log(mark)
        check(msg in said and "not supported" in said,
              f"ethtool -G failed (rc={r.rc}) without the documented reason: {said[-1500:]}")
        check(_rings(g, ifn) == r0, f"rings changed by a refused -G: {_rings(g, ifn)}")
        net.ping(g, count=2)
        ctx.note("EOPNOTSUPP: " + msg)
        return
    check(r.rc == 0, f"ethtool -G rx {half_rx} tx {half_tx} failed: {r.out}{r.err}")
    check(_rings(g, ifn)["cur_rx"] == half_rx, f"-g after -G: {_rings(g, ifn)}")

    # resizes during traffic both ways
    port_rx = net.IPERF_PORT + 1
    net.host_iperf_server(g)
    net.host_iperf_server(g, port_rx)
    h = g.nics[0].host_ip
    bgs = [g.run_bg(net.iperf_cmd(h, "tx", seconds=6)),
           g.run_bg(net.iperf_cmd(h, "rx", seconds=6, port=port_rx))]
    sizes = [(mx_rx // 4, mx_tx), (mx_rx, mx_tx // 4), (half_rx, half_tx), (mx_rx, mx_tx)]
    for rx, tx in sizes:
        time.sleep(0.8)
        g.run_ok(f"ethtool -G {ifn} rx {rx} tx {tx}")
        cur = _rings(g, ifn)
        check((cur["cur_rx"], cur["cur_tx"]) == (rx, tx), f"-g after -G rx {rx} tx {tx}: {cur}")
    for b in bgs:
        res = b.result(timeout=60)
        summary = net.parse_iperf_text(res.out)
        check(res.rc == 0 and summary.get("receiver", {}).get("bytes", 0) > 0,
              f"iperf3 during resizes failed (rc={res.rc}): {res.out[-800:]}{res.err[-800:]}")

    if ctx.driver == "ours":
        for bad, why in ((f"rx {mx_rx * 2}", "above the maximum"), ("rx 16", "below 32"),
                         ("rx 48", "not a power of two")):
            r = g.run(f"ethtool -G {ifn} {bad}")
            check(r.rc != 0, f"ethtool -G {bad} ({why}) was accepted")
        check(_rings(g, ifn) == r0, f"rings changed by refused requests: {_rings(g, ifn)}")

    # The deferred refill disables each pair's NAPI while it fills the ring, so
    # it must not run while -G has pairs stopped: on 6.15+, where napi_disable()
    # takes the instance lock, that deadlocked. ethtool -L schedules a refill;
    # the vnet_fault test module holds that refill for 2 s inside its first
    # fill (pair 0's NAPI off), and -G starts meanwhile on another CPU.
    nq = g.nics[0].queues
    ncpu = int(g.run_ok("nproc").strip())
    cpu_l, cpu_g = (1, 2) if ncpu > 2 else (0, ncpu - 1)
    raced = False
    if ctx.driver == "ours":
        ko = put_kmod(ctx, "vnet_fault")
        p = "/sys/module/vnet_fault/parameters/injected"
        r = g.run(f"insmod {ko} func=vnet_rx_fill caller=vnet_refill_work "
                  f"delay_ms=2000 times=1 && ethtool -L {ifn} combined 1 && "
                  f"taskset -c {cpu_l} ethtool -L {ifn} combined {nq} && "
                  f"i=0; while [ $(cat {p}) = 0 ] && [ $i -lt 100 ]; do sleep 0.01; "
                  f"i=$((i + 1)); done; n=$(cat {p}); "
                  f"taskset -c {cpu_g} ethtool -G {ifn} rx {half_rx} tx {half_tx}; rc=$?; "
                  f"rmmod vnet_fault; echo held $n; exit $rc", timeout=40)
        check(r.rc == 0, f"ethtool -G while the refill work holds a pair failed (rc={r.rc}"
                         f"{', hung' if r.timed_out else ''}): {r.out}{r.err}")
        raced = "held 1" in r.out
        check(raced, f"the refill was not held: {r.out}")
    if raced:
        g.run_ok(f"ethtool -G {ifn} rx {mx_rx} tx {mx_tx}")
    check(_rings(g, ifn) == r0, f"rings at the end: {_rings(g, ifn)}")
    net.ping(g, count=2)
    ctx.note(f"max rx {mx_rx} tx {mx_tx}; {len(sizes) + 1} resizes under traffic"
             + ("; -G while the refill work held pair 0" if raced else ""))


@suite.test("refill_order", MAIN, "main", smoke=True)
def t_refill_order(ctx: Ctx):
    """Deferred refill only once every pair's NAPI is on: at open and at restore
    the first ring's fill fails (vnet_fault: a refill is deferred) and a later
    one is held 1.5 s with its pair's NAPI still off (vnet_fault2); a refill
    run then would meet that pair (deadlock on 6.15+ before the fix)."""
    g = ctx.g
    if ctx.driver != "ours":
        ctx.note("ours only (the faults are injected into our functions)")
        return
    ifn = net.ifname(g)
    f1, f2 = put_kmod(ctx, "vnet_fault"), put_kmod(ctx, "vnet_fault2")
    callers = "vnet_pairs_start,vnet_open,vnet_restore"
    arm = (f"insmod {f1} func=vnet_rx_fill caller={callers} error=0 times=1 && "
           f"insmod {f2} func=vnet_rx_fill caller={callers} skip=1 delay_ms=1500 times=1")
    report = ("echo injected $(cat /sys/module/vnet_fault/parameters/injected "
              "/sys/module/vnet_fault2/parameters/injected); rmmod vnet_fault vnet_fault2")
    steps = (("ip link down/up", f"{IP} link set {ifn} down && {IP} link set {ifn} up"),
             ("freeze/restore", "echo devices >/sys/power/pm_test && "
                                "echo mem >/sys/power/state; rc=$?; "
                                "echo none >/sys/power/pm_test; [ $rc = 0 ]"))
    for what, cmd in steps:
        r = g.run(f"{arm} && {cmd}; rc=$?; {report}; exit $rc", timeout=60)
        check(r.rc == 0, f"{what} with a deferred refill failed (rc={r.rc}"
                         f"{', hung' if r.timed_out else ''}): {r.out}{r.err}")
        check("injected 1 1" in r.out, f"{what}: faults not injected as planned: {r.out}")
        check(poll(lambda: g.run(f"cat /sys/class/net/{ifn}/carrier").out.strip() == "1", 10),
              f"{what}: no carrier")
        net.ping(g, count=2)
    net.iperf(g, "rx", seconds=2)
    ctx.note("open and restore: a refill deferred while a pair was still off waited")


@suite.test("threaded_switch_down", MAIN, "main", timeout=300)
def t_threaded_switch_down(ctx: Ctx):
    """auto_threaded's switch only while the pairs are up.  vnet_fault makes
    every window a livelock (vnet_thr_judge), so under a ping the driver
    turns threaded NAPI on for a trial and off again; once it is on,
    vnet_fault2 holds the next switch 1.5 s before it takes RTNL, and the
    interface goes down meanwhile.  From 6.17, turning threaded mode off with the NAPI
    instances disabled never returns (RTNL held for ever: ip link up hung on
    7.2 before the fix).  Now the switch waits for the open, which makes
    it; every command returns, the setting ends where the driver wants it."""
    g = ctx.g
    if ctx.driver != "ours":
        ctx.note("ours only (auto_threaded is our option)")
        return
    ifn = net.ifname(g)
    thr = f"/sys/class/net/{ifn}/threaded"
    if g.run(f"test -e {thr}").rc != 0:
        ctx.note("skipped: no threaded NAPI on this kernel (5.12+)")
        return
    f1, f2 = put_kmod(ctx, "vnet_fault"), put_kmod(ctx, "vnet_fault2")
    p2 = "/sys/module/vnet_fault2/parameters/injected"
    peer = g.nics[0].host_ip
    downs_on = 0
    hung = False
    try:
        r = g.run("vnet reload auto_threaded=1", timeout=120)
        check(r.rc == 0, f"vnet reload auto_threaded=1 failed: {r.out}{r.err}")
        g.refresh_nics()
        ifn = net.ifname(g)
        thr = f"/sys/class/net/{ifn}/threaded"
        # VNET_THR_CANDIDATE is 1 (include/policy/threaded.h).
        g.run_ok(f"insmod {f1} func=vnet_thr_judge error=1 times=1000000")
        for attempt in range(4):
            # Once a trial turned threaded mode on, hold the next switch (the
            # one turning it off), go down while it waits, come up: all
            # within 30 s or RTNL is stuck.
            cmd = (f"ping -q -i 0.05 -w 20 {peer} >/dev/null 2>&1 & pid=$!; "
                   f"i=0; while [ $(cat {thr}) = 0 ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done; "
                   f"insmod {f2} func=rtnl_lock caller=vnet_thr_work delay_ms=1500 times=1 && "
                   f"i=0; while [ $(cat {p2}) = 0 ] && [ $i -lt 1500 ]; do sleep 0.01; i=$((i + 1)); done; "
                   f"t=$(cat {thr}); n=$(cat {p2}); {IP} link set {ifn} down; sleep 2.5; "
                   f"{IP} link set {ifn} up; rc=$?; kill $pid 2>/dev/null; wait; "
                   f"rmmod vnet_fault2; echo held $n threaded $t; exit $rc")
            r = g.run(cmd, timeout=40)
            hung = r.timed_out
            check(r.rc == 0 and not r.timed_out,
                  f"attempt {attempt + 1}: ip link down/up around a held threaded switch "
                  f"(rc={r.rc}{', hung: RTNL held' if r.timed_out else ''}): {r.out}{r.err}")
            m = re.search(r"held (\d+) threaded (\d+)", r.out)
            check(m is not None, f"no report: {r.out}")
            if m.group(1) == "1" and m.group(2) == "1":
                downs_on += 1
            check(poll(lambda: g.run(f"cat /sys/class/net/{ifn}/carrier").out.strip() == "1", 10),
                  f"attempt {attempt + 1}: no carrier")
            net.ping(g, count=2)
            if downs_on >= 2:
                break
        check(downs_on >= 1, "the switch off was never held across ifdown (the test did not "
                             "reach the case it is for)")
        injected = int(g.run_ok("cat /sys/module/vnet_fault/parameters/injected").strip())
        g.run_ok("rmmod vnet_fault")
        # No more forced verdicts: the trial in course ends, threaded goes off.
        ok = poll(lambda: (net.ping(g, count=3) or True) and
                  g.run(f"cat {thr}").out.strip() == "0", 30, 1.0)
        check(ok, f"threaded mode still {g.run(f'cat {thr}').out.strip()} 30 s after the forced verdicts")
        ctx.note(f"{downs_on} ifdown(s) with a held switch while threaded was on; "
                 f"{injected} windows judged by vnet_fault")
    finally:
        # With RTNL held for ever the guest cannot be put back (the harness
        # boots a new one for the next test).
        if not hung:
            g.run("rmmod vnet_fault2; rmmod vnet_fault")
            g.run(f"echo 0 > {thr}")
            g.run("vnet reload", timeout=120)
            g.refresh_nics()


def _modparams(g) -> dict[str, str]:
    names = ("napi_weight", "csum", "gso", "napi_tx")
    out = g.run_ok(" ".join(f"cat /sys/module/virtio_net/parameters/{n};" for n in names))
    return dict(zip(names, out.split()))


def _offload(g, ifn: str, name: str) -> str:
    m = re.search(rf"^{name}: (\w+)", g.run_ok(f"ethtool -k {ifn}"), re.M)
    return m.group(1) if m else "?"


@suite.test("modopts", MAIN, "main")
def t_modopts(ctx: Ctx):
    """The in-tree module options napi_weight, csum, gso, napi_tx take effect;
    invalid values load with the defaults and a warning naming option and value."""
    g = ctx.g

    def reload(opts: str) -> str:
        mark = g.mark()
        r = g.run(f"vnet reload {opts}", timeout=120)
        check(r.rc == 0, f"vnet reload {opts} failed (rc={r.rc}): {r.out}{r.err}")
        g.refresh_nics()
        return g.new_log(mark)

    try:
        reload("napi_weight=16 csum=1 gso=0 napi_tx=0")
        ifn = net.ifname(g)
        p = _modparams(g)
        check(p == {"napi_weight": "16", "csum": "Y", "gso": "N", "napi_tx": "N"},
              f"parameters read back as {p}")
        check(_offload(g, ifn, "tx-checksumming") == "on", "csum=1: tx-checksumming off")
        check(_offload(g, ifn, "tcp-segmentation-offload") == "off", "gso=0: TSO on")
        net.tcp_both(g, seconds=2)
        if ctx.driver == "ours":
            st = net.ethtool_stats(g)
            tx_polls = {k: v for k, v in st.items()
                        if re.fullmatch(r"tx(_queue_)?\d+_napi_polls", k)}
            check(tx_polls and not any(tx_polls.values()),
                  f"napi_tx=0 but TX NAPI polled: {tx_polls}")
            per_poll = {k: v for k, v in st.items()
                        if re.fullmatch(r"rx(_queue_)?\d+_packets_per_poll", k)}
            check(per_poll and max(per_poll.values()) <= 16,
                  f"napi_weight=16 but polls average more packets: {per_poll}")

        reload("csum=0")
        check(_offload(g, ifn, "tx-checksumming") == "off", "csum=0: tx-checksumming on")
        check(_offload(g, ifn, "tcp-segmentation-offload") == "off", "csum=0: TSO on")
        net.ping(g, count=2)

        if ctx.driver != "ours":
            ctx.note("invalid values not tried (the in-tree driver refuses them)")
            return
        bad = {"napi_weight": "1000", "csum": "maybe", "gso": "2x", "napi_tx": "sometimes"}
        log = reload(" ".join(f"{k}={v}" for k, v in bad.items()))
        p = _modparams(g)
        check(p == {"napi_weight": "64", "csum": "Y", "gso": "Y", "napi_tx": "Y"},
              f"invalid values: parameters read back as {p}, expected the defaults")
        for k, v in bad.items():
            check(re.search(rf"invalid value '{v}' for option {k}\b", log),
                  f"no warning naming {k}={v} in the kernel log:\n{log[-1500:]}")
        check(_offload(g, ifn, "tcp-segmentation-offload") == "on", "defaults: TSO off")
        net.ping(g, count=2)

        # our cap on the default number of pairs (the device offers 4)
        reload("max_queue_pairs=2")
        ch = net.channels(g)
        check(ch.get("combined") == 2, f"max_queue_pairs=2: ethtool -l combined {ch}")
        net.ping(g, count=2)
        ctx.note("napi_weight/csum/gso/napi_tx applied; 4 invalid values fell back with "
                 "warnings; max_queue_pairs=2 gave 2 of 4 pairs")
    finally:
        reload("")


@suite.test("reload", MAIN, "main", timeout=600)
def t_reload(ctx: Ctx):
    """10 rmmod/insmod cycles of virtio_net, each followed by ping."""
    g = ctx.g
    for i in range(10):
        r = g.run("vnet reload", timeout=120)
        check(r.rc == 0, f"cycle {i + 1}: vnet reload failed (rc={r.rc}):\n{r.out}{r.err}")
        g.refresh_nics()
        try:
            net.ping(g, count=1)
        except CheckFailed as e:
            raise CheckFailed(f"cycle {i + 1}: {e}") from None
    net.tcp_both(g, seconds=2)


@suite.test("freeze", MAIN, "main")
def t_freeze(ctx: Ctx):
    """Suspend/resume of all devices (pm_test=devices), then traffic."""
    g = ctx.g
    mark = g.mark()
    states = g.run_ok("cat /sys/power/state").split()
    state = "mem" if "mem" in states else "freeze"
    r = g.run(f"echo devices >/sys/power/pm_test && echo {state} >/sys/power/state; rc=$?; "
              f"echo none >/sys/power/pm_test; exit $rc", timeout=120)
    check(r.rc == 0, f"echo {state} >/sys/power/state failed (rc={r.rc}): {r.out}{r.err}")
    log = g.new_log(mark)
    check(re.search(r"PM: suspend (exit|entry)", log) is not None,
          "no 'PM: suspend' messages in the kernel log")
    net.ping(g, count=3)
    net.tcp_both(g, seconds=2)
    ctx.note(f"pm_test=devices, state {state}")

@suite.test("freeze_fail", MAIN, "main", timeout=400)
def t_freeze_fail(ctx: Ctx):
    """A restore that fails (virtqueue setup made to fail by the vnet_fault test
    module) leaves a state that rmmod and a later freeze/restore handle."""
    g = ctx.g
    if ctx.driver != "ours":
        ctx.note("ours only (the failure is injected into our restore)")
        return
    ko = put_kmod(ctx, "vnet_fault")
    suspend = ("echo devices >/sys/power/pm_test && echo mem >/sys/power/state; rc=$?; "
               "echo none >/sys/power/pm_test; exit $rc")

    def failed_restore(what: str) -> None:
        mark = g.mark()
        g.run_ok(f"insmod {ko} func=vnet_vqs_init times=1")
        g.run(suspend, timeout=120)  # the PM core reports the failure, not the write
        n = g.run_ok("cat /sys/module/vnet_fault/parameters/injected; rmmod vnet_fault").strip()
        check(n == "1", f"{what}: the failure was injected {n} times:\n{g.new_log(mark)[-1500:]}")

    # 1. the device whose restore failed is removed: rmmod must not hang
    failed_restore("before rmmod")
    r = g.run("rmmod virtio_net", timeout=60)
    check(r.rc == 0, f"rmmod after a failed restore failed (rc={r.rc}"
                     f"{', hung' if r.timed_out else ''}): {r.out}{r.err}")
    g.run_ok("vnet load && vnet nicup", timeout=120)
    g.refresh_nics()
    net.ping(g, count=2)
    # 2. a freeze/restore after a failed one brings the interface back
    failed_restore("before the second freeze")
    g.run_ok(suspend, timeout=120)
    net.ping(g, count=3)
    net.tcp_both(g, seconds=2)
    ctx.note("rmmod after a failed restore; a second freeze/restore recovered")



# --- MTU boot ----------------------------------------------------------------------
@suite.test("mtu9000", MTU, "mtu9000")
def t_mtu(ctx: Ctx):
    """host_mtu=9000: MTU 9000 on both ends, 9001 refused, jumbo frames pass unfragmented."""
    g = ctx.g
    n = g.nics[0]
    ifn = net.ifname(g)
    gm = g.run_ok(f"cat /sys/class/net/{ifn}/mtu").strip()
    hm = g.host(["cat", f"/sys/class/net/{n.tap}/mtu"]).stdout.strip()
    check(gm == "9000" and hm == "9000", f"MTU guest {gm}, tap {hm}; expected 9000")
    r = g.run(f"ip link set dev {ifn} mtu 9001")
    check(r.rc != 0, "ip link set mtu 9001 was accepted (max_mtu should be host_mtu)")
    gm = g.run_ok(f"cat /sys/class/net/{ifn}/mtu").strip()
    check(gm == "9000", f"MTU changed to {gm} by a refused request")
    gs, hs = net.snmp(g), net.snmp(g, "host")
    net.ping(g, count=3, size=8972)
    net.host_ping(g, count=3, size=8972)
    gs2, hs2 = net.snmp(g), net.snmp(g, "host")
    frag = {f"{w}.{k}": b[k] - a[k] for w, a, b in (("guest", gs, gs2), ("host", hs, hs2))
            for k in ("Ip.FragCreates", "Ip.ReasmReqds")}
    check(not any(frag.values()), f"9000-byte packets were fragmented: {frag}")
    check(gs2["Icmp.InEchoReps"] - gs["Icmp.InEchoReps"] >= 3, "guest got no jumbo echo replies")
    tx, rx = net.tcp_both(g, seconds=3)
    ctx.note(f"jumbo ping ok, tcp tx {tx['bps'] / 1e6:.0f} rx {rx['bps'] / 1e6:.0f} Mbit/s")


# --- device feature matrix -----------------------------------------------------------
def _probe_message(g) -> str:
    """Our probe's line in the boot's log (its receive layout, MTU range...), or ""."""
    m = re.search(r"virtio-net-dkms .*", g.new_log((0, 0)))
    return m.group(0).strip() if m else ""


def _small_buffers(ctx: Ctx) -> str:
    """Small buffers: MTU bounded by the device's 1400, not 1500; speed and
    duplex shown although the device reports no link status."""
    g = ctx.g
    ifn = net.ifname(g)
    bad = []
    mtu = g.run_ok(f"cat /sys/class/net/{ifn}/mtu").strip()
    if mtu != "1400":
        bad.append(f"MTU {mtu}, expected the device's 1400")
    if g.run(f"{IP} link set dev {ifn} mtu 1401").rc == 0:
        bad.append("MTU 1401 accepted above the device MTU of 1400")
    g.run_ok(f"{IP} link set dev {ifn} mtu 1280 && {IP} link set dev {ifn} mtu 1400")
    ls = net.link_settings(g)
    got = (ls.get("Speed"), ls.get("Duplex"), ls.get("Link detected"))
    if got != ("2500Mb/s", "Half", "yes"):
        bad.append(f"without link status: speed, duplex, link {got}, "
                   f"expected 2500Mb/s, Half, yes")
    if ctx.driver == "ours":
        line = _probe_message(g)
        if "small receive buffers" not in line or "MTU 68..1400" not in line:
            bad.append(f"probe message {line!r}, expected small buffers, MTU 68..1400")
    check(not bad, "; ".join(bad))
    return "MTU max 1400, 2500Mb/s half; "


def _gso_partial(ctx: Ctx) -> str:
    """Part of the GSO features: TSO for IPv6 only (IPv4 TCP, whose traffic
    follows, is segmented by the stack), receive coalescing for IPv4 only."""
    g = ctx.g
    k = {}
    for line in g.run_ok(f"ethtool -k {net.ifname(g)}").splitlines():
        if ":" in line:
            name, _, rest = line.strip().partition(":")
            k[name] = rest.split()[0] if rest.split() else ""
    want = {"tx-tcp-segmentation": "off", "tx-tcp-ecn-segmentation": "off",
            "tx-tcp6-segmentation": "on"}
    got = {n: k.get(n) for n in want}
    check(got == want, f"ethtool -k {got}, expected {want}")
    return "TSO6 only; "


# extra checks of some feature sets, run before the traffic; they return a note
FEATURE_CHECKS = {"small_buffers": _small_buffers, "gso_partial": _gso_partial}


def _feature_test(props: str, extra=None):
    def fn(ctx: Ctx):
        g = ctx.g
        note = extra(ctx) if extra else ""
        net.ping(g, count=2)
        net.host_ping(g, count=2)
        tx, rx = net.tcp_both(g, seconds=2)
        r = net.integrity(g, size_mb=16)
        ctx.note(f"{note}tcp tx {tx['bps'] / 1e6:.0f} rx {rx['bps'] / 1e6:.0f} Mbit/s, "
                 f"16 MiB {r['tx_seconds']:.1f}/{r['rx_seconds']:.1f}s")
    fn.__doc__ = f"device properties '{props or 'defaults'}': ping, TCP both ways, integrity"
    if extra:
        fn.__doc__ += "; " + " ".join(extra.__doc__.split())
    return fn


# --- malformed used lengths, per receive buffer layout ----------------------------
# The feature boot whose device gives each layout of receive buffers.
MALFORMED_BOOTS = {"default": "mergeable", "mrg_rxbuf_off": "big", "small_buffers": "small"}
# Used lengths vnet_fault reports, and whether UDP carries the traffic:
# beyond any buffer (TCP from the host: in mergeable buffers a frame spans
# several, so continuation buffers are hit too), and shorter than the
# virtio-net header (UDP datagrams, one buffer each, so every hit is a
# frame's first buffer: a continuation may be short or empty).
MALFORMED_LENGTHS = ((1000000, False), (5, True), (0, True))
MALFORMED_TIMES = 20


def _rx_drop_totals(g) -> tuple[int, int]:
    """Sums over the receive queues of drops_bad_length and drops_bad_header."""
    st = net.ethtool_stats(g)
    return tuple(sum(v for k, v in st.items()
                     if re.fullmatch(rf"rx(?:_queue_)?\d+_drops_bad_{kind}", k))
                 for kind in ("length", "header"))


def inject_malformed(ctx: Ctx) -> str:
    """Report each of MALFORMED_LENGTHS for MALFORMED_TIMES receive buffers
    of NIC 0 (vnet_fault on the driver's calls of virtqueue_get_buf_ctx)
    while the host sends to the guest; every such frame must be dropped
    and counted once in drops_bad_length, none in drops_bad_header (the
    buffers after it are not taken for frames), with a log line, and the
    guest answer pings after each.  Returns a note."""
    g = ctx.g
    mark = g.mark()
    ko = put_kmod(ctx, "vnet_fault")
    injected_path = "/sys/module/vnet_fault/parameters/injected"
    notes = []
    for value, udp in MALFORMED_LENGTHS:
        before = _rx_drop_totals(g)
        injected = 0
        g.run_ok(f"insmod {ko} func=virtqueue_get_buf_ctx caller=vnet_rx_receive "
                 f"out_arg=1 out_value={value} skip=100 times={MALFORMED_TIMES}")
        try:
            for _ in range(5):
                net.iperf(g, "rx", udp=udp, seconds=2, bitrate="20M", min_bytes=0)
                injected = int(g.run_ok(f"cat {injected_path}").strip())
                if injected == MALFORMED_TIMES:
                    break
        finally:
            g.run("rmmod vnet_fault")
        after = _rx_drop_totals(g)
        bad_len, bad_hdr = after[0] - before[0], after[1] - before[1]
        check(injected == MALFORMED_TIMES,
              f"length {value}: only {injected} of {MALFORMED_TIMES} rewritten")
        check(bad_len == injected and bad_hdr == 0,
              f"length {value} reported for {injected} buffers: drops_bad_length grew "
              f"by {bad_len}, drops_bad_header by {bad_hdr}")
        net.ping(g, count=2)
        notes.append(f"{value}: {bad_len}")
    check("dropped a frame with bad length" in g.new_log(mark),
          "no 'dropped a frame with bad length' line in the kernel log")
    return "bad-length drops per reported length " + ", ".join(notes)


MALFORMED_DOC = (f"vnet_fault makes the device report a used length of 1000000 (TCP from the "
                 f"host), 5 and 0 (UDP from the host) for {MALFORMED_TIMES} buffers each; "
                 "every such frame is dropped and counted once in drops_bad_length (none in "
                 "drops_bad_header: the buffers after it are not taken for frames), with a "
                 "log line; ping after each, then 8 MiB each way intact")


def _malformed_test(layout: str):
    def fn(ctx: Ctx):
        g = ctx.g
        if ctx.driver != "ours":
            ctx.note("ours only (the fault is injected into our receive path)")
            return
        line = _probe_message(g)
        check(f" {layout} receive buffers" in line,
              f"probe message {line!r}, expected {layout} receive buffers")
        note = inject_malformed(ctx)
        r = net.integrity(g, size_mb=8)
        ctx.note(f"{layout} buffers, {note}; 8 MiB intact "
                 f"{r['tx_seconds']:.1f}/{r['rx_seconds']:.1f}s")
    fn.__doc__ = f"(ours) {layout} receive buffers: {MALFORMED_DOC}"
    return fn


for _name, _props in FEATURES.items():
    _queues = 2 if _name == "mq_off" else 1
    _cfg = VMConfig(smp=2, memory=1024, nics=(Nic(queues=_queues, props=_props),))
    _fn = _feature_test(_props, FEATURE_CHECKS.get(_name))
    suite.add(TestCase(f"feature.{_name}", _fn, _cfg, f"feature.{_name}", doc=_fn.__doc__))
    if _name in MALFORMED_BOOTS:
        # right after it, on the same boot
        _fn = _malformed_test(MALFORMED_BOOTS[_name])
        suite.add(TestCase(f"rx_malformed.{MALFORMED_BOOTS[_name]}", _fn, _cfg,
                           f"feature.{_name}", doc=_fn.__doc__))


# --- coalescing (its own boot; registers into this suite) -------------------------------
from . import coalescing  # noqa: E402,F401
from . import core_napi  # noqa: E402,F401
