# SPDX-License-Identifier: GPL-2.0-only
"""Receive page pools (rx_page_pool), as the netdev netlink family lists them.

The in-tree driver of 7.x takes small and mergeable receive buffers from a
page pool per receive queue, created for every queue pair the device has
and linked to the netdev and the queue's NAPI; page-pool-get (6.8+) lists
them. Ours does the same. One guest, two NICs: nic0 with mergeable buffers
and 4 queue pairs (2 vCPUs: 2 active), nic1 with small buffers and one pair.

* pp.pools   one pool per queue pair of each NIC, our ifindex, the NAPI id
             of each active receive queue on exactly one pool; again after
             TCP both ways with integrity, -L 1 and back, -G, ifdown/up and
             freeze/restore; page-pool-stats-get answers for them (kernels
             with CONFIG_PAGE_POOL_STATS); and after rmmod no pool of ours
             is left holding pages (a destroyed pool with pages out stays
             listed as detached: a leak once traffic stopped)
* pp.xdp     XDP_PASS (TCP both ways, integrity) and XDP_DROP on both NICs
             (mergeable and small buffers), the pools unchanged, nothing
             left over after rmmod
* pp.option  ours: rx_page_pool=0 leaves the pools out, an invalid value
             loads with the default and a warning naming option and value

Kernels without page-pool-get (before 6.8) only see the probe's message
("receive buffers from page pools"), which pp.option checks.
"""

from __future__ import annotations

import re
import time

from harness import net
from harness.guest import Nic, VMConfig
from harness.runner import Ctx, TestCase
from harness.util import CheckFailed, log

from .functional import check, kernel_version, suite
from .xdp import PORT, attach, detach, send_udp, stats, total

SMALL = "mrg_rxbuf=off,guest_tso4=off,guest_tso6=off,guest_ecn=off,guest_ufo=off"
PP = VMConfig(smp=2, memory=1024, nics=(Nic(queues=4), Nic(queues=1, props=SMALL)))
# The same with the pools asked for: 6.1 and 6.7 have them off by default.
PP_ON = VMConfig(smp=2, memory=1024, nics=(Nic(queues=4), Nic(queues=1, props=SMALL)),
                 modopts="rx_page_pool=1")
# How long pages of a destroyed pool may stay out once traffic stopped.
SETTLE = 15.0


def ifindex(g, nic: int) -> int:
    return int(g.run_ok(f"cat /sys/class/net/{net.ifname(g, nic)}/ifindex").strip())


def max_pairs(g, nic: int) -> int:
    out = g.run_ok(f"ethtool -l {net.ifname(g, nic)}")
    return int(re.search(r"Pre-set maximums:.*?Combined:\s*(\d+)", out, re.S).group(1))


def rx_napi_ids(g, nic: int) -> dict[int, int]:
    """queue-get: {active rx queue: its NAPI id}."""
    qs = net.nl_queues(g, nic) or {}
    return {q: v["napi-id"] for (t, q), v in qs.items() if t == "rx" and v.get("napi-id")}


def check_pools(g, what: str) -> list[dict]:
    """Each NIC: one live pool per queue pair, on its ifindex; each active rx
    queue's NAPI id on exactly one of them.  Returns the pools."""
    pools = net.nl_pools(g)
    if pools is None:
        if "rx_page_pool=1" not in g.cfg.modopts:
            raise CheckFailed("this kernel has no page-pool-get (6.8+): run pp.on_*")
        # only the driver can tell: its probe message, every load of this boot
        probes = re.findall(r"queue pairs, \w+ receive buffers.*", g.new_log())
        check(len(probes) >= len(g.nics) and all("from page pools" in p for p in probes),
              f"{what}: rx_page_pool=1 but the probes say {probes}")
        return []
    found = []
    for nic in range(len(g.nics)):
        idx, pairs = ifindex(g, nic), max_pairs(g, nic)
        mine = [p for p in pools if p.get("ifindex") == idx]
        dead = [p for p in mine if "detach-time" in p]
        check(not dead, f"{what}: nic{nic}: destroyed pools still on the interface: {dead}")
        check(len(mine) == pairs,
              f"{what}: nic{nic} (ifindex {idx}): {len(mine)} page pools, {pairs} queue "
              f"pairs: {mine}")
        napis = rx_napi_ids(g, nic)
        check(napis, f"{what}: nic{nic}: queue-get shows no rx queue with a NAPI id")
        for q, nid in napis.items():
            n = sum(p.get("napi-id") == nid for p in mine)
            check(n == 1, f"{what}: nic{nic} rx queue {q} (NAPI {nid}) on {n} pools: {mine}")
        found += mine
    return found


# Receive softirq work on every CPU: skbs that sockets freed are handed back
# to the CPU that received them (skb_attempt_defer_free(), 6.2 on; through
# 6.x a per-CPU list freed at that CPU's next receive softirq), so without
# it the pages of the last frames a CPU received stay out until it
# receives again.  Loopback traffic runs the softirq on the sending CPU.
FLUSH_DEFERRED = ("for c in $(seq 0 $(($(grep -c ^processor /proc/cpuinfo) - 1))); do "
                  "taskset -c $c ping -c 1 -W 1 127.0.0.1 >/dev/null; done")


def check_no_leak(g, gone: set[int], what: str) -> None:
    """The pools @gone (destroyed by rmmod) must not stay listed: a pool whose
    pages are still out lingers as detached until the last one returns.
    Without page-pool-get only kmemleak (debug kernel) can tell."""
    if net.nl_pools(g) is None:
        return
    deadline = time.monotonic() + SETTLE
    time.sleep(1)
    before = [p for p in net.nl_pools(g) or [] if p["id"] in gone]
    while True:
        g.run_ok(FLUSH_DEFERRED, timeout=60)
        left = [p for p in net.nl_pools(g) or [] if p["id"] in gone]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(1)
    if before and not left:
        log(f"  {what}: pages of {len(before)} destroyed pools came back once every CPU "
            f"ran its receive softirq", 1)
    if left:
        sockets = g.run("cat /proc/net/sockstat; netstat -tuwan 2>&1 | head -n 30").out
        raise CheckFailed(f"{what}: {len(left)} destroyed pools still hold pages "
                          f"{SETTLE:.0f} s after traffic stopped: {left}\nsockets:\n{sockets}")


def unload_and_check(g, pools: list[dict], what: str) -> None:
    g.run_ok("rmmod virtio_net", timeout=120)
    try:
        check_no_leak(g, {p["id"] for p in pools}, what)
    finally:
        g.run_ok("vnet load && vnet nicup", timeout=120)
        g.refresh_nics()
    net.ping(g, count=2)


def _freeze(g) -> None:
    states = g.run_ok("cat /sys/power/state").split()
    state = "mem" if "mem" in states else "freeze"
    r = g.run(f"echo devices >/sys/power/pm_test && echo {state} >/sys/power/state; rc=$?; "
              f"echo none >/sys/power/pm_test; exit $rc", timeout=120)
    check(r.rc == 0, f"echo {state} >/sys/power/state failed (rc={r.rc}): {r.out}{r.err}")


def default_off(ctx: Ctx) -> bool:
    """Before 6.8 the default boot has no pools and nothing lists them:
    nothing to check there (pp.on_* runs the same with rx_page_pool=1).
    Before 5.15 (no page pool fragments) rx_page_pool=1 loads as N with a
    warning naming the option: checked, and nothing else to check."""
    g = ctx.g
    if "rx_page_pool=1" in g.cfg.modopts:
        if ctx.driver != "ours" or \
                g.run_ok("cat /sys/module/virtio_net/parameters/rx_page_pool").strip() != "N":
            return False
        log = g.new_log()  # the whole boot's (the guest's dmesg is drained)
        check(re.search(r"option rx_page_pool=1: this kernel has no page pool fragments", log)
              is not None, f"rx_page_pool=1 read back N without the warning:\n{log[-1500:]}")
        ctx.note("skipped: rx_page_pool=1 fell back to N with its warning (no page pool "
                 "fragments on this kernel)")
        return True
    if kernel_version(ctx) >= (6, 8):
        return False
    ctx.note("skipped: no pools by default before 6.8 (pp.on_* has them)")
    return True


def t_pools(ctx: Ctx):
    """One page pool per queue pair, linked to the netdev and each active
    queue's NAPI, through traffic, -L, -G, ifdown/up and freeze; no leak."""
    if default_off(ctx):
        return
    g = ctx.g
    ifn = net.ifname(g, 0)
    pools = check_pools(g, "after probe")
    ids0 = {p["id"] for p in pools}

    for nic in range(len(g.nics)):
        net.tcp_both(g, nic=nic, seconds=2)
        net.integrity(g, nic=nic, size_mb=8)
    pools = check_pools(g, "after TCP both ways")
    st = net.nl_pool_stats(g)
    if st is not None and st:
        mine = {p["id"] for p in pools}
        answered = {i for i in st if i in mine}
        check(answered == mine, f"page-pool-stats-get answers for {sorted(answered)} of our "
                                f"pools {sorted(mine)}")
        allocs = sum(st[i].get("alloc-fast", 0) + st[i].get("alloc-slow", 0) for i in mine)
        check(allocs > 0, f"page-pool-stats-get: no allocations from our pools: {st}")
        ctx.note(f"pool stats: {allocs} allocations")

    g.run_ok(f"ethtool -L {ifn} combined 1")
    check_pools(g, "after -L 1")
    net.tcp_both(g, seconds=1)
    g.run_ok(f"ethtool -L {ifn} combined 2")
    check_pools(g, "after -L 2")
    r = g.run(f"ethtool -G {ifn} rx 128")
    if r.rc == 0:
        net.tcp_both(g, seconds=1)
        check_pools(g, "after -G rx 128")
        g.run_ok(f"ethtool -G {ifn} rx 256")
        check_pools(g, "after -G rx 256")
    else:
        ctx.note(f"-G refused: {r.err.strip()}")
    g.run_ok(f"/usr/sbin/ip link set {ifn} down; /usr/sbin/ip link set {ifn} up")
    g.refresh_nics()
    net.ping(g, count=3)
    check_pools(g, "after ifdown/up")
    _freeze(g)
    net.ping(g, count=3)
    net.tcp_both(g, seconds=1)
    pools = check_pools(g, "after freeze/restore")
    if pools:
        ctx.note(f"{len(pools)} pools; {'same' if {p['id'] for p in pools} == ids0 else 'new'} "
                 f"ids after freeze/restore")
    else:
        ctx.note("no page-pool-get: the probe messages say page pools")
    unload_and_check(g, pools, "rmmod after traffic")


def t_xdp(ctx: Ctx):
    """XDP_PASS and XDP_DROP on mergeable (nic0) and small (nic1) buffers from pools."""
    if default_off(ctx):
        return
    g = ctx.g
    notes = []
    for nic in range(len(g.nics)):
        attach(g, nic, "pass")
        try:
            net.ping(g, nic=nic, count=3)
            net.tcp_both(g, nic=nic, seconds=2)
            net.integrity(g, nic=nic, size_mb=8)
            check_pools(g, f"nic{nic} with XDP_PASS")
        finally:
            detach(g, nic)
        attach(g, nic, "drop")
        try:
            before = stats(g, nic)
            send_udp(g, nic, PORT["drop"], 200)
            time.sleep(0.5)
            drops = total(stats(g, nic), "xdp_drops", "rx") - total(before, "xdp_drops", "rx")
            if ctx.driver == "ours":
                check(drops >= 200, f"nic{nic}: xdp_drops grew by {drops}, 200 sent")
            net.ping(g, nic=nic, count=3)
            net.tcp_both(g, nic=nic, seconds=1)
        finally:
            detach(g, nic)
        notes.append(f"nic{nic} {drops} dropped")
    pools = check_pools(g, "after XDP")
    unload_and_check(g, pools, "rmmod after XDP")
    ctx.note(", ".join(notes))


def t_option(ctx: Ctx):
    """rx_page_pool=0 takes the pools out; an invalid value loads the default with a warning."""
    g = ctx.g
    if ctx.driver != "ours":
        raise CheckFailed("rx_page_pool is ours: run pp.option with --module")

    def reload(opts: str) -> str:
        mark = g.mark()
        r = g.run(f"vnet reload {opts}", timeout=120)
        check(r.rc == 0, f"vnet reload {opts} failed (rc={r.rc}): {r.out}{r.err}")
        g.refresh_nics()
        net.ping(g, count=2)
        return g.new_log(mark)

    default = g.run_ok("cat /sys/module/virtio_net/parameters/rx_page_pool").strip()
    listed = net.nl_pools(g) is not None
    try:
        log = reload("rx_page_pool=0")
        check("from page pools" not in log, f"rx_page_pool=0: pools at probe:\n{log}")
        if listed:
            idx = {ifindex(g, n) for n in range(len(g.nics))}
            mine = [p for p in net.nl_pools(g) if p.get("ifindex") in idx]
            check(not mine, f"rx_page_pool=0: pools listed: {mine}")
        net.tcp_both(g, seconds=1)
        log = reload("rx_page_pool=maybe")
        check(re.search(r"invalid value 'maybe' for option rx_page_pool", log) is not None,
              f"no warning naming rx_page_pool and its value:\n{log}")
        now = g.run_ok("cat /sys/module/virtio_net/parameters/rx_page_pool").strip()
        check(now == default, f"rx_page_pool=maybe read back {now}, default {default}")
        log = reload("rx_page_pool=1")
        on = g.run_ok("cat /sys/module/virtio_net/parameters/rx_page_pool").strip()
        probes = re.findall(r"receive buffers.*", log)
        if on == "Y":
            check(probes and all("from page pools" in p for p in probes),
                  f"rx_page_pool=1 read back Y but the probe says: {probes}")
            if listed:
                check_pools(g, "rx_page_pool=1")
            net.tcp_both(g, seconds=1)
        else:
            check("no page pool fragments" in log,
                  f"rx_page_pool=1 read back {on} without a warning:\n{log}")
        ctx.note(f"default {default}, rx_page_pool=1 -> {on}; "
                 f"{'listed over netlink' if listed else 'no page-pool-get'}")
    finally:
        reload("")


suite.add(TestCase("pp.pools", t_pools, PP, "pp", doc=t_pools.__doc__.strip(), timeout=600))
suite.add(TestCase("pp.xdp", t_xdp, PP, "pp", doc=t_xdp.__doc__.strip(), timeout=600))
suite.add(TestCase("pp.option", t_option, PP, "pp", doc=t_option.__doc__.strip(), timeout=400))
# rx_page_pool=1 at load: the same on kernels that have the pools off by
# default (6.1, with the debug kernel's KASAN and kmemleak in particular)
for _t in (t_pools, t_xdp):
    suite.add(TestCase(f"pp.on_{_t.__name__[2:]}", _t, PP_ON, "pp_on",
                       doc=f"{_t.__doc__.strip()} (rx_page_pool=1)", timeout=600))
