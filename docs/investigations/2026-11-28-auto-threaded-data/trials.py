#!/usr/bin/env python3
"""What auto_threaded does under each matrix cell: one boot of ours with
the option, each cell's load started as bench/matrix.py starts it and run
for a while, the guest sampling every 200 ms (in the background, so no
agent round trip falls inside the load) whether threaded NAPI is on and
the idle share of all CPUs (/proc/stat idle + iowait), and the counters
threaded_trials, threaded_switches, rx interrupts and
interrupts_busy_cpu read before and after.  Per cell: trials and switches, the share of samples
in threaded mode, the busy share of the receive interrupts, answers/s.

trials.py KERNEL TOPO CELL[,CELL...] OUT --module KO [--seconds S] [--modopts OPTS]
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # the repository root
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from harness import net  # noqa: E402
from benchlib import matrix as M  # noqa: E402
from benchlib import probe  # noqa: E402

# one line per sample: threaded, and the CPUs' idle and total time (/proc/stat);
# one fork per sample (sleep), so that the sampler takes little of the idle
# time the driver's rule looks at
SAMPLER = r"""while :; do
  read t < /sys/class/net/$IF/threaded
  while read c u n s i w rest; do
    [ "$c" = cpu ] && set -- $rest && echo "$t $((i + w)) $((u + n + s + i + w + $1 + $2))" && break
  done < /proc/stat
  sleep 0.2
done"""


def counters(g) -> dict[str, int]:
    """auto_threaded's counters and the receive interrupts (summed)."""
    st = net.ethtool_stats(g)
    return {"trials": st["threaded_trials"], "switches": st["threaded_switches"],
            "irqs": sum(v for n, v in st.items() if n.startswith("rx") and n.endswith("_interrupts")),
            "busy": sum(v for n, v in st.items() if n.endswith("_interrupts_busy_cpu"))}


def main() -> None:
    ap = probe.parser(__doc__, variants=None, seconds=8.0)
    ap.add_argument("--modopts", default="auto_threaded=1")
    a = ap.parse_args()
    res = []
    v = M.Variant("ours-auto", "ours", modopts=a.modopts)
    with probe.booted(a, v.name, "trials", variant=v) as g:
        ifn = net.ifname(g)
        g.put_file(SAMPLER.encode(), "/tmp/sampler.sh", 0o755)
        for cname in a.cells.split(","):
            out = f"/tmp/samples-{cname}"
            with probe.load(g, cname, probe.ncpu(a), ramp=0.0) as client:
                c0 = counters(g)
                g.run_ok(f"IF={ifn} setsid sh /tmp/sampler.sh > {out} 2>&1 & echo started")
                time.sleep(a.seconds)
                g.run("pkill -f sampler.sh; sleep 0.5", quiet=True)
                c1 = counters(g)
                lat = client.window() if client else {}
            rows = [[int(x) for x in ln.split()] for ln in g.run_ok(f"cat {out}").splitlines()
                    if len(ln.split()) == 3 and ln.replace(" ", "").isdigit()]
            d = {k: c1[k] - c0[k] for k in c0}
            rec = {"cell": cname, "samples": len(rows),
                   "threaded_share": round(sum(r[0] for r in rows) / len(rows), 2),
                   "trials": d["trials"], "switches": d["switches"], "irqs": d["irqs"],
                   "busy_share": round(d["busy"] / d["irqs"], 3) if d["irqs"] else None,
                   "idle_share": round((rows[-1][1] - rows[0][1]) / max(1, rows[-1][2] - rows[0][2]), 3),
                   "threaded": "".join(str(r[0]) for r in rows),
                   "answers_per_s": lat.get("recv") and round(lat["recv"] / a.seconds)}
            res.append(rec)
            print(json.dumps(rec), flush=True)
            probe.save(a.out / "trials.json", res)
            time.sleep(1.0)
        print(g.run("dmesg | grep auto_threaded", quiet=True).out, flush=True)


if __name__ == "__main__":
    main()
