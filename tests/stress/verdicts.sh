# Sourced by tests/stress/mix: the verdicts on a stress-ng 0.15.06 report
# (Debian 12's) that tell a defect of stress-ng, fixed upstream, from a
# failure of the kernel.  tests/host/stress-verdicts.t tests them on the
# host with the reports CI saw.  No process substitution: the guest may
# have no /dev/fd.

# Exit status 7 (EXIT_METRICS_UNTRUSTWORTHY) is not a failure of the
# kernel or of a stressor: a bogo-op counter was left half-updated. In
# stress-ng 0.15.06, affinity and sigsuspend share one counter between
# sibling processes and the first to stop kills the others with SIGKILL,
# so a sibling preempted in user space inside the update window dies
# there (upstream sends SIGALRM first since V0.15.08, commit b7e4527f9).
# Any policy that keeps a preempted task waiting (idle-batch, SCHED_IDLE,
# nice 19 behind hogs) widens that window. Accept 7 only when every such
# warning names one of those stressors; print why. LOG
metrics_race_only() {
	local names bad
	names=$(sed -nE 's/.*\] ([a-z]+): WARNING: bogo-ops counter in non-ready state.*/\1/p' "$1" | sort -u)
	[ -n "$names" ] || return 1
	bad=$(echo "$names" | grep -vxE 'affinity|sigsuspend')
	[ -z "$bad" ] || return 1
	echo "status 7 is only $(echo $names | tr ' ' ,)'s half-updated bogo-op counter: stress-ng 0.15.06 SIGKILLs sibling workers mid-update (fixed in 0.15.08)"
}

# Failures that are defects of stress-ng 0.15.06 (Debian 12's), each fixed
# upstream, which any policy that keeps a runnable task waiting its turn
# (idle-batch's rounds of 1.5 s timeslices, SCHED_IDLE, nice 19 behind
# hogs) makes likely.  One entry each: STRESSOR|the exact failure line (an
# extended regex)|why it is not a failure of the kernel.
#  - mutex asks whether its time is up before it counts the first thread
#    it created and, when it is, reports that it "could not create any
#    pthreads" (exit status 3, "no resource"); upstream counts the thread
#    first since f860f66a6 and stopped calling it a failure in 202d347b1.
#    A worker that spends its run waiting behind its siblings or the hogs
#    is still starting when its time is up.
#  - pipe's writer, once its time is up, writes a stop message into the
#    pipe with a blocking write(); when the pipe is full because the reader
#    is waiting its turn, the write sleeps, and the second SIGALRM every
#    worker gets (its own alarm(), then stress-ng's at the same moment)
#    interrupts it: "termination write failed, errno=4".  The handler has
#    no SA_RESTART.  Upstream removed that write in c4162b471 (0.15.07).
#    It happened in CI with idle-batch workers, and with SCHED_IDLE
#    workers next to the hogs.
#  - pipe's writer forks its reader only once it runs; when its run alarm
#    has fired by then (a worker that waited its whole run for a CPU), the
#    reader starts with "stop", closes its end and exits, and the writer's
#    do-while loop still writes once: with SIGPIPE ignored (no-sigpipe),
#    "write failed, errno=32 (Broken pipe)".  The same race as switch's in
#    tests/stress/no-sigpipe; tests/host/stress-sigpipe.t makes it happen
#    on the host.  Upstream ends the run on EPIPE since c4162b471.  Only a
#    writer that never wrote is excused (pipe's bogo-op count is 0) and
#    whose worker had its alarm (stress-ng says "finished prematurely" of
#    a worker that ended early without one): a reader that died mid-run
#    would leave a count, one that died at its start leaves that warning,
#    and both stay failures.
# A fourth field, where there is one, names a function of LOG that must
# also hold for the line to be excused.
known_defects=(
	"mutex|fail: .*\\] mutex: could not create any pthreads\$|mutex's worker was still creating its first thread when its time was up, which stress-ng 0.15.06 calls a failure (fixed in f860f66a6)"
	"pipe|fail: .*\\] pipe: termination write failed, errno=4 \\(Interrupted system call\\)\$|pipe's stop message, written into a full pipe after its time was up, was interrupted by stress-ng 0.15.06's second SIGALRM (that write is gone since c4162b471)"
	"pipe|fail: .*\\] pipe: write failed, errno=32 \\(Broken pipe\\)\$|pipe's writer, whose run alarm had fired before it forked its reader, wrote once to a pipe its reader had already closed; it never wrote before (0 bogo ops), and stress-ng 0.15.06 calls that EPIPE a failure (upstream ends the run on it since c4162b471)|pipe_never_wrote"
)

# pipe's metrics line (--metrics) counts 0 bogo ops, and its worker did
# not end before its time unasked.  LOG
pipe_never_wrote() {
	grep -qE 'metrc: \[[0-9]+\] pipe +0 ' "$1" &&
		! grep -qE '\] pipe: WARNING: finished prematurely' "$1"
}

# The known defects that apply to LOG, of STRESSOR (of any without it):
# a line each, "REGEX|WHY", its condition, where it has one, met.
# LOG [STRESSOR]
applicable_defects() {
	local entry name re why cond
	for entry in "${known_defects[@]}"; do
		IFS='|' read -r name re why cond <<<"$entry"
		[ -z "${2:-}" ] || [ "$name" = "$2" ] || continue
		[ -z "$cond" ] || "$cond" "$1" || continue
		printf '%s|%s\n' "$re" "$why"
	done
}

# The lines of LOG that are a known defect of STRESSOR (all known ones
# without STRESSOR).  LOG [STRESSOR]
known_defect_lines() {
	local re why
	while IFS='|' read -r re why; do
		[ -z "$re" ] || grep -E "$re" "$1"
	done <<<"$(applicable_defects "$@")"
}

# Standard input, lines of LOG, less those that are a known defect of
# STRESSOR (of any stressor without STRESSOR).  LOG [STRESSOR]
without_known_defects() {
	local re why lines
	lines=$(cat)
	while IFS='|' read -r re why; do
		[ -z "$re" ] || lines=$(grep -vE -- "$re" <<<"$lines")
	done <<<"$(applicable_defects "$@")"
	[ -z "$lines" ] || printf '%s\n' "$lines"
}

# Why the known defects of STRESSOR that LOG shows are ones (empty when it
# shows none).  LOG STRESSOR
known_defect_why() {
	local re why out=
	while IFS='|' read -r re why; do
		[ -n "$re" ] && grep -qE -- "$re" "$1" && out+="${out:+; }$why"
	done <<<"$(applicable_defects "$1" "$2")"
	echo "$out"
}

# Exit status 3 is accepted when every failure LOG reports is a known
# defect: stress-ng counts the stressor that reported it as "aborted early,
# out of system resources".  Prints why.  LOG
known_defects_only() {
	local names fails name
	names=$(known_defect_lines "$1" | sed -nE 's/.*\] ([a-z-]+): .*/\1/p' | sort -u)
	[ -n "$names" ] || return 1
	fails=$(grep -E '(fail|error):|out of system resources' "$1" | without_known_defects "$1")
	for name in $names; do
		fails=$(grep -vE "\(($name)\) aborted early, out of system resources" <<<"$fails")
	done
	[ -z "$fails" ] || return 1
	echo "status 3 is only stress-ng 0.15.06's known defect in $(echo $names | tr ' ' ,), below"
}

# How many failures LOG reports of STRESSOR that are not a known defect
# (a failure line, "STRESSOR: ..." from the stressor or "STRESSOR instance
# N ..." from stress-ng's check of its counters, or a worker ended by a
# signal, which stress-ng 0.15.06
# says with -v only, naming the stressor).  LOG STRESSOR
stressor_failures() {
	grep -E "(fail|error): .*\] $2( instance [0-9]+)?[: ]|\((stress-ng-)?$2\) terminated on signal" "$1" |
		without_known_defects "$1" "$2" | grep -c .
}

# The kernel log's lines for stress-ng processes that died of a user-space
# fault: "stress-ng[PID]: segfault at ..." and "traps: stress-ng-NAME[PID]
# trap ..." (or "general protection ..."), and the kernel's note that it
# left some such lines out ("show_signal_msg: N callbacks suppressed"),
# which may hide one.  Standard input.
stress_ng_crashes() {
	grep -E '(traps: |\] |^)stress-ng(-[a-z0-9-]+)?\[[0-9]+\]:? (segfault at|trap |general protection)|(show_signal_msg|show_signal): [0-9]+ callbacks suppressed'
}

# A crash of the process named COMM is a worker of STRESSOR's (comm is
# cut to 15 characters; the main process and exec'd children are plain
# stress-ng, nobody's worker).  COMM STRESSOR
crash_of_stressor() {
	[[ $1 == stress-ng-* && "stress-ng-$2" == "$1"* ]]
}

# The command name (comm, at most 15 characters) of each crash line on
# standard input.
crashed_comms() {
	sed -nE 's/.*(traps: |\] |^)(stress-ng(-[a-z0-9-]+)?)\[[0-9]+\].*/\2/p'
}

# stress-ng 0.15.06's system_read() ends a buffer it failed to read into at
# buf[-errno] (upstream a3ec15855, 0.17.07: "reads from the /sys filesystem
# ... rarely return -EBUSY ... will write to a stack location outside the
# buffer").  At start-up its main process reads the cache attributes of
# every CPU in /sys/devices/system/cpu; one read of a CPU that goes offline
# meanwhile fails with ENODEV (its sysfs directory is gone).  In Debian
# 12's build, whose compiler made one frame of the inlined functions, the
# zero lands 19 bytes below the buffer, in byte 5 of the CPU list's
# pointer: the next CPU's turn faults at stress-ng+0x65bc6 (in the soak,
# at f8c98ef30: a heap pointer 0x560f8c98ef30 less its 0x56).  So a CPU
# hotplug storm beside stress-ng's start (the soak) kills it before any
# stressor ran.  tests/host/stress-cache-crash.t makes it happen on the
# host with one failed read.
debian12_stress_ng_sha256=4ffecd7d6ccb833c71c9ac7bb1b811ea19312b2fa528d2ee78796240f5df85a3

# Why a stress-ng run that ended with status RC, with the crash lines
# CRASHES, was void: only its main process crashed, at that instruction of
# that binary.  Prints why, or fails.  RC CRASHES
cache_listing_crash() {
	local sum
	[ "$1" = 139 ] && [ -n "$2" ] || return 1
	# The address: a heap pointer less its byte 5, under 2^40
	! grep -vqE '(\] |^)stress-ng\[[0-9]+\]: segfault at [0-9a-f]{1,10} ip [0-9a-f]+ sp [0-9a-f]+ error [0-9]+ in stress-ng\[65bc6,' <<<"$2" ||
		return 1
	sum=$(sha256sum "$(command -v stress-ng)" 2>/dev/null) || return 1
	[ "${sum%% *}" = "$debian12_stress_ng_sha256" ] || return 1
	echo "stress-ng 0.15.06's main process crashed at start-up, listing the CPUs' caches while a CPU went offline: its system_read() wrote buf[-ENODEV] (fixed upstream in a3ec15855); no stressor ran"
}

# Why a run of the mix was void: each of its stress-ng (root's, status
# RRC, and nobody's, status URC; an empty status for one it did not start)
# died of cache_listing_crash, and LOG, both runs' report, has no metrics
# and no end: no stressor reported.  One that died beside one that ran
# voids nothing.  Prints why, or fails.  RRC URC CRASHES LOG
void_run() {
	local why
	[ -n "$1$2" ] || return 1
	if [ -n "$1" ]; then why=$(cache_listing_crash "$1" "$3") || return 1; fi
	if [ -n "$2" ]; then why=$(cache_listing_crash "$2" "$3") || return 1; fi
	! grep -qE 'metrc:|successful run completed' "$4" || return 1
	echo "$why"
}

# The crash lines on CRASHES that no stressor of STRESSOR... owns: the
# main process's and exec'd children's (named stress-ng), lines the kernel
# left out, and a worker of a stressor not in the list.  CRASHES STRESSOR...
unattributed_crashes() {
	local crashes=$1 line c s hit
	shift
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		c=$(crashed_comms <<<"$line") hit=0
		for s in "$@"; do crash_of_stressor "$c" "$s" && hit=1; done
		[ $hit -eq 1 ] || echo "$line"
	done <<<"$crashes"
}
