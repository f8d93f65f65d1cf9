# Sourced by the test scripts: numbered TAP lines.  ok STATUS DESCRIPTION
# prints "ok N - DESCRIPTION" when STATUS is 0, else "not ok N - ...".
# n counts the lines and failed the failures; a script that starts its
# own counts sets them before it sources this file.  A script that exits
# with its result exits $((failed > 0)): tests/vm/run reads any status
# but 0 and 1 as the guest's failure.
n=${n:-0} failed=${failed:-0}

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
