#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# bench/matrix.py --setup: a monitoring task in the guest.  Twice a second
# it runs what a metrics agent runs (ethtool -S of the NIC, the virtio
# lines of /proc/interrupts, /proc/net/netstat): a few process starts and
# kernel reads that take a vCPU for a while under TCG, at times unrelated
# to the measured windows.  Without --guest-stats, this is the only agent
# activity in the guest.  For every driver of a run:
#   bench/matrix.py --setup bench/setups/guest-noise.sh --cells ... --out DIR
# IF is the interface (set by the benchmark).
setsid sh -c "while :; do ethtool -S $IF; grep virtio /proc/interrupts; \
	cat /proc/net/netstat; sleep 0.5; done" </dev/null >/dev/null 2>&1 &
