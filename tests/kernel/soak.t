#!/usr/bin/env bash
# The soak: the fuzzer, stress-ng rounds with idle-batch workers, a CPU
# hotplug storm and a normal-task latency probe together in a 4-CPU guest
# on the debug kernel (tests/soak/in-guest), with a summary.  make check
# runs 2 minutes with a fixed seed; make soak DURATION=S SEED=N runs longer.
# SOAK_SECONDS and SOAK_SEED override the defaults (120 and 11);
# SOAK_BASELINE=1 runs the same soak without the policy (no idle-batch
# task), to tell the kernel's behaviour under the load from the policy's.
# make soak runs it on the test kernel with RCU priority boosting
# (tests/config/rcu-boost.config says why); make check on the test kernel.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernel=${VM_KERNEL:-$top/build/bzImage-full}
seconds=${SOAK_SECONDS:-120} seed=${SOAK_SEED:-11}
baseline=() log=$top/build/vm/kernel-soak.log
if [ "${SOAK_BASELINE:-0}" = 1 ]; then
	baseline=(baseline) log=$top/build/vm/kernel-soak-baseline.log
fi

echo "TAP version 13"
echo "# soak: $seconds s, seed $seed, kernel $kernel (reproduce: SOAK_SECONDS=$seconds SOAK_SEED=$seed${baseline:+ SOAK_BASELINE=1} VM_KERNEL=$kernel tests/kernel/soak.t)"
if ! tests/fuzz/run --build-only >/dev/null; then
	echo "1..1"
	echo "not ok 1 - the fuzzer builds"
	exit 1
fi
# The soak's bounds assume the host to itself: beside a kernel build on
# this 2-core host, the baseline soak stalled RCU and overran its stress
# round as the policy's did.  The host's load average says which it had.
echo "# host load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
# The fuzzer's tracing switches need single-threaded TCG (tests/fuzz/run)
"$top/tests/vm/tap-run" --kernel "$kernel" --smp 4 --single-thread --timeout $((seconds + 1200)) \
	--log "$log" -- "$top/tests/soak/in-guest" "$seconds" "$seed" "${baseline[@]}"
rc=$?
echo "# host load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
exit $rc
