# SPDX-License-Identifier: GPL-2.0-only
# The batches the flush timer sent, from the debug counters of
# debug-counters.patch (ethtool -S of each window, all TX queues): what
# opened each (dbgo_*), its packets (dbg_tf_pkts), the opener's socket at
# the flush (dbgw_*: opener released at send, data unsent in the socket,
# TSQ_THROTTLED set, congestion window full, a TCP opener at all) and the
# time from its task's last sleep to the opener (dbgh_*).  Per cell kind
# (pub, tx) over all windows of the given runs.
# python3 openers.py run*/results.json
import json, sys
from collections import Counter, defaultdict

OPEN = ['bl_task', 'bl_sirq', 'lg_task', 'lg_sirq', 'other']
SOCK = ['tcp', 'rel', 'unsent', 'thr', 'cwnd']
WAKE = ['lt1ms', 'lt4ms', 'lt16ms', 'ge16ms', 'notask']
tot = defaultdict(Counter)
for f in sys.argv[1:]:
    for b in json.load(open(f))['boots']:
        for run in b['runs']:
            if not run.get('ok'):
                continue
            c = tot[run['workload'].split('-')[0]]
            c['windows'] += 1
            for k, v in (run['window'].get('guest_stats') or {}).items():
                if not k.startswith('tx_queue_'):
                    continue
                name = k.split('_', 3)[3]
                if name in ('timer_flushes', 'dbg_tf_pkts', 'flush_timer_arms', 'packets'):
                    c[name] += v
                for pre, names in (('dbgo_', OPEN), ('dbgw_', SOCK), ('dbgh_', WAKE)):
                    if name.startswith(pre) and name[len(pre):] in names:
                        c[name] += v
for kind, c in sorted(tot.items()):
    tf = c['timer_flushes']
    print('%s: %d windows, %d packets, %d flush timer arms, %d timer flushes, %.1f packets each' % (
        kind, c['windows'], c['packets'], c['flush_timer_arms'], tf, c['dbg_tf_pkts'] / max(tf, 1)))
    for pre, names in (('dbgo_', OPEN), ('dbgw_', SOCK), ('dbgh_', WAKE)):
        print('  ' + ' '.join('%s %d' % (n, c[pre + n]) for n in names))
