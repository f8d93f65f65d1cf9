#!/usr/bin/env bash
# The soak: the fuzzer, stress-ng rounds with idle-batch workers, a CPU
# hotplug storm and a normal-task latency probe together in a 4-CPU guest
# on the debug kernel (tests/soak/in-guest), with a summary.  make check
# runs 2 minutes with a fixed seed; make soak DURATION=S SEED=N runs longer.
# SOAK_SECONDS and SOAK_SEED override the defaults (120 and 11).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernel=${VM_KERNEL:-$top/build/bzImage-full}
seconds=${SOAK_SECONDS:-120} seed=${SOAK_SEED:-11}
log=$top/build/vm/kernel-soak.log

echo "TAP version 13"
echo "# soak: $seconds s, seed $seed, kernel $kernel (reproduce: SOAK_SECONDS=$seconds SOAK_SEED=$seed tests/kernel/soak.t)"
if ! tests/fuzz/run --build-only >/dev/null; then
	echo "1..1"
	echo "not ok 1 - the fuzzer builds"
	exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# The fuzzer's tracing switches need single-threaded TCG (tests/fuzz/run)
"$top/tests/vm/run" --kernel "$kernel" --smp 4 --single-thread --timeout $((seconds + 1200)) \
	--log "$log" -- "$top/tests/soak/in-guest" "$seconds" "$seed" >"$out" 2>&1
rc=$?
grep -vE '^(ok|not ok) |^1\.\.' "$out" | sed 's/^/# /'
n=0 failed=0
while IFS= read -r line; do
	if [[ $line =~ ^(not ok|ok)\ [0-9]+\ -\ (.*)$ ]]; then
		n=$((n + 1))
		echo "${BASH_REMATCH[1]} $n - ${BASH_REMATCH[2]}"
		[ "${BASH_REMATCH[1]}" = ok ] || failed=1
	fi
done <"$out"
n=$((n + 1))
if [ $rc -eq 0 ] || [ $rc -eq 1 ]; then
	echo "ok $n - the guest finished and its kernel log is clean"
else
	echo "not ok $n - the guest run failed with status $rc (kernel log: $log)"
	failed=1
fi
echo "1..$n"
exit $failed
