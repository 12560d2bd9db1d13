# SPDX-License-Identifier: GPL-2.0-only
# Pub cells: does a window with a message over 5 ms go with a batch the
# flush timer sent (timer_flushes > 0, the hold ran its full tx-usecs)?
# Per cell and variant: windows with a flush, how many of them had a
# message over 5 ms, and the same for windows without one.
# python3 tails.py results.json [results.json ...]
import json, sys
from collections import Counter

c = Counter()
for f in sys.argv[1:]:
    for b in json.load(open(f))['boots']:
        for run in b['runs']:
            if not run.get('ok') or not run['workload'].startswith('pub'):
                continue
            gs = run['window'].get('guest_stats') or {}
            tf = sum(v for k, v in gs.items() if k.endswith('timer_flushes'))
            slow = run['metrics'].get('max_us', 0) > 5000
            c[(run['workload'], b['variant'], tf > 0, slow)] += 1
            c[(run['workload'], b['variant'], 'flushes')] += tf
cells = sorted({k[0] for k in c})
for v in ('stock', 'ours', 'ours-b'):
    print(v)
    for cell in cells:
        w = [c[(cell, v, t, s)] for t in (True, False) for s in (True, False)]
        if not sum(w):
            continue
        print('  %-15s with a timer flush %2d windows (%4d flushes), %2d over 5 ms | without %2d, %2d over 5 ms' % (
            cell, w[0] + w[1], c[(cell, v, 'flushes')], w[0], w[2] + w[3], w[2]))
