#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""From the last local-APIC EOI or timer write to each TX kick, per boot of
a bench/matrix.py --keep-logs run: eoi-kick.py RUN_DIR (from the repo top)."""
import sys, bisect
sys.path[:0]=["bench","tests"]
import importlib.util
spec=importlib.util.spec_from_file_location("tl","bench/timeline.py"); tl=importlib.util.module_from_spec(spec); spec.loader.exec_module(tl)
from pathlib import Path
import glob
for d in sorted(glob.glob(sys.argv[1] + "/logs/*")):
    p=Path(d)/"trace.log.xz"
    if not p.exists(): p=Path(d)/"trace.log"
    vq, ev = tl.read_trace(p)
    ev.sort()
    eoi=[e[0] for e in ev if e[1]=="apic_mem_writel" and e[3]==tl.APIC_EOI]
    tmr=[e[0] for e in ev if e[1]=="apic_mem_writel" and e[3]==tl.APIC_TIMER]
    kicks=[]
    for e in ev:
        if e[1]=="virtio_queue_notify":
            n=tl.resolve_vq(vq,e[2])
            if n is not None and n%2==1: kicks.append(e[0])
    ds=[]; dt=[]
    for k in kicks:
        i=bisect.bisect_left(eoi,k)
        if i: ds.append(k-eoi[i-1])
        j=bisect.bisect_left(tmr,k)
        if j: dt.append(k-tmr[j-1])
    ds=[x for x in ds if x<1000]; dt=[x for x in dt if x<1000]
    q=lambda xs,f: sorted(xs)[int(f*len(xs))] if xs else None
    print(Path(d).name, "kicks",len(kicks), "eoi->kick p10/p50/p90", q(ds,.1),q(ds,.5),q(ds,.9), "timerwrite->kick p50/p90", q(dt,.5), q(dt,.9))
