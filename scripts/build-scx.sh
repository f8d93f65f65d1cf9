#!/usr/bin/env bash
# Build tools/sched_ext's example BPF schedulers (scx_simple, and scx_qmap,
# whose -p runs it in partial mode) against the BTF of a kernel we built.
#
# Usage: scripts/build-scx.sh OBJ_DIR OUT_DIR [SRC_TREE]
#   OBJ_DIR   the kernel's object folder: OBJ_DIR/vmlinux must carry BTF
#             (CONFIG_DEBUG_INFO_BTF=y) and OBJ_DIR/.config must have
#             CONFIG_SCHED_CLASS_EXT=y (tests/config/ext.config)
#   OUT_DIR   where the build goes (OUT_DIR/build/...); the schedulers end
#             up in OUT_DIR/bin/
#   SRC_TREE  the kernel source the schedulers come from (default: the
#             tree OBJ_DIR was built from, OBJ_DIR/source)
#
# The tree's own libbpf and bpftool are built first (tools/lib/bpf,
# tools/bpf/bpftool), so the distribution's libbpf does not matter; the BPF
# side needs clang >= 16 (clang-19 from Debian).  Nothing is written into
# SRC_TREE.  Missing Debian packages are installed as scripts/deps.sh does
# (as root), or named.
set -euo pipefail

die() { echo "build-scx: $*" >&2; exit 1; }
# shellcheck source=scripts/need-packages.sh
. "$(dirname "${BASH_SOURCE[0]}")/need-packages.sh"

[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: $0 OBJ_DIR OUT_DIR [SRC_TREE]"
obj=$(realpath -m "$1")
out=$(realpath -m "$2")
src=$(realpath -m "${3:-$obj/source}")

LLVM_VERSION=${LLVM_VERSION:-19}
clang=clang-$LLVM_VERSION
strip=llvm-strip-$LLVM_VERSION

# --- Debian packages -------------------------------------------------------
packages=(
	"clang-$LLVM_VERSION" "llvm-$LLVM_VERSION"	# BPF compiler, llvm-strip
	make gcc libelf-dev zlib1g-dev pkg-config	# libbpf, bpftool, the loaders
)
need_packages build-scx "${packages[@]}"
command -v "$clang" >/dev/null || die "$clang not found after installing clang-$LLVM_VERSION"
command -v "$strip" >/dev/null || die "$strip not found after installing llvm-$LLVM_VERSION"
clang_major=$("$clang" -dumpversion | cut -d. -f1)
[ "$clang_major" -ge 16 ] || die "$clang is version $clang_major; tools/sched_ext needs clang >= 16"

# --- The kernel ---------------------------------------------------------------
[ -f "$src/tools/sched_ext/Makefile" ] ||
	die "$src has no tools/sched_ext (a Linux >= 6.12 source tree is needed)"
[ -f "$obj/vmlinux" ] || die "$obj/vmlinux is missing: build the kernel first"
grep -qx 'CONFIG_SCHED_CLASS_EXT=y' "$obj/.config" 2>/dev/null ||
	die "$obj/.config lacks CONFIG_SCHED_CLASS_EXT=y: build it with tests/config/ext.config"
readelf -S -W "$obj/vmlinux" | grep -q ' \.BTF ' ||
	die "$obj/vmlinux has no .BTF section: CONFIG_DEBUG_INFO_BTF=y (and pahole) are needed"

# The schedulers' Makefile writes only under O=, but make sure of it.
tree_state() { git -C "$src" status --porcelain --untracked-files=all 2>/dev/null | sha1sum; }
before=$(tree_state)

mkdir -p "$out"
log=$out/build-scx.log
echo "build-scx: building scx_simple and scx_qmap from $src/tools/sched_ext against $obj/vmlinux"
start=$(date +%s)
# CLANG compiles the BPF side (and bpftool's own skeletons); the loaders,
# libbpf and bpftool are built with gcc.  VMLINUX_BTF is the kernel's, not
# the host's /sys/kernel/btf/vmlinux.
if ! make -C "$src/tools/sched_ext" -j"$(nproc)" \
	O="$out" VMLINUX_BTF="$obj/vmlinux" \
	CLANG="$clang" LLVM_STRIP="$strip" \
	scx_simple scx_qmap >"$log" 2>&1; then
	grep -E -m 20 'error|Error|undefined' "$log" >&2 || tail -n 30 "$log" >&2
	die "the build failed; the whole log is in $log"
fi
[ "$(tree_state)" = "$before" ] || echo "build-scx: warning: the build changed files in $src" >&2

mkdir -p "$out/bin"
for s in scx_simple scx_qmap; do
	ln -sfn "../build/bin/$s" "$out/bin/$s"
done
echo "build-scx: done in $(($(date +%s) - start)) s: $out/bin/scx_simple, $out/bin/scx_qmap (log: $log)"
