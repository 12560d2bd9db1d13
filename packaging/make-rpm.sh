#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Builds the noarch RPM virtio-net-dkms-<version>-1.noarch.rpm (make rpm)
# from packaging/rpm/virtio-net-dkms.spec with rpmbuild.
#
#   packaging/make-rpm.sh [--out DIR] [--src DIR] [--version V]
#
#   --out DIR      where the .rpm goes (default: build/packages)
#   --src DIR      package this tree instead of the repository
#   --version V    package as version V instead of VERSION (tests)
#
# The spec's Version repeats the VERSION file (packaging/check-version.sh).
# A tarball of the tree (module sources, packaging/) is made in a
# temporary rpmbuild tree; nothing is written into the source tree.
# Needs rpmbuild (Debian: apt-get install rpm); no root.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
src=$top
out=$top/build/packages
version=

while (($#)); do
	case $1 in
	--out) out=$2; shift 2 ;;
	--src) src=$(cd "$2" && pwd); shift 2 ;;
	--version) version=$2; shift 2 ;;
	-h | --help) sed -n '3,16p' "$0"; exit 0 ;;
	*) echo "make-rpm: unknown option $1" >&2; exit 2 ;;
	esac
done

command -v rpmbuild >/dev/null ||
	{ echo "make-rpm: rpmbuild missing (Debian: apt-get install rpm)" >&2; exit 1; }

base=$(cat "$src/VERSION")
version=${version:-$base}
spec_version=$(sed -n 's/^Version:[[:space:]]*//p' "$src/packaging/rpm/virtio-net-dkms.spec")
if [[ $spec_version != "$base" ]]; then
	echo "make-rpm: the spec's Version is '$spec_version', VERSION is '$base'" >&2
	exit 1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/make-rpm.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
name=virtio-net-dkms-$version
stage=$tmp/$name

mkdir -p "$stage/src/policy" "$stage/include/policy" "$stage/scripts" "$stage/packaging"
cp "$src/Kbuild" "$src/Makefile" "$src/VERSION" "$src/dkms.conf" "$src/README" "$stage/"
cp "$src"/src/*.c "$stage/src/"
cp "$src"/src/policy/*.c "$stage/src/policy/"
cp "$src"/include/*.h "$stage/include/"
cp "$src"/include/policy/*.h "$stage/include/policy/"
cp "$src/scripts/version.sh" "$src/scripts/compat-probe.sh" "$stage/scripts/"
cp -r "$src/packaging/common" "$src/packaging/examples" "$src/packaging/rpm" "$stage/packaging/"
spec=$stage/packaging/rpm/virtio-net-dkms.spec
if [[ $version != "$base" ]]; then
	echo "$version" >"$stage/VERSION"
	sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$version\"/" "$stage/dkms.conf"
	sed -i "s/^Version:.*/Version:        $version/" "$spec"
fi

mkdir -p "$tmp/rpmbuild/SOURCES"
tar -C "$tmp" --owner=0 --group=0 -czf "$tmp/rpmbuild/SOURCES/$name.tar.gz" "$name"
log=$tmp/build.log
# --nodeps: on Debian the rpm database is empty (no BuildRequires anyway).
if ! rpmbuild -bb --nodeps --define "_topdir $tmp/rpmbuild" "$spec" >"$log" 2>&1; then
	tail -n 40 "$log" >&2
	echo "make-rpm: rpmbuild failed" >&2
	exit 1
fi
rpm=$(find "$tmp/rpmbuild/RPMS" -name "$name-*.noarch.rpm" | head -n1)
[[ -n $rpm ]] || { tail -n 20 "$log" >&2; echo "make-rpm: no RPM produced" >&2; exit 1; }
mv -f "$rpm" "$out/"
echo "$out/${rpm##*/}"
