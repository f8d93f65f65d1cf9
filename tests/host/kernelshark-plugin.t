#!/usr/bin/env bash
# The KernelShark plugin, headless: build/plugins/kernelshark-test/plugin_check
# loads it (an ASan/UBSan build) into libkshark with a real trace, runs its
# event handlers and its draw handler (tests/host/kernelshark/plugin_check.cpp)
# and prints what it found and drew.  This script works out what it should
# have found and drawn from `trace-cmd report` (no plugins) of the same
# trace, in awk, and compares.
# Usage: tests/host/kernelshark-plugin.t   (TRACE_DAT=FILE: another trace
#        than the committed fixture, e.g. a fresh one; see tests/trace/)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
trace=${TRACE_DAT:-$top/tests/fixtures/sched_batch.dat}
plugin=$top/build/plugins/kernelshark/plugin-sched_batch.so
san_plugin=$top/build/plugins/kernelshark-test/plugin-sched_batch.so
check=$top/build/plugins/kernelshark-test/plugin_check
# libkshark leaks its stream name (kshark_add_stream); nothing else is let off
export LSAN_OPTIONS=suppressions=$top/tests/host/kernelshark/lsan.supp
# a sanitizer report exits 99
export ASAN_OPTIONS=halt_on_error=1:exitcode=99 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=99
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "#   $l"; done; }
# is WHAT WANT GOT
is() { if [ "$2" = "$3" ]; then ok "$1 (${3:0:60})"; else not_ok "$1" "want: $2" "got:  $3"; fi; }

for f in "$trace" "$plugin" "$san_plugin" "$check"; do
	if [ ! -e "$f" ]; then
		echo "not ok 1 - $f is missing (make plugins)"
		echo "1..1"
		exit 1
	fi
done

# The events as trace-cmd prints them without plugins, time stamps in ns:
# park TS PID CPU NR_QUEUED | unpark TS PID CPU REASON | migrate TS PID SRC DST
report=$(mktemp)
home=$(mktemp -d)
trap 'rm -f "$report"; rm -rf "$home"' EXIT
trace-cmd report -N -t -i "$trace" 2>/dev/null | awk '
	/ sched_batch_(park|unpark|migrate): / {
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) ts = $i
		split(substr(ts, 1, length(ts) - 1), t, ".")
		ns = t[1] * 1000000000 + t[2]
		delete f
		for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) f[kv[1]] = kv[2]
		# (printf: mawk prints a number over 2^31 as %.6g, 100 us steps)
		if ($0 ~ /sched_batch_park:/)
			printf "park %.0f %s %s %s\n", ns, f["pid"], f["cpu"], f["nr_queued"]
		if ($0 ~ /sched_batch_unpark:/)
			printf "unpark %.0f %s %s %s\n", ns, f["pid"], f["cpu"], f["reason"]
		if ($0 ~ /sched_batch_migrate:/)
			printf "migrate %.0f %s %s %s\n", ns, f["pid"], f["src_cpu"], f["dst_cpu"]
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
cpu=$(awk '$1 == "migrate" { c[$4]++; c[$5]++ } END { b = 0; for (x in c) if (c[x] > m) { m = c[x]; b = x } print b }' "$report")

# The project's libtraceevent plugin for the Info column, and no copy of
# it from this user's ~/.local/lib/traceevent/plugins instead
# (standard error, with the sanitizers' reports, kept apart in $home/err)
run_check() {
	HOME=$home TRACEEVENT_PLUGIN_DIR=$top/build/plugins/traceevent \
		"$check" "$trace" "$1" "$pids" "$cpu" 2>"$home/err"
}
out=$(run_check "$san_plugin")
rc=$?
get() { echo "$out" | awk -v k="$1" 'index($0, k " ") == 1 { print substr($0, length(k) + 2); exit }'; }

if [ $rc -eq 0 ] && [ "$(get init)" = 1 ] && [ "$(get draw_handlers)" = 1 ]; then
	ok "the plugin loads into libkshark and registers its handlers (tasks $pids, cpu $cpu)"
else
	not_ok "the plugin loads into libkshark and registers its handlers" "exit status $rc" \
		"$(tail -n 20 "$home/err")"
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
	"$pairs" "$(get intervals)"
for r in picked signal pi policy; do
	is "intervals that ended with reason $r" \
		"$(awk -v r="$r" '$1 == "unpark" && $5 == r' "$report" | wc -l)" "$(get "reason $r")"
done

# Each CPU's queue replayed: known from its first park (which carries the
# length), -1 per unpark, -1/+1 per migration, never below 0.  Prints
# "max LEN" and one "point TS CPU LEN" per change, in time order.
queue=$(awk '
	function point(c, d, ts) {
		if (!(c in len)) return
		len[c] += d; if (len[c] < 0) len[c] = 0
		if (len[c] > max) max = len[c]
		printf "point %.0f %s %s\n", ts, c, len[c]
	}
	$1 == "park"    { len[$4] = $5; point($4, 0, $2) }
	$1 == "unpark"  { point($4, -1, $2) }
	$1 == "migrate" { point($4, -1, $2); point($5, 1, $2) }
	END { print "max", max + 0 }' "$report")
maxq=$(echo "$queue" | awk '$1 == "max" { print $2 }')
is "the longest idle-batch queue in the trace" "$maxq" "$(get max_queue)"

# What each view should show, from the report: a line per task graph (the
# bins its boxes cover, per colour), the CPU graph's marks and queue line
expect_view() {	# NAME MIN MAX BIN_SIZE N_BINS
	{ echo "$queue"; cat "$report"; } | awk -v view="$1" -v lo="$2" -v hi="$3" -v bs="$4" \
		-v nb="$5" -v pids="$pids" -v cpu="$cpu" -v maxq="$maxq" '
	function bin(ts, b) { b = int((ts - lo) / bs); return b > nb - 1 ? nb - 1 : b }
	function cover(p, colour, from, to, b0, b1, b) {
		if (from > hi || to < lo) return
		b0 = from < lo ? 0 : bin(from); b1 = to > hi ? nb - 1 : bin(to)
		for (b = b0; b <= b1; b++) on[p, colour, b] = 1
	}
	function ranges(key, b, s, first) {
		s = ""; first = -1
		for (b = 0; b <= nb; b++) {
			if (b < nb && (key, b) in set) { if (first < 0) first = b; continue }
			if (first >= 0) { s = s (s == "" ? "" : ",") first "-" (b - 1); first = -1 }
		}
		return s == "" ? "-" : s
	}
	BEGIN { split(pids, want, ","); for (i in want) task[want[i]] = 1 }
	$1 == "point" && $3 == cpu {
		if ($2 < lo) carry = $4
		else if ($2 <= hi) val[bin($2)] = $4
	}
	$1 == "park" && ($3 in task) {
		if ($3 in start) cover($3, "other", start[$3], $2)	# its unpark was lost
		start[$3] = $2
	}
	$1 == "unpark" && ($3 in task) {
		c = $5 ~ /^(picked|signal|pi|policy)$/ ? $5 : "other"
		cover($3, c, ($3 in start) ? start[$3] : -1e30, $2); delete start[$3]
	}
	$1 == "migrate" && $2 >= lo && $2 <= hi {
		if ($4 == cpu) mark["out", bin($2)] = 1
		if ($5 == cpu) mark["in", bin($2)] = 1
	}
	END {
		for (p in start) cover(p, "still_parked", start[p], 1e30)
		split("other pi picked policy signal still_parked", colours, " ")
		for (i = 1; i in want; i++) {
			p = want[i]; line = "task " view " " p
			for (k = 1; k <= 6; k++) {
				delete set
				for (b = 0; b < nb; b++) if ((p, colours[k], b) in on) set[colours[k], b] = 1
				r = ranges(colours[k])
				if (r != "-") line = line " " colours[k] " " r
			}
			print line
		}
		delete set; for (k in mark) { split(k, kb, SUBSEP); set[kb[1], kb[2]] = 1 }
		print "marks " view " " cpu " in " ranges("in") " out " ranges("out")
		first = -1; s = ""; cur = (carry == "") ? -1 : carry
		for (b = 0; b < nb; b++) {
			if (b in val) cur = val[b]
			if (cur < 0) continue
			if (first < 0) first = b
			up = int(38 * cur / maxq)	# as the plugin scales it to pixels
			s = s (s == "" ? "" : ",") int((up * maxq + 37) / 38)
		}
		print "queue " view " " cpu " " (first < 0 || maxq <= 0 ? "-" : first " " s)
	}'
}

views=$(echo "$out" | awk '$1 == "view"')
[ -n "$views" ] || not_ok "the views were drawn" "$(echo "$out" | tail -n 3)"
while read -r _ name lo hi bs nb; do
	want=$(expect_view "$name" "$lo" "$hi" "$bs" "$nb")
	while IFS= read -r line; do
		set -- $line
		key="$1 $2 $3"
		got=$(echo "$out" | awk -v k="$key" '$1 " " $2 " " $3 == k { print; exit }')
		case $1 in
		task)  what="view $name ($lo..$hi ns), task $3: its boxes cover the bins of its parked intervals, in their reasons' colours" ;;
		marks) what="view $name, cpu $3: a mark in each bin with a migration in or out" ;;
		queue) what="view $name, cpu $3: the queue line follows the replayed queue length" ;;
		esac
		if [ "$got" = "$line" ]; then
			ok "$what"
		else
			not_ok "$what" "want: ${line:0:300}" "got:  ${got:0:300}"
		fi
	done <<<"$want"
done <<<"$views"

bad=$(echo "$out" | grep '^shape FAIL')
if [ -z "$bad" ]; then
	ok "every shape is a box, mark or line inside its graph, with a width"
else
	not_ok "every shape is a box, mark or line inside its graph, with a width" "$bad"
fi
first=$(echo "$out" | grep -E '^(parks|unparks|migrations|intervals|reason|max_queue) ' | paste -sd' ')
again=$(echo "$out" | grep '^reload ' | sed 's/^reload //' | paste -sd' ')
is "loading the entries again (as KernelShark does on a new filter): the same data, nothing kept from before" \
	"$first" "$again"
# (all but libkshark's line that names the file it loads)
prod=$(run_check "$plugin" | grep -v '^loading plugin')
if [ "$prod" = "$(echo "$out" | grep -v '^loading plugin')" ]; then
	ok "the installed build of the plugin draws the same as the sanitized one"
else
	not_ok "the installed build of the plugin draws the same as the sanitized one" \
		"$(diff <(echo "$out" | grep -v '^loading plugin') <(echo "$prod") | head -n 5)"
fi
echo "1..$n"
