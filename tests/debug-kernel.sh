#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# debug-kernel.sh - a KASAN + lockdep + kmemleak guest kernel for the QEMU
# tests, our module built against it, and the integration suites run on it.
#
# Usage: debug-kernel.sh [options] [STEP...]   (default steps: build module test)
#
#   build     unpack /usr/src/linux-source-6.1.tar.xz (apt package
#             linux-source-6.1), configure a guest-only kernel (x86_64
#             defconfig minus hardware the QEMU guest lacks, plus virtio,
#             PCIe hotplug, CPU hotplug, suspend test hooks) with KASAN,
#             PROVE_LOCKING, DEBUG_ATOMIC_SLEEP and DEBUG_KMEMLEAK, build it
#             (nice -n 10) and lay out an image directory (vmlinuz, release,
#             config, lib/modules/<release>/) for test-integration.py
#             --image-dir.  Cached: rebuilt only when this script's config
#             list or the source tarball changes.
#   module    build virtio_net.ko against that kernel (W=1; a warning fails)
#   test      boot it with our module and run the suites (--suites) with
#             --kmemleak and VNET_TIMEOUT_SCALE (default 4): any KASAN,
#             lockdep or atomic-sleep report, or a kmemleak leak involving
#             our module, fails; logs in the cache's log/ directory
#   config    only write the .config (for inspection)
#   path      print the image directory
#
#   --suites LIST   suites for `test` (default: functional,faults)
#   --only LIST     passed to test-integration.py --only
#   -j N            make parallelism (default: number of CPUs)
#   -h, --help      this text
#
# Cache: ${VNET_CACHE:-~/.cache/virtio-net-dkms}/debug-kernel/.  Times of each
# step are printed and appended to its log/ directory.

set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
readonly SCRIPT_DIR
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
readonly REPO
readonly TARBALL=/usr/src/linux-source-6.1.tar.xz
readonly LOCALVERSION=-vnetdebug
CACHE=${VNET_CACHE:-$HOME/.cache/virtio-net-dkms}/debug-kernel
readonly CACHE
readonly SRC=$CACHE/src
readonly OBJ=$CACHE/obj
readonly IMG=$CACHE/image
readonly LOGS=$CACHE/log

JOBS=$(nproc 2>/dev/null || echo 2)
SUITES=functional,faults
ONLY=

msg() { printf '[debug-kernel] %s\n' "$*" >&2; }
die() {
	printf '[debug-kernel] error: %s\n' "$*" >&2
	exit 2
}
usage() {
	sed -n '/^# Usage:/,/^# step are/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
	exit "${1:-2}"
}

# Options switched on (=y), as modules (=m) or off (=n) on top of
# x86_64_defconfig.  The guest is a q35 QEMU machine booting an initramfs
# with virtio-net-pci NICs only: no disks, no USB, no display, no sound.
readonly CFG_ON=(
	# the devices of the guest (QEMU 7.2's q35 hot-plugs root ports
	# through ACPI by default, hence HOTPLUG_PCI_ACPI)
	VIRTIO VIRTIO_MENU VIRTIO_PCI VIRTIO_PCI_LEGACY PVH HYPERVISOR_GUEST
	PARAVIRT PCI PCIEPORTBUS HOTPLUG_PCI HOTPLUG_PCI_PCIE HOTPLUG_PCI_ACPI HOTPLUG_CPU
	SERIAL_8250 SERIAL_8250_CONSOLE DEVTMPFS BLK_DEV_INITRD NUMA
	# what the harness and its tests use
	MODULES MODULE_UNLOAD DEBUG_FS FTRACE ETHTOOL_NETLINK
	# the xdp.* tests attach BPF programs
	BPF_SYSCALL BPF_JIT
	PM PM_SLEEP SUSPEND PM_DEBUG PM_SLEEP_DEBUG PM_ADVANCED_DEBUG
	# the checkers
	DEBUG_KERNEL KASAN KASAN_GENERIC KASAN_INLINE PROVE_LOCKING
	DEBUG_ATOMIC_SLEEP DEBUG_KMEMLEAK DEBUG_INFO_NONE
	KALLSYMS KALLSYMS_ALL STACKTRACE
)
# VLAN_8021Q, MACVLAN: the RX filter tests; E1000E: the failover primary;
# NETCONSOLE: coal.netconsole loads it with a target (built in, it cannot)
readonly CFG_MOD=(VIRTIO_NET VLAN_8021Q MACVLAN E1000E NETCONSOLE)
readonly CFG_OFF=(
	DRM FB AGP SOUND USB_SUPPORT WLAN WIRELESS CFG80211 MAC80211 RFKILL
	HID INPUT_MOUSE INPUT_JOYSTICK INPUT_TABLET INPUT_TOUCHSCREEN
	ATA SCSI MD BLK_DEV_SD EXT4_FS NETWORK_FILESYSTEMS NETFILTER
	E1000 FDDI PCCARD MACINTOSH_DRIVERS
	SECURITY SECURITY_SELINUX AUDIT KVM HIBERNATION DEBUG_KMEMLEAK_AUTO_SCAN
	DEBUG_KMEMLEAK_DEFAULT_OFF MODULE_SIG LOCALVERSION_AUTO
	DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT DEBUG_INFO_DWARF4 DEBUG_INFO_DWARF5
	KASAN_OUTLINE KASAN_VMALLOC
)

config_hash() {
	{
		printf '%s\n' "${CFG_ON[@]}" -- "${CFG_MOD[@]}" -- "${CFG_OFF[@]}"
		stat -c '%s %Y' "$TARBALL"
	} | sha256sum | cut -c1-16
}

# step_time NAME SECONDS: print and record how long a step took
step_time() {
	mkdir -p "$LOGS"
	printf '%s %s %ss jobs=%s load=%s\n' "$(date -u +%FT%TZ)" "$1" "$2" "$JOBS" \
		"$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$LOGS/times.txt" >&2
}

unpack() {
	[ -f "$TARBALL" ] || die "$TARBALL missing: apt-get install linux-source-6.1"
	if [ -f "$SRC/Makefile" ] && [ "$(cat "$SRC/.vnet-tarball" 2>/dev/null)" = "$(stat -c '%s %Y' "$TARBALL")" ]; then
		return
	fi
	msg "unpacking $TARBALL"
	rm -rf "$SRC" "$OBJ"
	mkdir -p "$SRC"
	tar -C "$SRC" --strip-components=1 -xJf "$TARBALL"
	stat -c '%s %Y' "$TARBALL" >"$SRC/.vnet-tarball"
}

# Host packages a kernel build needs beyond those of setup-host.sh.
readonly BUILD_DEPS=(linux-source-6.1 libelf-dev libssl-dev flex bison bc xz-utils make gcc)

install_deps() {
	local p missing=()
	for p in "${BUILD_DEPS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return
	msg "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
}

kmake() {
	nice -n 10 make -C "$SRC" O="$OBJ" LOCALVERSION="$LOCALVERSION" "$@"
}

do_config() {
	local o cfg=$OBJ/.config bad=()
	install_deps
	unpack
	mkdir -p "$OBJ"
	kmake -s x86_64_defconfig
	for o in "${CFG_ON[@]}"; do "$SRC/scripts/config" --file "$cfg" -e "$o"; done
	for o in "${CFG_MOD[@]}"; do "$SRC/scripts/config" --file "$cfg" -m "$o"; done
	for o in "${CFG_OFF[@]}"; do "$SRC/scripts/config" --file "$cfg" -d "$o"; done
	kmake -s olddefconfig
	# olddefconfig silently drops what a dependency forbids: check the result
	for o in "${CFG_ON[@]}"; do
		grep -q "^CONFIG_$o=y" "$cfg" || bad+=("$o=y")
	done
	for o in "${CFG_MOD[@]}"; do
		grep -q "^CONFIG_$o=m" "$cfg" || bad+=("$o=m")
	done
	[ ${#bad[@]} -eq 0 ] || die "config did not take: ${bad[*]}"
}

do_build() {
	local hash t0 rel stage
	hash=$(config_hash)
	if [ -f "$IMG/.vnet-hash" ] && [ "$(cat "$IMG/.vnet-hash")" = "$hash" ]; then
		msg "cached: $IMG ($(cat "$IMG/release"))"
		return
	fi
	t0=$(date +%s)
	do_config
	mkdir -p "$LOGS"
	msg "building (log: $LOGS/build.log)"
	if ! kmake -j"$JOBS" bzImage modules >"$LOGS/build.log" 2>&1; then
		tail -n 30 "$LOGS/build.log" >&2
		die "kernel build failed"
	fi
	rel=$(kmake -s kernelrelease)
	stage=$CACHE/image.new
	rm -rf "$stage"
	mkdir -p "$stage"
	kmake -s INSTALL_MOD_PATH="$stage" INSTALL_MOD_STRIP=1 modules_install \
		>>"$LOGS/build.log" 2>&1
	# build: the tree the harness builds its test modules against
	# (tests/harness/kmod.py), as an installed kernel's build link
	rm -f "$stage/lib/modules/$rel/build" "$stage/lib/modules/$rel/source"
	ln -s "$OBJ" "$stage/lib/modules/$rel/build"
	cp "$OBJ/arch/x86/boot/bzImage" "$stage/vmlinuz"
	cp "$OBJ/.config" "$stage/config"
	cp "$OBJ/System.map" "$stage/System.map"
	echo "$rel" >"$stage/release"
	echo "$hash" >"$stage/.vnet-hash"
	rm -rf "$IMG"
	mv "$stage" "$IMG"
	step_time "build($rel)" $(($(date +%s) - t0))
}

do_module() {
	local t0 out=$CACHE/module
	[ -f "$IMG/release" ] || die "no kernel built yet: run '$0 build'"
	t0=$(date +%s)
	rm -rf "$out"
	mkdir -p "$out/src"
	git -C "$REPO" ls-files -z --cached --others --exclude-standard |
		grep -zv '^build/' | (cd "$REPO" && xargs -0 cp --parents -t "$out/src")
	if ! make -C "$OBJ" M="$out/src" W=1 modules >"$out/build.log" 2>&1 ||
		grep -E 'warning:|error:' "$out/build.log"; then
		tail -n 30 "$out/build.log" >&2
		die "module build failed (log: $out/build.log)"
	fi
	cp "$out/src/virtio_net.ko" "$out/virtio_net.ko"
	step_time module $(($(date +%s) - t0))
	msg "module: $out/virtio_net.ko"
}

do_test() {
	local t0 rc=0 suite args=()
	[ -f "$CACHE/module/virtio_net.ko" ] || die "no module built yet: run '$0 module'"
	[ -z "$ONLY" ] || args+=(--only "$ONLY")
	mkdir -p "$LOGS"
	: >"$LOGS/test.log"
	for suite in ${SUITES//,/ }; do
		t0=$(date +%s)
		# PVH boot of the extracted vmlinux dies at once with this
		# configuration (empty console): boot the bzImage instead
		if ! VNET_BZIMAGE=1 VNET_TIMEOUT_SCALE=${VNET_TIMEOUT_SCALE:-4} python3 \
			"$REPO/tests/integration.py" --kernel 6.1 --image-dir "$IMG" \
			--module "$CACHE/module/virtio_net.ko" --suite "$suite" --kmemleak \
			--logs "$LOGS/test-logs-$suite" "${args[@]}" 2>&1 | tee -a "$LOGS/test.log" ||
			[ "${PIPESTATUS[0]}" -ne 0 ]; then
			rc=1
		fi
		step_time "test($suite)" $(($(date +%s) - t0))
	done
	return "$rc"
}

steps=()
while [ $# -gt 0 ]; do
	case "$1" in
	--suites) SUITES=${2:?}; shift ;;
	--only) ONLY=${2:?}; shift ;;
	-j) JOBS=${2:?}; shift ;;
	-h | --help) usage 0 ;;
	build | module | test | config | path) steps+=("$1") ;;
	*) usage ;;
	esac
	shift
done
[ ${#steps[@]} -gt 0 ] || steps=(build module test)

for s in "${steps[@]}"; do
	case "$s" in
	build) do_build ;;
	module) do_module ;;
	test) do_test ;;
	config) do_config; msg "config: $OBJ/.config" ;;
	path) echo "$IMG" ;;
	esac
done
