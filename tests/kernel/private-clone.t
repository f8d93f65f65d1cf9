#!/usr/bin/env bash
# The suite must not depend on where it is cloned.  Root often clones into
# a folder only root can enter (/root, or mktemp -d's mode 0700), and the
# guest sees the checkout with the host's permissions, so a test that runs
# a tool as nobody cannot reach the tool there.  This copies the checkout
# (the files git tracks or would track, as a clone would have them) into a
# new 0700 folder, builds the tools and test programs there, and runs the
# guest tests that run tools as an unprivileged user from that copy, on the
# kernel already built here.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernel=${VM_KERNEL:-$top/build/bzImage-full}
programs=(setbatch_tool batchtop_live)
n=0 failed=0

. "$top/tests/lib/tap.sh"

echo "TAP version 13"
if [ ! -f "$kernel" ]; then
	echo "1..1"
	echo "not ok 1 - no kernel at $kernel (make kernel)"
	exit 1
fi

private=$(mktemp -d)
trap 'rm -rf "$private"' EXIT
clone=$private/checkout
mkdir "$clone"
git ls-files -z --cached --others --exclude-standard |
	tar --null -T - -cf - 2>/dev/null | tar -C "$clone" -xf -
mode=$(stat -c %a "$private")
[ -f "$clone/tests/kernel/setbatch_tool.c" ] && [ "$mode" = 700 ]
ok $? "the checkout is copied into $private (mode $mode)"

# The premise, in the guest (which sees the folder over 9p with the host's
# permissions): nobody cannot run a program in that folder
mkdir -p "$clone/build/probe" && cp /bin/true "$clone/build/probe/true"
(cd "$clone" && "$top/tests/vm/run" --kernel "$kernel" --log "$clone/build/probe/kernel.log" -- \
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "$clone/build/probe/true" >/dev/null 2>&1)
rc=$?
# 126: the shell could not execute it (Permission denied), as the tests
# run tools (popen()); 127 would be a path the guest does not see at all.
# (setpriv's own execvp() of the same path was seen to succeed there; the
# tests go through a shell, which is refused.)
[ $rc -eq 126 ]
ok $? "in the guest, nobody cannot run a program in the private folder (status $rc)"

log=$(mktemp)
trap 'rm -rf "$private" "$log"' EXIT
start=$(date +%s)
make -s -C "$clone/tools" BUILD="$clone/build" >"$log" 2>&1 &&
	make -s -C "$clone/tests" BUILD="$clone/build" \
		KSELFTEST="$top/build/linux/tools/testing/selftests" >>"$log" 2>&1
rc=$?
[ $rc -eq 0 ] || sed 's/^/# /' "$log" | tail -n 20
ok $rc "the tools and the guest tests build in the private folder ($(($(date +%s) - start)) s)"
if [ $rc -ne 0 ]; then
	echo "1..$n"
	exit 1
fi

# The guest tests, run from the copy as a user runs make check there,
# their TAP lines numbered on from here
(cd "$clone" && VM_KERNEL=$kernel GUEST_BIN=$clone/build/tests/kernel \
	tests/kernel/guest.t "${programs[@]}") >"$log" 2>&1
rc=$?
inner=0
while IFS= read -r line; do
	if [[ $line =~ ^(not ok|ok)\ [0-9]+\ -\ (.*)$ ]]; then
		n=$((n + 1))
		inner=$((inner + 1))
		echo "${BASH_REMATCH[1]} $n - private folder: ${BASH_REMATCH[2]}"
		[ "${BASH_REMATCH[1]}" = ok ] || failed=1
	elif [[ ! $line =~ ^1\.\. ]]; then
		echo "# $line"
	fi
done <"$log"
[ $inner -gt 0 ] || ok 1 "the guest tests ran from the private folder (status $rc)"
echo "1..$n"
exit $((failed > 0))
