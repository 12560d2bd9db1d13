# SPDX-License-Identifier: GPL-2.0-only
"""UDP tunnel GSO (VXLAN) on a device that offers it (part of the functional suite).

QEMU 7.2 and 10.0 offer no UDP tunnel GSO; these tests boot with Debian sid's
QEMU (VMConfig qemu="sid", set up by tests/setup/qemu-sid.sh: 11.1 at the time
of writing), whose virtio-net offers guest_tunnel, guest_tunnel_csum,
host_tunnel and host_tunnel_csum (features 65-68) by default when its tap
takes tunnel offloads (host Linux 6.17 or later).  A VXLAN device on each side
(guest over our NIC, host over the tap) carries TCP; 8 MiB go through it and
their sha256 must match.

* tunnel.vxlan_tx  guest -> host.  With tx-udp_tnl-segmentation on, the
           driver transmits VXLAN frames far larger than the MTU (the device
           cuts them): the NIC's bytes per sent packet exceed two full frames;
           off, the stack cuts them and no packet is larger than the MTU.

Receive (GUEST_UDP_TUNNEL_GSO) has no test here: with QEMU 11.1 over this
host's tap (Linux 6.18) the device hands over coalesced VXLAN frames whose
outer_th_offset and inner_nh_offset are 0, which the in-tree driver and ours
both drop as malformed ("bad gso" in-tree, rxN_drops_bad_header here), so the
transfer stalls with either driver.  KUnit covers the receive header checks.

Kernels whose virtio-net header helpers lack the tunnel fields (before 6.17:
5.10, 6.1, 6.12) must not negotiate the features; there the test checks that
and the software path.
"""

from __future__ import annotations

import os

from harness import net
from harness.guest import Nic, VMConfig
from harness.runner import Ctx

from .functional import IP, check, suite
from .uso import negotiated

TUNNEL = VMConfig(smp=2, memory=1024, nics=(Nic(queues=1),), qemu="sid",
                  extra_modules=("vxlan",))
BITS = {"guest_tunnel": 65, "guest_tunnel_csum": 66, "host_tunnel": 67, "host_tunnel_csum": 68}
VNI, VXPORT, PORT = 4242, 4789, 5310
HOST_VX, GUEST_VX = "10.78.0.1", "10.78.0.2"
SIZE = 8 << 20
# An untagged Ethernet frame at MTU 1500: a packet larger than this was segmented
# by the device, not by the stack.
FULL_FRAME = 1514


def _vxlan_up(g, ifn: str) -> None:
    n = g.nics[0]
    g.host(["sh", "-c", f"ip link del vx0 2>/dev/null; "
                        f"ip link add vx0 type vxlan id {VNI} local {n.host_ip} "
                        f"remote {n.guest_ip} dstport {VXPORT} dev {n.tap} && "
                        f"ip addr add {HOST_VX}/24 dev vx0 && ip link set vx0 up"])
    # iproute2 by path: the shell's busybox ip knows no VXLAN
    g.run_ok(f"vnet modprobe vxlan && {{ {IP} link del vx0 2>/dev/null; true; }} && "
             f"{IP} link add vx0 type vxlan id {VNI} local {n.guest_ip} remote {n.host_ip} "
             f"dstport {VXPORT} dev {ifn} && {IP} addr add {GUEST_VX}/24 dev vx0 && "
             f"{IP} link set vx0 up")
    net_ok = g.run(f"ping -c 3 -W 2 {HOST_VX}", timeout=30)
    check(net_ok.rc == 0, f"no ping through the VXLAN tunnel:\n{net_ok.out}{net_ok.err}")


def _stats(g, ifn: str) -> dict[str, int]:
    return net.sysfs_stats(g, names=("tx_packets", "tx_bytes", "rx_packets", "rx_bytes"))


def _tx_round(g, ifn: str) -> tuple[int, int]:
    """8 MiB guest -> host through the tunnel, intact; the NIC's sent
    (packets, bytes) meanwhile."""
    rx_file = g.workdir / "tunnel-rx.bin"
    srv = g.host_bg(["socat", "-u", f"TCP-LISTEN:{PORT},bind={HOST_VX},reuseaddr",
                     f"OPEN:{rx_file},creat,trunc"], name="socat-tunnel")
    net.wait_host_listen(g, PORT, srv)
    g.run_ok(f"head -c {SIZE} /dev/urandom >/tmp/vnet-tnl.bin", timeout=120)
    g_sum = g.run_ok("sha256sum /tmp/vnet-tnl.bin", timeout=120).split()[0]
    before = _stats(g, ifn)
    r = g.run(f"nc {HOST_VX} {PORT} </tmp/vnet-tnl.bin", timeout=180)
    after = _stats(g, ifn)
    check(r.rc == 0, f"guest -> host transfer failed (rc={r.rc}): {r.out}{r.err}")
    srv.wait(30)
    h_sum = net._sha256_file(rx_file)
    got = os.path.getsize(rx_file)
    os.unlink(rx_file)
    g.run("rm -f /tmp/vnet-tnl.bin")
    check(h_sum == g_sum, f"guest -> host data corrupted: {got} of {SIZE} bytes")
    return after["tx_packets"] - before["tx_packets"], after["tx_bytes"] - before["tx_bytes"]


def _rounds(ctx: Ctx, ifn: str, features: str, offered: bool, round_fn, verb: str) -> list[str]:
    """One round per setting of FEATURES (on, then off; only the kernel's
    default when tunnel GSO was not negotiated): data intact, and packets
    larger than a full frame exactly when the device segments."""
    g = ctx.g
    modes = [("on", True), ("off", False)] if offered else [("", False)]
    notes = []
    try:
        for mode, gso in modes:
            if mode:
                g.run_ok(" && ".join(f"ethtool -K {ifn} {f} {mode}" for f in features.split()))
            pkts, nbytes = round_fn(g, ifn)
            per = nbytes / max(pkts, 1)
            what = f"{features} {mode or 'n/a'}"
            if gso:
                check(per > 2 * FULL_FRAME, f"{what}: the driver {verb} {pkts} packets of "
                                            f"{per:.0f} bytes on average: no tunnel GSO")
            else:
                check(per <= FULL_FRAME, f"{what}: the driver {verb} {pkts} packets of "
                                         f"{per:.0f} bytes on average, above the MTU")
            notes.append(f"{mode or 'no tunnel GSO'}: {pkts} packets, {per:.0f} bytes each")
    finally:
        if offered:
            g.run(" ; ".join(f"ethtool -K {ifn} {f} on" for f in features.split()))
    return notes


@suite.test("tunnel.vxlan_tx", TUNNEL, "tunnel")
def t_vxlan_tx(ctx: Ctx):
    """TCP over VXLAN, guest -> host: the device segments tunnel GSO frames; data intact."""
    g = ctx.g
    ifn = net.ifname(g)
    offered = negotiated(ctx, ifn, BITS, (6, 17), "UDP tunnel features")
    _vxlan_up(g, ifn)
    notes = _rounds(ctx, ifn, "tx-udp_tnl-segmentation tx-udp_tnl-csum-segmentation",
                    offered, _tx_round, "sent")
    ctx.note(("tunnel GSO negotiated; " if offered else "tunnel GSO not negotiated; ") +
             ", ".join(notes))
