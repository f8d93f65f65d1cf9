#!/usr/bin/env bash
# make bench's harness, run for seconds on the test kernel (a benchmark is
# not a test: nothing here asserts a timing).  It proves that each piece
# runs and leaves what the report needs: foreground_bench and policy_bench
# in the guest (tests/bench/run-all --smoke), the tables and plots, the
# instruction counting of tests/bench/overhead (-icount, with_parked), and
# clear errors for bad input.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernel=${VM_KERNEL:-$top/build/bzImage-full}
out=$top/build/bench-smoke
n=0 failed=0

. "$top/tests/lib/tap.sh"

echo "TAP version 13"
if [ ! -f "$kernel" ]; then
	echo "1..1"
	echo "not ok 1 - no kernel at $kernel (make kernel)"
	exit 1
fi
make -s -C tests BUILD="$top/build" >/dev/null || { echo "1..1"; echo "not ok 1 - the test programs do not build"; exit 1; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
VM_KERNEL=$kernel tests/bench/run-all --smoke "$out" >"$log" 2>&1
rc=$?
sed 's/^/# /' "$log" | tail -n 25
ok $rc "run-all --smoke finishes"

# results.csv: both baselines, and each (foreground, background, peer) cell
# with a share of idle time between 0 and 1
python3 - "$out/results.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def has(fg, bg, peer, key, rep="1"):
    return [float(r["value"]) for r in rows if (r["fg"], r["bg"], r["peer"], r["key"], r["rep"]) ==
            (fg, bg, peer, key, rep)]
bad = []
for rep in ("1", "2"):
    if not has("duty", "none", "none", "duty_stretch", rep):
        bad.append(f"no baseline {rep}")
if not has("alone", "CPU spinners", "SCHED_IDLE", "bg_units_per_s"):
    bad.append("no background-alone row")
for peer in ("SCHED_IDLE", "SCHED_IDLEBATCH"):
    s = has("duty", "CPU spinners", peer, "bg_share_of_idle")
    if not s or not 0 <= s[0] <= 1:
        bad.append(f"{peer}: share of idle {s}")
    if not has("duty", "CPU spinners", peer, "duty_stretch"):
        bad.append(f"{peer}: no stretch")
print("# " + ("; ".join(bad) if bad else f"{len(rows)} rows"))
sys.exit(1 if bad else 0)
PY
ok $? "results.csv has both baselines and every cell"

peers=0
for p in "nice 0" "nice 19" "SCHED_IDLE" "cpu.idle=1" "cpu.weight=1" "SCHED_IDLEBATCH"; do
	grep -q "^$p  *[0-9.]*%" "$out/policy.txt" 2>/dev/null && peers=$((peers + 1))
done
echo "# policy.txt has $peers of 6 peers"
[ $peers -eq 6 ]
ok $? "policy_bench measures every peer"

grep -q '^| CPU spinners | ' "$out/report.md" 2>/dev/null &&
	grep -q '^### The goal' "$out/report.md"
ok $? "report.md has the summary and the goal tables"

pngs=0
for f in "$out"/*.png; do
	[ -f "$f" ] && [ "$(head -c 4 "$f" | tail -c 3)" = PNG ] && pngs=$((pngs + 1))
done
echo "# $pngs PNG plots"
[ $pngs -ge 1 ] && [ -s "$out/frontier-duty.png" ]
ok $? "gnuplot drew the frontier plot"

# The overhead's instruction counting: one CPU, -icount, ten parked tasks
icount=$(tests/vm/run --kernel "$kernel" --smp 1 --icount 0 --timeout 600 -- \
	build/tests/bin/with_parked 10 -- perf bench sched pipe -l 300 2>&1)
rc=$?
echo "$icount" | grep -E 'with_parked|usecs/op' | sed 's/^/# /'
[ $rc -eq 0 ] && echo "$icount" | grep -q '10 tasks parked' && echo "$icount" | grep -q 'usecs/op'
ok $? "with_parked parks 10 tasks and perf bench runs under -icount"

tests/bench/report "$out/no-such-folder" >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "report refuses a missing folder"

build/tests/bin/foreground_bench --bg no-such --out /nonexistent >"$log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "unknown or repeated name 'no-such'" "$log"
ok $? "foreground_bench names an unknown background"

build/tests/bin/with_parked ten -- true >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "with_parked refuses a count that is not a number"

echo "1..$n"
exit $((failed > 0))
