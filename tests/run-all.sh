#!/usr/bin/env bash
# Functions below are called through step(), which shellcheck cannot see.
# shellcheck disable=SC2317
# SPDX-License-Identifier: GPL-2.0-only
#
# The whole test suite, from a fresh Debian 12 machine (run as root).
#
#   tests/run-all.sh                 everything CI runs
#   tests/run-all.sh --full-matrix   the full QEMU suites on all four kernels
#                                    instead of smoke tests on 5.10/6.12/7.2
#   VNET_QEMU_LANES=1 tests/run-all.sh   the QEMU suites one after the other
#
# QEMU step: the functional, IRQ affinity and faults suites on 6.1, smoke
# tests on the other kernels, in two lanes side by side (qemu_tests); one
# suite alone, e.g.
#   tests/integration.py --suite affinity --kernel 6.1 \
#       --module build/6.1/virtio_net.ko
#
# Steps run in order, but KUnit (see kunit_start); a step whose
# prerequisite failed is skipped.  The
# exit status is non-zero when any step failed.  Caches (chroots, kernel
# images, the UML build) live in ${VNET_CACHE:-~/.cache/virtio-net-dkms}.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

full_matrix=0
for a in "$@"; do
	case "$a" in
	--full-matrix) full_matrix=1 ;;
	-h | --help) sed -n '6,21p' "$0"; exit 0 ;;
	*) echo "unknown option $a" >&2; exit 2 ;;
	esac
done

kernels=(5.10 6.1 6.12 7.2)
results=()
failed=0
t_start=$(date +%s)

# step NAME CMD... : run, time and record one step
step() {
	local name=$1 t0 rc
	shift
	printf '\n=== %s: %s\n' "$name" "$*"
	t0=$(date +%s)
	"$@"
	rc=$?
	results+=("$(printf '%-4s %-28s %4ss' "$([ $rc -eq 0 ] && echo OK || echo FAIL)" "$name" $(($(date +%s) - t0)))")
	[ $rc -eq 0 ] || failed=1
	return "$rc"
}

skip() {
	results+=("$(printf '%-4s %-28s (%s)' SKIP "$1" "$2")")
	failed=1
}

lint_scripts() {
	shellcheck scripts/*.sh tests/*.sh tests/setup/*.sh packaging/*.sh \
		bench/*.sh bench/setups/*.sh bench/exitcost/*.sh \
		tests/guest/rootfs/init tests/guest/rootfs/vnet \
		tests/guest/rootfs/vnet-agent tests/guest/rootfs/vnet-modprobe .ci/run
}

# KUnit builds a UML kernel (about 2 minutes of both CPUs on a new
# machine, seconds once cached): it runs in the background from the host
# packages on, beside the steps that mostly wait for downloads (the
# kernel environments), and is waited for before the QEMU suites, whose
# guests must not share the CPUs with it.
kunit_log=$(mktemp)
kunit_pid=
kunit_t0=
trap 'rm -f "$kunit_log"; [ -z "$kunit_pid" ] || kill "$kunit_pid" 2>/dev/null' EXIT

kunit_start() {
	kunit_t0=$(date +%s)
	bash tests/kunit.sh >"$kunit_log" 2>&1 &
	kunit_pid=$!
}

# the step's time is the wait; the run's own time is printed here
kunit_wait() {
	local rc
	wait "$kunit_pid"
	rc=$?
	kunit_pid=
	cat "$kunit_log"
	echo "kunit: ran in the background for $(($(date +%s) - kunit_t0))s"
	return "$rc"
}

# One kernel's QEMU runs: on 6.1 (and every kernel with --full-matrix)
# the test agent and the log check first (~20 s: a harness fault would
# otherwise show up as random driver failures), then the functional
# suite; the affinity and faults suites, or the smoke tests on the other
# kernels, are qemu_more's.
qemu_main() { # $1 = kernel
	local rc=0
	python3 tests/integration.py --kernel "$1" \
		--suite harness --only harness.agent,harness.log_check \
		--module "build/$1/virtio_net.ko" || rc=1
	python3 tests/integration.py --kernel "$1" \
		--module "build/$1/virtio_net.ko" || rc=1
	return "$rc"
}

qemu_more() { # $1 = kernel, $2 = 1 for the full suites
	local rc=0
	if [ "$2" -eq 1 ]; then
		# faults under traffic and bad user input: ~7 min on 2 cores
		python3 tests/integration.py --kernel "$1" --suite faults \
			--module "build/$1/virtio_net.ko" || rc=1
		python3 tests/integration.py --kernel "$1" --suite affinity \
			--module "build/$1/virtio_net.ko" || rc=1
	else
		python3 tests/integration.py --kernel "$1" --smoke \
			--module "build/$1/virtio_net.ko" || rc=1
	fi
	return "$rc"
}

# Full suites on 6.1, on every kernel with --full-matrix
full_suites() { [ "$1" = 6.1 ] || [ "$full_matrix" -eq 1 ]; }

lane1() { # kernels...: the functional suites
	local k rc=0
	for k; do
		if full_suites "$k"; then qemu_main "$k" || rc=1; fi
	done
	return "$rc"
}

lane2() { # kernels...: the faults and affinity suites, or the smoke tests
	local k rc=0
	for k; do
		if full_suites "$k"; then
			qemu_more "$k" 1 || rc=1
		else
			qemu_more "$k" 0 || rc=1
		fi
	done
	return "$rc"
}

# The suites' guests leave the two CPUs idle more than half of the time
# (timers, fault windows, boots waiting on the console: 58% idle over the
# 6.1 functional suite, 57% over faults, 36% over affinity, 2026-12-02),
# so two lanes of QEMU runs go side by side: lane 1 the functional
# suites, lane 2 the faults and affinity suites and the smoke tests of
# the other kernels, about as long.  Lane 2 prints when lane 1 is done.
# VNET_QEMU_LANES=1 runs them one after the other, as on a busy host.
qemu_tests() {
	local k rc=0 lanes=${VNET_QEMU_LANES:-2} lane2_log lane2_pid
	case "$lanes" in
	1 | 2) ;;
	*)
		echo "VNET_QEMU_LANES=$lanes: not 1 or 2, using 2" >&2
		lanes=2
		;;
	esac
	if [ "$lanes" -eq 1 ]; then
		for k in "${kernels[@]}"; do
			lane1 "$k" || rc=1
			lane2 "$k" || rc=1
		done
		return "$rc"
	fi
	# both lanes may boot the newer QEMUs: fetch them once, before
	bash tests/setup/qemu-backports.sh >/dev/null || rc=1
	bash tests/setup/qemu-sid.sh >/dev/null || rc=1
	lane2_log=$(mktemp)
	lane2 "${kernels[@]}" >"$lane2_log" 2>&1 &
	lane2_pid=$!
	echo "lane 2 (faults and affinity suites, smoke tests) runs beside lane 1 (functional suites); its output follows lane 1's"
	lane1 "${kernels[@]}" || rc=1
	wait "$lane2_pid" || rc=1
	printf '\n=== lane 2\n'
	cat "$lane2_log"
	rm -f "$lane2_log"
	return "$rc"
}

step "host packages" tests/setup/setup-host.sh || { skip "everything else" "no packages"; }
if [ $failed -eq 0 ]; then
	kunit_start
	step "version" sh packaging/check-version.sh
	step "checkpatch --strict" bash tests/checkpatch.sh
	step "driver rules" bash tests/driver-rules.sh
	step "shellcheck" lint_scripts
	step "benchmark self-check" python3 bench/matrix.py --self-check
	step "packages (quick)" bash tests/package.sh --quick
	built="no kernel environments"
	if step "kernel environments" bash tests/setup/kernel-env.sh setup "${kernels[@]}"; then
		step "compat probes" bash tests/compat-probes.sh
		built="build failed"
		step "build matrix (W=1, sparse)" bash tests/build-matrix.sh \
			--sparse --vermagic "${kernels[@]}" && built=
	else
		skip "build matrix" "no kernel environments"
	fi
	step "KUnit (UML)" kunit_wait
	if [ -z "$built" ]; then
		step "QEMU integration" qemu_tests
	else
		skip "QEMU integration" "$built"
	fi
fi

printf '\n=== summary (%ss)\n' $(($(date +%s) - t_start))
printf '%s\n' "${results[@]}"
exit $failed
