#!/usr/bin/env bash
# Background work started the ways real machines start it, on the
# distribution's kernel (build/bzImage-distro: namespaces and cgroup v2,
# which the test kernel lacks): an OCI container run by crun, through an
# entrypoint wrapper and through a createRuntime hook, and systemd units
# (ExecStart through setbatch, CPUSchedulingPolicy=8, a transient unit
# from systemd-run).  tests/distro/in-guest-services does the work.
# Usage: tests/distro/services.t   (DISTRO_KERNEL=FILE boots FILE)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernel=${DISTRO_KERNEL:-$top/build/bzImage-distro}
echo "TAP version 13"
missing=""
[ -f "$kernel" ] || missing="no distribution kernel at $kernel: run 'make kernel-distro' first"
[ -x build/tools/setbatch ] || missing="no build/tools/setbatch: run 'make tools' first"
for cmd in crun /lib/systemd/systemd systemd-run; do
	command -v "$cmd" >/dev/null || missing="$cmd is missing: run 'scripts/deps.sh --distro'"
done
if [ -n "$missing" ]; then
	echo "1..1"
	echo "not ok 1 - $missing"
	exit 1
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
tests/vm/run --kernel "$kernel" --smp 2 --timeout 600 --log "$top/build/vm/distro-services.log" \
	-- tests/distro/in-guest-services build/tools/setbatch | tee "$out" | grep -E '^(ok|not ok|#)'
vm_rc=${PIPESTATUS[0]}
n=$(grep -cE '^(not )?ok [0-9]+' "$out")
plan=$(grep -oE '^1\.\.[0-9]+' "$out" | tail -n1 | cut -d. -f3)
n=$((n + 1))
if [ "$vm_rc" -eq 0 ] && [ -n "$plan" ] && [ "$plan" -eq $((n - 1)) ]; then
	echo "ok $n - the guest ran every check and its kernel log is clean"
else
	echo "not ok $n - the guest ended with status $vm_rc after $((n - 1)) of ${plan:-?} checks (log: build/vm/distro-services.log)"
fi
echo "1..$n"
! grep -qE '^not ok' "$out" && [ "$vm_rc" -eq 0 ]
