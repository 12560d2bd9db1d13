#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The VERSION file is the one source of the release version: check that
# every file that must repeat it (dkms.conf, packaging) agrees.  The
# module's MODULE_VERSION comes from VERSION itself (scripts/version.sh)
# when DKMS builds it from the packaged sources.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
want=$(cat "$top/VERSION")
fail=0

check() { # file what got
	if [ "$3" != "$want" ]; then
		echo "$1: $2 is '$3', VERSION is '$want'" >&2
		fail=1
	fi
}

check dkms.conf PACKAGE_VERSION \
	"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")"
# Debian: a native package, so the changelog's version is VERSION itself.
check packaging/debian/changelog "the newest entry's version" \
	"$(sed -n '1s/^virtio-net-dkms (\([^)]*\)).*/\1/p' "$top/packaging/debian/changelog")"
check packaging/rpm/virtio-net-dkms.spec Version \
	"$(sed -n 's/^Version:[[:space:]]*//p' "$top/packaging/rpm/virtio-net-dkms.spec")"
# shellcheck disable=SC2016 # a sed address, not a shell expansion
check packaging/rpm/virtio-net-dkms.spec "the newest %changelog entry's version" \
	"$(sed -n '/^%changelog/,${s/^\*.* - \([^-]*\)-[^-]*$/\1/p}' \
		"$top/packaging/rpm/virtio-net-dkms.spec" | head -n1)"

[ "$fail" -eq 0 ] && echo "version: $want everywhere"
exit "$fail"
