#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# QEMU from Debian sid (11.1 at the time of writing), for the tests that
# need a virtio-net device newer than bookworm-backports' QEMU 10.0: UDP
# tunnel GSO (features 65-68, QEMU 10.2).  sid's QEMU needs sid's C
# library, so it is installed into a private minimal sid root
# (debootstrap --variant=minbase, about 150 MB) and run from the host with
# that root's dynamic loader and libraries; the system's QEMU and package
# state stay as they are.
#
# Usage: qemu-sid.sh [--print]
#   Sets the root up once (a few minutes) and prints the path of a wrapper
#   that runs its QEMU with its own firmware and modules.
#
# The cache is ${VNET_CACHE:-~/.cache/virtio-net-dkms}/qemu-sid.
set -euo pipefail

cache=${VNET_CACHE:-$HOME/.cache/virtio-net-dkms}/qemu-sid
mirror=${VNET_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$cache/root
wrapper=$cache/qemu-system-x86_64

msg() { printf '[qemu-sid] %s\n' "$*" >&2; }
die() {
	msg "error: $*"
	exit 2
}

case "${1:---print}" in
--print) ;;
-h | --help) sed -n '/^# Usage:/,/^# The cache/{s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
*) die "unknown option $1" ;;
esac

# one setup at a time (two harness runs may boot this QEMU at once); the
# one that waited finds the wrapper made
mkdir -p "$cache"
exec 9>>"$cache.lock"
flock 9

if [ -x "$wrapper" ] && "$wrapper" --version >/dev/null 2>&1; then
	printf '%s\n' "$wrapper"
	exit 0
fi
command -v debootstrap >/dev/null || die "debootstrap is not installed"

mkdir -p "$cache"
if [ ! -x "$root/usr/bin/apt-get" ]; then
	msg "debootstrap sid into $root"
	rm -rf "$root.new"
	debootstrap --variant=minbase sid "$root.new" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
		die "debootstrap failed (see $cache/debootstrap.log)"
	mv "$root.new" "$root"
fi
if [ ! -x "$root/usr/bin/qemu-system-x86_64" ]; then
	msg "installing qemu-system-x86 into the sid root"
	# sid's Release file may be older than its Valid-Until on a mirror snapshot
	apt=(apt-get -q -o Acquire::Check-Valid-Until=false)
	{ chroot "$root" "${apt[@]}" update &&
		chroot "$root" env DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y \
			--no-install-recommends qemu-system-x86; } >"$cache/apt.log" 2>&1 ||
		die "installing qemu-system-x86 failed (see $cache/apt.log)"
fi

lib=$root/usr/lib/x86_64-linux-gnu
cat >"$wrapper.new" <<EOF
#!/bin/sh
# QEMU from Debian sid with sid's loader and libraries, set up by tests/setup/qemu-sid.sh
export QEMU_MODULE_DIR=$lib/qemu
exec $root/usr/lib64/ld-linux-x86-64.so.2 --library-path $lib $root/usr/bin/qemu-system-x86_64 -L $root/usr/share/qemu -L $root/usr/share/seabios "\$@"
EOF
chmod +x "$wrapper.new"
mv "$wrapper.new" "$wrapper"
"$wrapper" --version >/dev/null || die "sid's QEMU does not run here"
msg "$("$wrapper" --version | head -n1) ready"
printf '%s\n' "$wrapper"
