#!/usr/bin/env bash
# The KernelShark plugin, headless: build/tests/bin/ks-plugin-check loads
# it into libkshark with a real trace, runs its event handlers and its
# draw handler (see tests/host/kernelshark/plugin_check.cpp), and this
# script compares what it found and drew with what `trace-cmd report`
# (no plugins) shows of the same trace, worked out here in awk.
# Usage: tests/host/kernelshark-plugin.t   (TRACE_DAT=FILE: another trace
#        than the committed fixture, e.g. a fresh one; see tests/trace/)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
trace=${TRACE_DAT:-$top/tests/fixtures/sched_batch.dat}
plugin=$top/build/plugins/kernelshark/plugin-sched_batch.so
check=$top/build/tests/bin/ks-plugin-check
# libkshark leaks its stream name (kshark_add_stream); nothing else is let off
export LSAN_OPTIONS=suppressions=$top/tests/host/kernelshark/lsan.supp
# a sanitizer report exits 99; 1 is left for failed geometry checks
export ASAN_OPTIONS=halt_on_error=1:exitcode=99 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=99
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "#   $l"; done; }
# is WHAT WANT GOT
is() { if [ "$2" = "$3" ]; then ok "$1 ($3)"; else not_ok "$1" "want: $2" "got:  $3"; fi; }

for f in "$trace" "$plugin" "$check"; do
	if [ ! -e "$f" ]; then
		echo "1..0 # SKIP $f is missing (make plugins tests)"
		exit 1
	fi
done

# The events as trace-cmd prints them without plugins, time stamps in ns:
# KIND TS_NS PID CPU|SRC DST REASON|NR
report=$(mktemp)
trap 'rm -f "$report"' EXIT
trace-cmd report -N -t -i "$trace" 2>/dev/null | awk '
	/ sched_batch_(park|unpark|migrate): / {
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) ts = $i
		split(substr(ts, 1, length(ts) - 1), t, ".")
		ns = t[1] * 1000000000 + t[2]
		delete f
		for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) f[kv[1]] = kv[2]
		if ($0 ~ /sched_batch_park:/)   print "park", ns, f["pid"], f["cpu"], f["nr_queued"]
		if ($0 ~ /sched_batch_unpark:/) print "unpark", ns, f["pid"], f["cpu"], f["reason"]
		if ($0 ~ /sched_batch_migrate:/) print "migrate", ns, f["pid"], f["src_cpu"], f["dst_cpu"]
	}' >"$report"
count() { awk -v k="$1" '$1 == k' "$report" | wc -l; }

# The task with the most parks, those whose interval began before the
# trace or ended with it (if any), and the CPU with the most migrations
pids=$(awk '
	$1 == "park"   { c[$3]++; if (open[$3]) odd[$3] = 1; open[$3] = 1 }
	$1 == "unpark" { if (!open[$3]) odd[$3] = 1; open[$3] = 0 }
	END { for (p in c) if (c[p] > m) { m = c[p]; b = p }
	      printf "%s", b; for (p in open) if (open[p]) odd[p] = 1
	      for (p in odd) if (p != b) printf ",%s", p; print "" }' "$report")
pid=${pids%%,*}
cpu=$(awk '$1 == "migrate" { c[$4]++; c[$5]++ } END { b = 0; for (x in c) if (c[x] > m) { m = c[x]; b = x } print b }' "$report")
# The project's libtraceevent plugin for the Info column, and no copy of
# it from this user's ~/.local/lib/traceevent/plugins instead
home=$(mktemp -d)
trap 'rm -f "$report"; rm -rf "$home"' EXIT
out=$(HOME=$home TRACEEVENT_PLUGIN_DIR=$top/build/plugins/traceevent \
	"$check" "$trace" "$plugin" "$pids" "$cpu" 2>&1)
rc=$?
get() { echo "$out" | awk -v k="$1" 'index($0, k " ") == 1 { print substr($0, length(k) + 2); exit }'; }

if [ $rc -le 1 ] && [ "$(get init)" = 1 ] && [ "$(get draw_handlers)" = 1 ]; then
	ok "the plugin loads into libkshark and registers its handlers (tasks $pids, cpu $cpu)"
else
	not_ok "the plugin loads into libkshark and registers its handlers" "exit status $rc" \
		"$(echo "$out" | tail -n 5)"
fi
info=$(get info)
if [[ $info =~ ^[^\ ]+:[0-9]+\ unparked\ on\ cpu\ [0-9]+\ after\ [0-9.]+\ ms:\  ]]; then
	ok "the Info column of an unpark is the trace-cmd plugin's line: $info"
else
	not_ok "the Info column of an unpark is the trace-cmd plugin's line" "got: $info"
fi
is "park events: the plugin's equal the report's" "$(count park)" "$(get parks)"
is "unpark events: the plugin's equal the report's" "$(count unpark)" "$(get unparks)"
is "migrations: the plugin's equal the report's" "$(count migrate)" "$(get migrations)"

# Parked intervals paired here: per task, each park opens one, the next
# unpark closes it; an unpark with none open was parked before the trace.
pairs=$(awk '
	$1 == "park"   { if (open[$3]) n++; open[$3] = 1; n++ }
	$1 == "unpark" { if (open[$3]) open[$3] = 0; else { n++; before++ } }
	END { for (p in open) still += open[p]; printf "%d %d %d\n", n, before, still }' "$report")
is "parked intervals: total, parked before the trace, still parked at its end" \
	"$pairs" "$(get intervals) $(get before_start) $(get still_parked)"
for r in picked signal pi policy; do
	is "intervals that ended with reason $r" \
		"$(awk -v r="$r" '$1 == "unpark" && $5 == r' "$report" | wc -l)" "$(get "reason $r")"
done

# Each task graph: a box per interval of the task, coloured by its reason;
# zoomed to the middle third: the boxes of the intervals that overlap it
for pid in ${pids//,/ }; do
	want=$(awk -v p="$pid" '$1 == "unpark" && $3 == p { c[$5]++; n++ }
		$1 == "park" && $3 == p { open = 1 } $1 == "unpark" && $3 == p { open = 0 }
		END { if (open) { c["still_parked"]++; n++ }
		      printf "boxes %d", n; m = split("other pi picked policy signal still_parked", k, " ")
		      for (i = 1; i <= m; i++) if (c[k[i]]) printf " %s %d", k[i], c[k[i]]; print "" }' "$report")
	got=$(get "task pid $pid" | sed -E 's/^window [0-9]+ [0-9]+ //')
	is "task $pid's graph: one box per parked interval, in its reason's colour" "$want" "$got"

	read -r lo hi <<<"$(get "zoom pid $pid" | awk '{ print $2, $3 }')"
	want=$(awk -v p="$pid" -v lo="$lo" -v hi="$hi" '
		$3 != p { next }
		$1 == "park"   { start = $2; open = 1 }
		$1 == "unpark" { if (!open) start = 0; if (start <= hi && $2 >= lo) n++; open = 0 }
		END { if (open && start <= hi) n++; print n + 0 }' "$report")
	got=$(get "zoom pid $pid" | awk '{ print $5 }')
	is "task $pid zoomed in ($lo..$hi ns): boxes for the intervals that overlap the view" "$want" "$got"
done

# The CPU graph: a mark per migration in and out, and the queue line
want=$(awk -v c="$cpu" '$1 == "migrate" { i += $5 == c; o += $4 == c }
	END { printf "in %d out %d", i, o }' "$report")
is "cpu $cpu's graph: a mark for every migration in and out" "$want" "$(get "cpu $cpu" | awk '{ print $2, $3, $4, $5 }')"
parked_here=$(awk -v c="$cpu" '$1 == "park" && $4 == c' "$report" | wc -l)
lines=$(get "cpu $cpu" | awk '{ print $7 }')
if [ "$parked_here" -gt 0 ] && [ "$lines" = 1 ] && [ "$(get "cpu $cpu" | awk '{ print $11 }')" = 0 ]; then
	ok "cpu $cpu's graph: one queue-length line and nothing else"
else
	not_ok "cpu $cpu's graph: one queue-length line and nothing else" "parks there: $parked_here" \
		"$(get "cpu $cpu")"
fi
max_nr=$(awk '$1 == "park" && $5 > m { m = $5 } END { print m + 0 }' "$report")
if [ "$(get max_queue)" -ge "$max_nr" ] 2>/dev/null; then
	ok "the longest queue ($(get max_queue)) is at least the longest a park event saw ($max_nr)"
else
	not_ok "the longest queue is at least the longest a park event saw" "park events: $max_nr" \
		"plugin: $(get max_queue)"
fi
if echo "$out" | grep -qx "geometry ok"; then
	ok "every box spans its interval's bins, above the graph's base"
else
	not_ok "every box spans its interval's bins, above the graph's base" \
		"$(echo "$out" | grep 'geometry FAIL')"
fi
echo "1..$n"
