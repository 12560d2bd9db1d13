#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Builds the Debian package virtio-net-dkms_<version>_all.deb (make deb).
#
#   packaging/make-deb.sh [--out DIR] [--src DIR] [--version V]
#
#   --out DIR      where the .deb goes (default: build/packages)
#   --src DIR      package this tree instead of the repository (the tests
#                  package deliberately broken copies)
#   --version V    package as version V instead of VERSION (tests: an older
#                  release to upgrade from); VERSION, dkms.conf and
#                  debian/changelog of the staged copy are rewritten
#
# The version is the VERSION file's: dkms.conf and packaging/debian/changelog
# repeat it (packaging/check-version.sh, and debian/rules refuses a mismatch).
# The tree is staged into a temporary directory (module sources, packaging/,
# packaging/debian as debian/) and built there with dpkg-buildpackage;
# nothing is written into the source tree.  Needs debhelper and dh-dkms
# (apt-get install debhelper dh-dkms); no root.
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
	-h | --help) sed -n '3,20p' "$0"; exit 0 ;;
	*) echo "make-deb: unknown option $1" >&2; exit 2 ;;
	esac
done

for t in dpkg-buildpackage dh dh_dkms; do
	command -v "$t" >/dev/null ||
		{ echo "make-deb: $t missing: apt-get install dpkg-dev debhelper dh-dkms" >&2; exit 1; }
done

base=$(cat "$src/VERSION")
version=${version:-$base}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/make-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/virtio-net-dkms-$version

# The files DKMS needs to build the module, and the packaging.
mkdir -p "$stage/src/policy" "$stage/include/policy" "$stage/scripts"
cp "$src/Kbuild" "$src/Makefile" "$src/VERSION" "$src/dkms.conf" "$src/README" "$stage/"
cp "$src"/src/*.c "$stage/src/"
cp "$src"/src/policy/*.c "$stage/src/policy/"
cp "$src"/include/*.h "$stage/include/"
cp "$src"/include/policy/*.h "$stage/include/policy/"
cp "$src/scripts/version.sh" "$src/scripts/compat-probe.sh" "$stage/scripts/"
mkdir -p "$stage/packaging"
cp -r "$src/packaging/common" "$src/packaging/examples" "$stage/packaging/"
cp -r "$src/packaging/debian" "$stage/debian"

if [[ $version != "$base" ]]; then
	echo "$version" >"$stage/VERSION"
	sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$version\"/" "$stage/dkms.conf"
	{
		printf 'virtio-net-dkms (%s) unstable; urgency=medium\n\n' "$version"
		printf '  * Built as version %s by packaging/make-deb.sh --version.\n\n' "$version"
		printf ' -- virtio-net-dkms developers <virtio-net-dkms@localhost.invalid>  %s\n\n' \
			"$(date -R)"
		cat "$src/packaging/debian/changelog"
	} >"$stage/debian/changelog"
fi

log=$tmp/build.log
if ! (cd "$stage" && dpkg-buildpackage --build=all -us -uc) >"$log" 2>&1; then
	tail -n 40 "$log" >&2
	echo "make-deb: dpkg-buildpackage failed" >&2
	exit 1
fi
deb=virtio-net-dkms_${version}_all.deb
[[ -f $tmp/$deb ]] || { tail -n 20 "$log" >&2; echo "make-deb: no $deb produced" >&2; exit 1; }
mv -f "$tmp/$deb" "$out/$deb"
echo "$out/$deb"
