#!/usr/bin/env bash
# The policy's concurrent fuzzer (tests/fuzz/idlebatch_fuzz.c), short
# version for make check: a fixed seed, so a failure here reproduces with
# the command it prints; make fuzz runs it longer with new seeds.
# FUZZ_SEED and FUZZ_SECONDS override the defaults (7 and 30).
exec "$(dirname "$0")/../fuzz/run" --seed "${FUZZ_SEED:-7}" --seconds "${FUZZ_SECONDS:-30}" --smp 4
