# SPDX-License-Identifier: GPL-2.0-only
"""net_failover with a second NIC as primary (VIRTIO_NET_F_STANDBY).

QEMU 7.2: the virtio NIC has failover=on; an e1000e with the same MAC and
failover_pair_id=nic0 sits hidden on its own root port until the guest
driver accepts VIRTIO_NET_F_STANDBY, then QEMU hot-plugs it. Host side,
both taps are bridged (br0 holds 10.77.0.1), so traffic reaches the guest
through whichever NIC the guest sends on. The test follows the failover
master through: primary present (traffic on the e1000e), primary
unplugged (traffic on the virtio standby), driver reloaded (QEMU plugs
the primary again on the new negotiation: traffic on the e1000e).
"""

from __future__ import annotations

import time

from harness import net
from harness.guest import Nic, VMConfig
from harness.runner import Ctx

from .functional import check, poll, suite

MAC = "52:54:00:77:00:02"  # NIC 0's MAC (guest.py), shared by the primary
PRIMARY = ("-device", "pcie-root-port,id=rpprim,bus=pcie.0,chassis=30",
           "-netdev", "tap,id=netprim,ifname=vtapp,script=no,downscript=no,vhost=off",
           "-device", f"e1000e,id=prim0,netdev=netprim,mac={MAC},failover_pair_id=nic0,"
                      "bus=rpprim,romfile=")
FAILOVER = VMConfig(smp=2, memory=1024, nics=(Nic(props="failover=on"),),
                    qemu_args=PRIMARY, extra_modules=("e1000e",))

# interface name, driver and master of every interface with the shared MAC
LIST = (f"for d in /sys/class/net/*; do [ \"$(cat $d/address)\" = {MAC} ] || continue; "
        "n=${d##*/}; drv=$(ethtool -i $n | sed -n 's/^driver: //p'); "
        "m=$(basename $(readlink $d/master 2>/dev/null) 2>/dev/null); "
        "echo \"$n ${drv:--} ${m:--}\"; done")


def interfaces(g) -> dict[str, tuple[str, str]]:
    """{driver: (ifname, master)} of the interfaces with the shared MAC."""
    out = g.run_ok(LIST)
    res = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3:
            res[f[1]] = (f[0], f[2])
    return res


def tx_packets(g, ifn: str) -> int:
    return int(g.run_ok(f"cat /sys/class/net/{ifn}/statistics/tx_packets").strip())


def traffic_through(g, ifn: str, other: str, what: str) -> str:
    """Ping 20 times through the master; ifn must carry it, other must not."""
    a, b = tx_packets(g, ifn), tx_packets(g, other)
    net.ping(g, count=20)
    da, db = tx_packets(g, ifn) - a, tx_packets(g, other) - b
    check(da >= 20 and db < 5, f"{what}: {da} packets sent through {ifn}, {db} through {other}")
    return f"{what}: {da} via {ifn}"


@suite.test("failover", FAILOVER, "failover", timeout=400)
def t_failover(ctx: Ctx):
    """STANDBY: failover master, primary plugged by QEMU, fail over and back."""
    g = ctx.g
    g.host("ip link add br0 type bridge && ip addr flush dev vtap0 && "
           "ip link set vtap0 master br0 && ip link set vtapp master br0 && "
           "ip link set vtapp up && ip addr add 10.77.0.1/24 dev br0 && ip link set br0 up")
    g.run_ok("vnet modprobe e1000e")
    ifs = poll(lambda: (lambda x: x if "e1000e" in x else None)(interfaces(g)), 30)
    check(bool(ifs), f"no e1000e primary appeared (interfaces {interfaces(g)})")
    master = net.ifname(g)
    check(ifs.get("net_failover", ("",))[0] == master,
          f"addresses are on {master}, the failover master is {ifs.get('net_failover')}")
    sby, sby_master = ifs["virtio_net"]
    prim, prim_master = ifs["e1000e"]
    check(sby_master == master and prim_master == master,
          f"slaves: virtio {sby} -> {sby_master}, e1000e {prim} -> {prim_master}, master {master}")
    port = g.run_ok(f"cat /sys/class/net/{sby}/phys_port_name").strip()
    check(port == "sby", f"standby phys_port_name is {port!r}")
    notes = [f"master {master}, standby {sby}, primary {prim}"]
    # the primary comes up under the master by itself
    check(poll(lambda: "LOWER_UP" in g.run_ok(f"/usr/sbin/ip link show {prim}"), 20),
          f"primary {prim} has no carrier")
    time.sleep(1)
    notes.append(traffic_through(g, prim, sby, "primary"))

    # primary unplugged (as before a migration): the standby takes over.
    # (A primary that is only down does not count: net_failover keeps
    # dropping what the standby receives while a primary is enslaved.)
    g.qmp("device_del", id="prim0")
    g.wait_event("DEVICE_DELETED", 60, match={"device": "prim0"})
    check(poll(lambda: "e1000e" not in interfaces(g), 20), "primary still present")
    check(interfaces(g)["virtio_net"][1] == master, "standby left the master")
    notes.append(standby_traffic(g, sby, "primary unplugged"))

    # a new negotiation (driver reload) makes QEMU plug the primary again
    r = g.run("vnet reload", timeout=120)
    check(r.rc == 0, f"vnet reload failed: {r.out}{r.err}")
    g.refresh_nics()
    ifs = poll(lambda: (lambda x: x if "e1000e" in x else None)(interfaces(g)), 40)
    check(bool(ifs), f"no primary after the driver reload (interfaces {interfaces(g)})")
    master = net.ifname(g)
    sby, prim = ifs["virtio_net"][0], ifs["e1000e"][0]
    check(ifs["e1000e"][1] == master and ifs["virtio_net"][1] == master,
          f"after reload: {ifs}, master {master}")
    check(poll(lambda: "LOWER_UP" in g.run_ok(f"/usr/sbin/ip link show {prim}"), 20),
          f"primary {prim} has no carrier after the reload")
    time.sleep(1)
    notes.append(traffic_through(g, prim, sby, "primary re-plugged"))
    net.host_ping(g, count=3)
    ctx.note("; ".join(notes))


def standby_traffic(g, sby: str, what: str) -> str:
    """Without a usable primary, the master's traffic goes through the standby."""
    a = tx_packets(g, sby)
    net.ping(g, count=20)
    d = tx_packets(g, sby) - a
    check(d >= 20, f"{what}: only {d} packets sent through the standby {sby}")
    return f"{what}: {d} via {sby}"
