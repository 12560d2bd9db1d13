# SPDX-License-Identifier: GPL-2.0-only
# Per cell and variant over the windows of a matrix run: delivered rate and
# one-way delay (pub cells) or Mbit/s; exits per packet, segments released
# at send per packet, and per window the kicks held, of them batches the
# flush timer sent (tf) and packets that waited for a receive poll's end.
# python3 percells.py results.json  (queue names of 6.1: tx_queue_0_x, of 6.12 on: tx0_x)
import json, re, statistics as st, sys

r = json.load(open(sys.argv[1]))
d = {}
for b in r['boots']:
    for run in b['runs']:
        if not run.get('ok'):
            continue
        gs = run['window'].get('guest_stats', {}) or {}
        q = {}
        for k, v in gs.items():
            m = re.match(r'(?:tx_queue_|tx)\d+_(.*)', k)
            if m:
                q[m.group(1)] = q.get(m.group(1), 0) + v
        txp = run['window']['tap']['guest_tx_packets'] or 1
        ld = run.get('load') or {}
        d.setdefault((run['workload'], b['variant']), []).append(dict(
            L=run['metrics'], exits=run['metrics'].get('exits_per_unit', 0),
            rate=ld['recv'] / ld['seconds'] if ld.get('seconds') else 0,
            rel=q.get('released_at_send', 0) / txp, held=q.get('kicks_held', 0),
            tf=q.get('timer_flushes', 0), poll=q.get('poll_flushes', 0)))
med = st.median
for c in sorted(set(k[0] for k in d)):
    print('==', c)
    for v in ('stock', 'ours', 'ours-b'):
        w = d.get((c, v), [])
        if not w:
            continue
        L = [x['L'] for x in w]
        tail = 'exits/pkt %.2f rel/pkt %.2f held %5.0f tf %4.0f poll %4.0f' % (
            med([x['exits'] for x in w]), med([x['rel'] for x in w]),
            med([x['held'] for x in w]), med([x['tf'] for x in w]), med([x['poll'] for x in w]))
        if 'mbps' in L[0]:
            m = [x['mbps'] for x in L]
            print('  %-7s n=%2d mbps med %6.0f min %6.0f max %6.0f | %s' % (v, len(w), med(m), min(m), max(m), tail))
        else:
            p99 = [x.get('p99_us', 0) for x in L]
            mx = [x.get('max_us', 0) for x in L]
            p50 = [x.get('p50_us', 0) for x in L]
            print('  %-7s n=%2d rate %5.0f p50 %5.0f p99 med %5.0f worst %6.0f >1ms %2d | max med %6.0f >5ms %2d | %s' % (
                v, len(w), med([x['rate'] for x in w]), med(p50), med(p99), max(p99),
                sum(p > 1000 for p in p99), med(mx), sum(m > 5000 for m in mx), tail))
