# SPDX-License-Identifier: GPL-2.0-only
# Per cell and variant over the windows of a matrix run: p99/max one-way
# delay (pub cells) or Mbit/s, exits, released at send per packet, kicks held.
# python3 percells.py results.json
import json,sys,statistics as st
r=json.load(open(sys.argv[1]))
names=dict(x.split('=') for x in sys.argv[2:]) if len(sys.argv)>2 else {}
d={}
for b in r['boots']:
    for run in b['runs']:
        if not run.get('ok'): continue
        L=run['metrics']; ec=run.get('exitcost',{}); gs=run['window'].get('guest_stats',{}) or {}
        tap=run['window']['tap']
        txp=tap['guest_tx_packets'] or 1
        tot=sum(ec.get('kinds',{}).get(x,0) for x in ('kick','irq','timer_irq','ipi_irq','timer_arm','ipi','hlt'))
        rel=sum(v for k,v in gs.items() if k.endswith('released_at_send'))
        held=sum(v for k,v in gs.items() if k.endswith('kicks_held'))
        d.setdefault((run['workload'],b['variant']),[]).append(dict(model=run['model'],L=L,exits=L.get('exits_per_unit',0),rel=rel/txp,held=held))
cells=sorted(set(k[0] for k in d))
vs=['stock','ours','ours-b']
for c in cells:
    print('==',c)
    for v in vs:
        w=d.get((c,v),[])
        if not w: continue
        L=[x['L'] for x in w]
        if 'mbps' in L[0]:
            m=[x['mbps'] for x in L]
            print('  %-7s n=%2d mbps med %6.0f min %6.0f max %6.0f exits/pkt %.3f rel/pkt %.3f held %5.0f'%(v,len(w),st.median(m),min(m),max(m),st.median([x['exits'] for x in w]),st.median([x['rel'] for x in w]),st.median([x['held'] for x in w])))
        else:
            p99=[x.get('p99_us',0) for x in L]; mx=[x.get('max_us',0) for x in L]; p50=[x.get('p50_us',0) for x in L]
            print('  %-7s n=%2d p50 %5.0f p99 med %5.0f worst %6.0f  >1ms %2d | max med %6.0f >5ms %2d >2ms %2d | exits/pkt %.2f rel/pkt %.2f held %5.0f'%(v,len(w),st.median(p50),st.median(p99),max(p99),sum(p>1000 for p in p99),st.median(mx),sum(m>5000 for m in mx),sum(m>2000 for m in mx),st.median([x['exits'] for x in w]),st.median([x['rel'] for x in w]),st.median([x['held'] for x in w])))
