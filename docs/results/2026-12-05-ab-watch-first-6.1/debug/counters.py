# SPDX-License-Identifier: GPL-2.0-only
# Sum the debug counters (dbgt_*) and the kick counters of every TX queue
# over each cell's windows: python3 counters.py run*/results.json
import json, sys
from collections import Counter, defaultdict
tot = defaultdict(Counter)
for f in sys.argv[1:]:
    for b in json.load(open(f))['boots']:
        for run in b['runs']:
            if not run.get('ok'): continue
            c = tot[run['workload']]
            c['windows'] += 1
            for k, v in (run['window'].get('guest_stats') or {}).items():
                if not k.startswith('tx_queue_'): continue
                name = k.split('_', 3)[3]
                if name.startswith('dbg') or name in ('timer_flushes','waiting_kicks','poll_flushes','packets','kicks'):
                    c[name] += v
for w, c in sorted(tot.items()):
    print(w, dict(c))
