#!/usr/bin/env bash
# Suites written by others with idle-batch workers, in a guest on the test
# kernel: stress-ng's scheduler-relevant stressors on idle CPUs and next to
# normal hogs, then rt-tests' pi_stress and cyclictest next to idle-batch
# work (tests/stress/mix).  make check runs a short version; make stress
# runs the long one (STRESS_SECONDS, each stressor alone too, 4 CPUs) on
# each preemption model's kernel.
# Usage: tests/kernel/stress.t [MIX-OPTIONS...]   (default: tests/stress/short,
#   each run STRESS_SHORT_SECONDS long, default 6)
#   STRESS_APPEND=ARGS adds ARGS to the guest kernel's command line (make
#   stress: preempt=MODEL on a PREEMPT_DYNAMIC kernel)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernel=${VM_KERNEL:-$top/build/bzImage-full}
smp=${STRESS_SMP:-2}
# Without arguments, the short version (tests/stress/short).
if [ $# -gt 0 ]; then
	cmd=("$top/tests/stress/mix" "$@")
else
	cmd=("$top/tests/stress/short" ${STRESS_SHORT_SECONDS:-})
fi
append=${STRESS_APPEND:-}
tag=${append//[^a-z0-9=]/_}
log=$top/build/vm/kernel-stress-$(basename "$kernel")${tag:+-$tag}.log

echo "TAP version 13"
echo "# guest: $smp CPUs, kernel $kernel"
[ -z "$append" ] || echo "# kernel command line adds: $append"
# The guest's time limit: 3000 s, or for --sequential (each of the mix's
# 25 stressors alone too, in both modes) two minutes a run more than its
# seconds, since a slow or busy host stretches each run's end.
timeout=3000
if [[ " $* " == *" --sequential "* ]]; then
	secs=10
	for ((i = 1; i < $#; i++)); do
		[ "${!i}" = --seconds ] && { j=$((i + 1)); secs=${!j}; }
	done
	timeout=$((600 + 2 * 26 * (secs + 120)))
fi
exec "$top/tests/vm/tap-run" --kernel "$kernel" --smp "$smp" --timeout "$timeout" --log "$log" \
	${append:+--append "$append"} -- "${cmd[@]}"
