# SPDX-License-Identifier: GPL-2.0-only
"""RSS and hash report tests (QEMU rss=on,hash=on): part of the functional suite.

QEMU 7.2 computes the Toeplitz hash of every received packet in software,
steers it by the guest's indirection table and writes the hash into the
receive header. The tests send UDP flows from the host side and predict,
with their own Toeplitz implementation and the key and table the guest
reports (ethtool -x), which queue each flow must reach and which hash the
guest must see:

* rss.config    ethtool -x/-n defaults, rxhash toggle, refusals;
* rss.spread    per-queue counters follow the default table, a weighted
                table (-X weight), a new key (-X hkey) and rx-flow-hash
                udp4 sd (-N: addresses only);
* rss.hash      with rxhash on, skb->hash (tracepoint napi_gro_receive_entry)
                equals the Toeplitz hash of each flow, as an L4 hash;
* rss.xdp_hash  an XDP program bound to the device gets the same hash and
                its type from bpf_xdp_metadata_rx_hash (6.5+), -ENODATA
                with rxhash off;
* rss.channels  ethtool -L re-spreads a default table; a user table keeps
                fewer channels from being set;
* rss.traffic   TCP both ways and integrity with the 20-byte header.
"""

from __future__ import annotations

import json
import re
import time

from harness import net
from harness.guest import Nic, VMConfig
from harness.runner import Ctx
from harness.util import CheckFailed

from .functional import check, suite

RSS = VMConfig(smp=2, memory=1024, nics=(Nic(queues=4, props="rss=on,hash=on"),))
DPORT = 7777
PAYLOAD = 77  # UDP payload bytes: skb->len 105 at GRO entry


def toeplitz(key: bytes, data: bytes) -> int:
    """The Toeplitz hash of data with key (as in the virtio spec / MS RSS)."""
    k = int.from_bytes(key, "big")
    kbits = len(key) * 8
    h = 0
    for i, byte in enumerate(data):
        for b in range(8):
            if byte & (0x80 >> b):
                h ^= (k >> (kbits - 32 - (i * 8 + b))) & 0xFFFFFFFF
    return h


def ip4(addr: str) -> bytes:
    return bytes(int(x) for x in addr.split("."))


def flow_hash(key: bytes, src: str, dst: str, sport: int | None, dport: int | None) -> int:
    data = ip4(src) + ip4(dst)
    if sport is not None:
        data += sport.to_bytes(2, "big") + dport.to_bytes(2, "big")
    return toeplitz(key, data)


def rxfh(g) -> tuple[list[int], bytes]:
    out = g.run_ok(f"ethtool -x {net.ifname(g)}")
    rows = re.findall(r"^\s*\d+:((?:\s+\d+)+)\s*$", out, re.M)
    table = [int(x) for r in rows for x in r.split()]
    m = re.search(r"RSS hash key:\s*\n\s*(\S+)", out)
    check(bool(table) and m is not None, f"ethtool -x shows no table or key:\n{out}")
    return table, bytes(int(x, 16) for x in m.group(1).split(":"))


SENDER = r"""
import json, socket, sys, time
flows = json.loads(sys.argv[1]); n = int(sys.argv[2]); size = int(sys.argv[3])
socks = []
for sport in flows:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("{src}", sport))
    socks.append(s)
for i in range(n):
    for s in socks:
        s.sendto(b"x" * size, ("{dst}", {dport}))
    time.sleep(0.002)
"""


def send_flows(g, sports: list[int], count: int, payload: int = PAYLOAD) -> None:
    n = g.nics[0]
    code = SENDER.replace("{src}", n.host_ip).replace("{dst}", n.guest_ip) \
        .replace("{dport}", str(DPORT))
    g.host(["python3", "-c", code, json.dumps(sports), str(count), str(payload)], timeout=120)


def pick_flows(key: bytes, table: list[int], queues: int, per_queue: int,
               l4: bool = True, src: str = "10.77.0.1", dst: str = "10.77.0.2") -> dict[int, list[int]]:
    """Source ports whose flow the table sends to each queue."""
    by_q: dict[int, list[int]] = {}
    for sport in range(20000, 40000):
        h = flow_hash(key, src, dst, sport if l4 else None, DPORT if l4 else None)
        q = table[h & (len(table) - 1)]
        if len(by_q.setdefault(q, [])) < per_queue:
            by_q[q].append(sport)
        if all(len(by_q.get(i, [])) >= per_queue for i in set(table)):
            break
    return by_q


def measure(g, sports: list[int], count: int) -> dict[int, int]:
    before = net.queue_packets(g)
    send_flows(g, sports, count)
    time.sleep(0.5)
    after = net.queue_packets(g)
    return net.counter_delta(before, after)["rx"]


def expect_spread(g, key: bytes, table: list[int], sports: list[int], count: int,
                  what: str, l4: bool = True) -> str:
    n = g.nics[0]
    want: dict[int, int] = {}
    for sp in sports:
        h = flow_hash(key, n.host_ip, n.guest_ip, sp if l4 else None, DPORT if l4 else None)
        q = table[h & (len(table) - 1)]
        want[q] = want.get(q, 0) + count
    got = measure(g, sports, count)
    # other traffic (ARP, neighbour discovery) may add a few packets
    bad = {q: (want.get(q, 0), got.get(q, 0)) for q in set(want) | set(got)
           if not 0 <= got.get(q, 0) - want.get(q, 0) <= 5}
    check(not bad, f"{what}: packets per queue (expected, got) differ: {bad}; "
                   f"expected {want}, got {got}")
    return "/".join(str(got.get(q, 0)) for q in range(g.nics[0].queues))


def _prepare(g) -> None:
    """All queue pairs active (2 vCPUs: the driver starts with 2 of 4)."""
    nq = g.nics[0].queues
    if net.channels(g).get("combined") != nq:
        g.run_ok(f"ethtool -L {net.ifname(g)} combined {nq}")
    net.ping(g, count=1)
    net.host_ping(g, count=1)


@suite.test("rss.config", RSS, "rss")
def t_config(ctx: Ctx):
    """ethtool -x/-n defaults, the rxhash toggle, refused requests."""
    g = ctx.g
    ifn = net.ifname(g)
    nq = net.channels(g)["combined"]
    table, key = rxfh(g)
    check(len(table) == 128, f"indirection table has {len(table)} entries, QEMU allows 128")
    check(table == [i % nq for i in range(128)], f"default table is not round robin: {table}")
    check(len(key) == 40, f"key has {len(key)} bytes, QEMU's is 40")
    out = g.run_ok(f"ethtool -x {ifn}")
    check(re.search(r"toeplitz: on", out) is not None, f"hash function not toeplitz:\n{out}")
    for f in ("tcp4", "udp4", "tcp6", "udp6"):
        out = g.run_ok(f"ethtool -n {ifn} rx-flow-hash {f}")
        check("L4 bytes 0 & 1" in out and "IP DA" in out, f"rx-flow-hash {f}:\n{out}")
    k = g.run_ok(f"ethtool -k {ifn} | grep receive-hashing")
    check("[fixed]" not in k, f"rxhash cannot be toggled: {k.strip()}")
    g.run_ok(f"ethtool -K {ifn} rxhash on && ethtool -K {ifn} rxhash off")
    # refusals: inactive queue, other hash function, unhashable fields
    for bad in (f"ethtool -X {ifn} weight 1 1 1 1 1", f"ethtool -X {ifn} hfunc xor",
                f"ethtool -N {ifn} rx-flow-hash ip4 sdfn",
                f"ethtool -N {ifn} rx-flow-hash tcp4 s"):
        r = g.run(bad)
        # ethtool 6.1 -N reports a refusal on stderr but exits 0
        check(r.rc != 0 or "Cannot" in r.err, f"accepted: {bad}")
    check(rxfh(g) == (table, key), "a refused request changed the table or key")
    ctx.note(f"table {len(table)}, key {len(key)} bytes")


@suite.test("rss.spread", RSS, "rss")
def t_spread(ctx: Ctx):
    """Flows land on the queues the table and the Toeplitz hash predict."""
    g = ctx.g
    ifn = net.ifname(g)
    nq = g.nics[0].queues
    _prepare(g)
    notes = []
    table, key = rxfh(g)
    flows = pick_flows(key, table, nq, 2)
    check(len(flows) == nq, f"no flows found for every queue: {flows}")
    sports = [p for q in sorted(flows) for p in flows[q]]
    notes.append("default " + expect_spread(g, key, table, sports, 20, "default table"))

    g.run_ok(f"ethtool -X {ifn} weight 1 0 0 3")
    table2, key2 = rxfh(g)
    check(set(table2) == {0, 3} and table2.count(3) == 96,
          f"weight 1 0 0 3 gave {table2}")
    flows = pick_flows(key2, table2, nq, 3)
    sports = [p for q in sorted(flows) for p in flows[q]]
    notes.append("weight " + expect_spread(g, key2, table2, sports, 20, "weighted table"))

    newkey = bytes((i * 37 + 11) & 0xFF for i in range(len(key)))
    g.run_ok(f"ethtool -X {ifn} equal {nq} hkey " + ":".join(f"{b:02x}" for b in newkey))
    table3, key3 = rxfh(g)
    check(key3 == newkey, "hkey not applied")
    flows = pick_flows(key3, table3, nq, 2)
    sports = [p for q in sorted(flows) for p in flows[q]]
    notes.append("hkey " + expect_spread(g, key3, table3, sports, 20, "new key"))

    # addresses only: every flow between the same two hosts on one queue
    g.run_ok(f"ethtool -N {ifn} rx-flow-hash udp4 sd")
    out = g.run_ok(f"ethtool -n {ifn} rx-flow-hash udp4")
    check("L4" not in out and "IP SA" in out, f"udp4 sd not applied:\n{out}")
    notes.append("udp4-sd " + expect_spread(g, key3, table3, sports, 10, "udp4 sd", l4=False))
    g.run_ok(f"ethtool -N {ifn} rx-flow-hash udp4 sdfn")
    g.run_ok(f"ethtool -X {ifn} default")
    ctx.note(", ".join(notes))


TRACE = "/sys/kernel/tracing"


@suite.test("rss.hash", RSS, "rss")
def t_hash(ctx: Ctx):
    """With rxhash on, skb->hash is the device's Toeplitz hash (L4) of each flow."""
    g = ctx.g
    ifn = net.ifname(g)
    n = g.nics[0]
    _prepare(g)
    table, key = rxfh(g)
    sports = [30001, 30002, 30003, 30004]
    want = {flow_hash(key, n.host_ip, n.guest_ip, sp, DPORT) for sp in sports}
    ev = f"{TRACE}/events/net/napi_gro_receive_entry"
    # One trace session for both halves, told apart by payload size.  The
    # event is enabled once and left on: each enable or disable patches
    # kernel text, and doing that repeatedly has hung TCG guests (this
    # test, enabling a second time, once did in CI); recording stops with
    # tracing_on, which patches nothing.
    on_len, off_len = 20 + 8 + PAYLOAD, 20 + 8 + PAYLOAD + 1
    g.run_ok(f"echo 0 > {TRACE}/tracing_on; echo > {TRACE}/trace; "
             f"echo 'len == {on_len} || len == {off_len}' > {ev}/filter; "
             f"echo 1 > {ev}/enable; echo 1 > {TRACE}/tracing_on")
    try:
        g.run_ok(f"ethtool -K {ifn} rxhash on")
        try:
            send_flows(g, sports, 3)
            time.sleep(0.3)     # received before the switch
        finally:
            g.run_ok(f"ethtool -K {ifn} rxhash off")
        send_flows(g, sports, 3, PAYLOAD + 1)
        time.sleep(0.5)
    finally:
        out = g.run_ok(f"echo 0 > {TRACE}/tracing_on; cat {TRACE}/trace")
    traced = [(int(h, 16), int(l4), int(ln)) for h, l4, ln in
              re.findall(r"hash=0x([0-9a-f]+) l4_hash=(\d) len=(\d+)", out)]
    seen = [(h, l4) for h, l4, ln in traced if ln == on_len]
    off = [(h, l4) for h, l4, ln in traced if ln == off_len]
    check(len(seen) >= len(sports), f"only {len(seen)} traced packets")
    got = {h for h, _ in seen}
    check(got == want and all(l4 == 1 for _, l4 in seen),
          f"skb hashes {sorted(map(hex, got))} (l4 {set(l for _, l in seen)}), "
          f"Toeplitz predicts {sorted(map(hex, want))}")
    check(off and all(h == 0 for h, _ in off), f"rxhash off: hashes {off[:4]}")
    ctx.note(f"{len(seen)} packets, {len(want)} flows: hashes match; "
             f"rxhash off: {len(off)} packets, hash 0")


XDP_RSS_TYPE_L4_IPV4_UDP = 0x29  # enum xdp_rss_hash_type: L3_IPV4 | L4 | L4_UDP
ENODATA = 61


def xdp_hashes(g, sports: list[int]) -> dict[int, tuple[int, int, int]] | None:
    """Run vnet-xdphash while the flows send 3 datagrams each: per source
    port (frames, kfunc return value, hash, type); None without the kfunc."""
    ifn = net.ifname(g)
    bg = g.run_bg(f"vnet-xdphash {ifn} {DPORT} 60")
    try:
        net.wait_ready(bg, "vnet-xdphash")
    except CheckFailed:
        if bg.poll() == 4:      # no such kfunc
            return None
        raise
    try:
        send_flows(g, sports, 3)
        time.sleep(0.5)
    finally:
        g.run("kill -TERM $(pidof vnet-xdphash)")
    rc = bg.wait(30)
    out = bg.output()
    check(rc == 0, f"vnet-xdphash rc={rc}: {out}{bg.stderr()}")
    slots = {int(m[0]): (int(m[1]), int(m[2]), int(m[3], 16), int(m[4])) for m in
             re.findall(r"slot (\d+) frames (\d+) ret (-?\d+) hash 0x([0-9a-f]+) type (\d+)",
                        out)}
    return {sp: slots.get(sp % 64, (0, 0, 0, 0)) for sp in sports}


def check_xdp_hashes(g) -> str | None:
    """bpf_xdp_metadata_rx_hash in a program bound to nic0: each of 4 UDP
    flows' Toeplitz hash as an IPv4 UDP hash with rxhash on, -ENODATA with
    it off.  None when the kernel has no such kfunc."""
    ifn = net.ifname(g)
    n = g.nics[0]
    _, key = rxfh(g)
    sports = [30001, 30002, 30003, 30004]
    want = {sp: flow_hash(key, n.host_ip, n.guest_ip, sp, DPORT) for sp in sports}
    g.run_ok(f"ethtool -K {ifn} rxhash on")
    try:
        on = xdp_hashes(g, sports)
    finally:
        g.run_ok(f"ethtool -K {ifn} rxhash off")
    if on is None:
        return None
    got = {sp: (f, r, hex(h), t) for sp, (f, r, h, t) in on.items()}
    check(all(on[sp] == (3, 0, want[sp], XDP_RSS_TYPE_L4_IPV4_UDP) for sp in sports),
          f"per flow (frames, ret, hash, type) {got}; expected 3 frames each, ret 0, "
          f"type {XDP_RSS_TYPE_L4_IPV4_UDP:#x}, Toeplitz hashes "
          f"{ {sp: hex(h) for sp, h in want.items()} }")
    off = xdp_hashes(g, sports)
    check(off is not None and all(f == 3 and r == -ENODATA for f, r, _, _ in off.values()),
          f"rxhash off: per flow (frames, ret, hash, type) {off}; expected -ENODATA")
    return f"{len(sports)} flows: kfunc hashes match Toeplitz, -ENODATA with rxhash off"


@suite.test("rss.xdp_hash", RSS, "rss")
def t_xdp_hash(ctx: Ctx):
    """XDP RX metadata: bpf_xdp_metadata_rx_hash gives a bound program each
    flow's Toeplitz hash as an IPv4 UDP hash; -ENODATA with rxhash off."""
    _prepare(ctx.g)
    note = check_xdp_hashes(ctx.g)
    net.ping(ctx.g, count=2)
    ctx.note(note or "skipped: this kernel has no bpf_xdp_metadata_rx_hash (6.3+)")


@suite.test("rss.channels", RSS, "rss")
def t_channels(ctx: Ctx):
    """ethtool -L follows with a default table; a user table pins the channel count."""
    g = ctx.g
    ifn = net.ifname(g)
    nq = g.nics[0].queues
    try:
        g.run_ok(f"ethtool -L {ifn} combined 2")
        table, key = rxfh(g)
        check(table == [i % 2 for i in range(len(table))], f"table after -L 2: {table[:16]}")
        net.ping(g, count=1)
        flows = pick_flows(key, table, 2, 2)
        sports = [p for q in sorted(flows) for p in flows[q]]
        spread2 = expect_spread(g, key, table, sports, 10, "2 channels")
        g.run_ok(f"ethtool -L {ifn} combined {nq}")
        table, key = rxfh(g)
        check(table == [i % nq for i in range(len(table))], f"table after -L {nq}: {table[:16]}")
        flows = pick_flows(key, table, nq, 2)
        sports = [p for q in sorted(flows) for p in flows[q]]
        spread4 = expect_spread(g, key, table, sports, 10, f"{nq} channels")
        g.run_ok(f"ethtool -X {ifn} weight 0 0 0 1")
        r = g.run(f"ethtool -L {ifn} combined 2")
        check(r.rc != 0, "ethtool -L 2 accepted while the table uses queue 3")
    finally:
        g.run(f"ethtool -X {ifn} default; ethtool -L {ifn} combined {nq}")
    net.ping(g, count=2)
    ctx.note(f"2 channels {spread2}, {nq} channels {spread4}")


@suite.test("rss.traffic", RSS, "rss")
def t_traffic(ctx: Ctx):
    """TCP both ways and 16 MiB integrity with the longer (hash report) header."""
    g = ctx.g
    _prepare(g)
    g.run_ok(f"ethtool -K {net.ifname(g)} rxhash on")
    tx, rx = net.tcp_both(g, seconds=2)
    r = net.integrity(g, size_mb=16)
    ctx.note(f"tcp tx {tx['bps'] / 1e6:.0f} rx {rx['bps'] / 1e6:.0f} Mbit/s, "
             f"16 MiB {r['tx_seconds']:.1f}/{r['rx_seconds']:.1f}s")
