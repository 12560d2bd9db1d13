"""The functional integration suite (scripts/test-integration.py).

Boots, in order: "main" (4 vCPUs, one NIC with 4 queue pairs) shared by most
tests, "mtu9000" (host_mtu=9000), then one boot per device feature set.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time

from . import modinfo as mi
from . import net
from .guest import Nic, VMConfig
from .runner import Ctx, Suite, TestCase
from .util import CheckFailed

suite = Suite("functional")

MAIN = VMConfig(smp=4, memory=1024, nics=(Nic(queues=4),))
MTU = VMConfig(smp=2, memory=1024, nics=(Nic(props="host_mtu=9000"),))

FEATURES = {
    "default": "",
    "mrg_rxbuf_off": "mrg_rxbuf=off",
    "mq_off": "mq=off",
    "no_ctrl_vq": "ctrl_vq=off,ctrl_rx=off,ctrl_vlan=off,ctrl_mac_addr=off,guest_announce=off,mq=off",
    "csum_off": "csum=off",
    "guest_tso_off": "guest_tso4=off,guest_tso6=off",
    "event_idx_off": "event_idx=off",
    "packed": "packed=on",
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
def _feature_test(props: str):
    def fn(ctx: Ctx):
        g = ctx.g
        net.ping(g, count=2)
        net.host_ping(g, count=2)
        tx, rx = net.tcp_both(g, seconds=2)
        r = net.integrity(g, size_mb=16)
        ctx.note(f"tcp tx {tx['bps'] / 1e6:.0f} rx {rx['bps'] / 1e6:.0f} Mbit/s, "
                 f"16 MiB {r['tx_seconds']:.1f}/{r['rx_seconds']:.1f}s")
    fn.__doc__ = f"device properties '{props or 'defaults'}': ping, TCP both ways, integrity"
    return fn


for _name, _props in FEATURES.items():
    _queues = 2 if _name == "mq_off" else 1
    _cfg = VMConfig(smp=2, memory=1024, nics=(Nic(queues=_queues, props=_props),))
    _fn = _feature_test(_props)
    suite.add(TestCase(f"feature.{_name}", _fn, _cfg, f"feature.{_name}", doc=_fn.__doc__))


# --- coalescing (its own boot; registers into this suite) -------------------------------
from . import coalescing  # noqa: E402,F401
