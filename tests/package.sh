#!/usr/bin/env bash
# Most functions run through check(), which shellcheck cannot follow:
# shellcheck disable=SC2317
# SPDX-License-Identifier: GPL-2.0-only
#
# Tests of the Debian and RPM packages (README "Installing from a package").
#
#   tests/package.sh --quick    package contents only: make deb,
#                                      make rpm, file lists, scriptlets,
#                                      the example modprobe.d file, the
#                                      fallback rule with and without its
#                                      helper (~10 s; in tests/run-all.sh)
#   tests/package.sh            everything (root; see README for
#                                      the time it takes):
#
#   the quick checks, then in a debootstrapped Debian 12 root with
#   linux-image-amd64 and linux-headers-amd64 (6.1), cached under
#   ${VNET_CACHE:-~/.cache/virtio-net-dkms}/pkgtest/ and copied afresh
#   for every run:
#     install an older package version, upgrade to this one, check modinfo,
#     modprobe --show-depends, dkms status and the initramfs (our module,
#     byte for byte the one on disk, the in-tree one and the fallback);
#     a kernel with CONFIG_VIRTIO_NET=y is skipped with a message, by
#     "dkms install" and by the kernel hooks;
#     a kernel installed afterwards (6.12, bookworm-backports) gets the
#     module from the kernel hooks (ours, DKMS's autoinstall);
#     boot the root's own kernels and initramfs in QEMU (TCG) from an ext4
#     image of it: the NIC comes up with our driver (6.1 and 6.12), and
#     with the in-tree driver through the fallback under
#     module.sig_enforce=1 (our module is signed with DKMS's MOK key,
#     which is not enrolled), and with a deliberately broken build whose
#     module fails to load, or loads but fails to probe;
#     a build that does not compile: installing the package and
#     reinstalling the 6.12 kernel succeed, and show DKMS's own kernel
#     hook failing without ours; every kernel keeps the in-tree driver on
#     disk, in the initramfs and at boot; the initramfs hook drops the
#     fallback rule when the helper is missing;
#     apt purge brings back the in-tree driver on disk and in the initramfs;
#     an administrator's copy of the fallback rule left behind still
#     loads the in-tree virtio_net, in the initramfs and after it.
#
# Options:
#   --quick      the quick checks only
#   --no-boot    skip the QEMU boots
#   --keep       keep the work root and the logs of a passing run
#   -h, --help   this text
#
# Environment: VNET_CACHE, VNET_MIRROR, VNET_SECURITY_MIRROR (as
# tests/setup/kernel-env.sh), VNET_QEMU (QEMU binary).  Logs:
# $VNET_CACHE/pkgtest/logs/.  Ends with "N passed, M failed"; exit status
# 0 when everything passed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${VNET_CACHE:-$HOME/.cache/virtio-net-dkms}
PT=$CACHE/pkgtest
MIRROR=${VNET_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${VNET_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
QEMU=${VNET_QEMU:-qemu-system-x86_64}
STD_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Bump to rebuild the cached base root.
BASE_STAMP=v1
BASE=$PT/base-bookworm
WORK=$PT/work
LOGS=$PT/logs
MAC=52:54:00:78:00:02
HOST_IP=10.78.0.1
GUEST_IP=10.78.0.2

quick=0 boot=1 keep=0
for a in "$@"; do
	case $a in
	--quick) quick=1 ;;
	--no-boot) boot=0 ;;
	--keep) keep=1 ;;
	-h | --help) sed -n '6,51p' "$0" | cut -c3-; exit 0 ;;
	*) echo "test-package: unknown option $a" >&2; exit 2 ;;
	esac
done

npass=0 nfail=0
t_start=$SECONDS
timings=()

say() { printf '[test-package] %s\n' "$*"; }
pass() { npass=$((npass + 1)); printf 'PASS %s\n' "$*"; }
fail() { nfail=$((nfail + 1)); printf 'FAIL %s\n' "$*"; }
# check NAME CMD... : PASS when CMD succeeds
check() {
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name"; fi
}
stage() { # NAME: start timing a stage
	stage_end
	stage_name=$1 stage_t0=$SECONDS
	printf '\n=== %s\n' "$1"
}
stage_name=
stage_end() {
	[[ -n $stage_name ]] || return 0
	timings+=("$(printf '%-40s %4ss' "$stage_name" $((SECONDS - stage_t0)))")
	stage_name=
}
finish() {
	stage_end
	printf '\n=== timings (total %ss)\n' $((SECONDS - t_start))
	printf '%s\n' "${timings[@]}"
	printf '\n%d passed, %d failed\n' "$npass" "$nfail"
	[[ $nfail -eq 0 ]]
	exit $?
}
die() {
	fail "$*"
	finish
}

# ---------------------------------------------------------------------------
# host tools

ensure_host_tools() { # "command:package"...
	local pair missing=()
	for pair in "$@"; do
		PATH=$STD_PATH command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
	done
	((${#missing[@]})) || return 0
	if [[ $(id -u) != 0 ]]; then
		say "missing host packages: ${missing[*]} (apt-get install them, or run as root)"
		return 1
	fi
	say "apt-get install ${missing[*]}"
	mkdir -p "$LOGS"
	{ apt-get -q update && DEBIAN_FRONTEND=noninteractive apt-get -q -y \
		--no-install-recommends install "${missing[@]}"; } >"$LOGS/host-apt.log" 2>&1 ||
		{ tail -n 20 "$LOGS/host-apt.log"; return 1; }
}

# ---------------------------------------------------------------------------
# quick checks: the packages as files

# Every module option of src/main.c is in the example modprobe.d file,
# commented out, and nothing in it is active.
check_options_file() {
	local f=$top/packaging/common/virtio-net-dkms.conf opt ok=0
	while read -r opt; do
		if ! grep -Eq "^#options virtio_net $opt=" "$f"; then
			echo "  option $opt (src/main.c) is not in packaging/common/virtio-net-dkms.conf"
			ok=1
		fi
	done < <(sed -n 's/^module_param_cb(\([a-z_0-9]*\),.*/\1/p; s/^module_param(\([a-z_0-9]*\),.*/\1/p' \
		"$top"/src/*.c)
	if grep -Ev '^(#|$)' "$f"; then
		echo "  active lines in the example file (all must be commented out)"
		ok=1
	fi
	return "$ok"
}

# The install rule of virtio_net in file $1, run as modprobe runs it (sh -c,
# $CMDLINE_OPTS substituted) with the helper and /sbin/modprobe replaced by
# stubs that record their arguments, and an empty PATH (nothing else may
# run): with the helper readable it runs the helper, without it plain
# "modprobe --ignore-install virtio_net" with the options.
check_rule_guard() { # file
	local f=$1 cmd tmp got ok=0 helper=/usr/lib/virtio-net-dkms/virtio-net-load
	cmd=$(sed -n 's/^install virtio_net //p' "$f")
	if [[ -z $cmd ]] || [[ $(grep -c '^install ' "$f") != 1 ]]; then
		echo "  $f: not exactly one install rule, for virtio_net"
		return 1
	fi
	tmp=$(mktemp -d)
	mkdir "$tmp/empty"
	# shellcheck disable=SC2016 # the stubs expand $* themselves
	printf '#!/bin/sh\necho "modprobe $*" >>"%s/calls"\n' "$tmp" >"$tmp/modprobe"
	# shellcheck disable=SC2016
	printf 'echo "helper $*" >>"%s/calls"\n' "$tmp" >"$tmp/helper"
	chmod 755 "$tmp/modprobe"
	# shellcheck disable=SC2016 # modprobe's placeholder, literally
	cmd=${cmd//'$CMDLINE_OPTS'/csum=0 napi_tx=1}
	cmd=${cmd//"$helper"/$tmp/helper}
	cmd=${cmd//\/sbin\/modprobe/$tmp/modprobe}
	run_rule() {
		rm -f "$tmp/calls"
		PATH=$tmp/empty /bin/sh -c "$cmd" 2>&1
		got=$(cat "$tmp/calls" 2>/dev/null)
	}
	run_rule
	if [[ $got != "helper csum=0 napi_tx=1" ]]; then
		echo "  with the helper: ran '${got:-nothing}', not the helper with the options"
		ok=1
	fi
	rm "$tmp/helper"
	run_rule
	if [[ $got != "modprobe --ignore-install virtio_net csum=0 napi_tx=1" ]]; then
		echo "  without the helper: ran '${got:-nothing}', not modprobe --ignore-install virtio_net with the options"
		ok=1
	fi
	rm -rf "$tmp"
	return "$ok"
}

quick_checks() {
	local deb rpm tmp
	stage "quick: versions, make deb, make rpm"
	check "version: VERSION, dkms.conf, debian/changelog and the spec agree" \
		sh "$top/packaging/check-version.sh"
	check "example modprobe.d file lists every module option, all commented out" check_options_file
	if command -v shellcheck >/dev/null; then
		check "shellcheck of the packaging scripts" shellcheck -s sh -e SC1091 \
			"$top/packaging/common/virtio-net-load" "$top/packaging/common/package-hook" \
			"$top/packaging/common/initramfs-hook" "$top/packaging/debian/kernel-hook" \
			"$top/packaging/debian/virtio-net-dkms.postinst" \
			"$top/packaging/debian/virtio-net-dkms.postrm"
		check "shellcheck of the package scripts" shellcheck -x \
			"$top/packaging/make-deb.sh" "$top/packaging/make-rpm.sh" "$top/tests/package.sh" \
			"$top/packaging/rpm/dracut-module-setup.sh"
	fi
	ensure_host_tools dpkg-buildpackage:dpkg-dev dh:debhelper dh_dkms:dh-dkms \
		rpmbuild:rpm fakeroot:fakeroot || die "host tools for the package builds"

	PKGS=$PT/packages
	rm -rf "$PKGS"
	mkdir -p "$PKGS" "$LOGS"
	VERSION=$(cat "$top/VERSION")
	if ! deb=$(bash "$top/packaging/make-deb.sh" --out "$PKGS" 2>"$LOGS/make-deb.log"); then
		cat "$LOGS/make-deb.log"
		die "make-deb.sh"
	fi
	check "make deb: ${deb##*/}" test "${deb##*/}" = "virtio-net-dkms_${VERSION}_all.deb"
	DEB=$deb
	tmp=$(mktemp -d)
	dpkg-deb -R "$deb" "$tmp/x"
	local f absent=0
	for f in "usr/src/virtio-net-dkms-$VERSION/dkms.conf" "usr/src/virtio-net-dkms-$VERSION/Kbuild" \
		"usr/src/virtio-net-dkms-$VERSION/VERSION" "usr/src/virtio-net-dkms-$VERSION/src/main.c" \
		"usr/src/virtio-net-dkms-$VERSION/scripts/version.sh" \
		"usr/src/virtio-net-dkms-$VERSION/scripts/compat-probe.sh" \
		usr/lib/virtio-net-dkms/virtio-net-load usr/lib/virtio-net-dkms/package-hook \
		lib/modprobe.d/virtio-net-dkms-fallback.conf etc/modprobe.d/virtio-net-dkms.conf \
		usr/share/initramfs-tools/hooks/virtio-net-dkms usr/share/doc/virtio-net-dkms/README.gz \
		etc/kernel/postinst.d/00-virtio-net-dkms etc/kernel/header_postinst.d/00-virtio-net-dkms \
		usr/share/doc/virtio-net-dkms/examples/10-virtio-net-dkms.link \
		usr/share/doc/virtio-net-dkms/examples/90-virtio-net-dkms-ethtool.rules; do
		[[ -e $tmp/x/$f ]] || { echo "  missing $f"; absent=1; }
	done
	check "deb: sources, fallback rule and helper, initramfs and kernel hooks, example, docs" test "$absent" = 0
	# run-parts runs the kernel hooks in name order (C collation for these
	# names); DKMS's is "dkms"
	check "deb: the kernel hooks sort before DKMS's and are executable" bash -c "
		test -x '$tmp/x/etc/kernel/postinst.d/00-virtio-net-dkms' &&
		test -x '$tmp/x/etc/kernel/header_postinst.d/00-virtio-net-dkms' &&
		test \"\$(printf '%s\n' dkms 00-virtio-net-dkms | LC_ALL=C sort | head -n1)\" = 00-virtio-net-dkms"
	check "deb: postinst does not fail once DKMS has the sources (a failed build)" \
		grep -q 'dkms status -m virtio-net-dkms -v "'"$VERSION"'"' "$tmp/x/DEBIAN/postinst"
	check "deb: dkms.conf leaves the module out of autoinstall after a failed hook build" \
		grep -q '/var/lib/virtio-net-dkms/autoinstall-skip' "$tmp/x/usr/src/virtio-net-dkms-$VERSION/dkms.conf"
	check "deb: the example modprobe.d file is a conffile" \
		grep -qx /etc/modprobe.d/virtio-net-dkms.conf "$tmp/x/DEBIAN/conffiles"
	check "deb: the fallback rule is not a conffile (removed with the package)" \
		bash -c "! grep -q fallback '$tmp/x/DEBIAN/conffiles'"
	check "deb: the packaged dkms.conf is version $VERSION" \
		grep -qx "PACKAGE_VERSION=\"$VERSION\"" "$tmp/x/usr/src/virtio-net-dkms-$VERSION/dkms.conf"
	check "deb: Depends on dkms" grep -q '^Depends:.*dkms' "$tmp/x/DEBIAN/control"
	check "deb: postinst runs DKMS, then package-hook after-install $VERSION" \
		grep -q "common.postinst" "$tmp/x/DEBIAN/postinst"
	check "deb: postinst's after-install has the version" \
		grep -q "package-hook after-install \"$VERSION\"" "$tmp/x/DEBIAN/postinst"
	check "deb: prerm removes the module (dkms remove --all)" \
		grep -qF "dkms remove -m \$DKMS_NAME -v \$DKMS_VERSION --all" "$tmp/x/DEBIAN/prerm"
	check "deb: postrm rebuilds every initramfs on remove" \
		grep -q 'update-initramfs -u -k all' "$tmp/x/DEBIAN/postrm"
	check "deb: the helper loads ours with modprobe --ignore-install" \
		grep -q 'modprobe --ignore-install virtio_net' "$tmp/x/usr/lib/virtio-net-dkms/virtio-net-load"
	check "deb: the install rule runs the helper when it is there, plain modprobe when not" \
		check_rule_guard "$tmp/x/lib/modprobe.d/virtio-net-dkms-fallback.conf"
	rm -rf "$tmp"

	if ! rpm=$(bash "$top/packaging/make-rpm.sh" --out "$PKGS" 2>"$LOGS/make-rpm.log"); then
		cat "$LOGS/make-rpm.log"
		die "make-rpm.sh"
	fi
	check "make rpm: ${rpm##*/}" test "${rpm##*/}" = "virtio-net-dkms-${VERSION}-1.noarch.rpm"
	local list scripts want out
	list=$(rpm -qlp "$rpm" 2>/dev/null | grep -v "^/usr/src/virtio-net-dkms-$VERSION/\(src\|include\)/")
	want="/etc/modprobe.d/virtio-net-dkms.conf
/usr/lib/dracut/dracut.conf.d/90-virtio-net-dkms.conf
/usr/lib/dracut/modules.d/90virtio-net-dkms
/usr/lib/dracut/modules.d/90virtio-net-dkms/module-setup.sh
/usr/lib/modprobe.d/virtio-net-dkms-fallback.conf
/usr/lib/virtio-net-dkms
/usr/lib/virtio-net-dkms/package-hook
/usr/lib/virtio-net-dkms/virtio-net-load
/usr/share/doc/virtio-net-dkms
/usr/share/doc/virtio-net-dkms/README
/usr/share/doc/virtio-net-dkms/examples
/usr/share/doc/virtio-net-dkms/examples/10-virtio-net-dkms.link
/usr/share/doc/virtio-net-dkms/examples/90-virtio-net-dkms-ethtool.rules
/usr/src/virtio-net-dkms-$VERSION
/usr/src/virtio-net-dkms-$VERSION/Kbuild
/usr/src/virtio-net-dkms-$VERSION/Makefile
/usr/src/virtio-net-dkms-$VERSION/VERSION
/usr/src/virtio-net-dkms-$VERSION/dkms.conf
/usr/src/virtio-net-dkms-$VERSION/include
/usr/src/virtio-net-dkms-$VERSION/scripts
/usr/src/virtio-net-dkms-$VERSION/scripts/compat-probe.sh
/usr/src/virtio-net-dkms-$VERSION/scripts/version.sh
/usr/src/virtio-net-dkms-$VERSION/src"
	if [[ $list == "$want" ]]; then
		pass "rpm -qlp: the expected file list"
	else
		fail "rpm -qlp: the expected file list"
		diff <(echo "$want") <(echo "$list") | sed 's/^/  /'
	fi
	local n_src n_rpm
	n_src=$(find "$top/src" -name '*.c' | wc -l)
	n_rpm=$(rpm -qlp "$rpm" 2>/dev/null | grep -c "^/usr/src/virtio-net-dkms-$VERSION/src/.*\.c$")
	check "rpm -qlp: all $n_src .c files of src/ and src/policy/" test "$n_src" = "$n_rpm"
	check "rpm -qp --configfiles: the example modprobe.d file" \
		bash -c "rpm -qp --configfiles '$rpm' 2>/dev/null | grep -qx /etc/modprobe.d/virtio-net-dkms.conf"
	scripts=$(rpm -qp --scripts "$rpm" 2>/dev/null)
	check "rpm %post: dkms add $VERSION" \
		has "^dkms add -m virtio-net-dkms -v $VERSION --rpm_safe_upgrade" \
		"$(sed -n '/^postinstall scriptlet/,/scriptlet/p' <<<"$scripts")"
	check "rpm %posttrans: package-hook after-install $VERSION" \
		has "^/usr/lib/virtio-net-dkms/package-hook after-install $VERSION" \
		"$(sed -n '/^posttrans scriptlet/,/scriptlet/p' <<<"$scripts")"
	check "rpm %preun: dkms remove $VERSION --all" \
		has "^dkms remove -m virtio-net-dkms -v $VERSION --all --rpm_safe_upgrade" \
		"$(sed -n '/^preuninstall scriptlet/,/scriptlet/p' <<<"$scripts")"
	check "rpm %postun: dracut -f for every kernel on erase" \
		has 'dracut -f --kver' "$(sed -n '/^postuninstall scriptlet/,/scriptlet/p' <<<"$scripts")"
	out=$(rpm -qpR "$rpm" 2>/dev/null)
	check "rpm: Requires dkms >= 3.0" has '^dkms >= 3' "$out"
	check "rpm: Requires dracut" has '^dracut' "$out"
	check "rpm: noarch" test "$(rpm -qp --qf '%{ARCH}' "$rpm" 2>/dev/null)" = noarch
	stage_end
}

# ---------------------------------------------------------------------------
# the Debian root

# in_root ROOT CMD... : CMD in the chroot, with /proc, /dev, /sys and /run
# mounted in a private mount namespace (gone when CMD ends).
in_root() {
	local root=$1
	shift
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --propagation private -- bash -c '
		root=$1; shift
		mount -t proc proc "$root/proc" &&
		mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" &&
		mount -t sysfs -o ro sysfs "$root/sys" &&
		mount -t tmpfs tmpfs "$root/run" || exit 125
		exec chroot "$root" /usr/bin/env -i PATH='"$STD_PATH"' HOME=/root \
			LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"' sh "$root" "$@"
}
R() { in_root "$WORK" "$@"; }

APT=(apt-get -q -y -o Acquire::Retries=3 -o Acquire::Check-Valid-Until=false
	-o Dpkg::Use-Pty=0 -o APT::Install-Recommends=false -o DPkg::Lock::Timeout=600)

make_base() {
	if [[ -f $BASE/.vnet-pkgtest-base && $(<"$BASE/.vnet-pkgtest-base") == "$BASE_STAMP" ]] &&
		chroot "$BASE" /bin/true 2>/dev/null; then
		return 0
	fi
	local tmp=$BASE.tmp
	say "building the cached Debian 12 root $BASE (a few minutes, once)"
	rm -rf --one-file-system "$tmp" "$BASE"
	mkdir -p "$PT/debs" "$LOGS"
	unshare --mount --propagation private -- debootstrap --variant=minbase \
		--cache-dir="$PT/debs" bookworm "$tmp" "$MIRROR" >"$LOGS/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$LOGS/debootstrap.log"; return 1; }
	cat >"$tmp/etc/apt/sources.list" <<-EOF
		deb $MIRROR bookworm main
		deb $MIRROR bookworm-updates main
		deb $SECURITY_MIRROR bookworm-security main
		deb $MIRROR bookworm-backports main
	EOF
	printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
	chmod 755 "$tmp/usr/sbin/policy-rc.d"
	{
		in_root "$tmp" "${APT[@]}" update &&
			# the kernel, its headers, openssl (DKMS signs with it), the
			# guest's tools
			in_root "$tmp" "${APT[@]}" install linux-image-amd64 linux-headers-amd64 \
				openssl iproute2 iputils-ping ethtool kmod procps &&
			# downloaded now, installed by the tests: dkms and the 6.12 kernel
			in_root "$tmp" "${APT[@]}" --download-only install dkms &&
			in_root "$tmp" "${APT[@]}" --download-only -t bookworm-backports install \
				linux-image-amd64 linux-headers-amd64
	} >"$LOGS/base-apt.log" 2>&1 || { tail -n 20 "$LOGS/base-apt.log"; return 1; }
	echo "$BASE_STAMP" >"$tmp/.vnet-pkgtest-base"
	mv "$tmp" "$BASE"
}

# Release of the kernel of the given series installed in the work root.
kernel_of() { # 6.1 | 6.12
	local d
	for d in "$WORK"/lib/modules/"$1".*; do
		[[ -d $d/kernel ]] && { echo "${d##*/}"; return 0; }
	done
	return 1
}

# The on-disk path of virtio_net modprobe would load for kernel $1.
modinfo_path() { R modinfo -k "$1" -F filename virtio_net 2>/dev/null; }

# sha256 of a module file, decompressed if needed (host tools).
mod_sha() {
	case $1 in
	*.xz) xz -dc "$1" | sha256sum | cut -d' ' -f1 ;;
	*.zst) zstd -qdc "$1" | sha256sum | cut -d' ' -f1 ;;
	*) sha256sum "$1" | cut -d' ' -f1 ;;
	esac
}

# Unpacks kernel $1's initramfs of the work root into $WORK/tmp/initrd-$1 and
# prints that host path.
unpack_initrd() {
	local k=$1 d=/tmp/initrd-$1
	rm -rf "$WORK$d"
	R unmkinitramfs "/boot/initrd.img-$k" "$d" >/dev/null 2>&1 || return 1
	# early microcode archives go to early*/, the rest to main/ (or the top)
	if [[ -d $WORK$d/main ]]; then echo "$WORK$d/main"; else echo "$WORK$d"; fi
}

# Checks of the initramfs of kernel $1 with the package installed: ours,
# identical to the file on disk, the in-tree module, the fallback pieces.
check_initrd_ours() { # kernel
	local k=$1 ir disk ours intree
	if ! ir=$(unpack_initrd "$k"); then
		fail "$k initramfs: unmkinitramfs"
		return
	fi
	disk=$(modinfo_path "$k")
	ours=$(find "$ir" -path "*/lib/modules/$k/updates/dkms/virtio_net.ko*" | head -n1)
	intree=$(find "$ir" -path "*/lib/modules/$k/kernel/drivers/net/virtio_net.ko*" | head -n1)
	if [[ -n $ours && $disk == */updates/dkms/* ]] && [[ $(mod_sha "$ours") == $(mod_sha "$WORK$disk") ]]; then
		pass "$k initramfs: holds our virtio_net, identical to $disk"
	else
		fail "$k initramfs: holds our virtio_net, identical to the one on disk (initramfs: ${ours:-none}, disk: ${disk:-none})"
	fi
	check "$k initramfs: holds the in-tree virtio_net for the fallback" test -n "$intree"
	check "$k initramfs: holds the fallback rule, the helper, insmod and modinfo" bash -c "
		f=\$(find '$ir' -name virtio-net-dkms-fallback.conf | head -n1) &&
		grep -q '^install virtio_net' \"\$f\" &&
		test -n \"\$(find '$ir' -path '*/virtio-net-dkms/virtio-net-load')\" &&
		test -n \"\$(find '$ir' -name insmod)\" && test -n \"\$(find '$ir' -name modinfo)\""
	rm -rf "$WORK/tmp/initrd-$k"
}

check_initrd_intree() { # kernel
	local k=$1 ir
	if ! ir=$(unpack_initrd "$k"); then
		fail "$k initramfs: unmkinitramfs"
		return
	fi
	check "$k initramfs after purge: no virtio-net-dkms module, rule or helper" bash -c "
		test -z \"\$(find '$ir' -path '*/updates/dkms/virtio_net.ko*' -o -name 'virtio-net-dkms*' -o -name virtio-net-load)\""
	check "$k initramfs after purge: the in-tree virtio_net" bash -c "
		test -n \"\$(find '$ir' -path '*/kernel/drivers/net/virtio_net.ko*')\""
	rm -rf "$WORK/tmp/initrd-$k"
}

# has PATTERN TEXT: TEXT has a line matching the extended regex PATTERN
has() { grep -Eq -- "$1" <<<"$2"; }
# The extended regex matching string $1 literally (kernel releases have "+").
# shellcheck disable=SC2001,SC2016 # a sed bracket expression
re() { sed 's/[][\\.*^$()+?{}|]/\\&/g' <<<"$1"; }

# check_ours KERNEL VERSION: modinfo, modprobe and dkms resolve to ours.
check_ours() {
	local k=$1 v=$2 p out kr vr
	p=$(modinfo_path "$k")
	kr=$(re "$k") vr=$(re "$v")
	check "$k: modinfo virtio_net is ours (${p:-none})" has "^/lib/modules/$kr/updates/dkms/virtio_net\.ko" "$p"
	check "$k: modinfo -F version is $v" test "$(R modinfo -k "$k" -F version virtio_net 2>/dev/null)" = "$v"
	out=$(R modprobe -S "$k" --ignore-install --show-depends virtio_net 2>&1)
	check "$k: modprobe --ignore-install --show-depends loads ours" \
		has "^insmod /lib/modules/$kr/updates/dkms/virtio_net\.ko" "$out"
	out=$(R modprobe -S "$k" --show-depends virtio_net 2>&1)
	check "$k: modprobe --show-depends runs the fallback helper" \
		has "^install if \[ -r /usr/lib/virtio-net-dkms/virtio-net-load \]; then /bin/sh /usr/lib/virtio-net-dkms/virtio-net-load" "$out"
	out=$(R dkms status -k "$k" 2>&1)
	check "$k: dkms status: $v installed" has "^virtio-net-dkms/$vr, $kr, [^:]*: installed" "$out"
	out=$(R modinfo -F signer "${p:-/nonexistent}" 2>&1)
	check "$k: our module is signed with the DKMS MOK key" has "DKMS module signing key" "$out"
}

# A copy of what make-deb.sh packages, to break.
copy_tree() { # dir
	local d=$1
	rm -rf "$d"
	mkdir -p "$d/scripts"
	cp -r "$top/Kbuild" "$top/Makefile" "$top/VERSION" "$top/dkms.conf" "$top/README" \
		"$top/src" "$top/include" "$top/packaging" "$d/"
	cp "$top/scripts/version.sh" "$top/scripts/compat-probe.sh" "$d/scripts/"
}

# A copy of the tree whose module does not compile, on any kernel.
make_nocompile_tree() { # dir
	local d=$1
	copy_tree "$d"
	grep -q '^#include' "$d/src/main.c" || { echo "src/main.c has no #include" >&2; return 1; }
	sed -i '0,/^#include/s//#error "virtio-net-dkms package test: a build that does not compile"\n&/' \
		"$d/src/main.c"
}

# A copy of the tree whose module fails on demand: the kernel command line
# option virtio_net.pkgtest_fail=load makes its init fail, =probe its
# probe.  Without it, it is the normal module.
make_broken_tree() { # dir
	local d=$1 main
	copy_tree "$d"
	main=$d/src/main.c
	if ! grep -q '^static int __init vnet_init(void)$' "$main" ||
		! grep -q '[^_]register_virtio_driver(&vnet_driver)' "$main"; then
		echo "src/main.c no longer has vnet_init() calling register_virtio_driver(&vnet_driver): update make_broken_tree" >&2
		return 1
	fi
	# vnet_init's register_virtio_driver() becomes pkgtest_register(),
	# defined just before vnet_init.
	sed -i '0,/\([^_]\)register_virtio_driver(&vnet_driver)/s//\1pkgtest_register()/' "$main"
	sed -i 's/^static int __init vnet_init(void)$/static char *pkgtest_fail = "";\
module_param(pkgtest_fail, charp, 0444);\
\
static int pkgtest_probe(struct virtio_device *vdev)\
{\
	return -EIO;\
}\
\
static int pkgtest_register(void)\
{\
	if (!strcmp(pkgtest_fail, "load"))\
		return -ENODEV;\
	if (!strcmp(pkgtest_fail, "probe"))\
		vnet_driver.probe = pkgtest_probe;\
	return register_virtio_driver(\&vnet_driver);\
}\
\
&/' "$main"
}

# Installs a package file into the work root with apt; output in $LOGS/$2.log.
apt_install_deb() { # deb logname [apt args]
	local deb=$1 log=$LOGS/$2.log
	shift 2
	mkdir -p "$WORK/tmp/pkgs"
	cp "$deb" "$WORK/tmp/pkgs/"
	R "${APT[@]}" install "$@" "/tmp/pkgs/${deb##*/}" >"$log" 2>&1
}

# A kernel tree that looks like one with virtio_net built in: the 6.1
# headers with CONFIG_VIRTIO_NET=y, as release <6.1>-vnety.
check_builtin_kernel() {
	local k61=$1 v=$2 fk hd out rc=0
	fk=$k61-vnety
	hd=/usr/src/linux-headers-$fk
	rm -rf "$WORK$hd" "$WORK/lib/modules/$fk"
	cp -a "$WORK/usr/src/linux-headers-$k61" "$WORK$hd"
	sed -i 's/^CONFIG_VIRTIO_NET=m$/CONFIG_VIRTIO_NET=y/' "$WORK$hd/.config"
	mkdir -p "$WORK/lib/modules/$fk/kernel"
	ln -s "$hd" "$WORK/lib/modules/$fk/build"
	out=$(R dkms install -m virtio-net-dkms -v "$v" -k "$fk" 2>&1) || rc=$?
	echo "$out" >"$LOGS/builtin-kernel.log"
	check "CONFIG_VIRTIO_NET=y kernel: dkms skips it (exit 77, not a failure)" test "$rc" = 77
	check "CONFIG_VIRTIO_NET=y kernel: dkms says why" grep -q 'has virtio_net built in' <<<"$out"
	out=$(R /usr/lib/virtio-net-dkms/package-hook build "$v" 2>&1)
	echo "$out" >>"$LOGS/builtin-kernel.log"
	check "CONFIG_VIRTIO_NET=y kernel: the package says it keeps its own driver" \
		grep -q "$fk: virtio_net is built into this kernel" <<<"$out"
	# DKMS 3.0's autoinstall (its kernel hook) counts the excluded module as
	# a failure; the package's kernel hook, run first, takes it out.
	rm -f "$WORK/var/lib/virtio-net-dkms/autoinstall-skip"
	rc=0
	R dkms autoinstall -k "$fk" >>"$LOGS/builtin-kernel.log" 2>&1 || rc=$?
	check "CONFIG_VIRTIO_NET=y kernel: DKMS's own autoinstall fails on it (exit $rc; what the package's kernel hook prevents)" \
		test "$rc" != 0
	rc=0
	out=$(R run-parts --report --exit-on-error --regex='^(00-virtio-net-dkms|dkms)$' \
		--arg="$fk" /etc/kernel/postinst.d 2>&1) || rc=$?
	echo "$out" >>"$LOGS/builtin-kernel.log"
	check "CONFIG_VIRTIO_NET=y kernel: the kernel hooks (ours, then DKMS's) succeed (exit $rc)" test "$rc" = 0
	check "CONFIG_VIRTIO_NET=y kernel: our kernel hook says it took the module out of autoinstall" \
		grep -q "$fk: taken out of DKMS's autoinstall" <<<"$out"
	rm -rf "$WORK$hd" "$WORK/lib/modules/$fk" "$WORK/var/lib/dkms/virtio-net-dkms/$v/$fk" \
		"$WORK/var/lib/virtio-net-dkms/autoinstall-skip"
}

# The initramfs of kernel $1 holds the kernel's own virtio_net and the
# fallback, and none of ours (a build that failed).
check_initrd_intree_fallback() { # kernel
	local k=$1 ir
	if ! ir=$(unpack_initrd "$k"); then
		fail "$k initramfs: unmkinitramfs"
		return
	fi
	check "$k initramfs: no virtio-net-dkms module" \
		bash -c "test -z \"\$(find '$ir' -path '*/updates/dkms/virtio_net.ko*')\""
	check "$k initramfs: the in-tree virtio_net, the fallback rule and the helper" bash -c "
		test -n \"\$(find '$ir' -path '*/kernel/drivers/net/virtio_net.ko*')\" &&
		test -n \"\$(find '$ir' -name virtio-net-dkms-fallback.conf)\" &&
		test -n \"\$(find '$ir' -path '*/virtio-net-dkms/virtio-net-load')\""
	rm -rf "$WORK/tmp/initrd-$k"
}

# dpkg's status of package $1 in the work root
# shellcheck disable=SC2016 # dpkg-query's format
dpkg_status() { R dpkg-query -W -f='${Status}' "$1" 2>/dev/null; }

# A build that does not compile: installing it, and installing a kernel
# with it, must succeed, every kernel keeping its own virtio_net.
nocompile_test() { # v k61 k612
	local v=$1 k61=$2 k612=$3 nc out out2 rc k ir img=$PT/root.img
	nc=$v+pkgtest.nocompile
	if ! make_nocompile_tree "$PT/nocompile-src" 2>"$LOGS/nocompile-src.log" ||
		! nc=$(bash "$top/packaging/make-deb.sh" --src "$PT/nocompile-src" --out "$PKGS" \
			--version "$nc" 2>"$LOGS/make-deb-nocompile.log"); then
		cat "$LOGS/nocompile-src.log" "$LOGS/make-deb-nocompile.log"
		fail "building the package whose module does not compile"
		return
	fi
	rm -rf "$PT/nocompile-src"
	rc=0
	apt_install_deb "$nc" install-nocompile || rc=$?
	check "apt install ./${nc##*/} succeeds although the module does not compile (exit $rc)" test "$rc" = 0
	out=$(<"$LOGS/install-nocompile.log")
	check "no compile: DKMS's own package script did fail the build" \
		has 'Bad return status for module build' "$out"
	check "no compile: the package is configured (not half-configured)" \
		test "$(dpkg_status virtio-net-dkms)" = "install ok installed"
	check "no compile: dpkg --audit finds nothing" test -z "$(R dpkg --audit 2>&1)"
	check "no compile: the install says the module was not built and the network stays up" \
		bash -c "grep -q 'THE MODULE WAS NOT BUILT' '$LOGS/install-nocompile.log' &&
			grep -q 'keep their own virtio_net, the network stays up' '$LOGS/install-nocompile.log'"
	for k in "$k61" ${k612:+"$k612"}; do
		check "no compile: $k: the build FAILED message, with its log" \
			has "$(re "$k"): the DKMS build FAILED \(log: .*make\.log\): this kernel keeps its own virtio_net" "$out"
		out2=$(modinfo_path "$k")
		check "no compile: $k: modinfo virtio_net is the in-tree one ($out2)" \
			has "^/lib/modules/$(re "$k")/kernel/drivers/net/virtio_net\.ko" "$out2"
		check_initrd_intree_fallback "$k"
	done
	rc=0
	R "${APT[@]}" install --reinstall iproute2 >"$LOGS/apt-after-nocompile.log" 2>&1 || rc=$?
	check "no compile: apt goes on (apt-get install --reinstall iproute2, exit $rc)" test "$rc" = 0

	if [[ -n $k612 ]]; then
		# Without our kernel hook, DKMS's fails the kernel's configuration
		# before its initramfs is made ...
		chmod -x "$WORK/etc/kernel/postinst.d/00-virtio-net-dkms"
		rm -f "$WORK/var/lib/virtio-net-dkms/autoinstall-skip"
		rc=0
		R "${APT[@]}" install --reinstall "linux-image-$k612" >"$LOGS/kernel-nocompile-nohook.log" 2>&1 || rc=$?
		check "no compile, without our kernel hook: reinstalling linux-image-$k612 fails (exit $rc; what the hook prevents)" \
			test "$rc" != 0
		check "no compile, without our kernel hook: linux-image-$k612 is left $(dpkg_status "linux-image-$k612")" \
			test "$(dpkg_status "linux-image-$k612")" != "install ok installed"
		chmod +x "$WORK/etc/kernel/postinst.d/00-virtio-net-dkms"
		# ... with it, the same configuration completes.
		rc=0
		R dpkg --configure -a >"$LOGS/kernel-nocompile-configure.log" 2>&1 || rc=$?
		check "no compile, with our kernel hook: dpkg --configure -a completes (exit $rc)" test "$rc" = 0
		touch "$WORK/tmp/kernel-stamp"
		sleep 1
		rc=0
		R "${APT[@]}" install --reinstall "linux-image-$k612" "linux-headers-$k612" \
			>"$LOGS/kernel-nocompile.log" 2>&1 || rc=$?
		check "no compile: apt install --reinstall linux-image-$k612 linux-headers-$k612 succeeds (exit $rc)" \
			test "$rc" = 0
		out=$(<"$LOGS/kernel-nocompile.log")
		check "no compile: the kernel hook reports the failed build and keeps the kernel's driver" \
			has "$(re "$k612"): the DKMS build FAILED .*keeps its own virtio_net" "$out"
		check "no compile: DKMS's autoinstall left the module out" \
			has "$(re "$k612"): taken out of DKMS's autoinstall" "$out"
		check "no compile: linux-image-$k612 is configured" \
			test "$(dpkg_status "linux-image-$k612")" = "install ok installed"
		check "no compile: the initramfs of $k612 was made again" \
			test "$WORK/boot/initrd.img-$k612" -nt "$WORK/tmp/kernel-stamp"
		check_initrd_intree_fallback "$k612"
	fi

	if ((boot)); then
		if make_image; then
			if boot 6.1-nocompile "$k61" ""; then
				expect_boot 6.1-nocompile initramfs intree "$v"
				expect_boot 6.1-nocompile rootfs intree "$v"
			else
				fail "boot 6.1-nocompile (log: $LOGS/boot-6.1-nocompile.log)"
			fi
		else
			fail "ext4 image of the root"
		fi
		rm -f "$img"
	fi

	# The initramfs hook with the helper gone: the copied rule is taken out.
	mv "$WORK/usr/lib/virtio-net-dkms/virtio-net-load" "$WORK/tmp/virtio-net-load"
	out=$(R update-initramfs -u -k "$k61" 2>&1)
	echo "$out" >"$LOGS/initramfs-nohelper.log"
	mv "$WORK/tmp/virtio-net-load" "$WORK/usr/lib/virtio-net-dkms/virtio-net-load"
	check "helper missing: the initramfs hook says so" has 'virtio-net-load is missing: no fallback' "$out"
	if ir=$(unpack_initrd "$k61"); then
		check "helper missing: no fallback rule in the initramfs of $k61" \
			test -z "$(find "$ir" -name virtio-net-dkms-fallback.conf)"
		rm -rf "$WORK/tmp/initrd-$k61"
	else
		fail "$k61 initramfs: unmkinitramfs"
	fi
}

# The package purged, an administrator's copy of the fallback rule left in
# /etc/modprobe.d: mkinitramfs copies it into the initramfs without the
# helper, and virtio_net must still load there and in the root.
leftover_rule_test() { # v k61
	local v=$1 k61=$2 ir out img=$PT/root.img
	cp "$top/packaging/common/virtio-net-dkms-fallback.conf" "$WORK/etc/modprobe.d/"
	R update-initramfs -u -k "$k61" >"$LOGS/initramfs-leftover.log" 2>&1 ||
		{ fail "update-initramfs -u -k $k61"; return; }
	if ir=$(unpack_initrd "$k61"); then
		check "left-over rule: in the initramfs of $k61, without the helper" bash -c "
			test -n \"\$(find '$ir' -path '*/etc/modprobe.d/virtio-net-dkms-fallback.conf')\" &&
			test -z \"\$(find '$ir' -name virtio-net-load)\""
		rm -rf "$WORK/tmp/initrd-$k61"
	else
		fail "$k61 initramfs: unmkinitramfs"
	fi
	out=$(R modprobe -S "$k61" --show-depends virtio_net 2>&1)
	check "left-over rule: modprobe still runs it" has '^install if \[ -r /usr/lib/virtio-net-dkms/virtio-net-load' "$out"
	((boot)) || return 0
	if make_image; then
		if boot 6.1-leftover-rule "$k61" ""; then
			expect_boot 6.1-leftover-rule initramfs intree "$v"
			expect_boot 6.1-leftover-rule rootfs intree "$v"
			check "boot 6.1-leftover-rule: modprobe virtio_net in the root succeeded" \
				grep -aq '^PKGTEST rootfs modprobe rc=0' "$LOGS/boot-6.1-leftover-rule.log"
		else
			fail "boot 6.1-leftover-rule (log: $LOGS/boot-6.1-leftover-rule.log)"
		fi
	else
		fail "ext4 image of the root"
	fi
	rm -f "$img"
}

# ---------------------------------------------------------------------------
# QEMU boots of the work root

make_image() {
	local img=$PT/root.img size
	rm -f "$img"
	size=$(du -sm --one-file-system "$WORK" | cut -f1)
	size=$((size + size / 4 + 512))
	truncate -s "${size}M" "$img"
	mkfs.ext4 -q -F -L pkgtest -E lazy_itable_init=1,lazy_journal_init=1 -d "$WORK" "$img" \
		>"$LOGS/mkfs.log" 2>&1 || { cat "$LOGS/mkfs.log"; return 1; }
	IMG=$img
}

# PID 1 of the guest: reports which virtio_net the initramfs loaded (nothing
# else loads modules before it: no udev in this root), brings the NIC up,
# pings the host, then reloads virtio_net through modprobe in the root and
# does it again; powers off.
install_guest_init() {
	mkdir -p "$WORK/usr/local/sbin"
	cat >"$WORK/usr/local/sbin/pkgtest-init" <<-EOF
		#!/bin/bash
		PATH=$STD_PATH
		mac=$MAC
		host=$HOST_IP
		guest=$GUEST_IP
	EOF
	cat >>"$WORK/usr/local/sbin/pkgtest-init" <<-'EOF'
		mountpoint -q /proc || mount -t proc proc /proc
		mountpoint -q /sys || mount -t sysfs sys /sys
		mountpoint -q /dev || mount -t devtmpfs dev /dev
		mountpoint -q /run || mount -t tmpfs tmpfs /run
		say() { echo "PKGTEST $*"; }
		nic_of() {
			local n
			for n in /sys/class/net/*; do
				[ "$(cat "$n/address" 2>/dev/null)" = "$mac" ] && { echo "${n##*/}"; return 0; }
			done
			return 1
		}
		report() { # phase
			local nic drv taint ver i
			for i in $(seq 50); do nic=$(nic_of) && break; sleep 0.2; done
			if [ ! -d /sys/module/virtio_net ]; then
				say "$1 module=none"
			else
				taint=$(cat /sys/module/virtio_net/taint 2>/dev/null)
				ver=$(cat /sys/module/virtio_net/version 2>/dev/null)
				say "$1 module=loaded taint=${taint:--} version=${ver:--}"
			fi
			if [ -z "$nic" ]; then
				say "$1 nic=none"
				return
			fi
			drv=$(basename "$(readlink "/sys/class/net/$nic/device/driver")")
			say "$1 nic=$nic driver=$drv"
			ethtool -i "$nic" | sed "s/^/PKGTEST $1 ethtool /"
			ip addr flush dev "$nic"
			ip addr add "$guest/24" dev "$nic"
			ip link set "$nic" up
			if ping -c 3 -W 2 -w 20 "$host" >/dev/null 2>&1; then
				say "$1 ping=ok"
			else
				say "$1 ping=fail"
			fi
		}
		say "start $(uname -r) cmdline: $(cat /proc/cmdline)"
		report initramfs
		modprobe -r virtio_net
		modprobe virtio_net
		say "rootfs modprobe rc=$?"
		report rootfs
		dmesg | grep -E 'virtio-net-dkms|virtio_net|Key was rejected|Loading of .*module' |
			sed 's/^/PKGTEST kmsg /'
		say "end"
		sync
		echo o >/proc/sysrq-trigger
		sleep 30
	EOF
	chmod 755 "$WORK/usr/local/sbin/pkgtest-init"
}

NS=
cleanup_ns() {
	[[ -n $NS ]] || return 0
	local p
	for p in $(ip netns pids "$NS" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	ip netns del "$NS" 2>/dev/null
	NS=
}
trap 'cleanup_ns' EXIT
trap 'cleanup_ns; exit 130' INT TERM

# boot NAME KERNEL "EXTRA CMDLINE": boots the image, console log in
# $LOGS/boot-NAME.log.
boot() {
	local name=$1 k=$2 extra=$3 log=$LOGS/boot-$1.log t0=$SECONDS
	NS=vnet-pkgtest-$$
	ip netns add "$NS" || return 1
	ip -n "$NS" link set lo up
	ip -n "$NS" tuntap add dev vptap0 mode tap
	ip -n "$NS" addr add "$HOST_IP/24" dev vptap0
	ip -n "$NS" link set vptap0 up
	rm -f "$log"
	ip netns exec "$NS" timeout -s KILL 420 "$QEMU" -M q35 -accel tcg,thread=multi -cpu max \
		-m 1024 -smp 2 -nodefaults -no-reboot -display none -serial "file:$log" \
		-kernel "$WORK/boot/vmlinuz-$k" -initrd "$WORK/boot/initrd.img-$k" \
		-append "root=/dev/vda rw console=ttyS0,115200 init=/usr/local/sbin/pkgtest-init panic=-1 $extra" \
		-drive "file=$IMG,if=virtio,format=raw,snapshot=on" \
		-netdev tap,id=n0,ifname=vptap0,script=no,downscript=no \
		-device "virtio-net-pci,netdev=n0,mac=$MAC" >"$LOGS/qemu-$name.log" 2>&1
	cleanup_ns
	say "boot $name: $((SECONDS - t0))s"
	grep -q '^PKGTEST end' "$log" || { tail -n 30 "$log"; return 1; }
}

# expect_boot NAME PHASE ours|intree VERSION
expect_boot() {
	local name=$1 phase=$2 which=$3 v=$4 log=$LOGS/boot-$1.log line
	line=$(grep -a "^PKGTEST $phase module=" "$log" | tr -d '\r')
	case $which in
	ours)
		check "boot $name, $phase: our virtio_net $v (taint O)" \
			has "module=loaded taint=[A-Z]*O[A-Z]* version=$(re "$v")\$" "$line"
		;;
	intree)
		check "boot $name, $phase: the in-tree virtio_net (not tainted out-of-tree)" \
			has "module=loaded taint=([A-NP-Z]*|-) " "$line"
		;;
	esac
	check "boot $name, $phase: the NIC is driven by virtio_net" \
		grep -aq "^PKGTEST $phase nic=.* driver=virtio_net" "$log"
	check "boot $name, $phase: ping to the host" grep -aq "^PKGTEST $phase ping=ok" "$log"
}

# ---------------------------------------------------------------------------

full_test() {
	[[ $(id -u) == 0 ]] || die "the full test needs root (chroot, mount, QEMU taps); --quick does not"
	ensure_host_tools debootstrap:debootstrap mkfs.ext4:e2fsprogs unshare:util-linux \
		"$QEMU":qemu-system-x86 ip:iproute2 xz:xz-utils zstd:zstd || die "host tools"

	stage "Debian 12 root (cached)"
	make_base || die "building the base root (logs: $LOGS)"
	stage "work root: a copy of the cached one"
	rm -rf --one-file-system "$WORK"
	cp -a "$BASE" "$WORK" || die "copying the base root"

	local k61 k612 old broken out v=$VERSION
	k61=$(kernel_of 6.1) || die "no 6.1 kernel in the root"
	old=0.0.1~pkgtest
	dpkg --compare-versions "$old" lt "$v" || die "VERSION $v is not above $old"

	stage "older package $old, then upgrade to $v"
	old=$(bash "$top/packaging/make-deb.sh" --out "$PKGS" --version "$old" 2>"$LOGS/make-deb-old.log") ||
		die "make-deb.sh --version 0.0.1~pkgtest"
	if apt_install_deb "$old" install-old; then
		pass "apt install ./${old##*/} (dkms and its dependencies from the archive)"
	else
		tail -n 30 "$LOGS/install-old.log"
		die "apt install ./${old##*/}"
	fi
	check "$k61: modinfo -F version is 0.0.1~pkgtest after installing it" \
		test "$(R modinfo -k "$k61" -F version virtio_net 2>/dev/null)" = "0.0.1~pkgtest"
	if apt_install_deb "$DEB" install-new; then
		pass "apt install ./${DEB##*/}: upgrade from 0.0.1~pkgtest"
	else
		tail -n 30 "$LOGS/install-new.log"
		die "apt install ./${DEB##*/}"
	fi
	out=$(<"$LOGS/install-new.log")
	check "install message: the running driver was not reloaded" has 'the running driver was NOT reloaded' "$out"
	check "install message: $v takes effect at the next boot" has 'effect at the next boot' "$out"
	out=$(R dkms status 2>&1)
	check "upgrade: dkms status shows no other version than $v" \
		test "$(grep '^virtio-net-dkms/' <<<"$out" | grep -vc "^virtio-net-dkms/$v,")" = 0
	check "upgrade: /usr/src holds only virtio-net-dkms-$v" \
		test "$(cd "$WORK/usr/src" && echo virtio-net-dkms-*)" = "virtio-net-dkms-$v"
	check "the example options file is in /etc/modprobe.d" test -f "$WORK/etc/modprobe.d/virtio-net-dkms.conf"
	check_ours "$k61" "$v"
	check_initrd_ours "$k61"

	stage "a kernel with CONFIG_VIRTIO_NET=y"
	check_builtin_kernel "$k61" "$v"

	stage "a kernel installed after the package: 6.12 (bookworm-backports)"
	if R "${APT[@]}" -t bookworm-backports install linux-image-amd64 linux-headers-amd64 \
		>"$LOGS/install-6.12.log" 2>&1; then
		pass "apt install -t bookworm-backports linux-image-amd64 linux-headers-amd64"
	else
		tail -n 30 "$LOGS/install-6.12.log"
		fail "apt install -t bookworm-backports linux-image-amd64 linux-headers-amd64"
	fi
	if k612=$(kernel_of 6.12); then
		check_ours "$k612" "$v"
		check_initrd_ours "$k612"
	else
		fail "no 6.12 kernel in the root"
	fi

	if ((boot)); then
		stage "QEMU boots (TCG) of the root"
		install_guest_init
		if make_image; then
			if boot 6.1-ours "$k61" ""; then
				expect_boot 6.1-ours initramfs ours "$v"
				expect_boot 6.1-ours rootfs ours "$v"
			else
				fail "boot 6.1-ours (log: $LOGS/boot-6.1-ours.log)"
			fi
			if boot 6.1-sig-enforce "$k61" "module.sig_enforce=1"; then
				expect_boot 6.1-sig-enforce initramfs intree "$v"
				expect_boot 6.1-sig-enforce rootfs intree "$v"
				check "boot 6.1-sig-enforce: the kernel refused our module's key" \
					grep -aqE 'PKGTEST kmsg .*(Key was rejected|Loading of module with unavailable key)' \
					"$LOGS/boot-6.1-sig-enforce.log"
				check "boot 6.1-sig-enforce: the fallback says so in the kernel log" \
					grep -aq 'PKGTEST kmsg .*virtio-net-dkms: our virtio_net failed to load' \
					"$LOGS/boot-6.1-sig-enforce.log"
			else
				fail "boot 6.1-sig-enforce (log: $LOGS/boot-6.1-sig-enforce.log)"
			fi
			if [[ -n ${k612:-} ]]; then
				if boot 6.12-ours "$k612" ""; then
					expect_boot 6.12-ours initramfs ours "$v"
				else
					fail "boot 6.12-ours (log: $LOGS/boot-6.12-ours.log)"
				fi
			fi
		else
			fail "ext4 image of the root"
		fi

		stage "a broken build: fails to load / to probe on demand"
		broken=$v+pkgtest.broken
		if make_broken_tree "$PT/broken-src" 2>"$LOGS/broken-src.log" &&
			broken=$(bash "$top/packaging/make-deb.sh" --src "$PT/broken-src" --out "$PKGS" \
				--version "$broken" 2>"$LOGS/make-deb-broken.log") &&
			apt_install_deb "$broken" install-broken; then
			pass "apt install ./${broken##*/} (a build that fails on demand)"
			if make_image; then
				if boot 6.1-broken-load "$k61" "virtio_net.pkgtest_fail=load"; then
					expect_boot 6.1-broken-load initramfs intree "$v"
					check "boot 6.1-broken-load: the fallback says so in the kernel log" \
						grep -aq 'PKGTEST kmsg .*virtio-net-dkms: our virtio_net failed to load' \
						"$LOGS/boot-6.1-broken-load.log"
				else
					fail "boot 6.1-broken-load (log: $LOGS/boot-6.1-broken-load.log)"
				fi
				if boot 6.1-broken-probe "$k61" "virtio_net.pkgtest_fail=probe"; then
					expect_boot 6.1-broken-probe initramfs intree "$v"
					check "boot 6.1-broken-probe: the fallback says so in the kernel log" \
						grep -aq 'PKGTEST kmsg .*virtio-net-dkms: our virtio_net left 1 virtio network device(s) without a driver' \
						"$LOGS/boot-6.1-broken-probe.log"
				else
					fail "boot 6.1-broken-probe (log: $LOGS/boot-6.1-broken-probe.log)"
				fi
			else
				fail "ext4 image of the root"
			fi
		else
			cat "$LOGS/broken-src.log" "$LOGS/make-deb-broken.log" 2>/dev/null | tail -n 20
			tail -n 20 "$LOGS/install-broken.log" 2>/dev/null
			fail "building and installing the broken package"
		fi
		rm -rf "$PT/root.img" "$PT/broken-src"
	fi

	stage "a build that does not compile: apt and kernel installs go on"
	nocompile_test "$v" "$k61" "${k612:-}"

	stage "apt purge virtio-net-dkms"
	if R "${APT[@]}" purge virtio-net-dkms >"$LOGS/purge.log" 2>&1; then
		pass "apt purge virtio-net-dkms"
	else
		tail -n 30 "$LOGS/purge.log"
		fail "apt purge virtio-net-dkms"
	fi
	for k in "$k61" ${k612:+"$k612"}; do
		out=$(modinfo_path "$k")
		check "$k after purge: modinfo virtio_net is the in-tree one ($out)" \
			has "^/lib/modules/$(re "$k")/kernel/drivers/net/virtio_net\.ko" "$out"
		check "$k after purge: no virtio_net left under updates/" \
			bash -c "! ls '$WORK/lib/modules/$k/updates/dkms/'virtio_net.ko* 2>/dev/null"
		check_initrd_intree "$k"
	done
	check "after purge: no fallback rule, helper, example file or DKMS tree" bash -c "
		! ls '$WORK/lib/modprobe.d/virtio-net-dkms-fallback.conf' '$WORK/usr/lib/virtio-net-dkms' \
			'$WORK/etc/modprobe.d/virtio-net-dkms.conf' '$WORK/var/lib/dkms/virtio-net-dkms' \
			'$WORK/var/lib/virtio-net-dkms' '$WORK/etc/kernel/postinst.d/00-virtio-net-dkms' 2>/dev/null"

	stage "a copy of the fallback rule left behind after the purge"
	leftover_rule_test "$v" "$k61"
	stage_end
	if ((nfail == 0 && !keep)); then
		rm -rf --one-file-system "$WORK"
	else
		say "work root kept: $WORK; logs: $LOGS"
	fi
}

mkdir -p "$LOGS"
quick_checks
((quick)) || full_test
finish
