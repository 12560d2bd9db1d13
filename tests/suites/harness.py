# SPDX-License-Identifier: GPL-2.0-only
"""Self-checks of the harness features later suites build on
(`tests/integration.py --suite harness`): SMT/NUMA topology, two NICs
on per-node PCIe expander buses, QEMU trace events, QMP set_link and NIC
hot-unplug/replug, CPU offline/online, and the agent itself.
They double as usage examples of the harness library.
"""

from __future__ import annotations

import os
import time

from harness import net
from harness.agent import AgentError
from harness.guest import Nic, VMConfig
from harness.runner import Ctx, Suite
from harness.util import CheckFailed

from .functional import check, poll

suite = Suite("harness")

# One socket per NUMA node: a socket split over two nodes makes the guest
# kernel warn at boot (topology_sane: an LLC sibling on another node).
TOPO = VMConfig(smp=4, sockets=2, cores=1, threads=2, numa_nodes=2, memory=1024,
                nics=(Nic(queues=2, numa_node=0), Nic(queues=2, numa_node=1)),
                trace_events=("virtio_queue_notify", "virtio_notify"))


@suite.test("harness.agent", TOPO, "topo", smoke=True)
def t_agent(ctx: Ctx):
    """Agent framing: stdout/stderr/rc, binary-ish output, timeouts kill the group;
    a request cut around the end of a background job still arrives whole."""
    g = ctx.g
    r = g.run("echo out; echo err >&2; printf '@@VNET x END 0\\n'; exit 3")
    check(r.rc == 3 and r.out == "out\n@@VNET x END 0\n" and r.err == "err\n", f"framing: {r!r}")
    r = g.run("head -c 50000 /dev/zero | tr '\\0' x")
    check(r.rc == 0 and len(r.out) == 50000, f"large output: {len(r.out)} bytes")
    t0 = time.monotonic()
    r = g.run("sleep 100 & sleep 100", timeout=2)
    check(r.timed_out and r.rc == 137 and time.monotonic() - t0 < 10, f"timeout: {r!r}")
    left = g.run_ok("ps | grep -c '[s]leep 100' || true").strip()
    check(left == "0", f"{left} sleeps survived the timeout")
    bg = g.run_bg("sleep 1; echo done; exit 5")
    res = bg.result(timeout=30)
    check(res.rc == 5 and res.out == "done\n", f"background: {res!r}")
    # A background job that ends while a request line is still arriving
    # must not cut the line: busybox ash restarts a read that SIGCHLD
    # interrupts and drops what it had read, so the agent keeps its jobs
    # out of its own children.  The line comes in two pieces, 1 s apart,
    # and the job ends in between.
    for i in range(3):
        bg = g.run_bg("sleep 0.3")
        try:
            r = g.agent.run(f"echo {i}", timeout=10, pause=1.0)
        except AgentError as e:
            raise CheckFailed(f"request {i}, split around the end of a background job, "
                              f"was lost: {e}") from None
        check(r.rc == 0 and r.out == f"{i}\n", f"split request {i}: {r!r}")
        check(bg.result(timeout=30).rc == 0, "background sleep failed")


@suite.test("harness.topology", TOPO, "topo")
def t_topology(ctx: Ctx):
    """2 sockets x 1 core x 2 threads, a NUMA node each, NIC i on node i."""
    g = ctx.g
    sib = g.run_ok("cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list").strip()
    check(sib == "0-1", f"cpu0 thread siblings {sib!r}, expected 0-1 (SMT not visible?)")
    nodes = g.run_ok("ls -d /sys/devices/system/node/node*").split()
    check(len(nodes) == 2, f"NUMA nodes: {nodes}")
    for n in g.nics:
        node = g.run_ok(f"cat /sys/class/net/{net.ifname(g, n.index)}/device/../numa_node").strip()
        want = str(n.spec.numa_node)
        check(node == want, f"{n.id} ({n.ifname}) on NUMA node {node}, expected {want}")
    ctx.note(f"siblings {sib}, {len(nodes)} nodes")


@suite.test("harness.two_nics", TOPO, "topo")
def t_two_nics(ctx: Ctx):
    """Both NICs carry traffic; QEMU trace events count queue notifications."""
    g = ctx.g
    off = g.trace_offset()
    for i in range(len(g.nics)):
        net.ping(g, i, count=2)
        net.iperf(g, "tx", seconds=1, nic=i)
    time.sleep(0.5)
    counts = g.trace_counts(since=off)
    check(counts.get("virtio_queue_notify", 0) > 0 and counts.get("virtio_notify", 0) > 0,
          f"trace counts {counts}")
    vdevs = {f.get("vdev") for name, f in g.trace_events(off) if name == "virtio_queue_notify"}
    check(len(vdevs) >= 2, f"notifications from {len(vdevs)} devices, expected 2")
    ctx.note(f"trace {counts}")


@suite.test("harness.set_link", TOPO, "topo")
def t_set_link(ctx: Ctx):
    """QMP set_link down/up is seen as carrier loss/recovery in the guest."""
    g = ctx.g
    ifn = net.ifname(g, 1)

    def carrier():
        return g.run(f"cat /sys/class/net/{ifn}/carrier").out.strip()

    g.set_link(1, False)
    check(poll(lambda: carrier() == "0", 10), f"carrier still {carrier()} after link down")
    g.set_link(1, True)
    check(poll(lambda: carrier() == "1", 10), f"carrier {carrier()} after link up")
    net.ping(g, 1, count=2)


@suite.test("harness.hotplug", TOPO, "topo")
def t_hotplug(ctx: Ctx):
    """device_del / device_add of NIC 1 on its root port, then traffic."""
    g = ctx.g
    g.nic_unplug(1)
    names = g.run_ok("ls /sys/class/net").split()
    check(len(names) == 2, f"interfaces after unplug: {names}")
    g.nic_plug(1)
    net.ping(g, 1, count=2)
    net.iperf(g, "rx", seconds=1, nic=1)


@suite.test("harness.cpu_hotplug", TOPO, "topo")
def t_cpu_hotplug(ctx: Ctx):
    """CPU 1 offline during traffic, then online again."""
    g = ctx.g
    net.host_iperf_server(g)
    bg = g.run_bg(net.iperf_cmd(g.nics[0].host_ip, "tx", seconds=4))
    time.sleep(1)
    g.run_ok("echo 0 >/sys/devices/system/cpu/cpu1/online")
    net.ping(g, 1, count=2)
    g.run_ok("echo 1 >/sys/devices/system/cpu/cpu1/online")
    res = bg.result(timeout=60)
    check(res.rc == 0, f"iperf3 across CPU offline failed: {res.out[-500:]}{res.err[-500:]}")
    net.ping(g, 0, count=2)


@suite.test("harness.sockperf", TOPO, "topo")
def t_sockperf(ctx: Ctx):
    """sockperf ping-pong (UDP and TCP) against a server in the namespace."""
    udp = net.sockperf_pingpong(ctx.g, seconds=2)
    tcp = net.sockperf_pingpong(ctx.g, seconds=2, tcp=True, port=net.SOCKPERF_PORT + 1)
    check(udp["avg_us"] > 0 and tcp["avg_us"] > 0, f"latencies {udp} {tcp}")
    ctx.note(f"udp avg {udp['avg_us']:.0f}us p99 {udp.get('p99_us', 0):.0f}us, "
             f"tcp avg {tcp['avg_us']:.0f}us")


SELF_WARN = "WARNING: vnet harness self-check"


@suite.test("harness.log_check", TOPO, "topo", ignore_log=(SELF_WARN,))
def t_log_check(ctx: Ctx):
    """A kernel warning fails the check, and the report names the stack:
    a report written to /dev/kmsg is caught with its RIP and frames, and
    a clean stretch of log passes."""
    g = ctx.g
    mark = g.mark()
    g.check_log(mark)           # nothing new: must not raise
    lines = [SELF_WARN, "RIP: 0010:vnet_selfcheck+0x10/0x40",
             " vnet_selfcheck_caller+0x2a/0x90"]
    g.run_ok("; ".join(f"echo '<4>{line}' > /dev/kmsg" for line in lines))
    try:
        g.check_log(mark)
    except CheckFailed as e:
        msg = str(e)
    else:
        raise CheckFailed("a WARNING in the kernel log passed the check")
    check(SELF_WARN in msg and "RIP: 0010:vnet_selfcheck+0x10/0x40" in msg
          and "vnet_selfcheck_caller+0x2a/0x90" in msg,
          f"report lacks the warning or its stack:\n{msg}")
    g.check_log(mark, ignore=(SELF_WARN,))     # ignored: must not raise
    ctx.note("warning caught with its stack; ignore list honoured")


STRESS = VMConfig(smp=4, memory=1024, nics=(Nic(queues=4),))


@suite.test("harness.agent_stress", STRESS, "stress", timeout=3600)
def t_agent_stress(ctx: Ctx):
    """The agent under load for VNET_AGENT_STRESS_SECONDS (default 300, < 3500): paced
    iperf3 both ways, CPU offline/online in a loop, a background job started
    and polled over and over.  Not in CI; reruns the search for lost requests
    (README, "Known problems")."""
    g = ctx.g
    seconds = float(os.environ.get("VNET_AGENT_STRESS_SECONDS", "300"))
    net.host_iperf_server(g)
    net.host_iperf_server(g, net.IPERF_PORT + 1)
    long = seconds + 60
    g.run_bg(net.iperf_cmd(g.nics[0].host_ip, "tx", seconds=int(long), extra="-P 4 -b 20M"))
    g.run_bg(net.iperf_cmd(g.nics[0].host_ip, "rx", seconds=int(long), port=net.IPERF_PORT + 1,
                           extra="-P 4 -b 20M"))
    g.run_bg("while :; do for c in 3 2 1; do "
             "echo 0 > /sys/devices/system/cpu/cpu$c/online; sleep 0.2; "
             "echo 1 > /sys/devices/system/cpu/cpu$c/online; sleep 0.2; done; done")
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < seconds:
        res = g.run_bg("sleep 0.1; echo hi").result(timeout=30)
        check(res.rc == 0 and res.out == "hi\n", f"background job {n}: {res!r}")
        n += 1
    ctx.note(f"{n} background jobs in {time.monotonic() - t0:.0f} s")
