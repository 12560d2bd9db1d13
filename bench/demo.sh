#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The newcomer's main job: build virtio_net.ko for Debian 12's kernel, boot
# a QEMU guest with the stock driver and with ours, and show both carrying
# the same traffic next to each other (bench/demo.py).  Run as root on a
# Debian 12 machine; installs what it needs with apt-get.
#
#   bench/demo.sh [KERNEL]      KERNEL: 5.10, 6.1 (default), 6.12, 7.2
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
key=${1:-6.1}

bash tests/setup/setup-host.sh
bash tests/setup/kernel-env.sh setup "$key"
bash tests/build-matrix.sh "$key"
exec python3 bench/demo.py --kernel "$key" --module "build/$key/virtio_net.ko"
