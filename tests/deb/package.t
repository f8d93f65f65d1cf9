#!/usr/bin/env bash
# make deb's packages, built from the small test configuration (so that
# it fits in minutes, not hours): the linux-image package is unpacked, its
# kernel boots in the guest, and that kernel has the idle-batch release,
# the policy, /proc/batchstat and the sched_batch events.  Builds the
# packages first when build/deb/ has none (scripts/deb-build.sh, about
# as long as a cold test-kernel build); DEB_REBUILD=1 always does.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
n=0 failed=0 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/tests/lib/tap.sh"
echo "TAP version 13"

image=$(ls build/deb/linux-image-*.deb 2>/dev/null | grep -v -- -dbg_ | head -n 1)
if [ -z "$image" ] || [ "${DEB_REBUILD:-0}" = 1 ]; then
	scripts/deb-build.sh build build/obj-full/.config 2>&1 | tail -n 12 | sed 's/^/# /'
	image=$(ls build/deb/linux-image-*.deb 2>/dev/null | grep -v -- -dbg_ | head -n 1)
fi
[ -n "$image" ]
ok $? "make deb built a linux-image package: ${image:-none}"
[ -n "$image" ] || { echo "1..$n"; exit 1; }

package=$(dpkg-deb -f "$image" Package) version=$(dpkg-deb -f "$image" Version)
[[ $package == linux-image-*-idlebatch ]] && [[ $package != *idlebatch*idlebatch* ]]
ok $? "its name says it is the idle-batch kernel, once: $package"
[[ $version == *idlebatch* ]]
ok $? "so does its version: $version"
ls build/deb/linux-libc-dev_*.deb >/dev/null 2>&1
ok $? "linux-libc-dev is built beside it"
! ls build/deb/*-dbg_*.deb >/dev/null 2>&1
ok $? "no debug-symbol package"

dpkg-deb -x "$image" "$tmp/root"
kernel=$(ls "$tmp"/root/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$kernel" ]
ok $? "the package holds a kernel: ${kernel#"$tmp"/root}"
release=${kernel##*/vmlinuz-}
[ -f "$tmp/root/boot/config-$release" ] && grep -qx 'CONFIG_SCHED_IDLEBATCH=y' "$tmp/root/boot/config-$release"
ok $? "and its configuration, with CONFIG_SCHED_IDLEBATCH=y"

out=$tmp/guest.out
tests/vm/run --kernel "$kernel" --smp 2 --timeout 300 --log "$top/build/vm/kernel-deb.log" -- bash -c '
	echo "release=$(uname -r)"
	head -n 1 /proc/batchstat | sed "s/^/batchstat=/"
	echo "events=$(ls /sys/kernel/tracing/events/sched_batch | tr "\n" " ")"
	'"$top"'/build/tools/setbatch -- awk "{ print \"policy=\" \$41 }" /proc/self/stat
	' >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
ok $rc "the packaged kernel boots in the guest and its log is clean (status $rc)"
grep -qx "release=$release" "$out"
ok $? "it runs as $release"
grep -q '^batchstat=' "$out"
ok $? "it has /proc/batchstat"
grep -q '^events=.*sched_batch_park' "$out"
ok $? "it has the sched_batch events"
grep -qx 'policy=8' "$out"
ok $? "setbatch runs a command under policy 8 on it"

echo "1..$n"
echo "# tests/deb/package.t: $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
