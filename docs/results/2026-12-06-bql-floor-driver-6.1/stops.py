#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Queue stops per cell and variant, summed over the windows (ethtool -S
tx_queue_N_queue_stops, from --guest-stats).  Usage: stops.py RUNDIR"""
import json,re,sys,collections
R=json.load(open(sys.argv[1]+'/results.json'))
tab=collections.defaultdict(list)
for b in R['boots']:
    for r in b['runs']:
        gs=r['window'].get('guest_stats') or {}
        st=sum(v for k,v in gs.items() if re.match(r'tx_queue_\d+_queue_stops$',k) and isinstance(v,(int,float)))
        tab[(r['workload'],b['variant'])].append(st)
for k in sorted(tab): print(k, sum(tab[k]), 'windows with stops', sum(1 for x in tab[k] if x), 'of', len(tab[k]))
