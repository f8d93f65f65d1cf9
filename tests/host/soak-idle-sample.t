#!/usr/bin/env bash
# The soak's idle sampler and its report (tests/soak/idle-sample,
# tests/soak/idle-report) on made-up /proc/stat and /proc/batchstat files:
# a CPU's idle time is counted only while it is online at both ends of an
# interval, and parked tasks only where they waited at both ends.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
n=0 failed=0 tmp=$(mktemp -d)
trap 'kill "$sampler" 2>/dev/null; rm -rf "$tmp"' EXIT
sampler=

. "$top/tests/lib/tap.sh"
# put NAME CONTENT: replace a made-up /proc file at once, as the kernel would
put() {
	printf "$2" >"$tmp/proc/$1.new" && mv "$tmp/proc/$1.new" "$tmp/proc/$1"
}

echo "TAP version 13"
hz=$(getconf CLK_TCK)
mkdir "$tmp/proc"
# Before: CPUs 0 and 1 online, 2 parked in CPU 0's queue
put stat "cpu  1 2 3 4 5\ncpu0 1 1 1 100 0\ncpu1 1 1 1 200 0\n"
put batchstat "version 1\ntimestamp 1\ncpu0 2 1 500\ncpu1 0 1 500\n"
IDLE_SAMPLE_PROC=$tmp/proc "$top/tests/soak/idle-sample" "$tmp/samples" &
sampler=$!
sleep 0.4
# After: CPU 0 idle 50 ticks with 1 still parked, CPU 1 idle 10 ticks with
# 3 parked there now, CPU 2 newly online
put stat "cpu  1 2 3 4 5\ncpu0 1 1 1 150 0\ncpu1 1 1 1 210 0\ncpu2 1 1 1 7 0\n"
put batchstat "version 1\ntimestamp 2\ncpu0 1 1 500\ncpu1 3 0 500\ncpu2 0 0 500\n"
for _ in $(seq 40); do
	[ -s "$tmp/samples" ] && break
	sleep 0.1
done
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
first=$(head -n 1 "$tmp/samples" | cut -d' ' -f1)
lines=$(awk -v t="$first" '$1 == t' "$tmp/samples" | sort -k2n)
echo "$lines" | sed 's/^/# /'
ok $([ "$(echo "$lines" | cut -d' ' -f2-5 | tr '\n' ';')" = "0 $((50 * 1000 / hz)) 1 2;1 $((10 * 1000 / hz)) 0 2;" ] && echo 0 || echo 1) \
	"one line per CPU online at both ends: its idle ms, parked there and anywhere (the smaller end)"
# The sampler sleeps a second between its two snapshots
interval=$(echo "$lines" | awk '{ print $6 }' | sort -u | tr '\n' ' ')
ok $([[ $interval =~ ^[0-9]+\ $ ]] && [ "${interval% }" -ge 1000 ] && [ "${interval% }" -lt 5000 ] && echo 0 || echo 1) \
	"each line ends with its interval's length in ms, the same for every CPU ($interval)"
ok $([[ $first =~ ^[0-9]{13}$ ]] && echo 0 || echo 1) "intervals are stamped in ms since the epoch ($first)"

report=$("$top/tests/soak/idle-report" "$tmp/samples" $((first - 1)) "$first")
ok $([ "$report" = "$((60 * 1000 / hz)) $((60 * 1000 / hz)) $((50 * 1000 / hz)) 1 $((2 * ${interval% }))" ] && echo 0 || echo 1) \
	"the report sums idle ms, idle ms with tasks parked anywhere and in the CPU's own queue, and the online CPUs' ms ($report)"
report=$("$top/tests/soak/idle-report" "$tmp/samples" "$first" $((first + 1000)))
ok $([ "$report" = "0 0 0 0 0" ] && echo 0 || echo 1) "an interval ending at the window's start is left out ($report)"
"$top/tests/soak/idle-report" "$tmp/samples" 1 2>/dev/null
ok $([ $? -eq 2 ] && echo 0 || echo 1) "a wrong number of arguments is refused with status 2"

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
exit $((failed > 0))
