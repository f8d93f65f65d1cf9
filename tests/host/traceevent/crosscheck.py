#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Cross-check the plugin's lines against the kernel's raw fields.

Usage: crosscheck.py [--ns] [--raw] PLUGIN_REPORT RAW_REPORT

PLUGIN_REPORT is `trace-cmd report -t` with the plugin (and -O
sched_batch:ns / sched_batch:raw when --ns / --raw are given), RAW_REPORT
`trace-cmd report -t -R` of the same trace: the kernel's field=value
lists.  The sched_batch lines of both are paired in order (same time stamp,
CPU and event), each plugin line is parsed with the form its event must
have, and every value in it is compared with the raw field: pid, comm and
CPUs equal, each word the one the documentation gives for the number,
durations the ns value rounded to the microsecond (or equal, in ns), idle
averages the permille value / 10, task counts equal.

Prints "ok - WHAT" or "not ok - WHAT" lines (with "# " details) for
tests/host/traceevent-plugin.t to number.
"""
import re
import sys

# The words for each symbolic value, from the "Trace events" section of
# Documentation/scheduler/sched-idlebatch.rst (patch 0012)
WORDS = {
    "decision": [
        "parked",
        "requeued (already in the class: back to its queue)",
        "not parked: a signal is pending",
        "not parked: boosted by a PI waiter",
        "not parked: it is exiting",
        "not parked: it is not runnable",
        "not parked yet: other exit work first",
        "not parked: its vfork parent waits for it",
        "not parked: sched_ext runs it",
        "not parked: a uprobe single-steps it",
    ],
    "reason": [
        "picked to run on an idle CPU",
        "to handle a signal",
        "boosted by a PI waiter",
        "policy changed",
    ],
    "kind": ["balance pass", "pulled by an idle CPU", "swapped for fairness"],
    "queue": ["the active queue", "the expired queue"],
}
UNKNOWN = {"decision": "unknown decision {}", "reason": "unknown reason {}",
           "kind": "unknown kind {}", "queue": "unknown queue {}"}

LINE = re.compile(r"^\s*(?P<who>.*?)\s+\[(?P<rcpu>\d+)\]\s+(?P<ts>\d+\.\d+):\s+"
                  r"(?P<event>sched_batch_\w+):\s+(?P<info>.*)$")
RAW_FIELD = re.compile(r"(\w+)=(.*?)(?= \w+=|$)")

TASK = r"(?P<comm>.*):(?P<pid>-?\d+)"
CPU = r"(?P<cpu>-?\d+)"


def forms(ns):
    """The form of each event's line; (?P<..._dur>) groups are durations"""
    dur = r"(?P<{}_dur>\d+) ns" if ns else r"(?P<{}_dur>\d+\.\d{{3}}) ms"
    tasks = r"(?P<{}>\d+) tasks?"
    return {
        "sched_batch_user_preempt":
            TASK + " on cpu " + CPU + r" preempted in user mode: (?P<decision>.+)",
        "sched_batch_park":
            TASK + " parked on cpu " + CPU + r" in (?P<queue>.+), (?P<nr_queued>\d+) queued, "
            + dur.format("slice_left") + " of its slice left",
        "sched_batch_unpark":
            TASK + " unparked on cpu " + CPU + " after " + dur.format("parked_ns")
            + r": (?P<reason>.+)",
        "sched_batch_migrate":
            TASK + r" moved cpu (?P<src_cpu>-?\d+) -> cpu (?P<dst_cpu>-?\d+) \((?P<kind>.+)\): "
            + r"cpu (?P<src_cpu2>-?\d+) had " + tasks.format("src_nr")
            + r", (?P<src_idle_avg_pct>\d+\.\d)% idle; "
            + r"cpu (?P<dst_cpu2>-?\d+) had " + tasks.format("dst_nr")
            + r", (?P<dst_idle_avg_pct>\d+\.\d)% idle",
        "sched_batch_slice_expired":
            TASK + " on cpu " + CPU + " used up its slice, new slice " + dur.format("slice"),
        "sched_batch_queue_swap":
            r"cpu " + CPU + r": active queue ran dry, swapped in the expired one \("
            + tasks.format("nr_queued") + r"\)",
    }


def sched_batch_lines(path):
    with open(path, errors="replace") as f:
        for text in f:
            m = LINE.match(text.rstrip("\n"))
            if m:
                yield m


def expected(group, raw, ns):
    """What group @group of a plugin line must read, from the raw fields"""
    if group in ("src_cpu2", "dst_cpu2"):
        return raw[group[:-1]]
    if group.endswith("_dur"):
        val = int(raw[group[:-4]])
        if ns:
            return str(val)
        us = val // 1000 + (val % 1000 >= 500)
        return "%d.%03d" % (us // 1000, us % 1000)
    if group.endswith("_pct"):
        val = int(raw[group[:-4]])
        return "%d.%d" % (val // 10, val % 10)
    if group in WORDS:
        val = int(raw[group])
        words = WORDS[group]
        return words[val] if 0 <= val < len(words) else UNKNOWN[group].format(val)
    return raw[group]


class Result:
    def __init__(self, what):
        self.what, self.problems, self.count = what, [], 0

    def report(self):
        passed = not self.problems
        print("%s - %s" % ("ok" if passed else "not ok", self.what.format(n=self.count)))
        for p in self.problems[:8]:
            print("#   " + p)
        if len(self.problems) > 8:
            print("#   ... and %d more" % (len(self.problems) - 8))


def main():
    args = sys.argv[1:]
    ns = "--ns" in args
    raw_opt = "--raw" in args
    args = [a for a in args if not a.startswith("--")]
    plugin_path, raw_path = args
    shapes = {ev: re.compile("^" + f + (r" \| (?P<rawlist>.*)" if raw_opt else "") + "$")
              for ev, f in forms(ns).items()}
    opts = [o for o, on in (("sched_batch:ns", ns), ("sched_batch:raw", raw_opt)) if on]
    mode = " (-O %s)" % ", ".join(opts) if opts else ""

    plugin = list(sched_batch_lines(plugin_path))
    raw = list(sched_batch_lines(raw_path))
    paired = Result("{n} sched_batch lines%s pair up with the raw report's "
                    "(same time stamp, CPU, event)" % mode)
    form = Result("every sched_batch line%s is in the plugin's form ({n} lines)" % mode)
    values = Result("the values of every line%s agree with the raw fields "
                    "({n} lines: task, CPUs, words, durations, counts, idle)" % mode)
    rawlist = Result("-O sched_batch:raw appends exactly the raw report's field list ({n} lines)")

    if len(plugin) != len(raw):
        paired.problems.append("%d lines with the plugin, %d raw" % (len(plugin), len(raw)))
    for p, r in zip(plugin, raw):
        key = lambda m: (m["ts"], m["rcpu"], m["event"])
        if key(p) != key(r):
            paired.problems.append("plugin %s vs raw %s" % (key(p), key(r)))
            continue
        paired.count += 1
        shape = shapes.get(p["event"])
        m = shape.match(p["info"]) if shape else None
        if not m:
            form.problems.append("%s %s: %s" % (p["ts"], p["event"], p["info"]))
            continue
        form.count += 1
        fields = dict(RAW_FIELD.findall(r["info"]))
        wrong = []
        for group, got in m.groupdict().items():
            if group == "rawlist" or got is None:
                continue
            try:
                want = expected(group, fields, ns)
            except (KeyError, ValueError) as e:
                wrong.append("%s: raw field missing or bad (%s)" % (group, e))
                continue
            if got != want:
                wrong.append("%s %r, want %r" % (group, got, want))
        if wrong:
            values.problems.append("%s %s: %s" % (p["ts"], p["event"], "; ".join(wrong)))
        else:
            values.count += 1
        if raw_opt:
            if m["rawlist"] == r["info"]:
                rawlist.count += 1
            else:
                rawlist.problems.append("%s: %r, raw %r" % (p["ts"], m["rawlist"], r["info"]))
    if not plugin:
        paired.problems.append("no sched_batch lines at all")

    for res in (paired, form, values) + ((rawlist,) if raw_opt else ()):
        # every line must have passed, not merely none failed
        if not res.problems and res.count != len(raw):
            res.problems.append("%d of the %d lines checked" % (res.count, len(raw)))
        res.report()


if __name__ == "__main__":
    main()
