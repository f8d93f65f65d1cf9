#!/usr/bin/env bash
# batchtop's batch and JSON output from recorded /proc snapshots (--replay):
# golden frames, a newer batchstat version, missing fields, no CPUs, tasks
# that come and go, filters, a kernel without the policy, bad options.  The
# tool is the ASan/UBSan build; any sanitizer report fails.
# Golden files: tests/host/batchtop/*.expected (UPDATE=1 rewrites them).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tool=$top/build/tools/sanitized/batchtop
golden=$top/tests/host/batchtop
export ASAN_OPTIONS=detect_leaks=1:exitcode=99 UBSAN_OPTIONS=halt_on_error=1:exitcode=99
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do printf '%s\n' "$l" | sed 's/^/# /'; done; }

if [ ! -x "$tool" ]; then
	echo "not ok 1 - $tool is built (make tools)"; echo "1..1"; exit 1
fi

# task DIR PID TID COMM STATE UTIME STIME NICE CPU POLICY UID [BATCHSTAT]
task() {
	local d=$1/proc/$2/task/$3 f=()
	mkdir -p "$d"
	# fields 3..52 of proc(5) stat, zeros but for the ones batchtop reads
	for i in $(seq 3 52); do f[$i]=0; done
	f[3]=$5 f[14]=$6 f[15]=$7 f[19]=$8 f[39]=$9 f[41]=${10}
	echo "$3 ($4) ${f[*]:3}" >"$d/stat"
	printf 'Name:\t%s\nUid:\t%s\t%s\t%s\t%s\n' "$4" "${11}" "${11}" "${11}" "${11}" >"$d/status"
	[ -z "${12:-}" ] || echo "${12}" >"$d/batchstat"
}
cpuline() { echo "cpu$1 $2"; }

# Frame 0 and 1 of a 2-CPU machine: three idle-batch threads of two
# processes, a normal process, and a task that exits / one that starts.
mk_basic() {
	local r=$1
	mkdir -p "$r/0/proc" "$r/1/proc"
	{ echo "version 1"; echo "timestamp 1000000000"
	  cpuline 0 "2 1 995 1000 999 998 997 996 995 994 993 992 991 100 90 2 0 1 5 3 500000000 400000000"
	  cpuline 1 "0 0 10 0 0 0 0 0 0 0 0 0 100 5 5 0 0 0 0 1 0 990000000"; } >"$r/0/proc/batchstat"
	{ echo "version 1"; echo "timestamp 3000000000"
	  cpuline 0 "2 1 996 1000 1000 999 998 997 996 995 994 993 992 120 108 2 0 1 7 4 2400000000 500000000"
	  cpuline 1 "0 0 8 0 0 0 0 0 0 0 0 0 80 5 5 0 0 0 0 1 0 2990000000"; } >"$r/1/proc/batchstat"
	task "$r/0" 200 200 spin R 100 0 0 0 8 0 "R 10 2000000000"
	task "$r/1" 200 200 spin R 300 0 0 0 8 0 "R 12 2100000000"
	task "$r/0" 300 300 sim R 50 0 19 0 8 65534 "P 40 9000000000"
	task "$r/1" 300 300 sim R 50 0 19 0 8 65534 "P 40 11000000000"
	task "$r/0" 300 301 sim-worker S 10 5 19 1 8 65534 "N 3 100000000"
	task "$r/1" 300 301 sim-worker S 10 5 19 1 8 65534 "N 3 100000000"
	task "$r/0" 400 400 gone R 10 0 0 0 8 0 "P 1 1000"
	task "$r/1" 500 500 new R 0 0 0 1 8 0 "R 0 0"
	task "$r/0" 600 600 bash S 5 5 0 1 0 0 "- 0 0"
	task "$r/1" 600 600 bash S 5 5 0 1 0 0 "- 0 0"
}

# expect_golden NAME ARGS...: output equals tests/host/batchtop/NAME.expected
expect_golden() {
	local name=$1
	shift
	"$tool" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" -ne 0 ] || [ -s "$tmp/err" ]; then
		notok "$name: runs cleanly" "status $rc" "$(cat "$tmp/err")"
	elif [ "${UPDATE:-}" = 1 ]; then
		cp "$tmp/out" "$golden/$name.expected"
		ok "$name (golden file rewritten)"
	elif diff -u "$golden/$name.expected" "$tmp/out" >"$tmp/diff"; then
		ok "$name: output as expected"
	else
		notok "$name: output as expected" "$(cat "$tmp/diff")"
	fi
}

# expect_fail NAME STATUS TEXT ARGS...
expect_fail() {
	local name=$1 want=$2 text=$3
	shift 3
	"$tool" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if grep -q 'AddressSanitizer\|runtime error\|LeakSanitizer' "$tmp/err"; then
		notok "$name: a sanitizer report" "$(cat "$tmp/err")"
	elif [ "$rc" -ne "$want" ] || ! grep -qF -- "$text" "$tmp/err"; then
		notok "$name: status $want and '$text'" "status $rc" "$(cat "$tmp/err")"
	else
		ok "$name"
	fi
}

mk_basic "$tmp/basic"
expect_golden basic-text -b --replay "$tmp/basic"
expect_golden basic-json --json --replay "$tmp/basic"
if python3 -m json.tool <"$tmp/out" >/dev/null 2>&1; then ok "--json output is valid JSON"; else notok "--json output is valid JSON" "$(cat "$tmp/out")"; fi
expect_golden filter-pid -b -p 300 --replay "$tmp/basic"
expect_golden filter-user -b -u 65534 --replay "$tmp/basic"

# A thread boosted by priority inheritance (batchstat B): its row says
# boosted, and the summary counts it, in text and in JSON
cp -r "$tmp/basic" "$tmp/boost"
for f in 0 1; do echo "B 3 100000000" >"$tmp/boost/$f/proc/300/task/301/batchstat"; done
"$tool" -b --replay "$tmp/boost" >"$tmp/out" 2>"$tmp/err"
if grep -qE '^ +300 +301 nobody +19 +1 boosted ' "$tmp/out" &&
   grep -qF '(2 running, 1 parked, 0 in the kernel or asleep, 1 boosted by priority inheritance)' "$tmp/out" &&
   [ ! -s "$tmp/err" ]; then
	ok "a boosted thread: its row says boosted, and the summary counts it"
else
	notok "a boosted thread: its row says boosted, and the summary counts it" "$(cat "$tmp/out" "$tmp/err")"
fi
"$tool" --json --replay "$tmp/boost" >"$tmp/out" 2>"$tmp/err"
if python3 -c 'import json,sys; d=json.load(sys.stdin); t=[t for t in d["tasks"] if t["tid"]==301]; sys.exit(0 if t and t[0]["state"]=="boosted" else 1)' <"$tmp/out" 2>/dev/null; then
	ok "a boosted thread: --json says state boosted"
else
	notok "a boosted thread: --json says state boosted" "$(cat "$tmp/out" "$tmp/err")"
fi

# A newer batchstat: a new line and more fields per CPU; the known ones are read
cp -r "$tmp/basic" "$tmp/newer"
for f in 0 1; do
	sed -i 's/^version 1$/version 2/; s/^\(cpu[0-9].*\)$/\1 777 888/' "$tmp/newer/$f/proc/batchstat"
	echo "balancer passes 12" >>"$tmp/newer/$f/proc/batchstat"
done
"$tool" -b --replay "$tmp/basic" >"$tmp/v1" 2>&1
"$tool" -b --replay "$tmp/newer" >"$tmp/v2" 2>"$tmp/err"
if diff <(sed 's/version [12]/version N/' "$tmp/v1") <(sed 's/version [12]/version N/' "$tmp/v2") >/dev/null && [ ! -s "$tmp/err" ]; then
	ok "a newer batchstat version: the known fields are read the same"
else
	notok "a newer batchstat version: the known fields are read the same" "$(diff "$tmp/v1" "$tmp/v2")" "$(cat "$tmp/err")"
fi

# Missing fields and no CPUs
cp -r "$tmp/basic" "$tmp/short"
sed -i 's/^cpu1 .*/cpu1 3 0 500/' "$tmp/short/1/proc/batchstat"
expect_golden short-fields -b --replay "$tmp/short"
cp -r "$tmp/basic" "$tmp/nocpu"
sed -i '/^cpu/d' "$tmp/nocpu/1/proc/batchstat"
expect_golden no-cpus -b --replay "$tmp/nocpu"

expect_golden sort-cpu -b -s cpu --replay "$tmp/basic"

# The interactive view in a pseudo-terminal (script(1)): keys, the help
# screen, a resize while it runs, and q; no sanitizer report, status 0.
interactive() {	# NAME KEYS_SCRIPT COMMAND
	local name=$1 keys=$2 cmd=$3
	(eval "$keys") | TERM=xterm timeout 30 script -qfec "$cmd" "$tmp/tty" >/dev/null 2>&1
	local rc=$?
	if grep -aq 'Sanitizer\|runtime error' "$tmp/tty"; then
		notok "$name: a sanitizer report" "$(tr -d '\033' <"$tmp/tty" | grep -a -A5 'ERROR\|runtime error')"
	elif [ "$rc" -ne 0 ]; then
		notok "$name: status 0" "status $rc"
	else
		ok "$name"
	fi
}
interactive "interactive: starts, sorts, shows help, quits" \
	"sleep 2; printf s; sleep 0.5; printf h; sleep 0.3; printf x; sleep 0.3; printf q" \
	"$tool --root $tmp/basic/1 -d 0.5"
for want in "CPU  QUEUED" "sort:cpu" "this help"; do
	if grep -aqF "$want" "$tmp/tty"; then ok "interactive: the screen shows '$want'"; else notok "interactive: the screen shows '$want'"; fi
done
interactive "interactive: survives a terminal resize" \
	"sleep 3; printf q" \
	"stty cols 100 rows 30; (sleep 1; stty -F /dev/tty cols 40 rows 8; kill -WINCH \$\$) & exec $tool --root $tmp/basic/1 -d 0.3"
expect_fail "interactive needs a terminal" 2 "not a terminal" --root "$tmp/basic/1"

# -e where the events cannot be used (this host's kernel has no sched_batch,
# or the user may not use tracefs): the frame says why, and no tracefs
# instance is left behind
"$tool" -b -e -n 1 -d 0.1 --root "$tmp/basic/1" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ] && grep -q '^events: not shown: ' "$tmp/out" && ! grep -q Sanitizer "$tmp/err"; then
	ok "-e without usable events: the frame says why"
else
	notok "-e without usable events: the frame says why" "$(cat "$tmp/out" "$tmp/err")"
fi
if ls /sys/kernel/tracing/instances 2>/dev/null | grep -q '^batchtop_'; then
	notok "-e leaves no tracefs instance behind" "$(ls /sys/kernel/tracing/instances)"
else
	ok "-e leaves no tracefs instance behind"
fi

# Failures
mkdir -p "$tmp/nopolicy/0/proc"
expect_fail "a kernel without the policy: status 1 and says so" 1 "this kernel has no SCHED_IDLEBATCH" -b --replay "$tmp/nopolicy"
mkdir -p "$tmp/garbage/0/proc"; echo "hello" >"$tmp/garbage/0/proc/batchstat"
expect_fail "not a batchstat file: status 1" 1 "not a batchstat file" -b --replay "$tmp/garbage"
expect_fail "-n 0 is refused" 2 "-n needs a count" -b -n 0
expect_fail "-d 0 is refused" 2 "-d needs seconds" -b -d 0
expect_fail "-p x is refused" 2 "is not a PID" -b -p x
expect_fail "an unknown user is refused" 2 "no such user" -b -u no-such-user-here
expect_fail "an unknown option" 2 "Try 'batchtop --help'" --frobnicate
echo "1..$n"
