#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install, with apt-get, everything the test suite needs on a Debian 12
# host.  Idempotent: packages already present are not reinstalled, and
# apt-get update only runs when something is missing.
#
# The chroots with the 5.10, 6.12 and 7.2 kernel headers are made by
# tests/setup/kernel-env.sh, the kernel images fetched by it too.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)

pkgs=(
	# module build against Debian 12's own kernel (6.1), sparse
	build-essential linux-headers-amd64 sparse bc flex bison
	# kernel header chroots for 5.10, 6.12, 7.2 (tests/setup/kernel-env.sh)
	debootstrap
	# KUnit on UML and checkpatch.pl come from the 6.1 source package
	linux-source-6.1 python3 xz-utils perl
	# lint of the scripts
	shellcheck
	# the packages (make deb, make rpm) and their tests
	# (tests/package.sh; the full test also needs debootstrap,
	# e2fsprogs, zstd and the QEMU harness's packages)
	dpkg-dev debhelper dh-dkms rpm fakeroot e2fsprogs zstd
)
# the QEMU harness (tests/setup/apt-packages.txt, one per line)
while read -r p; do
	case "$p" in '' | '#'*) continue ;; esac
	pkgs+=("$p")
done < "$top/tests/setup/apt-packages.txt"

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed$' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "setup-host: all ${#pkgs[@]} packages present"
	exit 0
fi
echo "setup-host: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
