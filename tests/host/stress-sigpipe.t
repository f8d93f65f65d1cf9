#!/usr/bin/env bash
# stress-ng 0.15.06's switch and pipe stressors and SIGPIPE (tests/stress/no-sigpipe):
# with a shim that makes the worker lose its race with its run alarm
# (tests/stress/sigpipe-race.c), Debian's stress-ng fails the way it failed
# once on the KCSAN kernel, and started through no-sigpipe, as
# tests/stress/mix starts it, it does not.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
n=0 failed=0 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$top/tests/lib/tap.sh"

echo "TAP version 13"
if ! command -v stress-ng >/dev/null; then
	echo "1..1"
	echo "not ok 1 - stress-ng is not installed (make deps)"
	exit 1
fi
echo "# $(stress-ng --version)"
gcc -std=gnu11 -Wall -Wextra -Werror -O2 -shared -fPIC -o "$tmp/race.so" \
	"$top/tests/stress/sigpipe-race.c" -ldl
ok $? "the race shim builds"

# switch LOG [WRAPPER...]: one 3 s run of the switch stressor under the shim
switch() {
	local log=$1
	shift
	(cd "$tmp" && LD_PRELOAD=$tmp/race.so timeout -k 5 60 "$@" stress-ng --switch 1 -t 3s \
		--metrics -v --temp-path "$tmp") >"$log" 2>&1
}

# SIGPIPE at its default, whatever this script was started with
switch "$tmp/plain.log" env --default-signal=PIPE
rc=$?
grep -E 'signal|corrupted|hash error|successful' "$tmp/plain.log" | sed 's/^/# /'
ok $((rc == 2 ? 0 : 1)) "without it, stress-ng fails (exit status $rc, 2 expected)"
grep -q '(switch) terminated on signal: 13' "$tmp/plain.log"
ok $? "because its switch worker died of SIGPIPE"
grep -q 'switch instance 0 corrupted bogo-ops counter, 1 vs 0' "$tmp/plain.log"
ok $? "and reported the KCSAN run's line: corrupted bogo-ops counter, 1 vs 0"

switch "$tmp/wrapped.log" "$top/tests/stress/no-sigpipe"
rc=$?
grep -E 'signal|corrupted|hash error|successful|switch: exited' "$tmp/wrapped.log" | sed 's/^/# /'
ok "$rc" "through tests/stress/no-sigpipe, stress-ng succeeds (exit status $rc)"
grep -q 'switch: exited' "$tmp/wrapped.log"
ok $? "and its switch worker ends normally"

# pipe's writer loses the same race: its reader starts with "stop" and
# closes its end, and the writer's first write gets EPIPE (no-sigpipe) or
# SIGPIPE.  That is the line CI saw in stress.t; tests/stress/verdicts.sh
# excuses it only from a writer that never wrote.
. "$top/tests/stress/verdicts.sh"
pipe_run() {
	local log=$1
	shift
	(cd "$tmp" && LD_PRELOAD=$tmp/race.so timeout -k 5 60 "$@" stress-ng --pipe 1 -t 3s \
		--metrics -v --temp-path "$tmp") >"$log" 2>&1
}
pipe_run "$tmp/pipe.log" "$top/tests/stress/no-sigpipe"
rc=$?
grep -E 'fail|signal|metrc: .* pipe ' "$tmp/pipe.log" | sed 's/^/# /'
grep -qxE 'stress-ng: fail: +\[[0-9]+\] pipe: write failed, errno=32 \(Broken pipe\)' "$tmp/pipe.log"
ok $? "through no-sigpipe, pipe's writer reports CI's line: write failed, errno=32 (Broken pipe) (exit status $rc)"
pipe_never_wrote "$tmp/pipe.log"
ok $? "after 0 bogo ops"
[ "$(stressor_failures "$tmp/pipe.log" pipe)" = 0 ] && [ -n "$(known_defect_why "$tmp/pipe.log" pipe)" ]
ok $? "which tests/stress/verdicts.sh calls pipe's known defect"
pipe_run "$tmp/pipe-plain.log" env --default-signal=PIPE
rc=$?
grep -q '(pipe) terminated on signal: 13' "$tmp/pipe-plain.log"
ok $? "without no-sigpipe, the same writer dies of SIGPIPE (exit status $rc)"

# tests/stress/mix starts every stress-ng through it
grep -qE '"\$top/tests/stress/no-sigpipe" .*\\$' "$top/tests/stress/mix" &&
	grep -A1 'no-sigpipe" ' "$top/tests/stress/mix" | grep -q 'stress-ng "\$@"'
ok $? "tests/stress/mix starts stress-ng through tests/stress/no-sigpipe"

echo "1..$n"
exit $((failed > 0))
