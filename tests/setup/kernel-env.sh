#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kernel-env.sh - per-kernel build environments for virtio-net-dkms.
#
# Every supported kernel ("key") gets an environment holding that kernel's
# Debian headers package and the compiler the kernel was built with:
#
#   5.10  debootstrap chroot of bullseye (+ bullseye-updates, bullseye-security)
#   6.1   the host itself when it is Debian 12 (bookworm), else a bookworm chroot
#   6.12  debootstrap chroot of bookworm with bookworm-backports enabled
#   7.2   debootstrap chroot of sid
#
# The exact ABI (e.g. 6.1.0-56-amd64, 7.2.13+deb14-amd64) is never hard-coded:
# it is what the suite's linux-headers-amd64 metapackage depends on when the
# environment is set up (or refreshed).
#
# Usage:
#   kernel-env.sh setup [--refresh] KEY...  create/repair (or refresh) environments
#   kernel-env.sh release KEY               print the kernel release string
#   kernel-env.sh kdir KEY                  print the headers dir (path inside the env)
#   kernel-env.sh config KEY                print the host path of the kernel .config
#   kernel-env.sh root KEY                  print the chroot directory ("/" for the host)
#   kernel-env.sh run KEY [--] CMD [ARG...] run CMD inside the environment; $VNET_SRC
#                                           (default: the cwd) is bind-mounted at the
#                                           same absolute path
#   kernel-env.sh image KEY                 fetch+unpack the matching kernel image and
#                                           modules, print the directory
#   kernel-env.sh status [KEY...]           one line per key
#   kernel-env.sh clean KEY...              delete chroot, state and unpacked image
#   KEY is one of: 5.10 6.1 6.12 7.2
#
# Environment:
#   VNET_CACHE            cache root (default: $HOME/.cache/virtio-net-dkms)
#   VNET_SRC              directory made visible inside the chroot by `run`
#   VNET_MIRROR           Debian mirror (default: http://deb.debian.org/debian)
#   VNET_SECURITY_MIRROR  security mirror (default: http://deb.debian.org/debian-security)
#   VNET_NO_SECURITY=1    do not use the *-security suites
#   VNET_HOST_6_1=0|1     force a chroot (0) or the host (1) for 6.1 (default: auto)
#   VNET_PASS_ENV         extra variable names passed into the chroot by `run`
#   VNET_NO_UNSHARE=1     do not use a private mount namespace for chroot mounts
#                         (mounts are then made in the host namespace and removed
#                         by traps)
#
# Layout under $VNET_CACHE:
#   chroots/<KEY>/        the chroots
#   state/<KEY>.env       what setup resolved (release, headers package, ...)
#   images/<release>/     unpacked kernel image + modules (see `image`)
#   debs/<suite>/         debootstrap's package cache
#   logs/                 debootstrap / apt logs of the last setup
#   locks/                flock files
#
# Needs root (chroot, mount). Only Debian/amd64 hosts are supported.

set -euo pipefail

readonly ALL_KEYS=(5.10 6.1 6.12 7.2)
SELF=$(readlink -f "${BASH_SOURCE[0]}")
readonly SELF
readonly CACHE=${VNET_CACHE:-$HOME/.cache/virtio-net-dkms}
readonly MIRROR=${VNET_MIRROR:-http://deb.debian.org/debian}
readonly SECURITY_MIRROR=${VNET_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
readonly STD_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Packages installed into every environment besides the headers.
readonly ENV_PKGS=(gcc make libc6-dev sparse kmod)
# Options for apt on the host and in the chroots. The archive may be served
# from a frozen snapshot whose Release files are past their Valid-Until.
readonly APT_OPTS=(-o Acquire::Check-Valid-Until=false -o Acquire::Retries=3
	-o DPkg::Lock::Timeout=600 -o APT::Install-Recommends=false
	-o Dpkg::Use-Pty=0 -o APT::Sandbox::User=root)

log() { printf '[kernel-env] %s\n' "$*" >&2; }
die() {
	printf '[kernel-env] error: %s\n' "$*" >&2
	exit 1
}

usage() {
	sed -n '/^# Usage:/,/^# Needs root/{s/^# \{0,1\}//;p}' "$SELF" >&2
	exit "${1:-2}"
}

# ---------------------------------------------------------------------------
# per-key configuration

# Sets K_KEY K_MODE K_SUITE K_DEFREL K_SOURCES for key $1.
key_config() {
	local key=$1 sec=1
	[[ ${VNET_NO_SECURITY:-0} == 1 ]] && sec=0
	K_KEY=$key
	K_MODE=chroot
	K_DEFREL=
	K_SOURCES=
	case $key in
	5.10)
		K_SUITE=bullseye
		K_SOURCES="deb $MIRROR bullseye main
deb $MIRROR bullseye-updates main"
		((sec)) && K_SOURCES+="
deb $SECURITY_MIRROR bullseye-security main"
		;;
	6.1)
		K_SUITE=bookworm
		K_SOURCES="deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main"
		((sec)) && K_SOURCES+="
deb $SECURITY_MIRROR bookworm-security main"
		case ${VNET_HOST_6_1:-auto} in
		1) K_MODE=host ;;
		0) ;;
		*) host_is_bookworm && K_MODE=host ;;
		esac
		;;
	6.12)
		K_SUITE=bookworm
		K_DEFREL=bookworm-backports
		K_SOURCES="deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $MIRROR bookworm-backports main"
		((sec)) && K_SOURCES+="
deb $SECURITY_MIRROR bookworm-security main"
		;;
	7.2)
		K_SUITE=sid
		K_SOURCES="deb $MIRROR sid main"
		;;
	*) die "unknown kernel key '$key' (known: ${ALL_KEYS[*]})" ;;
	esac
}

host_is_bookworm() {
	local id="" codename=""
	if [[ -r /etc/os-release ]]; then
		id=$(sed -n 's/^ID="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release)
		codename=$(sed -n 's/^VERSION_CODENAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release)
	fi
	[[ $id == debian && $codename == bookworm && $(dpkg --print-architecture 2>/dev/null) == amd64 ]]
}

root_of() { # host-side root of the environment
	if [[ $K_MODE == host ]]; then printf '/'; else printf '%s' "$CACHE/chroots/$K_KEY"; fi
}
# $1 = path inside the environment -> path on the host
host_path() {
	if [[ $K_MODE == host ]]; then printf '%s' "$1"; else printf '%s%s' "$CACHE/chroots/$K_KEY" "$1"; fi
}
state_file() { printf '%s' "$CACHE/state/$K_KEY.env"; }

# Reads the state file into S_* variables; fails when there is none.
load_state() {
	local f k v
	f=$(state_file)
	S_RELEASE='' S_KDIR='' S_HEADERS_PKG='' S_HEADERS_VERSION='' S_MODE=''
	[[ -r $f ]] || return 1
	while IFS='=' read -r k v; do
		case $k in
		RELEASE) S_RELEASE=$v ;;
		KDIR) S_KDIR=$v ;;
		HEADERS_PKG) S_HEADERS_PKG=$v ;;
		HEADERS_VERSION) S_HEADERS_VERSION=$v ;;
		MODE) S_MODE=$v ;;
		esac
	done <"$f"
	[[ -n $S_RELEASE && -n $S_KDIR && $S_MODE == "$K_MODE" ]]
}

write_state() { # release kdir headers_pkg headers_version
	local f
	f=$(state_file)
	mkdir -p "${f%/*}"
	printf 'RELEASE=%s\nKDIR=%s\nHEADERS_PKG=%s\nHEADERS_VERSION=%s\nMODE=%s\nSUITE=%s\n' \
		"$1" "$2" "$3" "$4" "$K_MODE" "$K_SUITE" >"$f.tmp.$$"
	mv -f "$f.tmp.$$" "$f"
}

# ---------------------------------------------------------------------------
# locking

# A stack of held locks; lock_fd pushes, unlock_fd pops the latest.
LOCK_FDS=()
lock_fd() { # $1 = lock name, $2 = -s|-x
	local name=$1 mode=$2 fd
	mkdir -p "$CACHE/locks"
	exec {fd}>>"$CACHE/locks/$name.lock"
	if ! flock -n "$mode" "$fd"; then
		log "$name: waiting for lock ($CACHE/locks/$name.lock)"
		flock "$mode" "$fd"
	fi
	LOCK_FDS+=("$fd")
}
unlock_fd() {
	((${#LOCK_FDS[@]})) || return 0
	local fd=${LOCK_FDS[-1]}
	unset 'LOCK_FDS[-1]'
	flock -u "$fd" || true
	exec {fd}>&-
}

# ---------------------------------------------------------------------------
# mounts

have_unshare() {
	if [[ -z ${HAVE_UNSHARE:-} ]]; then
		if [[ ${VNET_NO_UNSHARE:-0} != 1 ]] && unshare --mount --propagation private true 2>/dev/null; then
			HAVE_UNSHARE=1
		else
			HAVE_UNSHARE=0
		fi
	fi
	[[ $HAVE_UNSHARE == 1 ]]
}

# Mount points (this namespace) at or below $1, deepest first.
mounts_under() {
	local dir=$1
	awk -v d="$dir" '
		function unesc(s) { gsub(/\\040/, " ", s); gsub(/\\011/, "\t", s); gsub(/\\134/, "\\", s); return s }
		{ m = unesc($5); if (m == d || index(m, d "/") == 1) print length(m) "\t" m }' /proc/self/mountinfo |
		sort -rn | cut -f2-
}

umount_under() {
	local m
	while IFS= read -r m; do
		[[ -n $m ]] || continue
		umount -l "$m" 2>/dev/null || true
	done < <(mounts_under "$1")
}

# rm -rf that refuses to descend into anything still mounted.
safe_rm() {
	local dir=$1
	[[ -n $dir && $dir != / && -e $dir ]] || return 0
	dir=$(readlink -f "$dir")
	umount_under "$dir"
	if [[ -n $(mounts_under "$dir") ]]; then
		die "refusing to delete $dir: still has mounts: $(mounts_under "$dir" | tr '\n' ' ')"
	fi
	rm -rf --one-file-system "$dir"
}

# Internal: executed (normally in a private mount namespace) to run a command
# in a chroot.  Args: ROOT SRC CWD CMD...   SRC may be empty.
ns_exec() {
	local root=$1 src=$2 cwd=$3
	shift 3
	NS_MOUNTS=()
	trap ns_cleanup EXIT
	trap 'ns_cleanup; trap - INT; kill -INT $$' INT
	trap 'ns_cleanup; trap - TERM; kill -TERM $$' TERM
	trap 'ns_cleanup; trap - HUP; kill -HUP $$' HUP

	# Always mount (even if something is mounted there already, e.g. by a
	# concurrent run without a private namespace): mounts stack and each run
	# removes exactly its own.
	mount -t proc proc "$root/proc"
	NS_MOUNTS+=("$root/proc")
	mount --rbind /dev "$root/dev"
	NS_MOUNTS+=("$root/dev")
	mount --make-rslave "$root/dev"
	if mount -t sysfs -o ro sysfs "$root/sys" 2>/dev/null; then
		NS_MOUNTS+=("$root/sys")
	fi
	if [[ -n $src ]]; then
		mkdir -p "$root$src"
		mount --bind "$src" "$root$src"
		NS_MOUNTS+=("$root$src")
	fi

	local -a envv=(PATH="$STD_PATH" HOME=/root USER=root LOGNAME=root SHELL=/bin/sh LANG=C.UTF-8)
	local v
	# shellcheck disable=SC2086 # VNET_PASS_ENV is a list of names
	for v in TERM COLUMNS LINES CI SOURCE_DATE_EPOCH KBUILD_VERBOSE KBUILD_BUILD_TIMESTAMP \
		KBUILD_BUILD_USER KBUILD_BUILD_HOST DEBIAN_FRONTEND ${VNET_PASS_ENV:-}; do
		[[ -n ${!v+x} ]] && envv+=("$v=${!v}")
	done
	while IFS= read -r v; do envv+=("$v=${!v}"); done < <(compgen -v VNET_ || true)

	local rc=0
	# shellcheck disable=SC2016 # expanded by the inner shell
	chroot "$root" /usr/bin/env -i "${envv[@]}" \
		/bin/sh -c 'cd "$1" || exit 125; shift; exec "$@"' sh "$cwd" "$@" || rc=$?
	ns_cleanup
	trap - EXIT INT TERM HUP
	return "$rc"
}

ns_cleanup() {
	local i
	for ((i = ${#NS_MOUNTS[@]} - 1; i >= 0; i--)); do
		umount -R "${NS_MOUNTS[i]}" 2>/dev/null || umount -R -l "${NS_MOUNTS[i]}" 2>/dev/null || true
	done
	NS_MOUNTS=()
}

# in_env SRC CWD CMD... : run CMD in the current key's environment.
# With IN_ENV_EXEC=1 this process is replaced (used by `run`, so that signals
# and the exit status belong to the command and nothing outlives the mounts).
in_env() {
	local src=$1 cwd=$2 pre=()
	shift 2
	[[ ${IN_ENV_EXEC:-0} == 1 ]] && pre=(exec)
	if [[ $K_MODE == host ]]; then
		if ((${#pre[@]})); then
			cd "$cwd"
			exec "$@"
		fi
		(cd "$cwd" && exec "$@")
		return
	fi
	local root
	root=$(root_of)
	if have_unshare; then
		"${pre[@]}" unshare --mount --propagation private -- "$SELF" __ns_exec "$root" "$src" "$cwd" "$@"
	else
		"${pre[@]}" "$SELF" __ns_exec "$root" "$src" "$cwd" "$@"
	fi
}

# ---------------------------------------------------------------------------
# host tooling

HOST_APT_UPDATED=0
host_apt_update() {
	((HOST_APT_UPDATED)) && return 0
	log "host: apt-get update"
	apt-get "${APT_OPTS[@]}" -q update >"$CACHE/logs/host-apt-update.log" 2>&1 ||
		{ tail -n 20 "$CACHE/logs/host-apt-update.log" >&2; die "apt-get update failed on the host"; }
	HOST_APT_UPDATED=1
}

host_apt_install() { # packages...
	mkdir -p "$CACHE/logs"
	log "host: apt-get install $*"
	if ! DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" -q -y install "$@" \
		>"$CACHE/logs/host-apt-install.log" 2>&1; then
		tail -n 30 "$CACHE/logs/host-apt-install.log" >&2
		die "apt-get install $* failed on the host"
	fi
}

# Installs missing host tools: "command:package" pairs.
ensure_host_tools() {
	local pair cmd pkg missing=()
	for pair in "$@"; do
		cmd=${pair%%:*} pkg=${pair#*:}
		command -v "$cmd" >/dev/null 2>&1 || PATH=$STD_PATH command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
	done
	((${#missing[@]})) || return 0
	mkdir -p "$CACHE/logs"
	lock_fd host-apt -x
	host_apt_update
	host_apt_install "${missing[@]}"
	unlock_fd
}

need_root() {
	[[ $(id -u) == 0 ]] || die "must run as root (chroot, mount, apt)"
}

# ---------------------------------------------------------------------------
# resolving packages

# Prints the "Depends:" field of the candidate of package $2, using apt-cache
# inside the environment with default release $1 (may be empty).
candidate_field() { # defrel pkg field
	local defrel=$1 pkg=$2 field=$3
	local -a opts=("${APT_OPTS[@]}")
	[[ -n $defrel ]] && opts+=(-o "APT::Default-Release=$defrel")
	in_env "" / apt-cache "${opts[@]}" show --no-all-versions "$pkg" 2>/dev/null |
		awk -v f="$field:" '$1 == f { sub(/^[^:]*: */, ""); print; exit }'
}

# From the linux-headers-amd64 metapackage, print "<headers-package> <version>".
resolve_headers() {
	local deps name ver
	deps=$(candidate_field "$K_DEFREL" linux-headers-amd64 Depends)
	[[ -n $deps ]] || return 1
	deps=${deps//|/,}
	name=$(tr ',' '\n' <<<"$deps" | awk '{print $1}' |
		grep -E '^linux-headers-.+-amd64$' | grep -vx 'linux-headers-amd64' | head -n1) || true
	[[ -n $name ]] || return 1
	ver=$(candidate_field "$K_DEFREL" "$name" Version)
	[[ -n $ver ]] || return 1
	printf '%s %s\n' "$name" "$ver"
}

# ---------------------------------------------------------------------------
# health

compiler_of_kdir() { # host path of kdir -> compiler basename (e.g. gcc-12), or empty
	local kv=$1/.kernelvariables
	[[ -r $kv ]] || return 0
	grep -oE '\bgcc-[0-9]+' "$kv" | head -n1 || true
}

env_ok() {
	load_state || return 1
	local kdir cc root
	kdir=$(host_path "$S_KDIR")
	[[ -f $kdir/Makefile && -f $kdir/.config && -e $kdir/scripts/basic/fixdep ]] || return 1
	cc=$(compiler_of_kdir "$kdir")
	if [[ $K_MODE == host ]]; then
		local st
		st=$(dpkg-query -W -f='${db:Status-Abbrev}\n' "$S_HEADERS_PKG" make sparse 2>/dev/null) || return 1
		[[ $(grep -c '^ii' <<<"$st") == 3 ]] || return 1
		[[ -z $cc ]] || command -v "$cc" >/dev/null || return 1
		command -v make >/dev/null || return 1
	else
		root=$(root_of)
		[[ -e $root/.vnet-bootstrapped && -x $root/usr/bin/make && -x $root/usr/bin/sparse ]] || return 1
		[[ -z $cc ]] || compgen -G "$root/usr/bin/*$cc" >/dev/null || return 1
		# executing something proves libc/loader are intact (needs root)
		if [[ $(id -u) == 0 ]]; then chroot "$root" /bin/true 2>/dev/null || return 1; fi
	fi
}

# Prepare state, auto-running setup when the environment is not usable.
ensure_env() {
	env_ok && return 0
	log "$K_KEY: environment missing or broken, setting it up"
	setup_key 0
	load_state || die "$K_KEY: setup did not produce a state file"
}

# ---------------------------------------------------------------------------
# setup

setup_key() { # refresh(0|1)
	local refresh=$1 t0=$SECONDS
	need_root
	mkdir -p "$CACHE"/{chroots,state,logs,images,debs}
	if ((!refresh)) && env_ok; then
		log "$K_KEY: ready ($K_MODE, release $S_RELEASE)"
		return 0
	fi
	lock_fd "env-$K_KEY" -x
	# Somebody else may have finished it while we waited.
	if ((!refresh)) && env_ok; then
		unlock_fd
		log "$K_KEY: ready ($K_MODE, release $S_RELEASE)"
		return 0
	fi
	if [[ $K_MODE == host ]]; then setup_host "$refresh"; else setup_chroot "$refresh"; fi
	if ! env_ok; then
		# apt considers damaged-but-installed packages done: repair harder
		if [[ $K_MODE == host ]]; then
			log "$K_KEY: headers still incomplete, reinstalling them"
			host_reinstall_headers
		else
			log "$K_KEY: chroot still not healthy, re-creating it from scratch"
			safe_rm "$(root_of)"
			rm -f "$(state_file)"
			setup_chroot 0
		fi
	fi
	unlock_fd
	env_ok || die "$K_KEY: environment still not healthy after setup"
	log "$K_KEY: ready ($K_MODE, release $S_RELEASE) after $((SECONDS - t0))s"
}

setup_host() {
	local refresh=$1 name ver rel old=""
	load_state && old=$S_RELEASE
	ensure_host_tools flock:util-linux dpkg-deb:dpkg
	lock_fd host-apt -x
	host_apt_update
	read -r name ver < <(resolve_headers) || die "6.1: cannot resolve linux-headers-amd64 on the host"
	rel=${name#linux-headers-}
	log "$K_KEY: headers $name ($ver) from the host's apt sources"
	host_apt_install "$name=$ver" "${ENV_PKGS[@]}"
	unlock_fd
	if ((refresh)) && [[ -n $old && $old != "$rel" ]]; then
		log "$K_KEY: release changed $old -> $rel (old headers left installed on the host)"
	fi
	write_state "$rel" "/usr/src/linux-headers-$rel" "$name" "$ver"
	load_state
}

host_reinstall_headers() {
	local -a pkgs=("$S_HEADERS_PKG")
	local p
	while IFS= read -r p; do pkgs+=("$p"); done < <(
		apt-cache depends "$S_HEADERS_PKG" 2>/dev/null |
			awk '$1 == "Depends:" && $2 ~ /^linux-(headers|kbuild)-/ { print $2 }')
	lock_fd host-apt -x
	host_apt_install --reinstall "${pkgs[@]}" "${ENV_PKGS[@]}"
	unlock_fd
}

write_chroot_config() {
	local root=$1
	printf '%s\n' "$K_SOURCES" >"$root/etc/apt/sources.list"
	rm -f "$root/etc/apt/sources.list.d/"*.list "$root/etc/apt/sources.list.d/"*.sources 2>/dev/null || true
	cat >"$root/etc/apt/apt.conf.d/90virtio-net-dkms" <<-'EOF'
		// written by virtio-net-dkms tests/setup/kernel-env.sh
		Acquire::Check-Valid-Until "false";
		Acquire::Retries "3";
		APT::Install-Recommends "false";
		APT::Install-Suggests "false";
		APT::Sandbox::User "root";
		Dpkg::Use-Pty "0";
	EOF
	mkdir -p "$root/etc/dpkg/dpkg.cfg.d"
	printf 'force-unsafe-io\n' >"$root/etc/dpkg/dpkg.cfg.d/90virtio-net-dkms"
	# never start services inside the chroot
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	[[ -e /etc/hosts ]] && cp -L /etc/hosts "$root/etc/hosts"
	return 0
}

chroot_apt() { # logname apt-get-args...
	local logf=$CACHE/logs/$K_KEY-$1.log
	shift
	if ! in_env "" / env DEBIAN_FRONTEND=noninteractive apt-get -q -y "$@" >"$logf" 2>&1; then
		tail -n 30 "$logf" >&2
		log "$K_KEY: apt-get $* failed in the chroot (log: $logf)"
		return 1
	fi
}

# Debian's 6.12 headers depend on the matching linux-image package. A build
# chroot needs neither a 100 MB kernel nor initramfs-tools, so that dependency
# is satisfied by an empty placeholder package with versioned Provides for the
# image package names. (A placeholder carrying the real package name would be
# "upgraded" to the real package by apt, as the version hashes differ.)
stub_image_dep() { # headers package
	local deps group alt name ver tmp arch stub="" provides=""
	deps=$(candidate_field "$K_DEFREL" "$1" Depends)
	local -a groups=()
	IFS=, read -r -a groups <<<"$deps"
	for group in "${groups[@]}"; do
		[[ $group == *linux-image-* ]] || continue
		local -a alts=()
		IFS='|' read -r -a alts <<<"$group"
		for alt in "${alts[@]}"; do
			alt=${alt#"${alt%%[![:space:]]*}"}
			name=${alt%% *}
			[[ $alt =~ \(=\ *([^\)]+)\) ]] || continue
			ver=${BASH_REMATCH[1]}
			provides+="${provides:+, }$name (= $ver)"
		done
	done
	[[ -n $provides ]] || return 0
	stub=vnet-placeholder-linux-image-${S_RELEASE_NEW:?}
	# shellcheck disable=SC2016 # dpkg-query format, not a shell expansion
	if [[ $(in_env "" / dpkg-query -W -f='${Status}|${Provides}' "$stub" 2>/dev/null) == "install ok installed|$provides" ]]; then
		return 0
	fi
	log "$K_KEY: installing $stub (Provides: $provides) for $1's image dependency"
	arch=$(chroot "$(root_of)" dpkg --print-architecture)
	tmp=$(mktemp -d "$(root_of)/tmp/vnet-stub.XXXXXX")
	mkdir -p "$tmp/pkg/DEBIAN"
	cat >"$tmp/pkg/DEBIAN/control" <<-EOF
		Package: $stub
		Version: ${ver:-1}
		Architecture: $arch
		Maintainer: virtio-net-dkms build environment <root@localhost>
		Priority: optional
		Section: kernel
		Provides: $provides
		Description: placeholder for the kernel image in a headers-only build chroot
		 Created by virtio-net-dkms tests/setup/kernel-env.sh; contains no files.
	EOF
	dpkg-deb --build --root-owner-group "$tmp/pkg" "$tmp/stub.deb" >/dev/null
	if ! in_env "" / dpkg -i "${tmp#"$(root_of)"}/stub.deb" >"$CACHE/logs/$K_KEY-stub.log" 2>&1; then
		cat "$CACHE/logs/$K_KEY-stub.log" >&2
		die "$K_KEY: cannot install placeholder $stub"
	fi
	rm -rf "$tmp"
}

# Kernels whose top Makefile calls $(srctree)/scripts/checker-valid.sh (needed
# for C=1/C=2) while the Debian kbuild package does not ship that script: add
# an equivalent so that sparse is not silently disabled.
fix_checker_valid() { # kdir-inside-env
	local kd=$1 common
	[[ -f $(host_path "$kd")/Makefile ]] || return 0
	common=$(awk '$1 == "include" { print $2; exit }' "$(host_path "$kd")/Makefile")
	common=${common%/Makefile}
	[[ -n $common ]] || return 0
	grep -q 'scripts/checker-valid.sh' "$(host_path "$common")/Makefile" 2>/dev/null || return 0
	local target
	target=$(readlink -f "$(host_path "$common")/scripts")/checker-valid.sh
	[[ -e $target ]] && return 0
	log "$K_KEY: adding missing scripts/checker-valid.sh (sparse capability probe)"
	cat >"$target" <<-'EOF'
		#!/bin/sh
		# Added by virtio-net-dkms kernel-env.sh: Debian's kbuild package lacks
		# this script. Prints 1 when the checker given as "$@" exists and copes
		# with __typeof_unqual__, which the kernel headers use.
		command -v "$1" >/dev/null 2>&1 || { echo 0; exit 0; }
		t=$(mktemp) || { echo 0; exit 0; }
		printf 'int f(const int *p) { __typeof_unqual__(*p) x = *p; return x; }\n' >"$t"
		if "$@" "$t" 2>&1 | grep -q 'error'; then echo 0; else echo 1; fi
		rm -f "$t"
	EOF
	chmod 755 "$target"
}

setup_chroot() {
	local refresh=$1 root tmp name ver rel old="" logf t1
	root=$(root_of)
	load_state && old=$S_RELEASE
	ensure_host_tools debootstrap:debootstrap flock:util-linux unshare:util-linux \
		dpkg-deb:dpkg mountpoint:util-linux
	if [[ -e $root && ! -e $root/.vnet-bootstrapped ]]; then
		log "$K_KEY: removing incomplete chroot $root"
		safe_rm "$root"
	fi
	if [[ -e $root/.vnet-bootstrapped ]] && ! chroot "$root" /bin/true 2>/dev/null; then
		log "$K_KEY: chroot $root is broken, re-creating it"
		safe_rm "$root"
	fi
	if [[ ! -e $root ]]; then
		tmp=$root.tmp
		safe_rm "$tmp"
		mkdir -p "$CACHE/debs/$K_SUITE"
		logf=$CACHE/logs/$K_KEY-debootstrap.log
		log "$K_KEY: debootstrap --variant=minbase $K_SUITE (log: $logf)"
		t1=$SECONDS
		local -a dbs=(debootstrap --variant=minbase "--include=make,gcc,libc6-dev"
			--cache-dir="$CACHE/debs/$K_SUITE" "$K_SUITE" "$tmp" "$MIRROR")
		if have_unshare; then dbs=(unshare --mount --propagation private -- "${dbs[@]}"); fi
		if ! "${dbs[@]}" >"$logf" 2>&1; then
			tail -n 30 "$logf" >&2
			umount_under "$tmp"
			die "$K_KEY: debootstrap failed (log: $logf)"
		fi
		umount_under "$tmp"
		log "$K_KEY: debootstrap done ($((SECONDS - t1))s)"
		touch "$tmp/.vnet-bootstrapped"
		mv "$tmp" "$root"
	fi
	write_chroot_config "$root"
	log "$K_KEY: apt-get update ($K_SUITE${K_DEFREL:+, $K_DEFREL})"
	chroot_apt apt-update update || die "$K_KEY: apt-get update failed"
	if ((refresh)); then
		log "$K_KEY: apt-get dist-upgrade"
		chroot_apt apt-upgrade dist-upgrade || die "$K_KEY: apt-get dist-upgrade failed"
	fi
	read -r name ver < <(resolve_headers) || die "$K_KEY: cannot resolve linux-headers-amd64 in $K_SUITE"
	rel=${name#linux-headers-}
	log "$K_KEY: headers $name ($ver)"
	S_RELEASE_NEW=$rel stub_image_dep "$name"
	log "$K_KEY: apt-get install $name ${ENV_PKGS[*]}"
	t1=$SECONDS
	chroot_apt apt-install install "$name=$ver" "${ENV_PKGS[@]}" || die "$K_KEY: installing $name failed"
	log "$K_KEY: apt-get install done ($((SECONDS - t1))s)"
	if [[ -n $old && $old != "$rel" ]]; then
		log "$K_KEY: release changed $old -> $rel, purging the old headers"
		chroot_apt apt-purge purge "linux-headers-$old" || true
		chroot_apt apt-autoremove autoremove --purge || true
	fi
	chroot_apt apt-clean clean || true
	fix_checker_valid "/usr/src/linux-headers-$rel"
	write_state "$rel" "/usr/src/linux-headers-$rel" "$name" "$ver"
	load_state
}

# ---------------------------------------------------------------------------
# kernel image

image_ok() { # dir release
	local d=$1 rel=$2
	[[ -f $d/release && $(<"$d/release") == "$rel" && -e $d/vmlinuz &&
		-s $d/lib/modules/$rel/modules.dep ]]
}

# Image-related packages for the release: linux-image-<rel> and those of its
# dependencies that carry the same release in their name (7.2 splits the image
# into linux-binary-*, linux-modules-* and linux-base-*).
image_packages() {
	local rel=$S_RELEASE deps rel_re
	rel_re=${rel//./\\.}
	rel_re=${rel_re//+/\\+}
	printf 'linux-image-%s\n' "$rel"
	deps=$(candidate_field "$K_DEFREL" "linux-image-$rel" Depends) || true
	tr ',' '\n' <<<"$deps" | awk -F'|' '{print $1}' | awk '{print $1}' |
		grep -E "^linux-(binary|modules|image|base)-.*$rel_re\$" || true
}

# Completes an unpacked tree in $1: lib/modules symlink for merged-/usr
# layouts, top-level vmlinuz/config/System.map links, modules.dep, release.
finish_image_tree() { # dir release
	local d=$1 rel=$2 p
	if [[ ! -e $d/lib/modules/$rel && -d $d/usr/lib/modules/$rel ]]; then
		if [[ -e $d/lib || -L $d/lib ]]; then
			mkdir -p "$d/lib/modules"
			ln -s "../../usr/lib/modules/$rel" "$d/lib/modules/$rel"
		else
			ln -s usr/lib "$d/lib"
		fi
	fi
	[[ -d $d/lib/modules/$rel/kernel ]] || return 1
	if [[ ! -e $d/vmlinuz ]]; then
		for p in "boot/vmlinuz-$rel" "usr/lib/modules/$rel/vmlinuz" "lib/modules/$rel/vmlinuz"; do
			[[ -f $d/$p ]] && { ln -sfn "$p" "$d/vmlinuz"; break; }
		done
	fi
	[[ -e $d/vmlinuz ]] || return 1
	if [[ ! -e $d/config ]]; then
		for p in "boot/config-$rel" "lib/modules/$rel/config"; do
			[[ -f $d/$p ]] && { ln -sfn "$p" "$d/config"; break; }
		done
	fi
	if [[ ! -e $d/System.map ]]; then
		for p in "boot/System.map-$rel" "lib/modules/$rel/System.map"; do
			[[ -f $d/$p ]] && { ln -sfn "$p" "$d/System.map"; break; }
		done
	fi
	if [[ ! -s $d/lib/modules/$rel/modules.dep ]]; then
		log "$K_KEY: depmod $rel"
		# depmod of the kernel's own distribution (kmod of the same era)
		in_env "$d" / depmod -b "$d" "$rel" || return 1
	fi
	printf '%s\n' "$rel" >"$d/release"
}

cmd_image() {
	ensure_env
	local rel=$S_RELEASE dir tmp pkg p
	dir=$CACHE/images/$rel
	if image_ok "$dir" "$rel"; then
		printf '%s\n' "$dir"
		return 0
	fi
	mkdir -p "$CACHE/images"
	lock_fd "image-$rel" -x
	lock_fd "env-$K_KEY" -s
	# A tree that only lacks the generated parts (e.g. modules.dep) is
	# completed in place rather than fetched again.
	if ! image_ok "$dir" "$rel" && [[ -e $dir/vmlinuz && -d $dir/lib/modules/$rel/kernel ]]; then
		finish_image_tree "$dir" "$rel" || log "$K_KEY: cannot complete existing $dir, fetching again"
	fi
	if ! image_ok "$dir" "$rel"; then
		tmp=$CACHE/images/.tmp-$rel.$$
		safe_rm "$tmp"
		mkdir -p "$tmp/debs" "$tmp/root"
		local -a pkgs=()
		while IFS= read -r p; do [[ -n $p ]] && pkgs+=("$p"); done < <(image_packages | awk '!seen[$0]++')
		log "$K_KEY: downloading ${pkgs[*]}"
		for pkg in "${pkgs[@]}"; do
			if ! in_env "$tmp/debs" "$tmp/debs" apt-get "${APT_OPTS[@]}" -q download "$pkg=$S_HEADERS_VERSION" \
				>>"$tmp/download.log" 2>&1; then
				log "$K_KEY: $pkg=$S_HEADERS_VERSION not downloadable, trying the candidate version"
				in_env "$tmp/debs" "$tmp/debs" apt-get "${APT_OPTS[@]}" -q download "$pkg" \
					>>"$tmp/download.log" 2>&1 ||
					{ cat "$tmp/download.log" >&2; die "$K_KEY: cannot download $pkg"; }
			fi
		done
		for p in "$tmp"/debs/*.deb; do
			log "$K_KEY: unpacking ${p##*/}"
			dpkg-deb -x "$p" "$tmp/root"
		done
		finish_image_tree "$tmp/root" "$rel" ||
			die "$K_KEY: ${pkgs[*]} do not contain a kernel and module tree for $rel"
		if [[ -e $dir ]]; then
			mv "$dir" "$tmp/old"
		fi
		mv "$tmp/root" "$dir"
		safe_rm "$tmp"
	fi
	unlock_fd
	unlock_fd
	image_ok "$dir" "$rel" || die "$K_KEY: unpacked image in $dir is incomplete"
	printf '%s\n' "$dir"
}

# ---------------------------------------------------------------------------
# commands

cmd_run() {
	[[ ${1:-} == -- ]] && shift
	(($#)) || die "run: no command given"
	need_root
	ensure_env
	local src cwd
	src=${VNET_SRC:-$PWD}
	[[ -d $src ]] || die "run: VNET_SRC '$src' is not a directory"
	src=$(readlink -f "$src")
	cwd=$(readlink -f "$PWD")
	if [[ $K_MODE == host ]]; then
		[[ -n ${VNET_SRC:-} && $cwd != "$src" && $cwd != "$src"/* ]] && cwd=$src
		cd "$cwd"
		exec "$@"
	fi
	case $src in
	/ | /bin | /boot | /dev | /etc | /lib | /lib64 | /proc | /run | /sbin | /sys | /usr | /usr/* | /var)
		die "run: refusing to bind-mount system directory '$src' into the chroot" ;;
	"$CACHE"/chroots | "$CACHE"/chroots/*)
		die "run: '$src' is inside a chroot" ;;
	esac
	[[ $cwd == "$src" || $cwd == "$src"/* ]] || cwd=$src
	lock_fd "env-$K_KEY" -s
	IN_ENV_EXEC=1 in_env "$src" "$cwd" "$@"
}

cmd_status() {
	local key st
	(($#)) || set -- "${ALL_KEYS[@]}"
	for key in "$@"; do
		key_config "$key"
		if env_ok; then st=ok; else st=missing; fi
		printf '%-5s %-7s %-7s %s\n' "$key" "$K_MODE" "$st" "${S_RELEASE:--}"
	done
}

cmd_clean() {
	local key
	need_root
	for key in "$@"; do
		key_config "$key"
		lock_fd "env-$K_KEY" -x
		if load_state && [[ -n $S_RELEASE ]]; then safe_rm "$CACHE/images/$S_RELEASE"; fi
		if [[ $K_MODE == chroot ]]; then
			safe_rm "$CACHE/chroots/$key"
			safe_rm "$CACHE/chroots/$key.tmp"
		fi
		rm -f "$(state_file)"
		unlock_fd
		log "$key: cleaned"
	done
}

main() {
	(($#)) || usage
	local cmd=$1
	shift
	case $cmd in
	__ns_exec)
		ns_exec "$@"
		return
		;;
	-h | --help | help) usage 0 ;;
	setup)
		local refresh=0 key
		if [[ ${1:-} == --refresh ]]; then refresh=1; shift; fi
		(($#)) || usage
		for key in "$@"; do key_config "$key"; done
		for key in "$@"; do
			key_config "$key"
			setup_key "$refresh"
		done
		;;
	status) cmd_status "$@" ;;
	clean)
		(($#)) || usage
		cmd_clean "$@"
		;;
	release | kdir | config | root | image | run)
		(($#)) || usage
		key_config "$1"
		shift
		case $cmd in
		release)
			ensure_env
			printf '%s\n' "$S_RELEASE"
			;;
		kdir)
			ensure_env
			printf '%s\n' "$S_KDIR"
			;;
		root)
			ensure_env
			root_of
			echo
			;;
		config)
			ensure_env
			local c
			c=$(host_path "$S_KDIR")/.config
			if [[ ! -f $c ]]; then
				c=$(cmd_image)/boot/config-$S_RELEASE
				[[ -f $c ]] || c=$CACHE/images/$S_RELEASE/lib/modules/$S_RELEASE/config
			fi
			[[ -f $c ]] || die "$K_KEY: no .config found"
			printf '%s\n' "$c"
			;;
		image) cmd_image ;;
		run) cmd_run "$@" ;;
		esac
		;;
	*) usage ;;
	esac
}

main "$@"
