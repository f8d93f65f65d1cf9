#!/usr/bin/env bash
# The verdicts tests/stress/mix passes on stress-ng 0.15.06's reports
# (tests/stress/verdicts.sh), on reports written the way stress-ng writes
# them: a known defect of stress-ng, alone, is accepted and said why; the
# same stressor's other failures, other stressors' failures and look-alike
# lines are not.  Each case would pass a check that accepted everything, or
# refused everything, on one side or the other.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/stress/verdicts.sh"
n=0 failed=0 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$top/tests/lib/tap.sh"
# report NAME LINE...: a stress-ng log of those lines, framed by the lines
# every run prints
report() {
	local f=$tmp/$1
	shift
	{
		echo "stress-ng: info:  [90] setting to a 6 second run per stressor"
		echo "stress-ng: info:  [90] dispatching hogs: 1 pipe, 1 mutex, 1 futex"
		printf '%s\n' "$@"
		echo "stress-ng: info:  [90] successful run completed in 6.02s"
	} >"$f"
	echo "$f"
}
pipe_defect="stress-ng: fail:  [92] pipe: termination write failed, errno=4 (Interrupted system call)"
mutex_defect="stress-ng: fail:  [95] mutex: could not create any pthreads"
aborted() { echo "stress-ng: warn:  [90] process [$2] ($1) aborted early, out of system resources"; }

# 1. The pipe defect alone, as CI saw it
log=$(report pipe-only "$pipe_defect" "$(aborted pipe 92)")
why=$(known_defects_only "$log")
ok $? "status 3 with only pipe's termination-write EINTR is accepted"
[[ $why == *pipe* ]]
ok $? "and the reason names pipe: $why"
ok "$(stressor_failures "$log" pipe)" "pipe has no failure but its known defect"
[ "$(known_defect_lines "$log" pipe | wc -l)" = 1 ]
ok $? "the known defect is found as one line of pipe's"
[ "$(known_defect_lines "$log" mutex | wc -l)" = 0 ]
ok $? "it is not counted as mutex's"

# 2. The mutex defect alone
log=$(report mutex-only "$mutex_defect" "$(aborted mutex 95)")
known_defects_only "$log" >/dev/null
ok $? "status 3 with only mutex's 'could not create any pthreads' is accepted"
ok "$(stressor_failures "$log" mutex)" "mutex has no failure but its known defect"

# 3. Both defects in one run
log=$(report both "$pipe_defect" "$mutex_defect" "$(aborted pipe 92)" "$(aborted mutex 95)")
why=$(known_defects_only "$log")
ok $? "status 3 with both known defects is accepted"
[[ $why == *mutex,pipe* ]]
ok $? "and the reason names both: $why"

# 4. A known defect next to another failure of the same stressor
log=$(report pipe-and-more "$pipe_defect" \
	"stress-ng: fail:  [92] pipe: read failed, errno=5 (Input/output error)" "$(aborted pipe 92)")
known_defects_only "$log" >/dev/null
ok $((! $?)) "a known defect does not excuse another failure of pipe's"
[ "$(stressor_failures "$log" pipe)" = 1 ]
ok $? "pipe's other failure is counted (1)"

# 5. A known defect next to another stressor's failure
log=$(report mutex-and-futex "$mutex_defect" "$(aborted mutex 95)" \
	"stress-ng: fail:  [97] futex: futex_wait returned unexpected errno 22" "$(aborted futex 97)")
known_defects_only "$log" >/dev/null
ok $((! $?)) "mutex's known defect does not excuse futex's failure"
[ "$(stressor_failures "$log" futex)" = 1 ] && [ "$(stressor_failures "$log" mutex)" = 0 ]
ok $? "futex's failure is counted, mutex's known defect is not"

# 6. A stressor aborted early without a known defect of its own
log=$(report aborted-other "$pipe_defect" "$(aborted pipe 92)" "$(aborted futex 97)")
known_defects_only "$log" >/dev/null
ok $((! $?)) "pipe's known defect does not excuse futex aborting early"

# 7. Look-alike lines are failures
log=$(report lookalike \
	"stress-ng: fail:  [93] fifo: termination write failed, errno=4 (Interrupted system call)" \
	"stress-ng: fail:  [92] pipe: termination write failed, errno=32 (Broken pipe)" \
	"stress-ng: fail:  [95] mutex: could not create any pthreads, errno=12" "$(aborted fifo 93)")
known_defects_only "$log" >/dev/null
ok $((! $?)) "look-alikes of the known lines (another stressor, another errno, more text) are not accepted"
[ "$(stressor_failures "$log" pipe)" = 1 ] && [ "$(stressor_failures "$log" mutex)" = 1 ]
ok $? "pipe's EPIPE and mutex's longer line are counted as failures"

# 8. No failure at all: status 3 then has another cause, not accepted
log=$(report clean)
known_defects_only "$log" >/dev/null
ok $((! $?)) "status 3 with no known defect in the report is not accepted"
ok "$(stressor_failures "$log" pipe)" "a clean report has no failure"

# 9. A worker killed by a signal (stress-ng -v prints it)
log=$(report signalled "stress-ng: debug: [90] process [96] (futex) terminated on signal: 11 (Segmentation fault)")
[ "$(stressor_failures "$log" futex)" = 1 ]
ok $? "a worker terminated by a signal is a failure"

# 9b. stress-ng's own check of a worker's bogo-op counter names it with its instance
log=$(report counters "stress-ng: fail:  [91] switch instance 0 corrupted bogo-ops counter, 1 vs 0" \
	"stress-ng: fail:  [91] switch instance 0 hash error in bogo-ops counter and run flag, 2809859294 vs 0" \
	"stress-ng: fail:  [91] metrics-check: stressor metrics corrupted, data is compromised")
[ "$(stressor_failures "$log" switch)" = 2 ] && [ "$(stressor_failures "$log" sw)" = 0 ]
ok $? "a corrupted counter of switch's instance 0 is switch's failure (2 lines), not another stressor's"

# 10. Status 7: only affinity's and sigsuspend's half-updated counters
warn7() { echo "stress-ng: warn:  [90] $1: WARNING: bogo-ops counter in non-ready state, metrics are untrustworthy (process may have been terminated prematurely)"; }
log=$(report metrics "$(warn7 affinity)" "$(warn7 sigsuspend)")
metrics_race_only "$log" >/dev/null
ok $? "status 7 from affinity's and sigsuspend's counters is accepted"
log=$(report metrics-other "$(warn7 affinity)" "$(warn7 switch)")
metrics_race_only "$log" >/dev/null
ok $((! $?)) "status 7 from switch's counter is not"

# 12. pipe's EPIPE from a writer whose alarm fired before it forked its
# reader (CI's report): excused only while pipe counts 0 bogo ops
epipe="stress-ng: fail:  [96] pipe: write failed, errno=32 (Broken pipe)"
metrc() { printf 'stress-ng: metrc: [90] %-20s %6s      6.02      0.00      0.00         0.00           0.00         0.00          3408\n' "$1" "$2"; }
log=$(report epipe-never-wrote "$epipe" "$(metrc pipe 0)" "$(metrc futex 51230)")
ok "$(stressor_failures "$log" pipe)" "pipe's EPIPE with 0 bogo ops is its known defect, not a failure"
why=$(known_defect_why "$log" pipe)
[[ $why == *"0 bogo ops"*c4162b471* && $why != *"second SIGALRM"* && $why != *$'\n'* ]]
ok $? "the reason given is that defect's alone, on one line: $why"
log=$(report epipe-mid-run "$epipe" "$(metrc pipe 120345)")
[ "$(stressor_failures "$log" pipe)" = 1 ] && [ -z "$(known_defect_why "$log" pipe)" ]
ok $? "pipe's EPIPE after 120345 bogo ops (a reader gone mid-run) stays a failure"
log=$(report epipe-no-metrics "$epipe")
[ "$(stressor_failures "$log" pipe)" = 1 ]
ok $? "and so does one with no metrics to show the writer never wrote"
log=$(report epipe-other-zero "$epipe" "$(metrc pipe 7)" "$(metrc futex 0)")
[ "$(stressor_failures "$log" pipe)" = 1 ]
ok $? "another stressor's 0 bogo ops does not excuse pipe's"
log=$(report epipe-reader-died "$epipe" "stress-ng: warn:  [96] pipe: WARNING: finished prematurely after just 0.60s (0.60 secs)" "$(metrc pipe 0)")
[ "$(stressor_failures "$log" pipe)" = 1 ] && [ -z "$(known_defect_why "$log" pipe)" ]
ok $? "pipe's EPIPE with 0 bogo ops from a worker that finished prematurely (a reader dead at its start, no alarm) stays a failure"
log=$(report both-pipe "$pipe_defect" "$epipe" "$(metrc pipe 0)")
why=$(known_defect_why "$log" pipe)
[ "$(stressor_failures "$log" pipe)" = 0 ] && [[ $why == *"second SIGALRM"*"; "*"0 bogo ops"* ]]
ok $? "both of pipe's known defects in one report give both reasons, joined: $why"

# 11a. The crash lines no stressor owns (the mix's "no other stress-ng
# process crashed")
crashes="[ 5.1] traps: stress-ng[123] trap invalid opcode ip:1 sp:2 error:0 in stress-ng[48000,5+50b000]
[ 5.2] stress-ng-fork[124]: segfault at 0 ip 1 sp 2 error 4 in stress-ng[48000,5+50b000]
[ 5.3] stress-ng-sigsu[125]: segfault at 0 ip 1 sp 2 error 4 in stress-ng[48000,5+50b000]
[ 5.4] stress-ng-futex[126]: segfault at 0 ip 1 sp 2 error 4 in stress-ng[48000,5+50b000]
[ 5.5] show_signal_msg: 3 callbacks suppressed"
[ "$(stress_ng_crashes <<<"$crashes" | wc -l)" = 5 ]
ok $? "the crash lines include the kernel's note of lines it left out"
left=$(unattributed_crashes "$crashes" fork sigsuspend pipe)
[ "$(echo "$left" | wc -l)" = 3 ] && grep -q 'stress-ng\[123\]' <<<"$left" && grep -q 'stress-ng-futex' <<<"$left" &&
	grep -q 'callbacks suppressed' <<<"$left"
ok $? "no stressor owns the main process's crash, another stressor's worker's, or the left-out lines; fork and sigsuspend (named stress-ng-sigsu) own theirs"
[ -z "$(unattributed_crashes "" fork)" ]
ok $? "no crash, nothing unowned"

# 11b. Every known defect has three fields, or four with a condition that
# is a function: a '|' in a reason or a regex would shift the fields
bad=
for entry in "${known_defects[@]}"; do
	fields=$(tr -cd '|' <<<"$entry" | wc -c)
	cond=${entry##*|}
	if [ "$fields" = 3 ]; then declare -F "$cond" >/dev/null || bad+="$entry "; elif [ "$fields" != 2 ]; then bad+="$entry "; fi
done
[ -z "$bad" ]
ok $? "each known defect is STRESSOR|REGEX|WHY[|CONDITION], its condition a function${bad:+: $bad}"

# 11. The guest has had no /dev/fd: no process substitution in the verdicts
! grep -n '<(' "$top/tests/stress/verdicts.sh"
ok $? "the verdicts use no process substitution"

echo "1..$n"
echo "# tests/host/stress-verdicts.t: $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
