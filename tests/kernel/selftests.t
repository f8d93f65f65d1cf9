#!/usr/bin/env bash
# The kernel's own selftests on the test kernel, make check's short
# version: the --short subset of tests/selftests/run (futex with PI, rseq,
# membarrier, nanosleep, cgroup kill/freeze/cpusets, ptrace, sigaltstack,
# pidfd, /proc, clone3), once as usual and once with every test process
# idle-batch, in two guests.  Passes when both runs finish with a clean
# kernel log and agree on every test's and every subtest's result
# (tests/selftests/compare).  make selftests runs the whole list and
# compares with a kernel built without the policy too.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernel=${VM_KERNEL:-$top/build/bzImage-full}
results=$top/build/selftests/results
n=0 failed=0
. "$top/tests/lib/tap.sh"

echo "TAP version 13"
# Only the collections the short subset uses, without sched_ext
targets=$(sed -n '/^SHORT=(/,/^)/p' tests/selftests/run | grep -oE "[a-z0-9_]+:" | tr -d : | sort -u | tr '\n' ' ')
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
# In a folder of its own: make selftests' whole install stays as it is
install=$top/build/selftests-short/install
TARGETS=$targets SCHED_EXT=0 SELFTESTS_DIR=$top/build/selftests-short scripts/build-selftests.sh "$top/build" >"$log" 2>&1
rc=$?
tail -n 3 "$log" | sed 's/^/# /'
ok $rc "the selftests of $targets build ($(($(date +%s) - start)) s)"
if [ $rc -ne 0 ]; then
	echo "1..$n"
	exit 1
fi

for mode in normal idlebatch; do
	start=$(date +%s)
	tests/selftests/run --short --install "$install" --kernel "$kernel" "$mode" "$results/check-$mode" >"$log" 2>&1
	rc=$?
	tail -n 4 "$log" | sed 's/^/# /'
	vm=$(cat "$results/check-$mode/vm-status" 2>/dev/null || echo '?')
	ok $((rc == 0 && vm == 0 ? 0 : 1)) "the short subset ran $mode, kernel log clean ($(($(date +%s) - start)) s, guest status $vm, results in build/selftests/results/check-$mode)"
done

# The subtests whose differences are shown, not counted, each with its
# evidence (tests/selftests/excuses.sh); every other difference fails.
tests/selftests/compare-excused --subtests normal="$results/check-normal" \
	idlebatch="$results/check-idlebatch" >"$log" 2>&1
rc=$?
# One point a test: its result with every process idle-batch is the one
# it had as usual, or differs only in those subtests; then the subtests.
while read -r name res _; do
	other=$(awk -v t="$name" '$1 == t { print $2 }' "$results/check-idlebatch/results.txt" 2>/dev/null)
	if [ "$res" = "$other" ]; then
		ok 0 "$name: $res as usual and under idle-batch"
	elif awk -v t="$name" '$1 == t && $NF ~ /^(design|timing)(\/timing)?$/ { f = 1 } END { exit !f }' "$log"; then
		ok 0 "$name: $res as usual, $other under idle-batch, only in subtests excused in tests/selftests/excuses.sh (listed below)"
	else
		ok 1 "$name: $res as usual, ${other:-not run} under idle-batch"
	fi
done <"$results/check-normal/results.txt"
sed 's/^/# /' "$log" | grep -vE '^# [a-z0-9_]+:[^ ]+ +(pass|fail|skip|timeout) +(pass|fail|skip|timeout) *$'
ok $rc "every subtest has the same result under idle-batch as usual, but those excused in tests/selftests/excuses.sh (tests/selftests/compare --subtests)"
echo "1..$n"
exit $((failed > 0))
