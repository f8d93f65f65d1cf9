#!/usr/bin/env bash
# Build the kernel's own selftests (tools/testing/selftests of build/linux)
# that bear on the scheduler, and install them for tests/selftests/run.
#
# Usage: scripts/build-selftests.sh [BUILD_DIR]
#   BUILD_DIR  the project's build folder (default: build/ of this checkout);
#              the sources come from BUILD_DIR/linux and everything goes to
#              BUILD_DIR/selftests (or SELFTESTS_DIR):
#                obj/usr/include   UAPI headers (make headers_install O=obj),
#                                  the KHDR_INCLUDES of the build
#                obj/kselftest/    the objects (kselftest's O= build)
#                install/          the installed tests (run_kselftest.sh,
#                                  kselftest-list.txt, one folder a target)
#                build.log         the full make output
# Environment:
#   TARGETS        the kselftest targets (default: see below)
#   SELFTESTS_DIR  where to build and install instead of BUILD_DIR/selftests,
#                  so that a build of a few targets (make check's short
#                  test, make selftests-ext) leaves the whole install alone
#   SCHED_EXT=0    leave the sched_ext selftests out; otherwise they are
#                  built (clang-19, libzstd-dev, a vmlinux with BTF) when
#                  possible, and the reason is printed when not
#   SCX_VMLINUX    the vmlinux whose BTF the sched_ext tests are built
#                  against (default BUILD_DIR/obj-ext/vmlinux, the kernel of
#                  tests/config/ext.config)
#
# The source tree is not written to: headers and objects go to obj/ (the
# kselftest Makefile then uses KHDR_INCLUDES=-isystem obj/usr/include).
# A target that does not build is reported and left out; the script fails
# only when none of the required targets is installed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${1:-$top/build}")
tree=$build/linux
out=$(realpath -m "${SELFTESTS_DIR:-$build/selftests}")
obj=$out/obj
inst=$out/install
log=$out/build.log
ksft=$tree/tools/testing/selftests

die() { echo "build-selftests: $*" >&2; exit 1; }
# shellcheck source=scripts/need-packages.sh
. "$(dirname "${BASH_SOURCE[0]}")/need-packages.sh"
say() { echo "build-selftests: $*"; }

[ -d "$ksft" ] || die "$ksft is missing: run 'make kernel-tree' first"

# The scheduler-related targets.  futex builds its functional tests (PI ones
# included); cgroup holds test_cpu; sigaltstack and pidfd are the signal
# ones; membarrier and clone3 are small extras that exercise the scheduler's
# IPIs and fork paths.
default_targets="sched futex rseq timers cgroup ptrace sigaltstack pidfd proc membarrier clone3"
targets=${TARGETS:-$default_targets}

# --- Debian packages --------------------------------------------------------
# libcap-dev: clone3 (and pidfd on some versions) link with -lcap.
# libzstd-dev: the sched_ext runner links with -lzstd (libbpf's deps).
packages=(make gcc libc6-dev libelf-dev zlib1g-dev pkg-config libcap-dev)
[ "${SCHED_EXT:-1}" = 0 ] || packages+=(clang-19 llvm-19 libzstd-dev)
need_packages build-selftests "${packages[@]}"

mkdir -p "$obj"
: >"$log"
start=$(date +%s)

# --- UAPI headers into the object folder ------------------------------------
say "headers_install into $obj/usr/include"
make -s -C "$tree" O="$obj" headers_install >>"$log" 2>&1 || die "headers_install failed (see $log)"
export KHDR_INCLUDES="-isystem $obj/usr/include"

# --- the targets, one at a time so that one failure does not hide the rest --
rm -rf "$inst"
mkdir -p "$inst"
jobs=$(nproc)
built=()
failed=()
for t in $targets; do
	say "building $t"
	if make -C "$ksft" O="$obj" KHDR_INCLUDES="$KHDR_INCLUDES" TARGETS="$t" \
		-j"$jobs" all >>"$log" 2>&1; then
		built+=("$t")
	else
		failed+=("$t")
		say "  $t did not build (its errors are in $log)"
	fi
done
[ ${#built[@]} -gt 0 ] || die "no target built (see $log)"

# --- sched_ext: needs clang >= 16, a vmlinux with BTF, libzstd -------------
scx_note=""
if [ "${SCHED_EXT:-1}" != 0 ]; then
	vmlinux=${SCX_VMLINUX:-$build/obj-ext/vmlinux}
	if ! command -v clang-19 >/dev/null; then
		scx_note="sched_ext: not built: clang-19 is missing"
	elif [ ! -f "$vmlinux" ] || [ "$(readelf -S "$vmlinux" 2>/dev/null | grep -c '\.BTF ')" = 0 ]; then
		scx_note="sched_ext: not built: no vmlinux with BTF at $vmlinux (make kernel-ext)"
	else
		say "building sched_ext against the BTF of $vmlinux"
		# CLANG and LLVM_STRIP pick clang-19 (Debian's clang is 14, too old for
		# the BPF side); libbpf and bpftool come from the tree, built in obj/.
		# kselftest's SKIP_TARGETS leaves sched_ext (and bpf) out by default.
		if make -C "$ksft" O="$obj" KHDR_INCLUDES="$KHDR_INCLUDES" TARGETS=sched_ext SKIP_TARGETS= \
			CLANG=clang-19 LLVM_STRIP=llvm-strip-19 VMLINUX_BTF="$vmlinux" \
			-j"$jobs" all >>"$log" 2>&1; then
			built+=(sched_ext)
		else
			failed+=(sched_ext)
			scx_note="sched_ext: did not build (see $log)"
		fi
	fi
	[ -z "$scx_note" ] || say "$scx_note"
fi

# --- install everything that built ------------------------------------------
say "installing ${built[*]} into $inst"
make -C "$ksft" O="$obj" KHDR_INCLUDES="$KHDR_INCLUDES" TARGETS="${built[*]}" SKIP_TARGETS= \
	CLANG=clang-19 LLVM_STRIP=llvm-strip-19 VMLINUX_BTF="${SCX_VMLINUX:-$build/obj-ext/vmlinux}" \
	INSTALL_PATH="$inst" install >>"$log" 2>&1 ||
	say "make install reported an error (sched's is expected, see below)"
# sched/Makefile lists cs_prctl_test in TEST_PROGS, which kselftest copies
# from the source folder: with O= it is in obj/kselftest/sched instead.
for t in "${built[@]}"; do
	while IFS=: read -r col prog; do
		[ "$col" = "$t" ] || continue
		[ -e "$inst/$col/$prog" ] && continue
		if [ -f "$obj/kselftest/$col/$prog" ]; then
			install -D -m 755 "$obj/kselftest/$col/$prog" "$inst/$col/$prog"
		else
			die "$col:$prog is listed but was not installed"
		fi
	done <"$inst/kselftest-list.txt"
done

say "built in $(( $(date +%s) - start ))s: ${built[*]}"
[ ${#failed[@]} -eq 0 ] || say "did not build: ${failed[*]}"
say "$(wc -l <"$inst/kselftest-list.txt") tests listed in $inst/kselftest-list.txt"
# The source tree must be as clean as before.
if [ -n "$(git -C "$tree" status --porcelain --ignored -- tools/testing/selftests 2>/dev/null)" ]; then
	say "warning: the build left files in $tree/tools/testing/selftests:"
	git -C "$tree" status --porcelain --ignored -- tools/testing/selftests | head
fi
exit 0
