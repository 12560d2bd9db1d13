#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""bench/matrix.py with a sysctl set in the host-side network namespace of
every guest right after it boots (where the peer of the guest runs:
iperf3 servers, load generators).  Run from the repository root:

  host_sysctl_matrix.py net.ipv4.tcp_autocorking=0 -- --cells rx-256x4 ... --out DIR
"""
import runpy
import sys

sysctls, args = [], sys.argv[1:]
while args and args[0] != "--":
    sysctls.append(args.pop(0))
args = args[1:]
sys.path[:0] = ["bench", "tests"]
import harness.guest as HG  # noqa: E402

_boot = HG.Guest.boot


def boot(self):
    r = _boot(self)
    for s in sysctls:
        self.host(["sysctl", "-w", s])
    return r


HG.Guest.boot = boot
sys.argv = ["bench/matrix.py"] + args
runpy.run_path("bench/matrix.py", run_name="__main__")
