#!/usr/bin/env python3
"""Per boot (stock, stock napi_tx=0, ours), run CELLS windows and record the
guest's TcpExt/Udp counter deltas per transaction.

netstat_ab.py KERNEL TOPO CELLS OUT --module KO [--rounds N] [--boots N]
"""
from __future__ import annotations
import argparse, json, sys, time
from pathlib import Path
REPO = Path(__file__).resolve().parents[3]  # the repository root
sys.path.insert(0, str(REPO / "bench")); sys.path.insert(0, str(REPO / "tests"))
from harness import Guest, Nic, VMConfig  # noqa
from harness import net  # noqa
from benchlib import workloads as B  # noqa
from benchlib import matrix as M  # noqa
import bench as BC  # noqa


KPROBE = r"""
T=/sys/kernel/tracing; [ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null || T=/sys/kernel/debug/tracing
[ -d $T/events ] || mount -t debugfs nodev /sys/kernel/debug
echo 0 > $T/tracing_on; echo > $T/trace
cat /sys/class/net/eth0/queues/rx-*/mergeable_rx_buffer_size
echo 'p:vngro napi_gro_receive truesize=+216(%si):u32 len=+112(%si):u32 dlen=+116(%si):u32' > $T/kprobe_events
echo 'p:vnhp tcp_rcv_established truesize=+216(%si):u32 len=+112(%si):u32 fwd=+264(%di):s32 pred=+1444(%di):x32 flagw=+12(+208(%si)):x32 rmem=+240(%di):s32 rcvbuf=+280(%di):s32 rcvnxt=+1464(%di):u32 seq=+4(+208(%si)):u32' >> $T/kprobe_events || echo KPROBE-FAIL
echo 1 > $T/events/kprobes/vnhp/enable; echo 1 > $T/events/kprobes/vngro/enable; echo 1 > $T/tracing_on; sleep 0.5; echo 0 > $T/tracing_on
grep vn $T/trace | head -800; echo 0 > $T/events/kprobes/vnhp/enable; echo 0 > $T/events/kprobes/vngro/enable; echo > $T/kprobe_events
"""


def snap(g):
    out = g.run("cat /proc/net/netstat /proc/net/snmp", timeout=30, quiet=True).out.splitlines()
    res = {}
    for i in range(0, len(out) - 1, 2):
        h, v = out[i].split(), out[i + 1].split()
        if h[0] != v[0]:
            continue
        for k, x in zip(h[1:], v[1:]):
            try:
                res[h[0].rstrip(":") + "." + k] = int(x)
            except ValueError:
                pass
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernel"); ap.add_argument("topo"); ap.add_argument("cells")
    ap.add_argument("out", type=Path)
    ap.add_argument("--module", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--boots", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--variants", default="stock-notx,ours,stock")
    ap.add_argument("--ours-setup", default="")
    ap.add_argument("--kprobe", action="store_true",
                    help="log skb truesize and forward allocation (6.1.0-56 offsets; "
                         "the napi_gro_receive probe can crash the guest, in-tree driver too)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    ncpu, nq = B.topo_parse(a.topo)
    res = []
    for boot in range(a.boots):
        for v in a.variants.split(","):
            driver = "ours" if v.startswith("ours") else "stock"
            cfg = VMConfig(smp=ncpu, memory=1024, nics=(Nic(queues=nq),),
                           trace_events=BC.TRACE_EVENTS,
                           modopts="napi_tx=0" if v == "stock-notx" else "")
            g = Guest(a.kernel, cfg, driver=driver,
                      module=a.module if driver == "ours" else None, name=f"ns-{v}")
            try:
                g.boot()
                ifname = net.ifname(g)
                if v.startswith("ours") and a.ours_setup and v != "ours":
                    g.run_ok(f"ethtool -C {ifname} {a.ours_setup}", timeout=30)
                M.start_guest_servers(g, ncpu)
                for cname in a.cells.split(","):
                    cell = M.CELLS[cname]
                    client = M.LoadClient(g, cell, ncpu)
                    time.sleep(1.0)
                    for rnd in range(a.rounds):
                        client.window()
                        s0 = snap(g)
                        time.sleep(a.seconds / 2)
                        if rnd == 0 and a.kprobe:
                            pr = g.run(KPROBE, timeout=60, quiet=True).out
                            (a.out / f"probe-{boot}-{v}-{cname}.txt").write_text(pr)
                        time.sleep(a.seconds / 2)
                        w = client.window()
                        s1 = snap(g)
                        d = {k: s1[k] - s0.get(k, 0) for k in s1 if s1[k] != s0.get(k, 0)}
                        n = max(1, w["recv"])
                        rec = {"boot": boot, "variant": v, "cell": cname, "round": rnd, **w,
                               "delta": d}
                        res.append(rec)
                        keys = ("TcpExt.TCPAutoCorking", "TcpExt.DelayedACKs", "Tcp.OutSegs",
                                "Tcp.InSegs", "TcpExt.TCPHPAcks", "TcpExt.TCPPureAcks")
                        print(f"{boot} {v:<10} {cname:<10} r{rnd} recv {w['recv']:>6} "
                              f"p50 {w['p50_us']:>7} " +
                              " ".join(f"{k.split('.')[1]}={d.get(k, 0) / n:.3f}" for k in keys),
                              flush=True)
                    client.stop()
                eth = g.run(f"ethtool -S {ifname}", timeout=30, quiet=True).out
                (a.out / f"ethtool-S-{boot}-{v}.txt").write_text(eth)
            finally:
                g.shutdown()
            (a.out / "windows.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
