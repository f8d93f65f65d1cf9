#!/usr/bin/env bash
# Suites written by others with idle-batch workers, in a guest on the test
# kernel: stress-ng's scheduler-relevant stressors on idle CPUs and next to
# normal hogs, then rt-tests' pi_stress and cyclictest next to idle-batch
# work (tests/stress/mix).  make check runs a short version; make stress
# runs the long one (STRESS_SECONDS, each stressor alone too, 4 CPUs) on
# each preemption model's kernel.
# Usage: tests/kernel/stress.t [MIX-OPTIONS...]   (default: tests/stress/short)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernel=${VM_KERNEL:-$top/build/bzImage-full}
smp=${STRESS_SMP:-2}
# Without arguments, the short version (tests/stress/short).
if [ $# -gt 0 ]; then
	cmd=("$top/tests/stress/mix" "$@")
else
	cmd=("$top/tests/stress/short")
fi
log=$top/build/vm/kernel-stress-$(basename "$kernel").log

echo "TAP version 13"
echo "# guest: $smp CPUs, kernel $kernel"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$top/tests/vm/run" --kernel "$kernel" --smp "$smp" --timeout 3000 --log "$log" \
	-- "${cmd[@]}" 2>&1 | tee "$out" | grep -vE '^(ok|not ok) |^1\.\.|^TAP' | sed 's/^/# /'
rc=${PIPESTATUS[0]}
n=0 failed=0
while IFS= read -r line; do
	if [[ $line =~ ^(not ok|ok)\ [0-9]+\ -\ (.*)$ ]]; then
		n=$((n + 1))
		echo "${BASH_REMATCH[1]} $n - ${BASH_REMATCH[2]}"
		[ "${BASH_REMATCH[1]}" = ok ] || failed=1
	fi
done <"$out"
n=$((n + 1))
# 0: all passed; 1: the mix reported a failure above; else the guest failed
if [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; then
	echo "ok $n - the guest finished and its kernel log is clean"
else
	echo "not ok $n - the guest run failed with status $rc (kernel log: $log)"
	failed=1
fi
echo "1..$n"
exit $failed
