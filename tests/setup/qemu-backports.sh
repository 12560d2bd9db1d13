#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A newer QEMU for the tests that Debian 12's QEMU 7.2 cannot serve (the
# USO features of virtio-net came in QEMU 8.2): qemu-system-x86 from
# bookworm-backports, downloaded and unpacked into the cache, never
# installed, so the system's QEMU stays what everything else uses.
#
# Usage: qemu-backports.sh [--print]
#   Fetches once (about 14 MB; cached by version) and prints the path of a
#   wrapper that runs it with its own firmware and modules.  The apt lists
#   and archives go to a private apt state under the cache: the system's
#   sources and package state are not touched.
#
# The cache is ${VNET_CACHE:-~/.cache/virtio-net-dkms}/qemu-backports.
set -euo pipefail

cache=${VNET_CACHE:-$HOME/.cache/virtio-net-dkms}/qemu-backports
mirror=${VNET_DEBIAN_MIRROR:-http://deb.debian.org/debian}
pkgs=(qemu-system-x86 qemu-system-data qemu-system-common
	qemu-system-modules-opengl qemu-system-modules-spice)

msg() { printf '[qemu-backports] %s\n' "$*" >&2; }
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

wrapper=$cache/qemu-system-x86_64
if [ -x "$wrapper" ] && "$wrapper" --version >/dev/null 2>&1; then
	printf '%s\n' "$wrapper"
	exit 0
fi

mkdir -p "$cache/apt/sources.list.d" "$cache/apt/preferences.d" \
	"$cache/apt/lists/partial" "$cache/apt/cache/archives/partial" "$cache/debs"
cat >"$cache/apt/sources.list.d/backports.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
cat >"$cache/apt/apt.conf" <<EOF
Dir::Etc::SourceList "/dev/null";
Dir::Etc::SourceParts "$cache/apt/sources.list.d";
Dir::Etc::Preferences "/dev/null";
Dir::Etc::PreferencesParts "$cache/apt/preferences.d";
Dir::State::Lists "$cache/apt/lists";
Dir::Cache "$cache/apt/cache";
APT::Sandbox::User "root";
EOF
export APT_CONFIG=$cache/apt/apt.conf

msg "reading bookworm-backports"
apt-get update -q >&2 || die "apt-get update of bookworm-backports failed"
ver=$(apt-cache policy qemu-system-x86 | awk '/Candidate:/ {print $2}')
case "$ver" in
'' | '(none)') die "bookworm-backports has no qemu-system-x86" ;;
esac
seabios=$(apt-cache policy seabios | awk '/Candidate:/ {print $2}')

root=$cache/root-$ver
if [ ! -x "$root/usr/bin/qemu-system-x86_64" ]; then
	msg "downloading QEMU $ver"
	rm -rf "$cache/debs" "$root.new"
	mkdir -p "$cache/debs" "$root.new"
	args=()
	for p in "${pkgs[@]}"; do args+=("$p=$ver"); done
	case "$seabios" in '' | '(none)') ;; *) args+=("seabios=$seabios") ;; esac
	(cd "$cache/debs" && apt-get download -q "${args[@]}" >&2) ||
		die "apt-get download ${args[*]} failed"
	for d in "$cache/debs"/*.deb; do dpkg-deb -x "$d" "$root.new"; done
	mv "$root.new" "$root"
fi

# Its firmware first (-L), the system's as the fallback; its own modules.
cat >"$wrapper.new" <<EOF
#!/bin/sh
# QEMU $ver from bookworm-backports, unpacked by tests/setup/qemu-backports.sh
export QEMU_MODULE_DIR=$root/usr/lib/x86_64-linux-gnu/qemu
exec $root/usr/bin/qemu-system-x86_64 -L $root/usr/share/qemu -L $root/usr/share/seabios "\$@"
EOF
chmod +x "$wrapper.new"
mv "$wrapper.new" "$wrapper"
"$wrapper" --version >/dev/null || die "QEMU $ver does not run here"
msg "QEMU $ver ready"
printf '%s\n' "$wrapper"
