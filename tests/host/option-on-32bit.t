#!/usr/bin/env bash
# The series compiles with CONFIG_SCHED_IDLEBATCH=y in a configuration far
# from the test kernel's: 32-bit x86 (u64 counters are two loads there),
# from tinyconfig, so without futexes and RT mutexes (no p->pi_top_task),
# without NUMA, cgroups or sched_ext, but with SMP, core scheduling and
# lockdep.  Every source file the series touches is compiled, -Werror.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
tree=$build/linux
obj=$build/obj-i386
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
	ok "32-bit: nothing to compile # SKIP the series touches no kernel source"
	echo "1..$n"
	exit 0
fi

# Depend mode, as scripts/kernel-build.sh says why
export CCACHE_BASEDIR=$build CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1
kmake() { make -s -C "$tree" O="$obj" ARCH=i386 CC="$top/scripts/kernel-cc" HOSTCC="ccache gcc" "$@"; }
mkdir -p "$obj"
kmake tinyconfig >/dev/null
"$tree/scripts/config" --file "$obj/.config" -e SMP -e PROC_FS -e SCHED_IDLEBATCH \
	-e SCHED_SMT -e SCHED_CORE -e FTRACE -e DEBUG_KERNEL -e PROVE_LOCKING -e SCHED_DEBUG \
	-e EXPERT -e IO_URING
kmake olddefconfig >/dev/null
for opt in X86_32 SMP SCHED_IDLEBATCH SCHED_CORE PROVE_LOCKING IO_URING; do
	grep -q "^CONFIG_$opt=y" "$obj/.config" || missing+=" $opt"
done
grep -q '^CONFIG_RT_MUTEXES=y' "$obj/.config" && missing+=" (RT_MUTEXES off)"
if [ -z "${missing:-}" ]; then
	ok "the 32-bit configuration has X86_32, SMP, SCHED_IDLEBATCH, SCHED_CORE, PROVE_LOCKING, IO_URING (the series touches io-wq) and no RT_MUTEXES"
else
	notok "the 32-bit configuration is as intended: not so:$missing"
fi
if kmake -j"$(nproc)" KCFLAGS=-Werror "${targets[@]}" >"$obj/build.log" 2>&1; then
	ok "32-bit, option on, without RT mutexes, these compile without warnings: ${targets[*]}"
else
	notok "32-bit, option on, without RT mutexes, these compile without warnings: ${targets[*]}"
	tail -n 40 "$obj/build.log" | sed 's/^/# /'
fi
echo "1..$n"
