#!/usr/bin/env bash
# Unprivileged abuse: abusers of user nobody storm kernel resources a normal
# task needs (fork/exit, a shared mm's mmap_lock, a file's flock and POSIX
# locks, a FIFO, plain and PI futexes) as nice-19 tasks and as idle-batch
# tasks, in one run, interleaved; the normal task's worst stall next to the
# idle-batch ones must stay within nice 19's, every kill must be quick and
# no abuser may be left (tests/bench/abuse_bench.c).  make check runs the
# short version (1 s cells, 3 rounds, 2 CPUs); ABUSE_SECONDS, ABUSE_ROUNDS
# and ABUSE_SMP make a longer one (make abuse).
# Usage: tests/kernel/abuse.t [ABUSE_BENCH-OPTIONS...]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernel=${VM_KERNEL:-$top/build/bzImage-full}
smp=${ABUSE_SMP:-2}
bench=$top/build/tests/bin/abuse_bench
log=$top/build/vm/kernel-abuse.log

if [ $# -gt 0 ]; then
	args=("$@")
elif [ -n "${ABUSE_SECONDS:-}${ABUSE_ROUNDS:-}" ]; then
	args=(-s "${ABUSE_SECONDS:-3}" -r "${ABUSE_ROUNDS:-5}")
else
	args=(--short)
fi
# The guest's bound: 7 kinds x 3 peers per round, each cell its probing
# time (rounded up) plus about 3 s to start, warm up and kill under TCG,
# and the boot.  --short is 5 rounds of 0.75 s; the bench's defaults 5 of 3 s.
seconds=3 rounds=5
[ "${args[0]}" = --short ] && seconds=1
for ((i = 0; i < ${#args[@]}; i++)); do
	case "${args[$i]}" in
	-s | --seconds)
		v=${args[$((i + 1))]:-}
		[[ $v =~ ^[0-9]+(\.[0-9]*)?$ ]] && seconds=$((${v%.*} + 1)) ;;
	-r | --rounds)
		v=${args[$((i + 1))]:-}
		[[ $v =~ ^[0-9]+$ ]] && rounds=$v ;;
	esac
done
timeout=$((21 * rounds * (seconds + 3) + 300))

echo "TAP version 13"
echo "# guest: $smp CPUs, kernel $kernel, abuse_bench ${args[*]} (timeout ${timeout} s)"
if [ ! -f "$kernel" ]; then
	echo "1..1"
	echo "not ok 1 - no kernel at $kernel (make kernel)"
	exit 1
fi
if [ ! -x "$bench" ]; then
	echo "1..1"
	echo "not ok 1 - no $bench (make -C tests)"
	exit 1
fi
exec "$top/tests/vm/tap-run" --kernel "$kernel" --smp "$smp" --timeout "$timeout" --log "$log" -- \
	"$bench" "${args[@]}"
