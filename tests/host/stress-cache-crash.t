#!/usr/bin/env bash
# stress-ng 0.15.06's start-up crash beside CPU hotplug
# (tests/stress/verdicts.sh, cache_listing_crash): one read of a CPU-cache
# attribute that fails with ENODEV, as it does when the CPU goes offline
# between the open and the read, makes Debian 12's stress-ng segfault at
# the instruction the soak saw (stress-ng+0x65bc6), on the host's own
# kernel, with no idle-batch task; without the failed read it runs.  The
# verdict calls that crash, and only it, a void run.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/stress/verdicts.sh"
n=0 failed=0 skipped=0 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$top/tests/lib/tap.sh"
skip() {
	n=$((n + 1)) skipped=$((skipped + 1))
	echo "ok $n - $1 # SKIP $2"
}

echo "TAP version 13"
if ! command -v stress-ng >/dev/null; then
	echo "1..1"
	echo "not ok 1 - stress-ng is not installed (make deps)"
	exit 1
fi
echo "# $(stress-ng --version)"
bin=$(command -v stress-ng)
sum=$(sha256sum "$bin")
debian=0
[ "${sum%% *}" = "$debian12_stress_ng_sha256" ] && debian=1
gcc -std=gnu11 -Wall -Wextra -Werror -O2 -shared -fPIC -o "$tmp/enodev.so" \
	"$top/tests/stress/sysfs-enodev.c" -ldl
ok $? "the failed-read shim builds"

# The soak's crash line, as its guest logged it
soak_line='[ 1204.527131] stress-ng[4290]: segfault at f8c98ef30 ip 0000560f71305bc6 sp 00007fffd0238e50 error 4 in stress-ng[65bc6,560f712e8000+50b000] likely on CPU 2 (core 2, socket 0)'
attr=/sys/devices/system/cpu/cpu0/cache/index0/type
run() {	# LOG [env...]: one short stress-ng run; its status in $rc
	local log=$1
	shift
	# (the braces keep bash's "Segmentation fault" out of the TAP's stderr)
	{ (cd "$tmp" && env "$@" timeout -k 5 60 stress-ng --yield 1 -t 1s -v --temp-path "$tmp") >"$log" 2>&1; } 2>/dev/null
	rc=$?
}
if [ $debian -eq 0 ]; then
	skip "stress-ng crashes on one failed read" "not Debian 12's stress-ng 0.15.06 build (sha256 ${sum%% *}): the crash is that build's"
elif [ ! -r "$attr" ]; then
	skip "stress-ng crashes on one failed read" "this machine has no $attr to fail"
else
	run "$tmp/plain.log"
	ok "$rc" "without the shim, stress-ng runs (exit status $rc)"
	grep -q 'yield: started' "$tmp/plain.log"
	ok $? "and says its stressor started (-v)"
	run "$tmp/enodev.log" LD_PRELOAD="$tmp/enodev.so"
	ok $((rc == 139 ? 0 : 1)) "with one read of $attr failing with ENODEV, it dies of SIGSEGV (exit status $rc, 139 expected)"
	grep -q 'dispatching hogs' "$tmp/enodev.log" && ! grep -q 'yield: started\|successful run' "$tmp/enodev.log"
	ok $? "at start-up, before its stressor started"
	# The main process's pid, from its first line ("invoked with ...")
	pid=$(sed -nE 's/^stress-ng: [a-z]+: +\[([0-9]+)\].*/\1/p' "$tmp/enodev.log" | head -n 1)
	line=$(dmesg 2>/dev/null | grep -F "stress-ng[${pid:-none}]: " | stress_ng_crashes | tail -n 1)
	if [ -z "$line" ]; then
		skip "the kernel logged the crash at stress-ng+0x65bc6" "the host's kernel log is not readable here, or not logged"
	else
		echo "# $line"
		[[ $line == *"in stress-ng[65bc6,"* ]]
		ok $? "the kernel logged the crash at stress-ng+0x65bc6, the soak's instruction"
		cache_listing_crash 139 "$line" >/dev/null
		ok $? "which the verdict calls a void run"
	fi
fi

# The verdict on the soak's line
if [ $debian -eq 0 ]; then
	skip "the verdict on the soak's crash line" "not Debian 12's stress-ng build"
else
	why=$(cache_listing_crash 139 "$soak_line")
	ok $? "the soak's crash (status 139, its main process at stress-ng+0x65bc6) is a void run: $why"
	cache_listing_crash 2 "$soak_line" >/dev/null
	ok $((! $?)) "not with another exit status (2)"
	cache_listing_crash 139 "${soak_line/stress-ng\[4290\]/stress-ng-pipe[4291]}" >/dev/null
	ok $((! $?)) "not when a worker (stress-ng-pipe) crashed"
	cache_listing_crash 139 "${soak_line/65bc6/65bd3}" >/dev/null
	ok $((! $?)) "not at another instruction"
	cache_listing_crash 139 "$soak_line
[ 1204.6] traps: stress-ng-fork[4300] trap invalid opcode ip:55 sp:7ff error:0 in stress-ng[48000+50b000]" >/dev/null
	ok $((! $?)) "not with another crash beside it"
	cache_listing_crash 139 "" >/dev/null
	ok $((! $?)) "not with no crash logged"
	(debian12_stress_ng_sha256=0000 && cache_listing_crash 139 "$soak_line") >/dev/null
	ok $((! $?)) "not from another stress-ng binary"
	cache_listing_crash 139 "${soak_line/f8c98ef30/560f8c98ef30}" >/dev/null
	ok $((! $?)) "not at an address with its byte 5 intact (not the corrupted pointer)"
	# The mix's verdict on a run: void only if each of its stress-ng died so
	# and none reported
	printf 'stress-ng: info:  [4290] dispatching hogs: 1 fork\n' >"$tmp/void.log"
	void_run 139 "" "$soak_line" "$tmp/void.log" >/dev/null
	ok $? "a run whose one stress-ng died so, with no report, is void"
	void_run 139 139 "$soak_line
${soak_line/4290/4291}" "$tmp/void.log" >/dev/null
	ok $? "and one whose two (root's and nobody's) both did"
	void_run 139 0 "$soak_line" "$tmp/void.log" >/dev/null
	ok $((! $?)) "not one whose other stress-ng ran (root's died, nobody's ended 0)"
	void_run 0 139 "$soak_line" "$tmp/void.log" >/dev/null
	ok $((! $?)) "nor the other way round"
	printf 'stress-ng: metrc: [4290] fork  120 10.0 0 0 0 0 0 0\n' >>"$tmp/void.log"
	void_run 139 "" "$soak_line" "$tmp/void.log" >/dev/null
	ok $((! $?)) "not one whose report has metrics (a stressor reported)"
	void_run "" "" "$soak_line" "$tmp/void.log" >/dev/null
	ok $((! $?)) "not one with no stress-ng at all"
fi
# The crash lines the mix reads, in both of the kernel's formats
lines=$(printf '%s\n' "$soak_line" \
	"[  88.1] traps: stress-ng-pthr[77] general protection fault ip:5 sp:7 error:0 in stress-ng[66000,5+50b000]" \
	"[  88.2] stress-ngx[78]: segfault at 0 ip 0 sp 0 error 4" "[  88.3] bash[79]: segfault at 0 ip 0 sp 0 error 4")
[ "$(stress_ng_crashes <<<"$lines" | crashed_comms | paste -sd' ')" = "stress-ng stress-ng-pthr" ]
ok $? "the mix finds stress-ng's segfault and trap lines and their names, and no one else's"

echo "1..$n"
echo "# tests/host/stress-cache-crash.t: $((n - failed - skipped)) passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
