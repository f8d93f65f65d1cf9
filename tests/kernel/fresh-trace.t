#!/usr/bin/env bash
# A fresh trace in every run: record one in a 4-CPU guest on the kernel
# just built (tests/trace/record, the same script that made the committed
# fixture), then run the plugins' host tests on it (TRACE_DAT), so the
# plugins are checked against what this kernel records, not only against
# the fixture.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
trace=$top/build/trace/fresh.dat
n=0

rm -f "$trace"
if out=$("$top/tests/trace/record" "$trace" 2>&1) && [ -s "$trace" ]; then
	n=$((n + 1))
	echo "ok $n - recorded in the guest: ${out##*record: }"
else
	echo "not ok 1 - recording a trace in the guest failed"
	echo "$out" | tail -n 20 | sed 's/^/#   /'
	echo "1..1"
	exit 1
fi
for t in traceevent-plugin kernelshark-plugin; do
	script=$top/tests/host/$t.t
	if [ ! -x "$script" ]; then
		n=$((n + 1))
		echo "not ok $n - $t: $script is missing"
		continue
	fi
	out=$(TRACE_DAT=$trace "$script" 2>&1)
	rc=$?
	ran=0 failed=0
	while IFS= read -r line; do
		if [[ $line =~ ^(not ok|ok)\ [0-9]+\ -\ (.*)$ ]]; then
			n=$((n + 1)) ran=$((ran + 1))
			[ "${BASH_REMATCH[1]}" = ok ] || failed=$((failed + 1))
			echo "${BASH_REMATCH[1]} $n - $t (fresh trace): ${BASH_REMATCH[2]}"
		elif [[ $line =~ ^# ]]; then
			echo "$line"
		fi
	done <<<"$out"
	plan=$(echo "$out" | grep -oE '^1\.\.[0-9]+' | tail -n 1 | cut -d. -f3)
	# Its plan, and a failure exit only with a failed test to show for it
	if [ "$ran" -eq 0 ] || [ "${plan:-x}" != "$ran" ] || { [ $rc -ne 0 ] && [ $failed -eq 0 ]; }; then
		n=$((n + 1))
		echo "not ok $n - $t on the fresh trace: ran $ran tests of a plan of ${plan:-none}, exit status $rc"
		echo "$out" | tail -n 5 | sed 's/^/#   /'
	fi
done
echo "1..$n"
