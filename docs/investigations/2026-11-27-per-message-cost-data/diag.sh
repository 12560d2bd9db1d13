#!/bin/bash
# 4:2 closed-loop diagnosis: which of ours' policies costs rr-tcp-128 / rr-tcp-4
cd /work/main
for v in "tx-frames 1" "tx-usecs-irq 0" "rx-usecs 0" "tx-frames 1 tx-usecs-irq 0 rx-usecs 0"; do
	d=/work/runs/diag-$(echo "$v" | tr ' ' '_')
	python3 bench/matrix.py --kernel 6.1 --topology 4:2 --cells rr-tcp-128,rr-tcp-4 \
		--variants stock,ours,ours-b --ours-b-coalesce "$v" --runs 3 --model zero,ref \
		--module /work/runs/main2-6.1.ko --out "$d" > "$d.log" 2>&1
	echo "$v rc=$?"
done
