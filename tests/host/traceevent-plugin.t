#!/usr/bin/env bash
# The libtraceevent plugin for the sched_batch events (trace-cmd report).
#
# Without a kernel: build/plugins/traceevent-test/plugin_check parses the
# events' formats (tests/host/traceevent/formats/), loads the plugin, builds
# records field by field and compares each line the plugin prints with the
# expected one (every decision, reason, kind and queue, unknown values,
# rounding, the raw and ns options, short records, a missing field, a newer
# layout, a big-endian trace); under ASan/UBSan, with the plugin built with
# them too, then once more with the plugin as installed.
#
# On a real trace, with trace-cmd: the plugin registers, every sched_batch
# line is in its form, every value in it agrees with the kernel's raw fields
# (report -R), the counts equal those without plugins (-N), the options are
# listed (list -O) and work, and, on the fixture, the lines equal the
# golden file tests/host/traceevent/fixture.expected (UPDATE=1 rewrites it).
#
# Usage: tests/host/traceevent-plugin.t [TRACE.dat]
#        (or TRACE_DAT=FILE: another trace than the committed fixture,
#        e.g. a fresh one; see tests/trace/)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/host/traceevent
fixture=$top/tests/fixtures/sched_batch.dat
trace=${1:-${TRACE_DAT:-$fixture}}
plugin_dir=$top/build/plugins/traceevent
test_dir=$top/build/plugins/traceevent-test
check=$test_dir/plugin_check
src=$top/plugins/traceevent/plugin_sched_batch.c
export ASAN_OPTIONS=detect_leaks=1:exitcode=99 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=99
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Only the plugin under test: libtraceevent also loads the plugins in
# ~/.local/lib/traceevent/plugins, after $TRACEEVENT_PLUGIN_DIR's, and the
# last one loaded for an event wins; so trace-cmd and plugin_check run with
# an empty HOME.  (A copy installed system-wide loads first, and loses.)
unset TRACEEVENT_PLUGIN_DIR
isolated() { HOME=$tmp/home "$@"; }
n=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do printf '%s\n' "$l" | sed 's/^/#   /'; done; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# Number the "ok - ..." / "not ok - ..." lines of a checker; pass "# " lines
numbered() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) notok "${line#not ok - }" ;;
		"#"*) echo "$line" ;;
		esac
	done <"$1"
}

# built FILE SOURCE: FILE is there and not older than SOURCE
built() {
	[ -e "$1" ] && [ ! "$1" -ot "$2" ] && return
	echo "not ok 1 - $1 is built from the current source (make plugins)"
	echo "1..1"
	exit 1
}
built "$plugin_dir/plugin_sched_batch.so" "$src"
built "$test_dir/sanitized/plugin_sched_batch.so" "$src"
built "$check" "$here/plugin_check.c"
if [ ! -r "$trace" ]; then
	echo "not ok 1 - the trace $trace can be read"
	echo "1..1"
	exit 1
fi
echo "# trace: $trace"

# --- Without a kernel ---

# The committed formats are the kernel's: the same as in the trace (but for
# the event ids, which differ from kernel to kernel)
if "$here/extract-formats" "$trace" "$tmp/formats" 2>"$tmp/err"; then
	if diff -ru -I '^ID: ' "$here/formats" "$tmp/formats" >"$tmp/diff"; then
		ok "the committed formats equal those recorded in the trace"
	else
		notok "the committed formats equal those recorded in the trace" \
			"$(head -n 40 "$tmp/diff")" \
			"(a changed ABI? the fixture's formats: tests/host/traceevent/extract-formats)"
	fi
else
	notok "the trace's sched_batch formats can be read" "$(cat "$tmp/err")"
fi

# The sanitized plugin, so that ASan sees its own reads and writes
isolated "$check" "$here/formats" "$test_dir/sanitized" >"$tmp/unit" 2>"$tmp/err"
rc=$?
numbered "$tmp/unit"
# 1: some checks failed (reported above); 99: a sanitizer report; 2: could not run
if { [ "$rc" -eq 0 ] || { [ "$rc" -eq 1 ] && grep -q '^not ok' "$tmp/unit"; }; } && [ ! -s "$tmp/err" ]; then
	ok "plugin_check (ASan/UBSan) exits cleanly"
else
	notok "plugin_check (ASan/UBSan) exits cleanly" "status $rc" "$(head -n 30 "$tmp/err")"
fi
# The plugin as installed: the same checks, one result
isolated "$check" "$here/formats" "$plugin_dir" >"$tmp/unit" 2>"$tmp/err"
rc=$?
failed=$(grep -c '^not ok' "$tmp/unit")
passed=$(grep -c '^ok' "$tmp/unit")
if [ "$rc" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; then
	ok "the plugin as built for installing passes the same $passed checks"
else
	notok "the plugin as built for installing passes the same checks" "status $rc, $failed failed" \
		"$(grep -A2 '^not ok' "$tmp/unit" | head -n 20)" "$(head -n 10 "$tmp/err")"
fi

# --- With trace-cmd, on the trace ---

report() { isolated env TRACEEVENT_PLUGIN_DIR="$plugin_dir" trace-cmd report "$@" -i "$trace"; }
events() { grep -oE ' sched_batch_[a-z_]+:' "$1" | sort | uniq -c; }

report -V >"$tmp/verbose" 2>&1
if grep -qxF "registering plugin: $plugin_dir/plugin_sched_batch.so" "$tmp/verbose"; then
	ok "trace-cmd report -V: the plugin registers"
else
	notok "trace-cmd report -V: the plugin registers" "$(grep 'registering plugin' "$tmp/verbose")"
fi
# Each event recorded in the trace gets its handler
want=$(cd "$tmp/formats" 2>/dev/null && printf '%s\n' sched_batch_* | sort)
got=$(grep -oE '^overriding event \([0-9]+\) sched_batch:sched_batch_[a-z_]+ with new print handler$' "$tmp/verbose" |
	sed -E 's/.*sched_batch:(sched_batch_[a-z_]+) .*/\1/' | sort -u)
if [ -n "$want" ] && [ "$want" = "$got" ]; then
	ok "trace-cmd report -V: the handler is set for each of the $(echo "$want" | wc -l) sched_batch events"
else
	notok "trace-cmd report -V: the handler is set for each sched_batch event" "want: ${want//$'\n'/ }" "got:  ${got//$'\n'/ }"
fi

report -t >"$tmp/plugin" 2>"$tmp/err"
report -t -R >"$tmp/raw" 2>/dev/null
report -N >"$tmp/noplugin" 2>/dev/null
report >"$tmp/plain" 2>/dev/null

# No line left in the kernel's own form
kernel_form=$(grep -E ' sched_batch_[a-z_]+: +(comm=|cpu=-?[0-9]+ nr_queued=)' "$tmp/plugin")
if [ -z "$kernel_form" ] && grep -q ' sched_batch_' "$tmp/plugin"; then
	ok "no sched_batch line is in the kernel's comm=... pid=... form"
else
	notok "no sched_batch line is in the kernel's comm=... pid=... form" "$(echo "$kernel_form" | head -n 5)"
fi

# Every line's form and values against the raw fields
python3 "$here/crosscheck.py" "$tmp/plugin" "$tmp/raw" >"$tmp/cross" 2>&1
numbered "$tmp/cross"
grep -q . "$tmp/cross" || notok "crosscheck.py runs" "$(cat "$tmp/cross")"

# The counts per event with and without plugins
if [ -n "$(events "$tmp/noplugin")" ] && [ "$(events "$tmp/plugin")" = "$(events "$tmp/noplugin")" ]; then
	ok "the count of each sched_batch event equals the one without plugins (-N): $(events "$tmp/plugin" | awk '{ printf "%s%s %s", s, $1, $2; s = ", " }' | tr -d :)"
else
	notok "the count of each sched_batch event equals the one without plugins (-N)" \
		"$(diff <(events "$tmp/noplugin") <(events "$tmp/plugin"))"
fi
# ... and the other events print exactly as with the system's plugins alone
isolated trace-cmd report -i "$trace" >"$tmp/system" 2>/dev/null
if grep -v ' sched_batch_' "$tmp/plain" | cmp -s - <(grep -v ' sched_batch_' "$tmp/system"); then
	ok "the other events print as with the system's plugins alone"
else
	notok "the other events print as with the system's plugins alone" \
		"$(diff <(grep -v ' sched_batch_' "$tmp/system") <(grep -v ' sched_batch_' "$tmp/plain") | head -n 10)"
fi

# The options: listed, and effective as a bare toggle and with values
isolated env TRACEEVENT_PLUGIN_DIR="$plugin_dir" trace-cmd list -O >"$tmp/options" 2>&1
for o in raw ns; do
	if awk -v o="$o" '/^ *plugin:/ { p = $2 } /^ *option:/ && p == "sched_batch" && $2 == o { f = 1 } END { exit !f }' "$tmp/options"; then
		ok "trace-cmd list -O lists sched_batch:$o"
	else
		notok "trace-cmd list -O lists sched_batch:$o" "$(grep -A3 sched_batch "$tmp/options")"
	fi
done
report -t -O sched_batch:raw -O sched_batch:ns >"$tmp/opts" 2>/dev/null
python3 "$here/crosscheck.py" --raw --ns "$tmp/opts" "$tmp/raw" >"$tmp/cross" 2>&1
numbered "$tmp/cross"
grep -q . "$tmp/cross" || notok "crosscheck.py --raw --ns runs" "$(cat "$tmp/cross")"
report -O sched_batch:raw=1 -O sched_batch:raw=0 >"$tmp/off" 2>/dev/null
if cmp -s "$tmp/off" "$tmp/plain"; then
	ok "-O sched_batch:raw=0 after =1: the plain lines again"
else
	notok "-O sched_batch:raw=0 after =1: the plain lines again" \
		"$(diff "$tmp/plain" "$tmp/off" | head -n 5)"
fi

# The golden lines of the fixture
grep ' sched_batch_' "$tmp/plain" >"$tmp/lines"
if [ "$(realpath "$trace")" != "$(realpath "$fixture")" ]; then
	skip "the plugin's lines equal tests/host/traceevent/fixture.expected" \
		"$trace is not the fixture; the golden file is the fixture's"
elif [ "${UPDATE:-}" = 1 ]; then
	cp "$tmp/lines" "$here/fixture.expected"
	ok "the plugin's lines of the fixture (golden file rewritten)"
elif diff -u "$here/fixture.expected" "$tmp/lines" >"$tmp/diff"; then
	ok "the plugin's lines equal tests/host/traceevent/fixture.expected ($(wc -l <"$tmp/lines") lines)"
else
	notok "the plugin's lines equal tests/host/traceevent/fixture.expected" "$(head -n 40 "$tmp/diff")"
fi

echo "1..$n"
