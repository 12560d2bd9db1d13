#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Prints the module version, the single source for MODULE_VERSION,
# ethtool -i and the packages.
#
# In a git checkout (the tree's own .git, not a parent's): `git describe`
# of the newest v* tag, or VERSION+g<commit> when no tag is reachable,
# with -dirty for uncommitted changes.  In a plain copy (DKMS, tarballs):
# the VERSION file.
set -eu

dir=${1:-$(dirname "$0")/..}
base=$(cat "$dir/VERSION" 2>/dev/null || echo 0.0.0)

if [ -e "$dir/.git" ] && command -v git >/dev/null 2>&1; then
	if desc=$(git -C "$dir" describe --tags --match 'v[0-9]*' --dirty \
		2>/dev/null); then
		echo "${desc#v}"
		exit 0
	fi
	if hash=$(git -C "$dir" rev-parse --short=8 HEAD 2>/dev/null); then
		dirty=
		git -C "$dir" diff --quiet HEAD -- 2>/dev/null || dirty=-dirty
		echo "$base+g$hash$dirty"
		exit 0
	fi
fi
echo "$base"
