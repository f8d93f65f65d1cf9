#!/usr/bin/env bash
# tests/sanitize/kcsan-triage on KCSAN reports laid out as the guest's
# console writes them (CRLF, timestamps or none): a race between two
# functions of Linux is listed as outside the series; one where either
# access, or the caller just above it, is a function the series defines or
# changes fails; bad input is refused.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
triage=$top/tests/sanitize/kcsan-triage
tree=$top/build/linux
n=0 failed=0 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$top/tests/lib/tap.sh"
if ! git -C "$tree" rev-parse -q --verify base >/dev/null 2>&1; then
	echo "1..1"
	echo "not ok 1 - $tree with the series on the tag 'base' (make kernel-tree)"
	exit 1
fi

# report FILE TITLE-FUNCS WRITER-FRAMES READER-FRAMES [STAMP]: one report
report() {
	local f=$1 title=$2 w=$3 r=$4 stamp=${5:-}
	{
		echo "${stamp}=================================================================="
		echo "${stamp}BUG: KCSAN: data-race in $title"
		echo "${stamp}"
		echo "${stamp}write to 0xff1100003ea312a4 of 1 bytes by task 0 on cpu 0:"
		for fr in $w; do echo "${stamp} $fr+0x144/0x17d"; done
		echo "${stamp}"
		echo "${stamp}read to 0xff1100003ea312a4 of 1 bytes by interrupt on cpu 1:"
		for fr in $r; do echo "${stamp} $fr+0x86/0x34a"; done
		echo "${stamp}"
		echo "${stamp}value changed: 0x01 -> 0x00"
		echo "${stamp}=================================================================="
	} | sed 's/$/\r/' >>"$f"
}
run() { out=$("$triage" "$tree" "$1" 2>&1); rc=$?; }

report "$tmp/outside" "__tmigr_cpu_activate / tmigr_requires_handle_remote" \
	"__tmigr_cpu_activate tmigr_cpu_activate timer_clear_idle" \
	"tmigr_requires_handle_remote update_process_times tick_nohz_handler"
run "$tmp/outside"
ok $((rc != 0)) "a race between two timer-migration functions is not the series' (exit $rc)"
[[ $out == "outside: BUG: KCSAN: data-race in __tmigr_cpu_activate / tmigr_requires_handle_remote" ]]
ok $? "and it is listed as outside the series: $out"

report "$tmp/title" "task_tick_batch / update_curr" \
	"task_tick_batch sched_tick update_process_times" "update_curr task_tick_fair sched_tick" "[  12.345678] "
run "$tmp/title"
ok $((rc != 1)) "a race whose writer is task_tick_batch() (batch.c) involves the series (exit $rc)"
[[ $out == "series: "*"task_tick_batch"* ]]
ok $? "and the function is named: $out"

report "$tmp/caller" "update_curr / update_curr" \
	"update_curr idlebatch_charge_current sched_post_fork" "update_curr task_tick_fair sched_tick"
run "$tmp/caller"
ok $((rc != 1)) "a race in a helper called by a series function (the second frame) involves the series (exit $rc)"

report "$tmp/deep" "update_curr / update_curr" \
	"update_curr put_prev_entity put_prev_task_fair task_tick_batch" "update_curr task_tick_fair sched_tick"
run "$tmp/deep"
ok $((rc != 0)) "a series function only deep in the stack (fourth frame) does not make it the series' (exit $rc)"

cat "$tmp/outside" "$tmp/title" >"$tmp/both"
run "$tmp/both"
[ "$rc" = 1 ] && [ "$(grep -c '^outside: ' <<<"$out")" = 1 ] && [ "$(grep -c '^series: ' <<<"$out")" = 1 ]
ok $? "a log with both: one line each, and the series' fails it"

: >"$tmp/clean"
run "$tmp/clean"
ok $((rc != 0 || ${#out} != 0)) "a log without KCSAN reports passes silently"

run "$tmp/missing"
ok $((rc != 2)) "a log that cannot be read is refused (exit 2)"

echo "1..$n"
echo "# tests/host/kcsan-triage.t: $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
