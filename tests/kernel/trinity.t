#!/usr/bin/env bash
# trinity, the system-call fuzzer, as the unprivileged user nobody whose
# processes are all idle-batch and park behind a normal load, aimed at the
# sched_*, clone, futex, ptrace and signal calls (tests/trinity/in-guest),
# in a guest on the test kernel.  make check runs it for TRINITY_SECONDS
# (default 30); make trinity runs the long version.
# Usage: tests/kernel/trinity.t [IN-GUEST-OPTIONS...]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernel=${VM_KERNEL:-$top/build/bzImage-full}
smp=${TRINITY_SMP:-2}
if [ $# -eq 0 ]; then
	set -- --seconds "${TRINITY_SECONDS:-30}" --seed "${TRINITY_SEED:-1}"
fi
log=$top/build/vm/kernel-trinity-$(basename "$kernel").log

echo "TAP version 13"
echo "# guest: $smp CPUs, kernel $kernel"
exec "$top/tests/vm/tap-run" --kernel "$kernel" --smp "$smp" --timeout 3000 --log "$log" -- "$top/tests/trinity/in-guest" "$@"
