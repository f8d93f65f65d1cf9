#!/usr/bin/env bash
# The in-guest tests for the options the main test kernel leaves off
# (tests/kernel/variant/*.c), on the variant kernel (make kernel-variant:
# the test configuration plus tests/config/variant.config), booted with
# nohz_full=1 so that the nohz_full tests have their CPU.
top=$(cd "$(dirname "$0")/../.." && pwd)
kernel=${VM_KERNEL_VARIANT:-$top/build/bzImage-variant}
if [ ! -f "$kernel" ]; then
	echo "not ok 1 - variant kernel $kernel is missing: run 'make kernel-variant'"
	echo "1..1"
	exit 1
fi
exec env VM_KERNEL="$kernel" GUEST_APPEND="nohz_full=1 ${GUEST_APPEND:-}" \
	GUEST_BIN="$top/build/tests/kernel-variant" "$(dirname "$0")/guest.t" "$@"
