#!/usr/bin/env bash
# tests/vm/check-log flags every class of kernel problem the guest logs can
# show, and stays quiet on a clean boot log.  The problem lines are the
# kernel's own message formats (6.12).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
check_log=$top/tests/vm/check-log
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

clean='[    0.000000] Linux version 6.12.118-idlebatch (idlebatch@qemu-guest) #1 SMP PREEMPT
[    0.812345] smp: Brought up 1 node, 2 CPUs
[    1.034567] 9pnet_virtio: no channels available for device scratch
[    1.456789] Run /init as init process
[    2.000000] lkdtm: Performing direct entry WARNING_MESSAGE_ONLY_NOT_A_MATCH
[    3.000000] reboot: Restarting system'

n=0
expect() {	# expect clean|problem NAME LINE
	local want=$1 name=$2 line=$3 rc
	n=$((n + 1))
	{ echo "$clean"; [ -z "$line" ] || echo "$line"; } >"$dir/$name.log"
	"$check_log" "$dir/$name.log" >"$dir/$name.out" 2>&1
	rc=$?
	if { [ "$want" = clean ] && [ $rc -eq 0 ]; } ||
	   { [ "$want" = problem ] && [ $rc -eq 1 ] && grep -qF -- "${line#*] }" "$dir/$name.out"; }; then
		echo "ok $n - $name: $want"
	else
		echo "not ok $n - $name: expected $want, check-log exited $rc"
		sed 's/^/# /' "$dir/$name.out"
	fi
}

expect clean   clean-boot ''
expect problem warn-on '[    5.123456] WARNING: CPU: 1 PID: 77 at drivers/misc/lkdtm/bugs.c:110 lkdtm_WARNING+0x1e/0x30'
expect clean   user-space-trap '[   12.345678] traps: stress-ng-pthre[300] general protection fault ip:5596c2fe32f2 sp:7f79bd516d40 error:0 in stress-ng[2a32f2,5596c2d88000+50b000]'
expect problem bug-on '[    5.123456] kernel BUG at kernel/sched/core.c:1234!'
expect problem oops '[    5.123456] Oops: general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] PREEMPT SMP'
expect problem lockdep-circular '[   12.300000] WARNING: possible circular locking dependency detected'
expect problem lockdep-recursive '[   12.300000] WARNING: possible recursive locking detected'
expect problem lockdep-inconsistent '[   12.300000] WARNING: inconsistent lock state'
expect problem rcu-suspicious '[   12.300000] WARNING: suspicious RCU usage'
expect problem rcu-stall '[   45.000000] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:'
expect problem rcu-self-stall '[   45.000000] rcu: INFO: rcu_preempt self-detected stall on CPU'
expect problem rcu-tasks-stall '[   45.000000] INFO: rcu_tasks detected stalls on tasks:'
expect problem soft-lockup '[   45.000000] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [hog:123]'
expect problem hard-lockup '[   45.000000] watchdog: Watchdog detected hard LOCKUP on cpu 1'
expect problem hung-task '[   45.000000] INFO: task kworker/0:1:12 blocked for more than 61 seconds.'
expect problem atomic-sleep '[    5.000000] BUG: sleeping function called from invalid context at kernel/locking/mutex.c:585'
expect problem sched-atomic '[    5.000000] BUG: scheduling while atomic: hog/123/0x00000002'
expect problem wq-lockup '[   45.000000] BUG: workqueue lockup - pool cpus=0 node=0 flags=0x0 nice=0 stuck for 31s!'
expect problem panic '[    5.000000] Kernel panic - not syncing: dumptest'
expect problem ubsan '[    5.000000] UBSAN: shift-out-of-bounds in kernel/sched/batch.c:42:7'

n=$((n + 1))
if "$check_log" "$dir/missing.log" >/dev/null 2>&1; then
	echo "not ok $n - a missing log is not reported clean"
else
	echo "ok $n - a missing log is not reported clean"
fi
echo "1..$n"
