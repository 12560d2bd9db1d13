# SPDX-License-Identifier: GPL-2.0-only
"""Parity with the in-tree driver: what a user sees, stock against ours.

One guest per device configuration boots with our module; the test takes a
snapshot of everything a user or a monitoring script reads about the
interface (ethtool -k/-l/-g/-c/-i/-x/-n/-T/-S names, link settings,
`ip -d link`, /sys/class/net/<if>/ and its queues/, the netdev netlink
family's dev-get, queue-get, napi-get, qstats-get and page-pool-get), swaps in the stock
virtio_net on the same virtio device, takes the same snapshot, and swaps
ours back. Then:

* every offload the stock driver turns on must be on with ours (no
  exceptions), and every offload a user may toggle on stock must be
  toggleable on ours;
* every ethtool -S name of the stock driver must exist with ours;
* any other difference must be listed in DIFFERENCES below with its reason
  (the same list is in docs/reference.md, in short in the README); an
  unlisted difference fails the test.

Values that change by themselves (ifindex, carrier counters, byte queue
limits, the random RSS key) are not compared.
"""

from __future__ import annotations

import re

from harness import net
from harness.guest import Nic, VMConfig
from harness.runner import Ctx, TestCase
from harness.util import CheckFailed

from .functional import suite

# What every snapshot collects; sections start with "@@@ name".
SNAPSHOT = r"""
i=$(vnet ifname 0)
sec() { echo "@@@ $1"; }
sec k; ethtool -k $i
sec l; ethtool -l $i 2>&1
sec g; ethtool -g $i 2>&1
sec c; ethtool -c $i 2>&1
sec i; ethtool -i $i
sec T; ethtool -T $i 2>&1
sec base; ethtool $i 2>&1
sec x; ethtool -x $i 2>&1
for f in tcp4 udp4 tcp6 udp6 ip4 ip6; do sec n-$f; ethtool -n $i rx-flow-hash $f 2>&1; done
sec S; ethtool -S $i 2>&1 | sed -n 's/^ *\([^:]*\):.*/\1/p'
sec link; /usr/sbin/ip -d link show dev $i
sec sysfs; cd /sys/class/net/$i
for f in *; do [ -f "$f" ] && printf '%s=%s\n' "$f" "$(cat $f 2>&1 | head -n 1)"; done
sec queues; cd queues
find . -type f | sort | while read -r f; do printf '%s=%s\n' "$f" "$(cat $f 2>&1 | head -n 1)"; done
sec end
"""

# Load the stock module (with the dependencies modules.dep names) in place
# of ours, and back.
TO_STOCK = r"""
set -e
rmmod virtio_net
for d in $(awk '$1 == "virtio_net" { for (i = 3; i <= NF; i++) print $i }' /vnet/modules.dep); do
    vnet modprobe $d
done
insmod $(awk '$1 == "virtio_net" { print $2 }' /vnet/modules.dep)
vnet nicup
"""
TO_OURS = "set -e; rmmod virtio_net; vnet load; vnet nicup"

# Read again, never compared.
VOLATILE = [
    r"sysfs\.(ifindex|iflink|carrier_changes|carrier_up_count|carrier_down_count|uevent)",
    r"queues\..*/byte_queue_limits/(limit|inflight)",
    r"x\.key",
]

# Every difference a user may see, and why: (regex over the difference
# names the comparison produces, such as "c.rx-usecs" or "sysfs.foo";
# reason; None or a condition on the two snapshots). The same list, in
# words, is in docs/reference.md ("Differences from the in-tree driver,
# in detail").


def stock_lacks_rss(stock: dict, ours: dict) -> bool:
    """The in-tree driver of this kernel has no RSS/hash support (5.10)."""
    return "not supported" in stock["n"].get("tcp4", "")


def hash_header(stock: dict, ours: dict) -> bool:
    """Ours negotiated the hash report, the in-tree driver did not."""
    return stock_lacks_rss(stock, ours) and ours["x"].get("key_len", "-").isdigit()


def stock_no_queue_napi(stock: dict, ours: dict) -> bool:
    """The in-tree driver of this kernel links no queue to a NAPI (before 6.13)."""
    return stock["nl"].get("queue.rx.napi-id") == "none"


def ours_lacks_zc(stock: dict, ours: dict) -> bool:
    """Ours offers no AF_XDP zero-copy on this kernel (no premapped virtqueue API)."""
    return ours["nl"].get("dev.xdp-features.xsk-zerocopy") != "yes"


def stock_no_pools(stock: dict, ours: dict) -> bool:
    """The in-tree driver of this kernel has no receive page pools (before 7.x)."""
    return stock["nl"].get("pool.count") == "0"


def qstats_alloc_fail_only(stock: dict, ours: dict) -> bool:
    """Ours' qstats names are the in-tree ones plus rx-alloc-fail."""
    for k in ("qstats.device", "qstats.rx"):
        a = set(stock["nl"].get(k, "").split()) - {"absent"}
        b = set(ours["nl"].get(k, "").split()) - {"absent"}
        if not a <= b or not b - a <= {"rx-alloc-fail"}:
            return False
    return True


DIFFERENCES = [
    (r"i\.version", "ours reports the package version (modinfo version); the in-tree "
                    "driver reports 1.0.0", None),
    (r"c\.(rx-usecs|rx-frames|tx-usecs|tx-frames|tx-usecs-irq|tx-frames-irq|rx-usecs-high|"
     r"Adaptive RX|Adaptive TX|tx-aggr-max-frames|tx-aggr-time-usecs)",
     "coalescing: ours defers TX kicks and completion interrupts and moderates "
     "RX interrupts in the guest by default (module options tx_frames, tx_usecs, "
     "rx_usecs...); the in-tree driver reports the device's settings, 0/1 "
     "unless the device coalesces", None),
    (r"queues\.tx-\d+/byte_queue_limits/limit_min",
     "each send queue's BQL floor is 64 KiB (completions come in reclaim batches, and "
     "a limit learnt from 0 stopped lightly used queues); in-tree 0", None),
    (r"S\+\..*", "ethtool -S: ours adds its own counters after the in-tree names "
                 "(kicks held, deferrals, drops by reason...)", None),
    (r"(x\..*|n\..*|k\.receive-hashing)",
     "RSS and hash report: ours supports them on every kernel (ethtool -x/-X, "
     "-n/-N rx-flow-hash, rxhash); the in-tree driver only from 5.17", stock_lacks_rss),
    (r"queues\.rx-\d+/virtio_net/mergeable_rx_buffer_size",
     "with the hash report negotiated (ours on 5.10) the receive header is 8 bytes "
     "longer, and so are mergeable buffers", hash_header),
    (r"nl\.dev\.xdp-features\.(ndo-xmit|ndo-xmit-sg)",
     "netlink dev-get: ours is an XDP redirect target (ndo_xdp_xmit) without a program "
     "of its own; the in-tree driver only while one is attached, and reports it only then",
     None),
    (r"nl\.dev\.(xdp-features\.xsk-zerocopy|xdp-zc-max-segs)",
     "AF_XDP zero-copy: both drivers have it from 6.13 (ours through compat probes: on "
     "a kernel without the premapped virtqueue API ours binds in copy mode only)",
     ours_lacks_zc),
    (r"nl\.queue\.rx\.(napi-id|napi-listed)",
     "netlink queue-get: ours links each queue to its NAPI (6.8+, for busy polling and "
     "SO_INCOMING_NAPI_ID users); the in-tree driver from 6.13 on", stock_no_queue_napi),
    (r"nl\.napi\.irq",
     "netlink napi-get: ours links each NAPI to its virtqueue's IRQ; the in-tree driver "
     "links none", None),
    (r"nl\.pool\..*",
     "netlink page-pool-get: ours takes receive buffers from a page pool per queue pair "
     "from 6.8 on (rx_page_pool); the in-tree driver from 7.x on", stock_no_pools),
    (r"nl\.qstats\.(device|rx)",
     "netlink qstats-get: ours also reports rx-alloc-fail (receive buffers it could not "
     "allocate); the in-tree driver does not", qstats_alloc_fail_only),
]


def sections(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    name = None
    for line in text.splitlines():
        if line.startswith("@@@ "):
            name = line[4:].strip()
            out[name] = ""
        elif name:
            out[name] += line + "\n"
    if "end" not in out:
        raise CheckFailed(f"snapshot incomplete (sections {sorted(out)})")
    return out


def kv_colon(text: str) -> dict[str, str]:
    """'key: value' lines of ethtool; a 'Heading:' line prefixes what follows
    ("Pre-set maximums.RX"), a line without a colon counts as present."""
    res = {}
    prefix = ""
    for line in text.splitlines():
        s = line.strip()
        if not s or re.match(r"^[A-Z][\w ]* (parameters|settings|info)? ?for \S+:$", s) \
                or re.match(r"^(Features|Settings) for ", s):
            continue
        m = re.match(r"Adaptive RX: (\S+)\s+TX: (\S+)", s)
        if m:
            res["Adaptive RX"], res["Adaptive TX"] = m.group(1), m.group(2)
            continue
        k, sep, v = s.partition(":")
        if sep and not v.strip():
            prefix = k.strip() + "."
        elif sep:
            res[prefix + k.strip()] = v.strip()
        else:
            res[prefix + s] = "yes"
    return res


def parse_features(text: str) -> dict[str, tuple[bool, bool]]:
    """ethtool -k -> {name: (on, fixed)}."""
    res = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\w-]+): (on|off)( \[fixed\])?", line)
        if m:
            res[m.group(1)] = (m.group(2) == "on", bool(m.group(3)))
    return res


def parse_rxfh(text: str) -> dict[str, str]:
    """ethtool -x: table (as text), key length, hash functions."""
    res = {}
    table = re.findall(r"^\s*\d+:((?:\s+\d+)+)\s*$", text, re.M)
    res["table"] = " ".join(" ".join(t.split()) for t in table) if table else "-"
    m = re.search(r"RSS hash key:\s*\n\s*(\S+)", text)
    key = m.group(1) if m else "-"
    res["key_len"] = str(len(key.split(":"))) if ":" in key else key
    res["key"] = key
    for fn, state in re.findall(r"^\s+(\w+): (on|off)$", text, re.M):
        res[f"hfunc.{fn}"] = state
    res["indir_error"] = "yes" if re.search(r"indirection table.*\n.*not supported", text) else "no"
    return res


def parse_link(text: str) -> dict[str, str]:
    """ip -d link: flags, mtu/qdisc/qlen and the detail words, index dropped."""
    res = {}
    first, _, rest = text.partition("\n")
    m = re.match(r"\d+: (\S+): <([^>]*)> (.*)", first)
    if m:
        res["name"] = m.group(1).rstrip(":")
        res["flags"] = m.group(2)
        words = m.group(3).split()
        for k, v in zip(words[::2], words[1::2]):
            res[k] = v
    words = rest.split()
    # "link/ether MAC brd MAC" then "key value" pairs
    for k, v in zip(words[::2], words[1::2]):
        if k not in ("link/ether", "brd"):
            res[k] = v
    return res


def parse_kv_eq(text: str) -> dict[str, str]:
    res = {}
    for line in text.splitlines():
        k, sep, v = line.partition("=")
        if sep:
            res[k.strip("./")] = v.strip()
    return res


def snapshot(g) -> dict[str, dict[str, str]]:
    s = sections(g.run_ok(SNAPSHOT, timeout=120))
    snap = {
        "k": {k: f"{'on' if on else 'off'}{' fixed' if fx else ''}"
              for k, (on, fx) in parse_features(s["k"]).items()},
        "l": kv_colon(s["l"]),
        "g": kv_colon(s["g"]),
        "c": kv_colon(s["c"]),
        "i": kv_colon(s["i"]),
        "T": kv_colon(s["T"]),
        "base": kv_colon(s["base"]),
        "x": parse_rxfh(s["x"]),
        "S": {n: "yes" for n in s["S"].split()},
        "link": parse_link(s["link"]),
        "sysfs": parse_kv_eq(s["sysfs"]),
        "queues": parse_kv_eq(s["queues"]),
    }
    for f in ("tcp4", "udp4", "tcp6", "udp6", "ip4", "ip6"):
        snap["n"] = snap.get("n", {})
        snap["n"][f] = " ".join(s[f"n-{f}"].split())
    snap["nl"] = netlink_view(g)
    return snap


XDP_ACT = ("basic", "redirect", "ndo-xmit", "xsk-zerocopy", "hw-offload", "rx-sg",
           "ndo-xmit-sg")
XDP_RX_METADATA = ("timestamp", "hash", "vlan-tag")
XSK_FLAGS = ("tx-timestamp", "tx-checksum", "tx-launch-time-fifo")


def _how_many(have: int, total: int) -> str:
    return "none" if not have else "all" if have == total else f"{have} of {total}"


def netlink_view(g) -> dict[str, str]:
    """The netdev generic netlink family's view (6.3+, parts later): dev-get
    flags by name, the shape of queue-get and napi-get (NAPI ids and IRQ
    numbers differ between drivers and boots: only who has one is
    compared, and the per-NAPI settings), qstats-get attribute names.
    Empty where the kernel has no such family or operation."""
    res: dict[str, str] = {}
    dev = net.nl_dev(g) or {}
    for attr, names in (("xdp-features", XDP_ACT), ("xdp-rx-metadata-features", XDP_RX_METADATA),
                        ("xsk-features", XSK_FLAGS)):
        if attr in dev:
            for bit, n in enumerate(names):
                res[f"dev.{attr}.{n}"] = "yes" if dev[attr] >> bit & 1 else "no"
    if "xdp-zc-max-segs" in dev:
        res["dev.xdp-zc-max-segs"] = str(dev["xdp-zc-max-segs"])
    queues = net.nl_queues(g)
    napis = net.nl_napis(g)
    if queues is not None:
        for kind in ("rx", "tx"):
            # 6.12 shows napi-id 0 for a NAPI without an id (TX NAPI): none
            qs = [{k: x for k, x in v.items() if (k, x) != ("napi-id", 0)}
                  for (t, _), v in queues.items() if t == kind]
            res[f"queue.{kind}.count"] = str(len(qs))
            res[f"queue.{kind}.napi-id"] = _how_many(sum("napi-id" in v for v in qs), len(qs))
            res[f"queue.{kind}.xsk"] = _how_many(sum("xsk" in v for v in qs), len(qs))
            ids = [v["napi-id"] for v in qs if "napi-id" in v]
            res[f"queue.{kind}.napi-distinct"] = "yes" if len(set(ids)) == len(ids) else "no"
            if napis is not None:
                res[f"queue.{kind}.napi-listed"] = _how_many(sum(i in napis for i in ids),
                                                             len(ids))
    if napis is not None:
        res["napi.count"] = str(len(napis))
        for attr in ("irq", "pid"):
            res[f"napi.{attr}"] = _how_many(sum(attr in v for v in napis.values()), len(napis))
        if napis and queues is not None:
            irqs = [v["irq"] for v in napis.values() if "irq" in v]
            res["napi.irq-distinct"] = "yes" if len(set(irqs)) == len(irqs) else "no"
        for attr in ("defer-hard-irqs", "gro-flush-timeout", "irq-suspend-timeout", "threaded"):
            res[f"napi.{attr}"] = " ".join(sorted({str(v[attr]) for v in napis.values()
                                                   if attr in v})) or "absent"
    pools = net.nl_pools(g)
    if pools is not None:
        idx = int(g.run_ok("cat /sys/class/net/$(vnet ifname 0)/ifindex").strip())
        mine = [p for p in pools if p.get("ifindex") == idx]
        res["pool.count"] = str(len(mine))
        res["pool.detached"] = str(sum("detach-time" in p for p in mine))
        if queues is not None:
            rx_ids = [v["napi-id"] for (t, _), v in queues.items()
                      if t == "rx" and v.get("napi-id")]
            res["pool.rx-queue-napi"] = _how_many(
                sum(sum(p.get("napi-id") == i for p in mine) == 1 for i in rx_ids), len(rx_ids))
    qstats = net.nl_qstats_names(g)
    if qstats is not None:
        res["qstats.device"] = " ".join(qstats.get("device", [])) or "absent"
        for kind in ("rx", "tx"):
            names = sorted({n for k, v in qstats.items() if k.startswith(kind + " ") for n in v})
            res[f"qstats.{kind}"] = " ".join(names) or "absent"
    return res


def compare(stock: dict, ours: dict) -> tuple[list[str], list[tuple[str, str, str]]]:
    """-> (hard failures, differences as (name, stock, ours))."""
    hard = []
    diffs = []
    vol = [re.compile(v) for v in VOLATILE]
    for sec in stock:
        a, b = stock[sec], ours.get(sec, {})
        for k in sorted(set(a) | set(b)):
            name = f"{sec}.{k}"
            if any(v.fullmatch(name) for v in vol):
                continue
            sa, so = a.get(k), b.get(k)
            if sa == so:
                continue
            if sec == "k" and sa and so:
                s_on, o_on = sa.startswith("on"), so.startswith("on")
                if s_on and not o_on:
                    hard.append(f"offload {k}: on with the in-tree driver, {so} with ours")
                    continue
                if "fixed" not in sa and "fixed" in so:
                    hard.append(f"offload {k}: the in-tree driver lets the user toggle "
                                f"it ({sa}), ours does not ({so})")
                    continue
                if o_on and not s_on:
                    name = f"k+.{k}"
            if sec == "S":
                if sa and not so:
                    hard.append(f"ethtool -S {k}: in-tree counter missing with ours")
                    continue
                name = f"S+.{k}"
            diffs.append((name, str(sa), str(so)))
    return hard, diffs


def explain(name: str, stock: dict, ours: dict) -> str | None:
    for rx, why, when in DIFFERENCES:
        if re.fullmatch(rx, name) and (when is None or when(stock, ours)):
            return why
    return None


def swap(g, script: str, must_ping: bool = True) -> str:
    """Swap drivers; ping once the interface is up (a failure only counts
    for ours: with rss=on, QEMU 7.2's software steering may hold packets
    from the in-tree driver, see rss.c)."""
    r = g.run(script, timeout=120)
    if r.rc != 0:
        raise CheckFailed(f"driver swap failed (rc={r.rc}):\n{script}\n{r.out[-1500:]}{r.err[-1500:]}")
    g.refresh_nics()
    try:
        net.ping(g, count=2)
    except CheckFailed as e:
        if must_ping:
            raise
        return str(e).splitlines()[0]
    return ""


def parity(ctx: Ctx) -> None:
    g = ctx.g
    if ctx.driver != "ours":
        raise CheckFailed("the parity check compares ours with the in-tree driver: "
                          "run it with --module")
    # let the link and the rx-mode work settle the same way for both
    net.ping(g, count=2)
    ours = snapshot(g)
    stock_ping = swap(g, TO_STOCK, must_ping=False)
    try:
        stock = snapshot(g)
    finally:
        swap(g, TO_OURS)
    if stock_ping:
        ctx.note(f"in-tree driver: {stock_ping}")
    hard, diffs = compare(stock, ours)
    unexplained = [d for d in diffs if explain(d[0], stock, ours) is None]
    lines = [f"  {n}: in-tree {s!r}, ours {o!r}" for n, s, o in unexplained]
    if hard or unexplained:
        raise CheckFailed("parity with the in-tree driver:\n"
                          + "".join(f"  {h}\n" for h in hard)
                          + ("differences not listed in DIFFERENCES:\n" + "\n".join(lines)
                             if lines else ""))
    reasons = sorted({explain(n, stock, ours) for n, _, _ in diffs})
    ctx.note(f"{len(diffs)} listed differences ({len(reasons)} reasons), "
             f"{sum(len(v) for v in ours.values())} values compared")


# Device configurations compared (one boot each).
CONFIGS = {
    "default": VMConfig(smp=2, memory=1024, nics=(Nic(queues=2),)),
    "rss": VMConfig(smp=2, memory=1024, nics=(Nic(queues=2, props="rss=on,hash=on"),)),
    "mrg_off": VMConfig(smp=2, memory=1024, nics=(Nic(queues=1, props="mrg_rxbuf=off"),)),
}

for _name, _cfg in CONFIGS.items():
    suite.add(TestCase(f"parity.{_name}", parity, _cfg, f"parity.{_name}",
                       doc=f"stock vs ours on the same device ({_cfg.nics[0].describe()}): "
                           "offloads, ethtool, ip -d link, sysfs, netdev netlink; "
                           "differences listed"))
