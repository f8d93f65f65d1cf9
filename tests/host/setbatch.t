#!/usr/bin/env bash
# setbatch on the host: argument parsing, messages and exit statuses, the
# policy names of --show, the message on a kernel without SCHED_IDLEBATCH,
# and the man page.  The tool is the ASan/UBSan build; any sanitizer report
# fails.  (Its behaviour on a kernel with the policy is tested in the guest.)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tool=$top/build/tools/sanitized/setbatch
export ASAN_OPTIONS=detect_leaks=1:exitcode=99 UBSAN_OPTIONS=halt_on_error=1:exitcode=99
n=0 out="" err="" rc=0
tmp=$(mktemp -d)
bg=()
trap 'kill "${bg[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT

ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
run() { "$tool" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; out=$(cat "$tmp/out"); err=$(cat "$tmp/err"); }
# expect RC TEXT DESCRIPTION -- ARGS...: exit status RC and TEXT in its output
expect() {
	local want=$1 text=$2 what=$3
	shift 4
	run "$@"
	if grep -q 'AddressSanitizer\|runtime error\|LeakSanitizer' "$tmp/err"; then
		notok "$what: a sanitizer report" "$err"
	elif [ "$rc" -ne "$want" ]; then
		notok "$what: exit status $want" "got $rc" "stdout: $out" "stderr: $err"
	elif ! printf '%s\n%s\n' "$out" "$err" | grep -qF -- "$text"; then
		notok "$what: says '$text'" "stdout: $out" "stderr: $err"
	else
		ok "$what"
	fi
}

if [ ! -x "$tool" ]; then
	echo "not ok 1 - $tool is built (make tools)"
	echo "1..1"
	exit 1
fi

expect 0 "Usage: setbatch" "--help prints the usage" -- --help
expect 0 "setbatch 1.0 (SCHED_IDLEBATCH = 8)" "--version" -- --version
expect 2 "no command to run" "no arguments: usage error" --
expect 2 "no PID given" "-p without a PID" -- -p
expect 2 "from -20 to 19, not '20'" "-n 20 is refused" -- -n 20 -- true
expect 2 "not 'x'" "-n x is refused" -- -n x -- true
expect 2 "'abc' is not a PID" "-p abc is refused" -- -p abc
expect 2 "Try 'setbatch --help'" "an unknown option" -- --frobnicate
expect 2 "-n makes no sense" "--show with -n" -- -q -n 3 $$
expect 0 "pid $$: SCHED_OTHER, nice" "--show names SCHED_OTHER" -- -q $$

chrt -i 0 sleep 60 & bg+=($!); idle=$!
chrt -b 0 sleep 60 & bg+=($!); batch=$!
chrt -R -b 0 sleep 60 & bg+=($!); reset=$!
nice -n 7 sleep 60 & bg+=($!); niced=$!
sleep 0.2
expect 0 "pid $idle: SCHED_IDLE, nice 0" "--show names SCHED_IDLE" -- -q "$idle"
expect 0 "pid $batch: SCHED_BATCH, nice 0" "--show names SCHED_BATCH" -- -q "$batch"
expect 0 "SCHED_BATCH|SCHED_RESET_ON_FORK" "--show marks SCHED_RESET_ON_FORK" -- -q "$reset"
expect 0 "nice 7" "--show gives the nice value" -- -q "$niced"
if [ "$(id -u)" = 0 ]; then
	chrt -f 10 sleep 60 & bg+=($!); fifo=$!
	sleep 0.2
	expect 0 "pid $fifo: SCHED_FIFO" "--show names SCHED_FIFO" -- -q "$fifo"
else
	ok "--show names SCHED_FIFO # SKIP not root: cannot start a SCHED_FIFO task"
fi
expect 0 "pid $idle: SCHED_IDLE" "--show with several PIDs shows each" -- -q "$$" "$idle"
pid_max=$(cat /proc/sys/kernel/pid_max)
gone=$((pid_max + 1))
expect 1 "pid $gone: no such process" "--show of no such process: status 1" -- -q "$gone"
expect 1 "pid $gone: no such process" "-a of no such process: status 1" -- -a -q "$gone"
expect 1 "pid $gone: no such process" "--reset of no such process: status 1" -- --reset "$gone"

# The host kernel is a stock one: it has no SCHED_IDLEBATCH.
if ! grep -q . /proc/batchstat 2>/dev/null; then
	expect 3 "this kernel has no SCHED_IDLEBATCH" "running a command on a kernel without the policy: status 3" -- -- true
	expect 3 "CONFIG_SCHED_IDLEBATCH=y" "the message says how to get the policy" -- -- true
	expect 3 "this kernel has no SCHED_IDLEBATCH" "the 2002 form, setbatch PID, on such a kernel" -- "$niced"
	expect 3 "this kernel has no SCHED_IDLEBATCH" "-p on such a kernel" -- -p "$niced" "$batch"
	run -q "$niced"
	if printf '%s' "$out" | grep -q "nice 7"; then ok "the task was left as it was"; else notok "the task was left as it was" "$out"; fi
else
	for w in "status 3 on a kernel without the policy" "the message" "setbatch PID" "-p" "task left as it was"; do
		ok "$w # SKIP this host kernel has SCHED_IDLEBATCH; the guest tests cover it"
	done
fi

# The static build (for container images): linked statically, and the
# same tool
static=$top/build/tools/static/setbatch
if [ -x "$static" ] && file -bL "$static" | grep -q 'statically linked' &&
	[ "$("$static" --version 2>&1)" = "$("$top/build/tools/setbatch" --version 2>&1)" ]; then
	ok "build/tools/static/setbatch is statically linked and says the same version"
else
	notok "build/tools/static/setbatch is statically linked and says the same version" \
		"$(file -bL "$static" 2>&1)" "$("$static" --version 2>&1)"
fi

# The man page renders without warnings.
if w=$(groff -man -Tutf8 -ww -z "$top/tools/setbatch.8" 2>&1) && [ -z "$w" ]; then
	ok "setbatch.8 renders without warnings"
else
	notok "setbatch.8 renders without warnings" "$w"
fi
echo "1..$n"
