#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# tests/kunit.sh - run the project's KUnit tests on UML (User Mode Linux).
#
# Debian's kernels are built without CONFIG_KUNIT, so the tests run inside a
# UML kernel built from Debian's `linux-source-6.1` package.
#
# Usage:
#   tests/kunit.sh [--tree DIR] [--filter GLOB] [--jobs N] [--timeout S]
#                    [--clean] [--distclean] [-- KUNIT_PY_ARGS...]
#
#   --tree DIR     project tree holding src/ include/ kunit/ (default: repo root)
#   --filter GLOB  only run matching tests: "suite", "suite*", "suite.case"
#                  (kunit.py's positional filter_glob, i.e. kunit.filter_glob=)
#   --jobs N       parallel make jobs (default: nproc)
#   --timeout S    seconds allowed for the UML kernel to run the tests (300)
#   --clean        wipe the cached UML build dir first (full rebuild)
#   --distclean    also wipe the unpacked kernel source (re-unpack)
#   -- ARGS...     passed verbatim to `kunit.py run` (e.g. --kconfig_add=...)
#
# Environment:
#   VNET_CACHE         cache root (default: $HOME/.cache/virtio-net-dkms)
#   VNET_KSRC_TARBALL  kernel source tarball (default:
#                      /usr/src/linux-source-6.1.tar.xz)
#
# Packages needed on a fresh Debian 12 (bookworm):
#   apt-get install linux-source-6.1 build-essential flex bison bc python3 \
#       xz-utils
#
# Exit status: 0 when at least one test ran and none failed; 1 when the
# build failed, any test failed or crashed, or no test ran at all (a runner
# that silently runs nothing is a failure); 2 on a usage error.
# The last line printed is "kunit: N passed, N failed, N skipped".
#
# Cache layout ($VNET_CACHE/kunit):
#   linux-source-6.1/   pristine tree, unpacked once; re-unpacked when the
#                       tarball's mtime/size change (which also wipes build/)
#   build/              kunit.py --build_dir (O=), kept: later runs are
#                       incremental
#   results.json        parsed results of the last run
# The only changes made to the unpacked tree are:
#   drivers/net/vnet_kunit/       owned by this script, wiped and re-copied
#                                 on every run (unchanged files keep their
#                                 previous mtime so make does not rebuild them)
#   drivers/net/Kconfig           + source "drivers/net/vnet_kunit/Kconfig"
#   drivers/net/Makefile          + obj-$(CONFIG_VNET_KUNIT_TEST) += vnet_kunit/
#
# Project convention (what the project's tree must provide):
#   kunit/kunit.mk     kbuild fragment, included from the generated
#                      drivers/net/vnet_kunit/Makefile; paths are relative to
#                      drivers/net/vnet_kunit/, which mirrors the repo layout
#                      (src/, include/, kunit/). Example:
#                        obj-$(CONFIG_VNET_KUNIT_TEST) += vnet_kunit.o
#                        vnet_kunit-y := src/kick_policy.o \
#                                        kunit/kick_policy_test.o
#                      The generated Makefile already adds
#                        ccflags-y += -I$(VNET_KUNIT_SRC)/include
#                      before including kunit.mk (so use +=, not :=, for
#                      ccflags-y there). $(VNET_KUNIT_SRC) is the absolute
#                      path of drivers/net/vnet_kunit/. Do NOT write
#                      -I$(src)/include: kunit.py builds with O=, where
#                      $(src) is relative to the source tree while the
#                      compiler runs in the build dir, so it is not found
#                      (-I$(srctree)/$(src)/include would work).
#   kunit/.kunitconfig Kconfig fragment given to kunit.py --kunitconfig, e.g.
#                        CONFIG_KUNIT=y
#                        CONFIG_NET=y
#                        CONFIG_VNET_KUNIT_TEST=y
#                      kunit.py fails the run if any listed option does not
#                      end up in the final .config (unmet dependency).
#   The generated drivers/net/vnet_kunit/Kconfig defines
#     config VNET_KUNIT_TEST  tristate, depends on KUNIT,
#                             default KUNIT_ALL_TESTS
#   (no NET dependency: list CONFIG_NET=y in .kunitconfig if the code needs
#   the networking core). kunit.py builds everything in (=y).
#
# Notes:
#   - <linux/netdevice.h>, <linux/ethtool.h>, <uapi/linux/virtio_net.h>
#     (NETIF_F_*, ethtool and virtio-net constants, static inlines) compile
#     on UML without CONFIG_NET; calling out-of-line net-core functions
#     (netdev_increment_features(), ethtool_convert_*()...) needs
#     CONFIG_NET=y or the vmlinux link fails.
#   - Changing kunit/.kunitconfig regenerates .config: nearly a full rebuild.
#   - Build products (*.o, .*.cmd, *.mod*, *.ko ...) of an in-repo M= build
#     are not copied: the O= build has VPATH=$(srctree) and would link them.
#   - --filter is kunit.py's positional glob; kunit.py's own --filter
#     (test attributes) needs kernel support that 6.1 lacks.
#   - ld warnings "missing .note.GNU-stack" / "LOAD segment with RWX" and
#     "stty: 'standard input': Inappropriate ioctl" (no tty) are harmless.
set -euo pipefail

readonly PROG=${0##*/}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)

die() { printf "%s: error: %s\n" "$PROG" "$*" >&2; exit 1; }
usage_error() { printf '%s: %s\n' "$PROG" "$*" >&2; exit 2; }
log() { printf '%s: %s\n' "$PROG" "$*" >&2; }

usage() {
	sed -n '2,/^set -euo pipefail$/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
}

TREE=$REPO_ROOT
FILTER=""
JOBS=$(nproc 2>/dev/null || echo 2)
TIMEOUT=300
CLEAN=0
DISTCLEAN=0
PASSTHRU=()

while [ $# -gt 0 ]; do
	case $1 in
	--tree) [ $# -ge 2 ] || usage_error "--tree needs a directory"; TREE=$2; shift 2 ;;
	--tree=*) TREE=${1#*=}; shift ;;
	--filter) [ $# -ge 2 ] || usage_error "--filter needs a glob"; FILTER=$2; shift 2 ;;
	--filter=*) FILTER=${1#*=}; shift ;;
	--jobs|-j) [ $# -ge 2 ] || usage_error "--jobs needs a number"; JOBS=$2; shift 2 ;;
	--jobs=*) JOBS=${1#*=}; shift ;;
	--timeout) [ $# -ge 2 ] || usage_error "--timeout needs seconds"; TIMEOUT=$2; shift 2 ;;
	--timeout=*) TIMEOUT=${1#*=}; shift ;;
	--clean) CLEAN=1; shift ;;
	--distclean) CLEAN=1; DISTCLEAN=1; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; PASSTHRU=("$@"); break ;;
	*) usage_error "unknown argument: $1 (see --help)" ;;
	esac
done

[[ $JOBS =~ ^[1-9][0-9]*$ ]] || usage_error "--jobs: not a positive number: $JOBS"
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || usage_error "--timeout: not a positive number: $TIMEOUT"
[ -d "$TREE" ] || usage_error "--tree: no such directory: $TREE"
TREE=$(cd "$TREE" && pwd)

TARBALL=${VNET_KSRC_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
CACHE_ROOT=${VNET_CACHE:-$HOME/.cache/virtio-net-dkms}
CACHE=$CACHE_ROOT/kunit
KNAME=$(basename "$TARBALL")
KNAME=${KNAME%.tar.*}                     # linux-source-6.1
KSRC=$CACHE/$KNAME
STAMP=$CACHE/.$KNAME.unpacked             # "mtime size path" of the tarball
BUILD=$CACHE/build
RESULTS=$CACHE/results.json
VNET_DIR=$KSRC/drivers/net/vnet_kunit

# --- preflight --------------------------------------------------------------
[ -f "$TARBALL" ] || die "$TARBALL not found: apt-get install linux-source-6.1"
[ -d "$TREE/kunit" ] || die "$TREE/kunit/ not found (is --tree right?)"
[ -f "$TREE/kunit/kunit.mk" ] || die "$TREE/kunit/kunit.mk not found (see --help)"
[ -f "$TREE/kunit/.kunitconfig" ] || die "$TREE/kunit/.kunitconfig not found (see --help)"
missing=()
for tool in python3 make gcc ld flex bison bc xz tar flock cmp; do
	command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
[ ${#missing[@]} -eq 0 ] || die "missing tools: ${missing[*]}" \
	"(apt-get install build-essential flex bison bc python3 xz-utils)"

mkdir -p "$CACHE"
# One run at a time per cache (the tree and build dir are shared state).
exec 9>"$CACHE/.lock"
if ! flock -n 9; then
	log "waiting for another run holding $CACHE/.lock ..."
	flock 9
fi

# --- 1. unpack the pristine tree (cached) ------------------------------------
tarball_id() { stat -L -c '%Y %s' "$TARBALL"; printf '%s\n' "$TARBALL"; }

if [ "$DISTCLEAN" = 1 ]; then
	log "--distclean: removing $KSRC"
	rm -rf "$KSRC" "$STAMP"
fi
if [ "$CLEAN" = 1 ]; then
	log "--clean: removing $BUILD"
	rm -rf "$BUILD"
fi

if [ ! -d "$KSRC" ] || [ ! -f "$STAMP" ] || [ "$(tarball_id)" != "$(cat "$STAMP")" ]; then
	log "unpacking $TARBALL into $CACHE (once; takes a minute) ..."
	t0=$SECONDS
	rm -rf "$KSRC" "$STAMP" "$CACHE/unpack.tmp"
	# A new source tree makes every object in the build dir suspect (tar
	# restores old mtimes, so make would not notice): start the build over.
	rm -rf "$BUILD"
	mkdir -p "$CACHE/unpack.tmp"
	tar -xJf "$TARBALL" -C "$CACHE/unpack.tmp"
	[ -d "$CACHE/unpack.tmp/$KNAME" ] || die "$TARBALL has no top-level $KNAME/"
	mv "$CACHE/unpack.tmp/$KNAME" "$KSRC"
	rmdir "$CACHE/unpack.tmp"
	tarball_id >"$STAMP"
	log "unpacked in $((SECONDS - t0))s"
fi
[ -x "$KSRC/tools/testing/kunit/kunit.py" ] || die "$KSRC has no tools/testing/kunit/kunit.py"

# --- 2. hooks + drivers/net/vnet_kunit ---------------------------------------
add_line() { # FILE LINE: append LINE to FILE unless already present
	grep -qxF -- "$2" "$1" || printf '\n%s\n' "$2" >>"$1"
}
add_line "$KSRC/drivers/net/Kconfig" 'source "drivers/net/vnet_kunit/Kconfig"'
# shellcheck disable=SC2016 # a literal make variable, not a shell expansion
add_line "$KSRC/drivers/net/Makefile" 'obj-$(CONFIG_VNET_KUNIT_TEST) += vnet_kunit/'

STAGE=$CACHE/vnet_kunit.stage
rm -rf "$STAGE"
mkdir -p "$STAGE"
dirs=()
for d in src include kunit; do
	[ -d "$TREE/$d" ] && dirs+=("$d")
done
# Copy without build products (an in-repo dkms/M= build leaves .o/.cmd files
# that make would pick up through VPATH) and with fresh mtimes (-m).
tar -C "$TREE" -cf - \
	--exclude='*.o' --exclude='*.ko' --exclude='*.mod' --exclude='*.mod.c' \
	--exclude='*.cmd' --exclude='*.a' --exclude='*.order' \
	--exclude='Module.symvers' --exclude='.tmp_versions' \
	"${dirs[@]}" | tar -C "$STAGE" -xmf -

cat >"$STAGE/Kconfig" <<'EOF'
# Generated by virtio-net-dkms tests/kunit.sh - do not edit.
config VNET_KUNIT_TEST
	tristate "KUnit tests for the virtio-net-dkms driver" if !KUNIT_ALL_TESTS
	depends on KUNIT
	default KUNIT_ALL_TESTS
	help
	  Builds the virtio-net-dkms KUnit tests listed in kunit/kunit.mk.
EOF
cat >"$STAGE/Makefile" <<'EOF'
# Generated by virtio-net-dkms tests/kunit.sh - do not edit.
# Absolute path of this directory, usable from kunit/kunit.mk (works for
# O= builds, where $(src) is relative to $(srctree)).
VNET_KUNIT_SRC := $(if $(filter /%,$(src)),$(src),$(abspath $(srctree)/$(src)))
ccflags-y += -I$(VNET_KUNIT_SRC)/include
include $(VNET_KUNIT_SRC)/kunit/kunit.mk
EOF

# Keep the old mtime of every file whose content did not change, so that the
# incremental build only recompiles what was really edited.
if [ -d "$VNET_DIR" ]; then
	while IFS= read -r -d '' f; do
		if [ -f "$VNET_DIR/$f" ] && cmp -s "$STAGE/$f" "$VNET_DIR/$f"; then
			touch -r "$VNET_DIR/$f" "$STAGE/$f"
		fi
	done < <(cd "$STAGE" && find . -type f -print0)
fi
rm -rf "$VNET_DIR"
mv "$STAGE" "$VNET_DIR"

# --- 3. kunit.py run ---------------------------------------------------------
mkdir -p "$BUILD"
rm -f "$RESULTS"
kargs=(run
	"--kunitconfig=$VNET_DIR/kunit/.kunitconfig"
	"--build_dir=$BUILD"
	--arch=um
	"--jobs=$JOBS"
	"--timeout=$TIMEOUT"
	"--json=$RESULTS")
[ ${#PASSTHRU[@]} -eq 0 ] || kargs+=("${PASSTHRU[@]}")
[ -z "$FILTER" ] || kargs+=("$FILTER")

log "tree: $TREE"
log "running: kunit.py ${kargs[*]}"
rc=0
# PYTHONDONTWRITEBYTECODE: keep __pycache__ out of the pristine tree.
(cd "$KSRC" && PYTHONDONTWRITEBYTECODE=1 python3 tools/testing/kunit/kunit.py "${kargs[@]}" </dev/null) || rc=$?

# --- 4. verdict ----------------------------------------------------------------
passed=0 failed=0 skipped=0
if [ -s "$RESULTS" ]; then
	counts=$(python3 - "$RESULTS" <<'EOF'
import json, sys

def walk(group, acc):
    for case in group.get("test_cases", []):
        status = case.get("status", "FAIL")
        acc[status] = acc.get(status, 0) + 1
    for sub in group.get("sub_groups", []):
        walk(sub, acc)

with open(sys.argv[1]) as f:
    acc = {}
    walk(json.load(f), acc)
passed = acc.pop("PASS", 0)
skipped = acc.pop("SKIP", 0)
failed = sum(acc.values())  # FAIL, ERROR (crashed), anything unknown
print(passed, failed, skipped)
EOF
	)
	read -r passed failed skipped <<<"$counts"
fi

verdict=0
if [ ! -s "$RESULTS" ]; then
	if [ "$rc" -ne 0 ]; then
		log "FAIL: kunit.py exited $rc before producing results (config or build error, see above)"
	else
		log "FAIL: kunit.py produced no parsed results (--raw_output passed?)"
	fi
	verdict=1
elif [ "$failed" -gt 0 ]; then
	log "FAIL: $failed test(s) failed or crashed"
	verdict=1
elif [ "$passed" -eq 0 ]; then
	log "FAIL: no test ran (check kunit/kunit.mk, kunit/.kunitconfig and --filter)"
	verdict=1
elif [ "$rc" -ne 0 ]; then
	log "FAIL: kunit.py exited with status $rc"
	verdict=1
fi
echo "kunit: $passed passed, $failed failed, $skipped skipped"
exit "$verdict"
