# SPDX-License-Identifier: GPL-2.0-only
"""kmemleak scan of a guest before it is shut down (test-integration.py --kmemleak).

Needs a kernel with CONFIG_DEBUG_KMEMLEAK (tests/debug-kernel.sh builds
one). With lockdep in the kernel, it also checks that lockdep is still on
(it switches itself off after its first report). The scan runs twice, as kmemleak's documentation advises: an object
is reported only if no reference to it was found in either. Reports whose
allocation backtrace runs through virtio_net (a symbol tagged
[virtio_net], a vnet_ function, or an address in module space that no
longer resolves because the module was unloaded: the debug kernel has
every other driver the guest uses built in) fail; others are listed.
"""

from __future__ import annotations

import re

from .util import CheckFailed

KMEMLEAK = "/sys/kernel/debug/kmemleak"
# kernel module space on x86-64 (and thus where an unloaded module was)
_MODULE_ADDR = re.compile(r"\[<(ffffffffc[0-9a-f]{7}|ffffffffa[0-9a-f]{7})>\]\s+0x[0-9a-f]+\s*$")
_OURS = re.compile(r"\[virtio_net\]|\bvnet_\w+\+0x")


def split_reports(text: str) -> list[str]:
    reports, cur = [], []
    for line in text.splitlines():
        if line.startswith("unreferenced object") and cur:
            reports.append("\n".join(cur))
            cur = []
        if line.strip():
            cur.append(line)
    if cur:
        reports.append("\n".join(cur))
    return [r for r in reports if r.startswith("unreferenced object")]


def involves_us(report: str) -> bool:
    return any(_OURS.search(ln) or _MODULE_ADDR.search(ln) for ln in report.splitlines())


def scan(g, timeout: float = 600) -> tuple[list[str], list[str]]:
    """-> (reports involving our module, other reports)."""
    r = g.run(f"[ -w {KMEMLEAK} ] || exit 3; echo scan >{KMEMLEAK} && sleep 1 && "
              f"echo scan >{KMEMLEAK} && cat {KMEMLEAK}", timeout=timeout, quiet=True)
    if r.rc == 3:
        raise CheckFailed(f"{KMEMLEAK} is missing: the guest kernel has no CONFIG_DEBUG_KMEMLEAK "
                          f"(or kmemleak was disabled at boot)")
    if r.rc != 0:
        raise CheckFailed(f"kmemleak scan failed (rc={r.rc}): {r.out[-500:]}{r.err[-500:]}")
    reports = split_reports(r.out)
    ours = [x for x in reports if involves_us(x)]
    return ours, [x for x in reports if not involves_us(x)]


def check(g) -> str:
    """Raise CheckFailed on leaks of ours (or when lockdep switched itself
    off after a report); return a one-line summary."""
    r = g.run("grep -s 'debug_locks:' /proc/lockdep_stats", quiet=True)
    if r.rc == 0 and r.out.split()[-1:] != ["1"]:
        raise CheckFailed(f"lockdep turned itself off during the run ({r.out.strip()}): "
                          f"see the kernel log for its report")
    ours, others = scan(g)
    if ours:
        raise CheckFailed(f"kmemleak: {len(ours)} unreferenced objects allocated through "
                          f"virtio_net ({len(others)} others):\n" + "\n\n".join(ours[:5]))
    return f"no leaks through virtio_net ({len(others)} other unreferenced objects)"
