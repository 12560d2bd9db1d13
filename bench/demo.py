#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Stock virtio_net and ours, side by side, in the same QEMU guest.

Boots Debian 12's kernel twice (2 vCPUs, one NIC with 2 queue pairs), once
with the in-tree driver and once with ours, runs the same traffic on each
and prints what it achieved and the notifications it needed, counted by
QEMU itself: guest-to-device kicks (trace event virtio_queue_notify) and
device-to-guest interrupts (virtio_notify).

  bench/demo.py --module build/6.1/virtio_net.ko [--kernel 6.1] [--seconds 5]

Under TCG absolute speeds mean little; the counts per packet are what the
driver changes.  The full benchmark (more workloads, repeats, exit-cost
model) is a separate tool.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # harness

from harness import Guest, Nic, VMConfig, install_signal_handlers, net, resolve_kernel  # noqa: E402

CFG = VMConfig(smp=2, memory=1024, nics=(Nic(queues=2),),
               trace_events=("virtio_queue_notify", "virtio_notify"))


def dev_packets(g, ifn):
    """(rx_packets, tx_packets) of the guest interface."""
    for line in g.run_ok("cat /proc/net/dev").splitlines():
        if line.strip().startswith(ifn + ":"):
            f = line.split(":", 1)[1].split()
            return int(f[1]), int(f[9])
    raise RuntimeError(f"{ifn} not in /proc/net/dev")


def notifications(g, since):
    """Kicks on TX queues and interrupts from any queue since a trace offset."""
    index = {}
    kicks = irqs = 0
    events = list(g.trace_events(since))
    for name, f in events:
        if name == "virtio_queue_notify":
            index[f.get("vq")] = int(f.get("n", -1))
    for name, f in events:
        if name == "virtio_queue_notify" and int(f.get("n", -1)) % 2 == 1:
            kicks += 1
        elif name == "virtio_notify":
            irqs += 1
    return kicks, irqs


def measure(g, label, fn):
    ifn = net.ifname(g)
    rx0, tx0 = dev_packets(g, ifn)
    off = g.trace_offset()
    result = fn(g)
    time.sleep(0.5)
    rx1, tx1 = dev_packets(g, ifn)
    kicks, irqs = notifications(g, off)
    tx, rx = tx1 - tx0, rx1 - rx0
    return {
        "workload": label, "result": result,
        "tx": tx, "rx": rx,
        "kicks/tx": kicks / tx if tx else 0.0,
        "irqs/pkt": irqs / (tx + rx) if tx + rx else 0.0,
    }


def workloads(seconds):
    def pingpong(g):
        r = net.sockperf_pingpong(g, seconds=seconds, tcp=True, msg_size=256)
        return f"p50 {r.get('p50_us', r['avg_us']):.0f} us"

    def stream(direction):
        def run(g):
            r = net.iperf(g, direction, seconds=seconds, extra="-l 256 -P 4")
            return f"{r['bps'] / 1e6:.0f} Mbit/s"
        return run

    return [("TCP ping-pong 256 B, 1 flow", pingpong),
            ("TCP 256 B writes, 4 flows, guest sends", stream("tx")),
            ("TCP 256 B writes, 4 flows, guest receives", stream("rx"))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", type=Path, required=True)
    ap.add_argument("--kernel", default="6.1")
    ap.add_argument("--seconds", type=int, default=5)
    a = ap.parse_args()
    install_signal_handlers()
    kernel = resolve_kernel(a.kernel)

    rows = {}
    for driver in ("stock", "ours"):
        print(f"--- booting {kernel.release} with the {driver} driver", flush=True)
        with Guest(kernel, CFG, driver=driver,
                   module=a.module if driver == "ours" else None) as g:
            g.boot()
            info = net.ethtool_info(g)
            print(f"    {info.get('driver')} {info.get('version')}: "
                  f"{net.channels(g).get('combined', '?')} queue pairs", flush=True)
            for label, fn in workloads(a.seconds):
                print(f"    {label} ...", flush=True)
                rows.setdefault(label, {})[driver] = measure(g, label, fn)
            problems = g.check_log()
            if problems:
                print(f"    kernel log problems:\n{problems}")
                return 1

    print()
    print(f"{'workload':<42} {'driver':<6} {'result':>14} {'TX pkts':>9} {'RX pkts':>9}"
          f" {'kicks/TX pkt':>13} {'irqs/pkt':>9}")
    for label, per in rows.items():
        for driver in ("stock", "ours"):
            m = per[driver]
            print(f"{label:<42} {driver:<6} {m['result']:>14} {m['tx']:>9} {m['rx']:>9}"
                  f" {m['kicks/tx']:>13.2f} {m['irqs/pkt']:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
