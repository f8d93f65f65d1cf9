#!/usr/bin/env bash
# Render KernelShark with the sched_batch plugins on a trace under Xvfb (no
# display needed) and save a screenshot: the two tasks parked most often
# and the two CPUs with the most balancer migrations.  `make screenshot`
# writes docs/kernelshark-sched_batch.png for the README.
# Usage: scripts/kernelshark-screenshot.sh [TRACE.dat [OUT.png]]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
trace=$(realpath "${1:-$top/tests/fixtures/sched_batch.dat}")
out=$(realpath -m "${2:-$top/docs/kernelshark-sched_batch.png}")
plugin=$top/build/plugins/kernelshark/plugin-sched_batch.so

for cmd in kernelshark xvfb-run xwd xwdtopnm pnmtopng; do
	command -v "$cmd" >/dev/null ||
		{ echo "screenshot: $cmd is missing: run 'scripts/deps.sh --gui' as root" >&2; exit 1; }
done
[ -f "$plugin" ] || { echo "screenshot: $plugin is missing: run 'make plugins'" >&2; exit 1; }

# The busiest tasks and CPUs, from the trace itself
events=$(trace-cmd report -N -i "$trace" 2>/dev/null)
pids=$(echo "$events" | grep -o 'sched_batch_park: .* pid=[0-9]*' | grep -o 'pid=[0-9]*$' |
	cut -d= -f2 | sort | uniq -c | sort -rn | head -n 2 | awk '{ print $2 }' | paste -sd,)
cpus=$(echo "$events" | grep -oE '(src|dst)_cpu=[0-9]+' | cut -d= -f2 |
	sort | uniq -c | sort -rn | head -n 2 | awk '{ print $2 }' | sort -n | paste -sd,)
[ -n "$pids" ] || { echo "screenshot: $trace has no sched_batch_park events" >&2; exit 1; }

# A private cache folder: as root KernelShark otherwise waits on a warning
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
printf '[General]\nnoRootWarn=true\n' >"$cache/setting.ini"
mkdir -p "$(dirname "$out")"
export KS_USER_CACHE_DIR=$cache TRACEEVENT_PLUGIN_DIR=$top/build/plugins/traceevent
export XDG_RUNTIME_DIR=$cache OUT=$out TRACE=$trace PLUGIN=$plugin PIDS=$pids CPUS=${cpus:-0}
xvfb-run -a -s "-screen 0 1400x1000x24" bash -c '
	kernelshark -geometry 1400x1000+0+0 -p "$PLUGIN" --pid "$PIDS" --cpu "$CPUS" "$TRACE" \
		>"$KS_USER_CACHE_DIR/log" 2>&1 &
	ks=$!
	# Loaded and drawn: the log says so, then give the graphs a moment
	for _ in $(seq 60); do
		grep -qs Loading "$KS_USER_CACHE_DIR/log" && break
		sleep 0.5
	done
	sleep 5
	xwd -root -silent | xwdtopnm 2>/dev/null | pnmtopng >"$OUT"
	kill $ks'
echo "screenshot: $out (tasks $pids, CPUs ${cpus:-0})"
