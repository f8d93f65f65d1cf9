#!/usr/bin/env bash
# The series compiles with CONFIG_SCHED_IDLEBATCH=n: every source file the
# series touches (and the directory of every kernel-internal header it
# touches) is compiled in a tree configured with the option off, with
# -Werror.  The files that only reference the option through headers are
# compiled with them.  (A full build with the option on is the guest kernel.)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
tree=$build/linux
# Not obj-idlebatch-off: that is the whole kernel make selftests builds
# with the option off, whose configuration this one would replace.
obj=$build/obj-option-off
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; }

if ! git -C "$tree" rev-parse -q --verify base >/dev/null; then
	notok "build/linux exists (run 'make kernel-tree')"
	echo "1..$n"
	exit 1
fi

mapfile -t targets < <("$top/tests/host/series-targets" "$tree")
if [ ${#targets[@]} -eq 0 ]; then
	ok "option off: nothing to compile # SKIP the series touches no kernel source"
	echo "1..$n"
	exit 0
fi

# Depend mode, as scripts/kernel-build.sh says why
export CCACHE_BASEDIR=$build CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1
kmake() { make -s -C "$tree" O="$obj" CC="$top/scripts/kernel-cc" HOSTCC="ccache gcc" "$@"; }
mkdir -p "$obj"
kmake tinyconfig >/dev/null
"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
	"$top/tests/config/base.config" "$top/tests/config/idlebatch-off.config" >/dev/null
kmake olddefconfig >/dev/null
if grep -q '^CONFIG_SCHED_IDLEBATCH=y' "$obj/.config"; then
	notok "the option-off configuration has CONFIG_SCHED_IDLEBATCH off"
else
	ok "the option-off configuration has CONFIG_SCHED_IDLEBATCH off"
fi
if kmake -j"$(nproc)" KCFLAGS=-Werror "${targets[@]}" >"$obj/build.log" 2>&1; then
	ok "with the option off, these compile without warnings: ${targets[*]}"
else
	notok "with the option off, these compile without warnings: ${targets[*]}"
	tail -n 40 "$obj/build.log" | sed 's/^/# /'
fi
echo "1..$n"
