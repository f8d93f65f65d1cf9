#!/usr/bin/env bash
# Configure and build a guest bzImage from build/linux.
#
# Usage: scripts/kernel-build.sh BUILD_DIR PREEMPT [NAME [FRAGMENT...]]
#   PREEMPT   full | voluntary | none | dynamic (PREEMPT_DYNAMIC: the model
#             is chosen at boot with preempt=, full by default) | asis
#             (keep BASE_CONFIG's)
#   NAME      object folder suffix (default: PREEMPT); the kernel is
#             BUILD_DIR/obj-NAME/arch/x86/boot/bzImage, linked as
#             BUILD_DIR/bzImage-NAME
#   FRAGMENT  extra config fragments, merged last
#   DEBUG_CONFIG=0 in the environment leaves tests/config/debug.config
#   out (benchmark kernels: no lockdep or other debug overhead)
#   BASE_CONFIG=FILE in the environment starts from FILE (a .config, or
#   one compressed with xz) instead of tinyconfig and base.config: a
#   distribution's configuration (make kernel-distro)
#   KBUILD_TARGET=T builds T instead of bzImage (make deb: bindeb-pkg)
#
# The configuration is tinyconfig plus tests/config/base.config,
# debug.config, preempt-PREEMPT.config and the extra fragments.  It is
# regenerated only when a fragment, the base or the kernel tree's HEAD
# changes, and every value a fragment asks for is checked to be in the
# final .config.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "$1")
preempt=$2
name=${3:-$preempt}
shift $(($# < 3 ? $# : 3))
extra=("$@")
tree=$build/linux
obj=$build/obj-$name
cfgdir=$top/tests/config

die() { echo "kernel-build: $*" >&2; exit 1; }

base=${BASE_CONFIG:-}
case "$preempt" in
full|voluntary|none|dynamic) ;;
asis) [ -n "$base" ] || die "PREEMPT asis keeps BASE_CONFIG's model: set BASE_CONFIG" ;;
*) die "PREEMPT must be full, voluntary, none, dynamic or asis (got '$preempt')" ;;
esac
[ -d "$tree/.git" ] || die "$tree is missing: run 'make kernel-tree' first"
[ -z "$base" ] || [ -f "$base" ] || die "BASE_CONFIG $base does not exist"

fragments=()
[ -n "$base" ] || fragments+=("$cfgdir/base.config")
[ "${DEBUG_CONFIG:-1}" = 0 ] || fragments+=("$cfgdir/debug.config")
[ "$preempt" = asis ] || fragments+=("$cfgdir/preempt-$preempt.config")
for f in "${extra[@]}"; do
	fragments+=("$(realpath "$f")")
done

mkdir -p "$obj"
# The base configuration, uncompressed (xz -f passes a plain file through)
base_text() { xz -dcf "$base"; }
stamp=$( { git -C "$tree" rev-parse "HEAD^{tree}"; [ -z "$base" ] || base_text; cat "${fragments[@]}"; } |
	sha1sum | cut -d' ' -f1)

# Depend mode: on a miss ccache does not run the preprocessor first, which
# made a cold build take 908 s instead of 615 s without ccache (646 s in
# depend mode); hits come from the kernel's own -MMD dependency lists.
export CCACHE_BASEDIR=$build CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G} CCACHE_DEPEND=1
export KBUILD_BUILD_USER=idlebatch KBUILD_BUILD_HOST=qemu-guest
# scripts/kernel-cc: through ccache, but an .incbin source (bzImage's payload)
kmake() { make -s -C "$tree" O="$obj" CC="$top/scripts/kernel-cc" HOSTCC="ccache gcc" "$@"; }

if [ "$(cat "$obj/.idlebatch-config" 2>/dev/null)" != "$stamp" ] || [ ! -f "$obj/.config" ]; then
	echo "kernel-build: configuring $obj ($preempt preemption${base:+, from $base})"
	if [ -n "$base" ]; then
		base_text >"$obj/.config"
	else
		kmake tinyconfig >/dev/null
	fi
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "${fragments[@]}" >/dev/null
	kmake olddefconfig >/dev/null
	# merge_config.sh only warns when a request is dropped; make it an error.
	bad=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF -- "$line" "$obj/.config" ||
				{ echo "kernel-build: requested $line, got: $(grep -E "^(# )?${line%%=*}[= ]" "$obj/.config" || echo unset)" >&2; bad=1; }
			;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }; sym=${sym%% *}
			! grep -qE "^$sym=" "$obj/.config" ||
				{ echo "kernel-build: requested $sym off, but it is on" >&2; bad=1; }
			;;
		esac
	done < <(# the last fragment that sets a symbol wins, as in merge_config.sh
		cat "${fragments[@]}" |
			awk '{ sym = $0
			       if (sub(/^# /, "", sym)) sub(/ is not set$/, "", sym); else sub(/=.*/, "", sym)
			       if (sym ~ /^CONFIG_/) { if (!(sym in last)) order[n++] = sym; last[sym] = $0 } }
			     END { for (i = 0; i < n; i++) print last[order[i]] }')
	[ $bad -eq 0 ] || die "the configuration does not match the fragments (a missing dependency?)"
	echo "$stamp" >"$obj/.idlebatch-config"
fi

target=${KBUILD_TARGET:-bzImage}
echo "kernel-build: building $target in $obj"
kmake -j"$(nproc)" "$target"
if [ "$target" = bzImage ]; then
	# The kernel in bzImage must be the vmlinux just linked: its banner
	# (release, build number and time) is the proof.  awk reads to the
	# end, so that no writer before it dies of SIGPIPE under pipefail.
	banner() { strings -n 20 | awk '/^Linux version .*#[0-9]+ .*[0-9][0-9]:[0-9][0-9]:[0-9][0-9] / && !n++'; }
	want=$(banner <"$obj/vmlinux")
	got=$("$tree/scripts/extract-vmlinux" "$obj/arch/x86/boot/bzImage" 2>/dev/null | banner)
	[ -n "$want" ] && [ "$want" = "$got" ] ||
		die "bzImage does not hold the vmlinux just built (vmlinux: '${want:-no banner}', bzImage: '${got:-no banner}')"
	ln -sfn "obj-$name/arch/x86/boot/bzImage" "$build/bzImage-$name"
fi
echo "kernel-build: $(cat "$obj/include/config/kernel.release") $(sed -n 's/.*UTS_VERSION "\(.*\)"/\1/p' "$obj/include/generated/utsversion.h"), $SECONDS s"
