#!/usr/bin/env bash
# Boot the freshly built kernel once and run the in-guest kernel tests
# (build/tests/kernel/*, built from tests/kernel/*.c with the kernel's
# kselftest harness).  Every test point of every program becomes one TAP
# line here, prefixed with the program's name; a program that crashes or
# whose plan is short, and a guest kernel log with a WARNING, BUG, lockdep
# report or RCU stall, are failures too.
# Usage: tests/kernel/guest.t [NAME...]   (default: all programs)
#   GUEST_BIN=DIR takes the programs from DIR, GUEST_SMP=N boots N CPUs
#   (GUEST_TOPOLOGY=SPEC lays them out: see tests/vm/run --topology;
#   GUEST_NUMA=N splits them and the memory into N NUMA nodes),
#   GUEST_APPEND=ARGS adds ARGS to the kernel command line, GUEST_ENV=
#   "NAME=VALUE..." sets variables for the programs in the guest,
#   GUEST_TIMEOUT=S stops the guest after S seconds (default 1200; a
#   sanitizer kernel needs more), GUEST_LOG=FILE keeps the guest's kernel
#   log there (default build/vm/NAME.log, NAME the programs' folder).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${GUEST_BIN:-$top/build/tests/kernel}
smp=${GUEST_SMP:-2}
topology=${GUEST_TOPOLOGY:-}
numa=${GUEST_NUMA:-1}
mkdir -p "$top/build/vm"
scratch=$(mktemp -d "$top/build/vm/kernel-tests.XXXXXX") || {
	echo "1..1"
	echo "not ok 1 - cannot make a scratch folder in $top/build/vm"
	exit 1
}
trap 'rm -rf "$scratch"' EXIT

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for p in "$bin"/*; do names+=("$(basename "$p")"); done
fi

append=${GUEST_APPEND:-}

echo "# guest: $smp CPUs${topology:+ ($topology)}$([ "$numa" -gt 1 ] && echo " in $numa NUMA nodes"), kernel ${VM_KERNEL:-build/bzImage-full}${append:+, booted with $append}"
"$top/tests/vm/run" --timeout "${GUEST_TIMEOUT:-1200}" --disk 256 --smp "$smp" ${topology:+--topology "$topology"} --numa "$numa" --scratch "$scratch" --log "${GUEST_LOG:-$top/build/vm/$(basename "$bin").log}" \
	${append:+--append "$append"} \
	-- env ${GUEST_ENV:-} "$top/tests/kernel/in-guest" "$bin" "${names[@]}"
vm_rc=$?

n=0
for name in "${names[@]}"; do
	tap=$scratch/results/$name.tap
	if [ ! -f "$tap" ]; then
		n=$((n + 1))
		echo "not ok $n - $name: did not run"
		continue
	fi
	# "ok 3 policy.fifo.x # SKIP why" -> "ok N - name: policy.fifo.x # SKIP why"
	while IFS= read -r line; do
		if [[ $line =~ ^(not ok|ok)\ [0-9]+\ (.*)$ ]]; then
			n=$((n + 1))
			echo "${BASH_REMATCH[1]} $n - $name: ${BASH_REMATCH[2]}"
		fi
	done <"$tap"
	planned=$(grep -oE '^1\.\.[0-9]+' "$tap" | head -n1 | cut -d. -f3)
	got=$(grep -cE '^(not )?ok [0-9]+' "$tap")
	rc=$(cat "$scratch/results/$name.rc" 2>/dev/null || echo "?")
	if [ -z "$planned" ] || [ "$planned" -ne "$got" ]; then
		n=$((n + 1))
		echo "not ok $n - $name: planned ${planned:-no} tests, reported $got (exit status $rc)"
	elif [ "$rc" != 0 ] && ! grep -qE '^not ok' "$tap"; then
		n=$((n + 1))
		echo "not ok $n - $name: exit status $rc without a failed test"
	fi
	if [ -s "$scratch/results/$name.leaked" ]; then
		n=$((n + 1))
		echo "not ok $n - $name: left idle-batch tasks running after it ended: $(cat "$scratch/results/$name.leaked")"
	fi
done
n=$((n + 1))
if [ $vm_rc -eq 0 ]; then
	echo "ok $n - guest kernel log is clean and the guest finished"
else
	echo "not ok $n - guest run failed with status $vm_rc (kernel log: build/vm/$(basename "$bin").log)"
fi
echo "1..$n"
