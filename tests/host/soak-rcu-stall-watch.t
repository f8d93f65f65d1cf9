#!/usr/bin/env bash
# The soak's RCU stall watcher (tests/soak/rcu-stall-watch) on a made-up
# kernel log, /proc and cgroup tree: for each task a stall report names
# as blocked in a read-side section it writes the task's policy, nice,
# CPU and idle-batch state, the tasks runnable on that CPU and the
# cgroup chain with each level's cpu.weight, cpu.idle and cpu.max.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
n=0 failed=0 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$top/tests/lib/tap.sh"
# task PID TID COMM STATE NICE CPU POLICY BATCHSTAT: a made-up thread
task() {
	local d=$tmp/proc/$1/task/$2 f=() i
	mkdir -p "$d"
	for ((i = 4; i <= 52; i++)); do f+=(0); done
	f[19 - 4]=$5 f[39 - 4]=$6 f[41 - 4]=$7
	echo "$2 ($3) $4 ${f[*]}" >"$d/stat"
	echo "$8" >"$d/batchstat"
	echo "0::/fuzz/g1" >"$d/cgroup"
	if [ "$1" = "$2" ]; then cp "$d/stat" "$d/batchstat" "$d/cgroup" "$tmp/proc/$1/"; fi
}

echo "TAP version 13"
# The reader: a SCHED_IDLE thread of process 100, preempted on CPU 2
task 100 100 "main" S 0 0 0 "- 0 0"
task 100 101 "my (odd) reader" R 0 2 5 "- 0 0"
# On CPU 2 too: a nice -20 hog and a parked idle-batch task; elsewhere
# or asleep: two more
task 200 200 "hog" R -20 2 0 "- 0 0"
task 300 300 "batch" R 0 2 8 "P 4 1000"
task 400 400 "other-cpu" R 0 1 0 "- 0 0"
task 500 500 "asleep" S 0 2 0 "- 0 0"
mkdir -p "$tmp/cg/fuzz/g1"
echo 1 >"$tmp/cg/fuzz/g1/cpu.weight"; echo 1 >"$tmp/cg/fuzz/g1/cpu.idle"; echo "max 100000" >"$tmp/cg/fuzz/g1/cpu.max"
echo 100 >"$tmp/cg/fuzz/cpu.weight"; echo 0 >"$tmp/cg/fuzz/cpu.idle"; echo "50000 100000" >"$tmp/cg/fuzz/cpu.max"
{
	echo "6,10,1000,-;random: crng init done"
	printf '3,57,2000,-;rcu: \tTasks blocked on level-0 rcu_node (CPUs 0-3): P101/1:b..l P999\n'
	printf '3,56,2001,-;rcu: \tTasks blocked on level-0 rcu_node (CPUs 0-3): P200\n'
} >"$tmp/kmsg"
RCU_WATCH_KMSG=$tmp/kmsg RCU_WATCH_PROC=$tmp/proc RCU_WATCH_CGROUP=$tmp/cg \
	timeout 20 "$top/tests/soak/rcu-stall-watch" "$tmp/out"
ok $? "it reads a log to its end and exits (a file, not /dev/kmsg)"
sed 's/^/# /' "$tmp/out"
body=$(cut -d' ' -f2- "$tmp/out")
want="stall 101 my_(odd)_reader state R policy 5 nice 0 cpu 2 batch - 0 0
runnable 2 101 my_(odd)_reader policy 5 nice 0 batch - 0 0
runnable 2 200 hog policy 0 nice -20 batch - 0 0
runnable 2 300 batch policy 8 nice 0 batch P 4 1000
cgroup 101 /fuzz/g1 weight 1 idle 1 max max/100000
cgroup 101 /fuzz weight 100 idle 0 max 50000/100000
cgroup 101 / weight - idle - max -
stall 999 gone"
ok $([ "$body" = "$want" ] && echo 0 || echo 1) \
	"the blocked thread, found under its process; the runnable tasks of its CPU; its cgroup chain; a task gone"
[ "$body" = "$want" ] || diff <(echo "$want") <(echo "$body") | sed 's/^/# /'
ok $(awk '{ print $1 }' "$tmp/out" | grep -qvE '^[0-9]{13}$' && echo 1 || echo 0) "every line is stamped in ms since the epoch"
ok $(grep -q ' 200 hog state' "$tmp/out" && echo 1 || echo 0) "a record numbered below one already seen is not reported again"
echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
exit $((failed > 0))
