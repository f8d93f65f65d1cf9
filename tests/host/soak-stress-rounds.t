#!/usr/bin/env bash
# The soak's stress-round verdicts (tests/soak/stress-rounds) on made-up
# rounds: a round that overran is told apart as starved only with under
# 10% of its online CPU time idle or idle-batch, and only where it failed
# no check but those a stress-ng stopped at its bound fails and logged no
# stressor failure; anything else that failed is a failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
n=0 failed=0 w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT

. "$top/tests/lib/tap.sh"
# round R RC T0_S T1_S BATCH_MS IDLE_MS_PER_CPU_SAMPLE: a round of 2 CPUs
# sampled once a second (1000 ms intervals) from T0_S to T1_S
round() {
	echo "$1 $2 $(($3 * 1000)) $(($4 * 1000)) $5" >>"$w/stress.rounds"
	for ((t = $3 + 1; t <= $4; t++)); do
		echo "$((t * 1000)) 0 $6 0 0 1000"
		echo "$((t * 1000)) 1 $6 0 0 1000"
	done >>"$w/idle.samples"
}
stopped="not ok 1 - stress-ng-idle: stress-ng ended by its own timeout (10s) within 240s more: 269 s
not ok 2 - stress-ng-idle: stress-ng reports no failure (exit status 124)
not ok 3 - stress-ng-idle: fork ran and did not fail
ok 4 - stress-ng-idle: no stress-ng task is left
ok 5 - stress-ng-idle: the workers ran with the policy (idlebatch)"

echo "TAP version 13"
round 1 0 100 110 500 100; echo "ok 1 - all fine" >"$w/stress-1.out"
# 2: 20 s of 2 CPUs = 40000 ms online, 200 ms idle + 300 ms idle-batch
round 2 1 200 220 300 5; echo "$stopped" >"$w/stress-2.out"
# 3: as starved, but a stress-ng task was left
round 3 1 300 320 300 5; echo "${stopped/ok 4/not ok 4}" >"$w/stress-3.out"
# 4: as starved, but a stressor logged a failure
round 4 1 400 420 300 5; printf '%s\n# stress-ng: fail: [812] fork: fork failed\n' "$stopped" >"$w/stress-4.out"
# 5: stopped with 25% idle: 250 ms of each CPU's 1000
round 5 1 500 520 0 250; echo "$stopped" >"$w/stress-5.out"
# 6: stopped, and no sample covers it
echo "6 1 600000 620000 0" >>"$w/stress.rounds"; echo "$stopped" >"$w/stress-6.out"
# 7: failed for another reason: stress-ng reported failures (status 2)
round 7 1 700 720 0 5; echo "not ok 1 - stress-ng-idle: stress-ng reports no failure (exit status 2)" >"$w/stress-7.out"
# 8: starved, and pipe's line is one the mix found to be only stress-ng's known defect
excused="ok 6 - stress-ng-idle: pipe did not fail but for a known defect: pipe's writer ..."
epipe="# stress-ng: fail:  [96] pipe: write failed, errno=32 (Broken pipe)"
round 8 1 800 820 300 5; printf '%s\n%s\n%s\n' "$stopped" "$excused" "$epipe" >"$w/stress-8.out"
# 9: as 8, but fork's failure is not excused
round 9 1 900 920 300 5
printf '%s\n%s\n%s\n# stress-ng: fail:  [97] fork: fork failed\n' "$stopped" "$excused" "$epipe" >"$w/stress-9.out"
# 10: pipe's line without the mix excusing it
round 10 1 1000 1020 300 5; printf '%s\n%s\n' "$stopped" "$epipe" >"$w/stress-10.out"
# 11: void: stress-ng died starting, of its own known defect (the mix's skip)
voidline="ok 1 - stress-ng-idle: void run # SKIP stress-ng 0.15.06's main process crashed at start-up"
round 11 0 1100 1110 0 5; printf '%s\nok 2 - stress-ng-idle: no stress-ng task is left\n' "$voidline" >"$w/stress-11.out"
# 12: void, but a stress-ng task was left
round 12 1 1200 1210 0 5
printf '%s\nnot ok 2 - stress-ng-idle: no stress-ng task is left (left: /proc/99)\n' "$voidline" >"$w/stress-12.out"
# 13-15: starved, but a worker segfaulted (the mix prints the kernel's
# line), the kernel left crash lines out, or a worker caught a fault
round 13 1 1300 1320 300 5
printf '%s\n# [ 99.1] stress-ng-fork[812]: segfault at 0 ip 1 sp 2 error 4 in stress-ng[48000,5+50b000]\n' "$stopped" >"$w/stress-13.out"
round 14 1 1400 1420 300 5
printf '%s\n# [ 99.2] show_signal_msg: 4 callbacks suppressed\n' "$stopped" >"$w/stress-14.out"
round 15 1 1500 1520 300 5
printf '%s\n# stress-ng: info:  [813] stressor terminated with unexpected signal SIGILL\n' "$stopped" >"$w/stress-15.out"

out=$("$top/tests/soak/stress-rounds" "$w")
echo "$out" | sed 's/^/# /'
verdict() { grep "^# stress round $1 (" <<<"$out" | sed -E 's/^# stress round [0-9]+ \(([^,]*).*/\1/'; }
ok $([ "$(verdict 1)" = ok ] && echo 0 || echo 1) "a round that passed is ok"
ok $([ "$(verdict 2)" = overran ] && grep -q "round 2 (overran, starved: 1.2% " <<<"$out" && echo 0 || echo 1) \
	"stopped at its bound with 1.2% of its online time idle or idle-batch, and nothing else failed: starved"
ok $([ "$(verdict 3)" = FAILED ] && echo 0 || echo 1) "starved, but a stress-ng task was left: failed"
ok $([ "$(verdict 4)" = FAILED ] && echo 0 || echo 1) "starved, but a stressor logged a failure: failed"
ok $([ "$(verdict 5)" = FAILED ] && echo 0 || echo 1) "stopped with 25% idle time: failed"
ok $([ "$(verdict 6)" = FAILED ] && echo 0 || echo 1) "stopped, with no sample to tell its idle time: failed"
ok $([ "$(verdict 7)" = FAILED ] && echo 0 || echo 1) "stress-ng's own failure (status 2): failed, however starved"
ok $([ "$(verdict 8)" = overran ] && echo 0 || echo 1) "starved, with only a failure line the mix excused as stress-ng's known defect: starved"
ok $([ "$(verdict 9)" = FAILED ] && echo 0 || echo 1) "starved, with an excused line and another stressor's failure: failed"
ok $([ "$(verdict 10)" = FAILED ] && echo 0 || echo 1) "starved, with the same line not excused by the mix: failed"
ok $([ "$(verdict 11)" = "void: stress-ng 0.15.06's main process crashed at start-up" ] && echo 0 || echo 1) \
	"a run the mix calls void is void, with its reason"
ok $([ "$(verdict 12)" = FAILED ] && echo 0 || echo 1) "void, but a stress-ng task was left: failed"
ok $([ "$(verdict 13)" = FAILED ] && echo 0 || echo 1) "starved, but a worker segfaulted: failed"
ok $([ "$(verdict 14)" = FAILED ] && echo 0 || echo 1) "starved, but the kernel left crash lines out: failed"
ok $([ "$(verdict 15)" = FAILED ] && echo 0 || echo 1) "starved, but a worker caught a fault (stress-ng's 'unexpected signal'): failed"
ok $([ "$(tail -n 1 <<<"$out")" = "rounds 15 11 2 1" ] && echo 0 || echo 1) "the counts: 15 rounds, 11 failed, 2 starved, 1 void"
ok $(grep -q "round 2: not ok 2 - stress-ng-idle: stress-ng reports no failure" <<<"$out" && echo 0 || echo 1) \
	"a round that did not pass lists its failed checks"
"$top/tests/soak/stress-rounds" 2>/dev/null
ok $([ $? -eq 2 ] && echo 0 || echo 1) "no WORK folder is refused with status 2"
echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
exit $((failed > 0))
