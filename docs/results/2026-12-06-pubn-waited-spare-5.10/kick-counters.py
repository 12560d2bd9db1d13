#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Held-batch counters per cell and variant: medians over the windows of
ethtool -S summed over the send queues (--guest-stats).  Usage:
kick-counters.py RUNDIR CELL,CELL,..."""
import json,re,sys,collections,statistics as st
R=json.load(open(sys.argv[1]+'/results.json'))
cells=sys.argv[2].split(',')
keys=['packets','kicks','kicks_held','poll_flushes','waiting_kicks','batch_kicks','spared_senders','flush_timer_arms','timer_flushes','queue_stops']
tab=collections.defaultdict(list)
for b in R['boots']:
    for r in b['runs']:
        if r['workload'] not in cells: continue
        gs=r['window'].get('guest_stats') or {}
        agg=collections.Counter()
        for k,v in gs.items():
            m=re.match(r'tx_queue_\d+_(.*)',k)
            if m and isinstance(v,(int,float)): agg[m.group(1)]+=v
        tab[(r['workload'],b['variant'])].append(agg)
print('| cell | variant | windows | '+' | '.join(keys)+' |')
print('|'+'---|'*(len(keys)+3))
for (c,v),L in sorted(tab.items()):
    print(f'| {c} | {v} | {len(L)} | '+' | '.join(str(st.median(a[k] for a in L)) for k in keys)+' |')
