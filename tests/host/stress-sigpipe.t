#!/usr/bin/env bash
# stress-ng 0.15.06's switch stressor and SIGPIPE (tests/stress/no-sigpipe):
# with a shim that makes the worker lose its race with its run alarm
# (tests/stress/sigpipe-race.c), Debian's stress-ng fails the way it failed
# once on the KCSAN kernel, and started through no-sigpipe, as
# tests/stress/mix starts it, it does not.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
n=0 failed=0 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

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

# tests/stress/mix starts every stress-ng through it
grep -qE '"\$top/tests/stress/no-sigpipe" .*\\$' "$top/tests/stress/mix" &&
	grep -A1 'no-sigpipe" ' "$top/tests/stress/mix" | grep -q 'stress-ng "\$@"'
ok $? "tests/stress/mix starts stress-ng through tests/stress/no-sigpipe"

echo "1..$n"
exit $((failed > 0))
