#!/usr/bin/env bash
# The test bed's own behaviour: tests/vm/run boots the kernel just built,
# with the CPUs asked for, passes the command's exit status through, keeps
# host paths valid, and fails the run when the guest panics, hangs past
# its timeout, dies, or logs a kernel WARNING.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
run=tests/vm/run
kernel=${VM_KERNEL:-$top/build/bzImage-full}
obj=$(dirname "$(dirname "$(dirname "$(dirname "$(readlink -f "$kernel")")")")")
lkdtm=/sys/kernel/debug/provoke-crash/DIRECT
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

n=0
check() {	# check DESCRIPTION COMMAND...
	local desc=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
	fi
}
# vm NAME ARGS...: run the guest, keeping stdout+stderr in $out/NAME and
# the exit status in $out/NAME.rc
vm() {
	local name=$1
	shift
	"$run" --log "$out/$name.log" "$@" >"$out/$name" 2>&1
	echo $? >"$out/$name.rc"
	sed 's/^/# /' "$out/$name"
}
rc_is() { [ "$(cat "$out/$1.rc")" = "$2" ]; }
says() { grep -q -- "$2" "$out/$1"; }

# 1. A normal run: identity of the kernel, CPUs, host paths and scratch.
marker=$RANDOM$RANDOM
sc=$out/scratch
vm basic --smp 3 --scratch "$sc" -- bash -c '
	echo "uname-r=$(uname -r)"
	echo "uname-v=$(uname -v)"
	echo "cpus=$(nproc) online=$(cat /sys/devices/system/cpu/online)"
	zcat /proc/config.gz >"$VM_SCRATCH/config"
	cat /proc/lockdep_stats >"$VM_SCRATCH/lockdep_stats"
	echo "pwd=$(pwd) init-sum=$(sha1sum <"'"$top"'/tests/vm/init")"
	echo '"$marker"' >"$VM_SCRATCH/written"
	echo "substituted=$(cat <(echo yes) 2>&1)"'
check "a clean run exits 0" rc_is basic 0
check "the guest runs the kernel just built (uname -r)" \
	says basic "uname-r=$(cat "$obj/include/config/kernel.release")"
check "the guest runs the kernel just built (uname -v build stamp)" \
	says basic "uname-v=$(sed -n 's/.*UTS_VERSION "\(.*\)"/\1/p' "$obj/include/generated/utsversion.h")"
check "--smp 3 gives the guest 3 CPUs" says basic "cpus=3 online=0-2"
check "the command runs in the host's current folder, host files at their host paths" \
	says basic "pwd=$top init-sum=$(sha1sum <tests/vm/init)"
check "/proc/config.gz in the guest is the .config just built" cmp -s "$sc/config" "$obj/.config"
check "the guest kernel has lockdep (PROVE_LOCKING) on" grep -q 'lock-classes' "$sc/lockdep_stats"
check "the scratch folder is writable from the guest" grep -qx "$marker" "$sc/written"
check "bash's process substitution works in the guest (/dev/fd)" says basic "substituted=yes"

# 2. Exit status and output pass through.
vm status --topology sockets=1,cores=1,threads=2 -- sh -c '
	echo streamed-output
	echo "siblings=$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)"
	exit 7'
check "the command's exit status (7) passes through" rc_is status 7
check "the command's output is streamed" says status streamed-output
check "--topology threads=2 makes CPUs 0 and 1 SMT siblings" says status "siblings=0-1"

# 2b. All vCPUs in one host thread (the QEMU race that option avoids is in
# tests/vm/run --help): still all CPUs, still the command's status.
vm single --smp 3 --single-thread -- sh -c 'echo "cpus=$(nproc)"; exit 5'
check "--single-thread boots 3 CPUs and passes the exit status (5) through" \
	eval 'rc_is single 5 && says single "cpus=3"'

# 2c. --disk: a virtio disk with ext4, mounted at $VM_DISK, writable.
vm disk --disk 64 -- sh -c '
	echo "fstype=$(stat -f -c %T "$VM_DISK") dev=$(awk -v d="$VM_DISK" "\$2 == d { print \$1 }" /proc/mounts)"
	dd if=/dev/zero of="$VM_DISK/f" bs=1M count=4 conv=fsync 2>/dev/null && echo wrote'
check "--disk 64 mounts an ext4 file system of /dev/vda at \$VM_DISK, writable" \
	eval 'rc_is disk 0 && says disk "fstype=ext2/ext3 dev=/dev/vda" && says disk wrote'
"$run" --disk 10 -- true >"$out/baddisk" 2>&1
echo $? >"$out/baddisk.rc"
check "a --disk below 64 MiB is refused with status 125" \
	eval 'rc_is baddisk 125 && says baddisk "at least 64"'

# 3. Injected failures are reported.
vm warn -- sh -c "echo WARNING > $lkdtm; exit 0"
check "a kernel WARNING fails the run (status 122) although the command succeeded" rc_is warn 122
check "the WARNING is shown" says warn "WARNING:"

vm panic -- sh -c "echo PANIC > $lkdtm; sleep 30"
check "a guest kernel panic fails the run (status 125)" rc_is panic 125
check "the panic is reported as such" says panic "panicked"

vm hang --timeout 25 -- sleep 600
check "a guest that hangs past --timeout fails the run (status 124)" rc_is hang 124
check "the timeout is reported" says hang "timed out"

vm die -- sh -c 'echo o > /proc/sysrq-trigger; sleep 30'
check "a guest that powers off before the command ends fails the run (status 125)" rc_is die 125
check "the early death is reported" says die "died before the command finished"

# 4. Bad usage is refused up front.
"$run" --smp x -- true >"$out/usage" 2>&1
echo $? >"$out/usage.rc"
check "a bad --smp value is refused with status 125" rc_is usage 125
check "the refusal says what is wrong" says usage "positive number"
"$run" --topology threads=two -- true >"$out/topo" 2>&1
echo $? >"$out/topo.rc"
check "a bad --topology value is refused with status 125" rc_is topo 125
check "the refusal names the accepted form" says topo "NAME=N"

echo "1..$n"
