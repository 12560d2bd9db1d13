#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build a QEMU TCG plugin of this directory, exitcost.c (default) or the one
# named by the first argument (insnprof), into
#   ${VNET_CACHE:-$HOME/.cache/virtio-net-dkms}/exitcost/NAME.so
# and print that path on stdout. Rebuilt only when the source, the plugin
# header, the compiler or the flags change.
#
# The plugin API header (include/qemu/qemu-plugin.h) is not in the repository
# and Debian ships no -dev package with it: it is taken from Debian's `qemu`
# source package of exactly the installed QEMU version (the source version of
# the package that owns the QEMU binary, e.g. 1:7.2+dfsg-7+deb12u18 for
# qemu-system-x86 1:7.2+dfsg-7+deb12u18+b3). `apt-get source --download-only`
# fetches it through a private apt configuration (deb-src lines for
# <codename>, <codename>-updates and <codename>-security; the system's apt
# setup is not touched), the header is extracted from the orig tarball, the
# Debian patches touching it are applied, and the result is cached under
# exitcost/qemu-<source version>/.
#
# Host packages: gcc libc6-dev xz-utils patch (and apt, dpkg). QEMU 7.2's
# qemu-plugin.h needs no glib; if a newer header includes <glib.h>,
# libglib2.0-dev and pkg-config are needed as well (detected below).
#
# Environment: VNET_CACHE, VNET_QEMU (QEMU binary, default
# qemu-system-x86_64), VNET_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# VNET_DEBIAN_SECURITY_MIRROR (default http://deb.debian.org/debian-security),
# CC (default gcc), EXITCOST_FORCE=1 (rebuild).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
NAME=${1:-exitcost}
case $NAME in exitcost|insnprof) ;; *) echo "exitcost/build.sh: no plugin '$NAME'" >&2; exit 1 ;; esac
SRC=$HERE/$NAME.c
CACHE=${VNET_CACHE:-$HOME/.cache/virtio-net-dkms}/exitcost
QEMU=${VNET_QEMU:-qemu-system-x86_64}
CC=${CC:-gcc}
CFLAGS="-O2 -g -fPIC -shared -Wall -Wextra -Wno-unused-parameter -std=gnu11"
MIRROR=${VNET_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SEC_MIRROR=${VNET_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

say() { echo "exitcost/build.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }

mkdir -p "$CACHE"
exec 9>"$CACHE/.build.lock"
flock 9

# --- which QEMU source version --------------------------------------------------
qemu_bin=$(command -v "$QEMU") || die "$QEMU not found"
qemu_bin=$(readlink -f "$qemu_bin")
pkg=$(dpkg-query -S "$qemu_bin" 2>/dev/null | head -n1 | cut -d: -f1) ||
	die "$qemu_bin does not belong to a Debian package"
[ -n "$pkg" ] || die "$qemu_bin does not belong to a Debian package"
src_name=$(dpkg-query -W -f='${source:Package}' "$pkg")
src_ver=$(dpkg-query -W -f='${source:Version}' "$pkg")
[ "$src_name" = qemu ] || die "$pkg is built from '$src_name', expected 'qemu'"
hdr_dir=$CACHE/qemu-${src_ver//:/_}
hdr=$hdr_dir/qemu-plugin.h

# --- fetch the header once per QEMU source version ------------------------------
fetch_header() {
	local codename apt tmp opts orig deb series p sect
	# shellcheck disable=SC1091
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || die "cannot tell the Debian codename from /etc/os-release"
	apt=$CACHE/apt
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
	local signed=""
	[ -r "$KEYRING" ] && signed="[signed-by=$KEYRING] "
	cat >"$apt/sources.list" <<-EOF
		deb-src ${signed}$MIRROR $codename main
		deb-src ${signed}$MIRROR $codename-updates main
		deb-src ${signed}$SEC_MIRROR $codename-security main
	EOF
	opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
	      -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
	      -o "Acquire::Languages=none" -o "APT::Get::Only-Source=true")
	[ "$(id -u)" = 0 ] && opts+=(-o "APT::Sandbox::User=root")
	say "fetching Debian source package qemu=$src_ver for include/qemu/qemu-plugin.h"
	apt-get -q "${opts[@]}" update >&2 || die "apt-get update (private deb-src lists) failed"
	tmp=$(mktemp -d "$CACHE/.src.XXXXXX")
	trap 'rm -rf "$tmp"' RETURN
	(cd "$tmp" && apt-get -q "${opts[@]}" source --download-only "qemu=$src_ver" >&2) ||
		die "apt-get source --download-only qemu=$src_ver failed"
	orig=$(find "$tmp" -maxdepth 1 -name 'qemu_*.orig.tar.*' | head -n1)
	[ -n "$orig" ] || die "no orig tarball in the source package"
	mkdir -p "$tmp/tree/include/qemu"
	tar -xf "$orig" -C "$tmp" --wildcards --no-anchored 'include/qemu/qemu-plugin.h' ||
		die "include/qemu/qemu-plugin.h not found in $(basename "$orig")"
	p=$(find "$tmp" -path '*/include/qemu/qemu-plugin.h' -not -path "$tmp/tree/*" | head -n1)
	cp "$p" "$tmp/tree/include/qemu/qemu-plugin.h"
	# Debian patches that touch the header, in series order
	deb=$(find "$tmp" -maxdepth 1 -name 'qemu_*.debian.tar.*' | head -n1)
	if [ -n "$deb" ]; then
		mkdir -p "$tmp/deb"
		tar -xf "$deb" -C "$tmp/deb" debian/patches 2>/dev/null || true
		series=$tmp/deb/debian/patches/series
		if [ -f "$series" ]; then
			while read -r p _; do
				[ -f "$tmp/deb/debian/patches/$p" ] || continue
				grep -q '^+++ .*include/qemu/qemu-plugin\.h' "$tmp/deb/debian/patches/$p" || continue
				sect=$tmp/sect.diff
				# keep only the file section(s) of qemu-plugin.h
				awk '
					pending != "" {
						if ($0 ~ /^\+\+\+ /) {
							keep = ($0 ~ /include\/qemu\/qemu-plugin\.h/)
							if (keep) { print pending; print }
							pending = ""
							next
						}
						if (keep) print pending
						pending = ""
					}
					/^diff / { keep = 0; next }
					/^--- / { pending = $0; next }
					keep { print }
				' "$tmp/deb/debian/patches/$p" >"$sect"
				say "applying debian/patches/$p to qemu-plugin.h"
				patch -s -p1 -d "$tmp/tree" --no-backup-if-mismatch <"$sect" >&2 ||
					die "debian/patches/$p does not apply to qemu-plugin.h"
			done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$series")
		fi
	fi
	mkdir -p "$hdr_dir"
	cp "$tmp/tree/include/qemu/qemu-plugin.h" "$hdr.tmp"
	printf 'qemu source %s (%s, orig %s)\n' "$src_ver" "$pkg" "$(basename "$orig")" >"$hdr_dir/SOURCE"
	mv "$hdr.tmp" "$hdr"
	rm -rf "$apt/lists" "$apt/cache"   # ~30 MB of indexes, only needed once
}

if [ ! -s "$hdr" ]; then
	fetch_header
fi
grep -q 'QEMU_PLUGIN_VERSION' "$hdr" || die "$hdr does not look like qemu-plugin.h"

extra=()
if grep -q '#include <glib.h>' "$hdr"; then
	# newer QEMUs (8.x+) need glib for the plugin header
	# shellcheck disable=SC2207
	extra=($(pkg-config --cflags glib-2.0)) || die "qemu-plugin.h needs glib: apt-get install libglib2.0-dev pkg-config"
fi

# --- build (cached by content) ------------------------------------------------------
out=$CACHE/$NAME.so
stamp=$({ sha256sum "$SRC" "$HERE/plugin_out.h" "$hdr" | cut -d' ' -f1; "$CC" --version | head -n1
	  echo "$CFLAGS ${extra[*]}"; } | sha256sum | cut -d' ' -f1)
if [ "${EXITCOST_FORCE:-0}" != 1 ] && [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "$out"
	exit 0
fi
say "compiling $out (qemu $src_ver)"
# shellcheck disable=SC2086 # CFLAGS is a word list
"$CC" $CFLAGS "${extra[@]}" -I"$hdr_dir" -o "$out.tmp" "$SRC" -lpthread ||
	die "compilation failed"
mv "$out.tmp" "$out"
echo "$stamp" >"$out.stamp"
echo "$out"
