#!/bin/bash
# open loop at 10000/s: ours with every policy off against ours and stock
cd /work/main
d=/work/runs/diag-ol-policies-off
python3 bench/matrix.py --kernel 6.1 --topology 2 --cells ol-udp-10000,ol-tcp-3000,rr-udp-4 \
	--variants stock,ours,ours-b,stock-notx \
	--ours-b-modopts "tx_usecs=0 tx_frames=1 tx_usecs_irq=0 rx_usecs=0 adaptive_rx=0 adaptive_tx=0" \
	--runs 3 --model zero,modern --module /work/runs/main2-6.1.ko --out "$d" > "$d.log" 2>&1
echo "policies-off rc=$?"
