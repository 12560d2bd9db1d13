#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# build-matrix.sh - build the module against every supported kernel.
#
# Usage: build-matrix.sh [options] [KEY...]        (default keys: 5.10 6.1 6.12 7.2)
#
#   --sparse      also run sparse (make C=2); sparse warnings/errors fail the key
#   --vermagic    compare the built module's vermagic with the in-tree
#                 virtio_net of the matching Debian kernel image
#                 (downloads it via `kernel-env.sh image KEY`)
#   --tree DIR    build DIR instead of this repository
#   --out DIR     output root (default: <repo>/build)
#   -j N          make parallelism (default: number of CPUs)
#   -h, --help    this text
#
# For every key the source tree (without .git, build products, build/ and
# .cache/) is copied to <out>/<KEY>/src/, built there inside the kernel's
# environment (tests/setup/kernel-env.sh) with
#     make -C <kdir> M=<out>/<KEY>/src W=1 [C=2] modules
# and the log is written to <out>/<KEY>/build.log. A key FAILs when make fails,
# when the log has any "warning:" or "error:" line (compiler, kbuild, modpost,
# sparse), or when no virtio_net.ko was produced; otherwise the module is
# copied to <out>/<KEY>/virtio_net.ko. One summary line per key is printed
# (and saved in <out>/summary.txt); the exit status is non-zero if any key
# failed.

set -euo pipefail

readonly ALL_KEYS=(5.10 6.1 6.12 7.2)
SCRIPT_DIR=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
readonly SCRIPT_DIR
readonly KENV=$SCRIPT_DIR/setup/kernel-env.sh
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
readonly REPO
readonly MODULE=virtio_net

SPARSE=0
VERMAGIC=0
TREE=$REPO
OUT=$REPO/build
JOBS=$(nproc 2>/dev/null || echo 2)

msg() { printf '[build-matrix] %s\n' "$*" >&2; }
die() {
	printf '[build-matrix] error: %s\n' "$*" >&2
	exit 2
}
usage() {
	sed -n '/^# Usage:/,/^# failed\./{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
	exit "${1:-2}"
}

# Files of the tree to copy, NUL separated, relative to the tree.
tree_files() {
	local tree=$1 f
	if git -C "$tree" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
		[[ $(git -C "$tree" rev-parse --show-toplevel) == "$(readlink -f "$tree")" ]]; then
		git -C "$tree" ls-files -z --cached --others --exclude-standard
	else
		(cd "$tree" && find . \( -name .git -o -path ./build -o -path ./.cache \) -prune -o \
			\( -type f -o -type l \) -printf '%P\0')
	fi | while IFS= read -r -d '' f; do
		case /$f in
		/build/* | /.cache/* | */.git/* | /.git) continue ;;
		*.o | *.ko | *.mod | *.mod.c | *.cmd | *.a | *.order | */Module.symvers | *.d | *.tmp) continue ;;
		esac
		# tracked files deleted in the work tree are listed by git but absent
		[[ -e $tree/$f || -L $tree/$f ]] || continue
		printf '%s\0' "$f"
	done
}

copy_tree() { # src dst
	local src=$1 dst=$2
	mkdir -p "$dst"
	tree_files "$src" | tar -C "$src" --null --no-recursion -T - -cf - | tar -C "$dst" -xf -
}

# Vermagic of a (possibly compressed) module file; modinfo runs inside the
# kernel's environment so that its kmod knows the compression in use.
vermagic_of() { # key file
	local key=$1 file dir
	file=$(readlink -f "$2")
	dir=$(dirname "$file")
	(cd "$dir" && VNET_SRC=$dir "$KENV" run "$key" -- modinfo -F vermagic "$file")
}

build_key() {
	local key=$1 t0=$SECONDS out src log kdir rel rc=0 warnings errors status note="" ko
	out=$OUT/$key
	src=$out/src
	log=$out/build.log
	mkdir -p "$out"
	rm -rf "$src" "$out/$MODULE.ko"
	rm -f "$log"
	copy_tree "$TREE" "$src"

	if ! "$KENV" setup "$key"; then
		printf 'kernel-env.sh setup %s failed\n' "$key" >"$log"
		RESULTS+=("$(printf '%-5s FAIL  warnings=-  errors=-  %4ss  environment setup failed' "$key" $((SECONDS - t0)))")
		return 1
	fi
	kdir=$("$KENV" kdir "$key")
	rel=$("$KENV" release "$key")

	local -a cmd=(make -C "$kdir" M="$src" W=1 -j"$JOBS")
	((SPARSE)) && cmd+=(C=2)
	cmd+=(modules)
	{
		printf '# key=%s release=%s\n# %s\n' "$key" "$rel" "${cmd[*]}"
	} >"$log"
	msg "$key: building ($rel)"
	(cd "$src" && VNET_SRC=$src "$KENV" run "$key" -- "${cmd[@]}") >>"$log" 2>&1 || rc=$?

	warnings=$(grep -ciE '(^|[^[:alnum:]_])warning:' "$log" || true)
	errors=$(grep -ciE '(^|[^[:alnum:]_])error:' "$log" || true)
	ko=""
	if [[ -f $src/$MODULE.ko ]]; then
		ko=$src/$MODULE.ko
	else
		ko=$(find "$src" -name "$MODULE.ko" -print -quit)
	fi

	status=OK
	if ((rc != 0)); then
		status=FAIL note="make exit $rc"
	elif ((warnings || errors)); then
		status=FAIL note="diagnostics in log"
	elif [[ -z $ko ]]; then
		status=FAIL note="no $MODULE.ko produced"
	fi
	if ((SPARSE)) && [[ $status == OK ]]; then
		if grep -q 'is not available or not up to date' "$log"; then
			status=FAIL note="sparse unusable (see log)"
		elif ! grep -qE '^[[:space:]]+CHECK[[:space:]]' "$log"; then
			status=FAIL note="sparse did not run"
		fi
	fi
	if [[ $status == OK ]]; then
		cp "$ko" "$out/$MODULE.ko"
		note="$out/$MODULE.ko"
		if ((VERMAGIC)); then
			local img intree vm_ours vm_tree
			img=$("$KENV" image "$key")
			intree=$(find "$img/lib/modules/$rel/" -name "$MODULE.ko*" -print -quit)
			vm_ours=$(vermagic_of "$key" "$out/$MODULE.ko")
			if [[ -z $intree ]]; then
				status=FAIL note="no in-tree $MODULE in $img"
			else
				vm_tree=$(vermagic_of "$key" "$intree")
				printf '# vermagic built:   %s\n# vermagic in-tree: %s (%s)\n' \
					"$vm_ours" "$vm_tree" "$intree" >>"$log"
				if [[ $vm_ours == "$vm_tree" ]]; then
					note="vermagic matches '$vm_ours'"
				else
					status=FAIL note="vermagic '$vm_ours' != in-tree '$vm_tree'"
				fi
			fi
		fi
	fi
	if [[ $status != OK ]]; then
		grep -iE '(^|[^[:alnum:]_])(warning|error):' "$log" | head -n 20 | sed "s/^/[$key] /" >&2 || true
	fi
	RESULTS+=("$(printf '%-5s %-4s  warnings=%-3s errors=%-3s %4ss  %s' \
		"$key" "$status" "$warnings" "$errors" $((SECONDS - t0)) "$note")")
	[[ $status == OK ]]
}

main() {
	local -a keys=()
	while (($#)); do
		case $1 in
		--sparse) SPARSE=1 ;;
		--vermagic) VERMAGIC=1 ;;
		--tree)
			(($# >= 2)) || die "--tree needs a directory"
			TREE=$2
			shift
			;;
		--tree=*) TREE=${1#*=} ;;
		--out)
			(($# >= 2)) || die "--out needs a directory"
			OUT=$2
			shift
			;;
		--out=*) OUT=${1#*=} ;;
		-j)
			(($# >= 2)) || die "-j needs a number"
			JOBS=$2
			shift
			;;
		-j*) JOBS=${1#-j} ;;
		-h | --help) usage 0 ;;
		-*) die "unknown option $1" ;;
		*) keys+=("$1") ;;
		esac
		shift
	done
	((${#keys[@]})) || keys=("${ALL_KEYS[@]}")
	local k known
	for k in "${keys[@]}"; do
		known=0
		for known_key in "${ALL_KEYS[@]}"; do [[ $k == "$known_key" ]] && known=1; done
		((known)) || die "unknown kernel key '$k' (known: ${ALL_KEYS[*]})"
	done
	[[ -d $TREE ]] || die "tree '$TREE' is not a directory"
	TREE=$(readlink -f "$TREE")
	mkdir -p "$OUT"
	OUT=$(readlink -f "$OUT")
	case $OUT/ in
	"$TREE"/*) [[ $OUT == "$TREE"/build ]] || msg "note: output $OUT is inside the tree" ;;
	esac

	RESULTS=()
	local failed=0
	for k in "${keys[@]}"; do
		build_key "$k" || failed=1
	done
	printf '%s\n' "${RESULTS[@]}" | tee "$OUT/summary.txt"
	return "$failed"
}

main "$@"
