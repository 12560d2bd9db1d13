#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The VERSION file is the one source of the release version: check that
# every file that must repeat it (dkms.conf, packaging) agrees.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
want=$(cat "$top/VERSION")
fail=0

got=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
if [ "$got" != "$want" ]; then
	echo "dkms.conf: PACKAGE_VERSION is '$got', VERSION is '$want'" >&2
	fail=1
fi

[ "$fail" -eq 0 ] && echo "version: $want everywhere"
exit "$fail"
