#!/usr/bin/env bash
# The in-guest tests for the options the main test kernel leaves off
# (tests/kernel/variant/*.c), on the variant kernel, booted with
# nohz_full=1 so that the nohz_full tests have their CPU.
exec "$(dirname "$0")/on-variant" variant GUEST_APPEND="nohz_full=1 ${GUEST_APPEND:-}" -- "$@"
