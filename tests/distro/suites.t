#!/usr/bin/env bash
# The policy's in-guest suites on the distribution's kernel
# (build/bzImage-distro, make kernel-distro: Debian's configuration, so
# HZ=250, PREEMPT_DYNAMIC, NO_HZ_FULL and BTF): tests/kernel/guest.t once
# under each preemption model chosen at boot, voluntary (Debian's
# default), full and none, and tests/kernel/nohz.t (nohz_full=1) under
# voluntary.  Each boot's own report of its tick rate and preemption
# model is checked first, so that a run cannot pass on the wrong kernel.
# Usage: tests/distro/suites.t
#   DISTRO_KERNEL=FILE boots FILE instead; DISTRO_MODELS="voluntary ..."
#   picks the models; DISTRO_HZ=N is the tick rate the kernel must have
#   (default 250, Debian's).  The guest CPU has no cmpxchg16b, which
#   QEMU 7.2's TCG gets wrong (tests/vm/run).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernel=${DISTRO_KERNEL:-$top/build/bzImage-distro}
models=${DISTRO_MODELS:-voluntary full none}
want_hz=${DISTRO_HZ:-250}
n=0 failed=0
logdir=$top/build/test-logs/distro
mkdir -p "$logdir"

. "$top/tests/lib/tap.sh"

echo "TAP version 13"
if [ ! -f "$kernel" ]; then
	echo "1..1"
	echo "not ok 1 - no distribution kernel at $kernel: run 'make kernel-distro' first"
	exit 1
fi
echo "# kernel: $kernel ($(file -bL "$kernel" | sed -n 's/.*version \([^ ]*\).*/\1/p'))"

# suite LABEL MODEL SCRIPT: runs SCRIPT (guest.t or nohz.t) on the
# distribution kernel booted with preempt=MODEL; its TAP lines become
# this script's, prefixed with LABEL.
suite() {
	local label=$1 model=$2 script=$3 log=$logdir/$1.log line header
	echo "# ==== $label: tests/kernel/$script, preempt=$model"
	local start=$SECONDS
	VM_KERNEL=$kernel GUEST_APPEND="preempt=$model" GUEST_ENV="IDLEBATCH_EXPECT_BTF=1" \
		GUEST_TIMEOUT=${GUEST_TIMEOUT:-1200} "tests/kernel/$script" >"$log" 2>&1
	local rc=$?
	echo "# $label took $((SECONDS - start)) s, log in ${log#"$top"/}"

	# tests/kernel/in-guest: "# guest kernel R, HZ=N, preemption: none
	# voluntary (full)" -- the model in parentheses is the one in force
	header=$(grep -m1 -o 'guest kernel .*' "$log")
	echo "# $label: $header"
	[[ $header == *"HZ=$want_hz,"* ]]
	ok $? "$label: the guest runs at HZ=$want_hz"
	[[ $header == *"($model)"* ]]
	ok $? "$label: the guest's preemption model is $model"

	local points=0 bad=0
	while IFS= read -r line; do
		if [[ $line =~ ^(not ok|ok)\ [0-9]+\ -\ (.*)$ ]]; then
			points=$((points + 1))
			n=$((n + 1))
			echo "${BASH_REMATCH[1]} $n - $label: ${BASH_REMATCH[2]}"
			[ "${BASH_REMATCH[1]}" = ok ] || { failed=$((failed + 1)); bad=$((bad + 1)); }
		fi
	done <"$log"
	[ "$rc" -eq 0 ] || [ "$bad" -gt 0 ]
	ok $? "$label: $script exited with status $rc"
	[ "$points" -gt 0 ]
	ok $? "$label: $script reported $points test points"
}

for m in $models; do
	case "$m" in
	voluntary|full|none) suite "preempt-$m" "$m" guest.t ;;
	*) ok 1 "DISTRO_MODELS: '$m' is not voluntary, full or none" ;;
	esac
done
suite nohz_full voluntary nohz.t

echo "1..$n"
[ "$failed" -eq 0 ]
