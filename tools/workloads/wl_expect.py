#!/usr/bin/env python3
"""Expect files for the recorded workloads (schema in docs/workloads.md).

  wl_expect.py list     --spec workloads.json
  wl_expect.py command  --spec workloads.json --workload NAME
  wl_expect.py write    --spec workloads.json --workload NAME --trace DIR --output FILE [...]
  wl_expect.py facts    TRACE_DIR WATCH_COMM          (debug: print what the trace shows)
  wl_expect.py check    FIXTURE_DIR                   (validate committed fixtures)

The "observed" facts are computed from the raw events (babeltrace2 text output) with
a deliberately simple, one-level model: who ended each wait of the watched thread,
from which context. They confirm that the program behaved as claimed; they are not
the active-path analysis, which the "expect" list describes.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

SCHEMA = "waitpath-workload-expect/1"
SOFTIRQ_NAMES = ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED",
                 "HRTIMER", "RCU"]
# common_flags bits (kernel/trace/trace.h, TRACE_FLAG_*): the context of the event.
FLAG_HARDIRQ, FLAG_SOFTIRQ, FLAG_NMI = 0x08, 0x10, 0x40

LINE = re.compile(r"^\[(\d+)\.(\d{9})\] \(\S+\) (\S+): \{ cpu_id = (\d+) \}, \{ (.*) \}$")
FIELD = re.compile(r'(\w+) = ("(?:[^"\\]|\\.)*"|[^,]+)')


def fail(msg):
    print(f"wl_expect: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.strip().splitlines()[-1:]}")
    return p.stdout


def counted_events(out):
    m = re.search(r"^\s*(\d+) Event messages", out, re.M)
    if not m:
        raise RuntimeError("sink.utils.counter printed no event count")
    return int(m.group(1))


def count_events_muxer(trace):
    return counted_events(run(["babeltrace2", trace, "-c", "sink.utils.counter"]))


def count_events_per_stream(trace):
    """Counts each CPU stream on its own (source.ctf.fs -> counter, no muxer), the
    way to read a trace the muxer rejects. Returns {stream file: count}."""
    counts = {}
    for stream in sorted(glob.glob(os.path.join(trace, "perf_stream_*"))):
        with tempfile.TemporaryDirectory() as d:
            os.symlink(os.path.abspath(os.path.join(trace, "metadata")),
                       os.path.join(d, "metadata"))
            os.symlink(os.path.abspath(stream), os.path.join(d, os.path.basename(stream)))
            out = run(["babeltrace2", "run", "--component=src:source.ctf.fs",
                       f"--params=inputs=[\"{d}\"]", "--component=cnt:sink.utils.counter",
                       "--connect=src:cnt"])
        counts[os.path.basename(stream)] = counted_events(out)
    return counts


def events(trace):
    """Yields (ts_ns, name, cpu, fields) in time order (babeltrace2's muxer)."""
    p = subprocess.Popen(["babeltrace2", "--clock-seconds", trace], stdout=subprocess.PIPE,
                         text=True)
    for line in p.stdout:
        m = LINE.match(line.rstrip("\n"))
        if not m:
            continue
        fields = {}
        for k, v in FIELD.findall(m.group(5)):
            fields[k] = v[1:-1] if v.startswith('"') else v.strip()
        yield int(m.group(1)) * 1_000_000_000 + int(m.group(2)), m.group(3), int(m.group(4)), fields
    if p.wait() != 0:
        raise RuntimeError(f"babeltrace2 {trace} failed (muxer rejected the trace?)")


# The kind of context each exit closes: the prefix of its entry's label.
EXIT_KIND = {"irq:irq_handler_exit": "irq:", "irq:softirq_exit": "softirq:",
             "timer:hrtimer_expire_exit": "hrtimer"}


def context_label(flags, stack):
    """Names the context an event ran in: the innermost interrupt entered on this
    CPU, else what common_flags says (e.g. the trace began inside an interrupt)."""
    if stack:
        return stack[-1]
    if flags & FLAG_NMI:
        return "nmi"
    if flags & FLAG_HARDIRQ:
        return "hardirq"
    if flags & FLAG_SOFTIRQ:
        return "softirq"
    return "task"


def facts(trace, watch_comm):
    comm = {}            # tid -> current comm
    cpu_stack = {}       # cpu -> [context labels], innermost last
    threads = {}         # tid -> per-thread facts of a watched thread
    state = {}           # watched tid -> ("running"|"runnable"|"blocked", since, blocked_by)
    queued = {}          # skbaddr -> sender comm (net_dev_queue not yet received)
    packets = {"queued": 0, "received": 0, "matched": 0, "by_sender": {}}
    block = {"issued": 0, "completed": 0, "issued_by": {}, "completed_in": {}}
    first_ts = last_ts = None

    def watch(tid, ts):
        if tid not in threads:
            threads[tid] = {"tid": tid, "start_ns": ts, "end_ns": None, "running_ns": 0,
                            "runnable_ns": 0, "blocked_ns": 0, "waits": 0, "woken_by": {}}
            state[tid] = ("running", ts, None)  # renamed itself, so it was running

    def unwatch(tid):
        # A fork child carries its parent's comm until it renames itself: it was
        # never the watched thread.
        if tid in threads and threads[tid]["end_ns"] is None:
            del threads[tid], state[tid]

    def advance(tid, ts, new_state):
        old, since, by = state[tid]
        t = threads[tid]
        t[old + "_ns"] += ts - since
        if old == "blocked":
            key = by or "unknown"
            w = t["woken_by"].setdefault(key, {"count": 0, "blocked_ns": 0})
            w["count"] += 1
            w["blocked_ns"] += ts - since
        state[tid] = (new_state, ts, None)

    for ts, name, cpu, f in events(trace):
        first_ts = ts if first_ts is None else first_ts
        last_ts = ts
        flags = int(f.get("common_flags", "0"))
        stack = cpu_stack.setdefault(cpu, [])
        cur = int(f.get("common_pid", "-1"))
        if name == "task:task_rename":
            tid = int(f["pid"])
            comm[tid] = f["newcomm"]
            if f["newcomm"] == watch_comm:
                watch(tid, ts)
            else:
                unwatch(tid)
        elif name == "sched:sched_switch":
            prev, nxt = int(f["prev_pid"]), int(f["next_pid"])
            comm[prev], comm[nxt] = f["prev_comm"], f["next_comm"]
            for tid, c in ((prev, f["prev_comm"]), (nxt, f["next_comm"])):
                if c != watch_comm:
                    unwatch(tid)
                elif tid not in threads:
                    watch(tid, ts)
                    state[tid] = ("runnable" if tid == nxt else "running", ts, None)
            if prev in state and threads[prev]["end_ns"] is None:
                # Kernel >= 4.14 reports preemption as a bit above 0xff (0x100 on 6.x).
                runnable = (int(f["prev_state"]) & 0xFF) == 0
                advance(prev, ts, "runnable" if runnable else "blocked")
                if not runnable:
                    threads[prev]["waits"] += 1
            if nxt in state and threads[nxt]["end_ns"] is None:
                advance(nxt, ts, "running")
        elif name == "sched:sched_waking":
            tid = int(f["pid"])
            if tid in state and state[tid][0] == "blocked":
                waker = f"{comm.get(cur, '?')}@{context_label(flags, stack)}"
                state[tid] = ("blocked", state[tid][1], waker)
                advance(tid, ts, "runnable")
        elif name == "sched:sched_process_exit":
            tid = int(f["pid"])
            if tid in state and threads[tid]["end_ns"] is None:
                advance(tid, ts, "running")
                threads[tid]["end_ns"] = ts
        elif name == "irq:irq_handler_entry":
            stack.append("irq:" + f["name"])
        elif name == "irq:softirq_entry":
            vec = int(f["vec"])
            stack.append("softirq:"
                         + (SOFTIRQ_NAMES[vec] if vec < len(SOFTIRQ_NAMES) else str(vec)))
        elif name == "timer:hrtimer_expire_entry":
            stack.append("hrtimer")
        elif name.startswith("irq_vectors:") and name.endswith("_entry"):
            stack.append("ipi:" + name[len("irq_vectors:"):-len("_entry")])
        elif name in EXIT_KIND or (name.startswith("irq_vectors:") and name.endswith("_exit")):
            # waitpath's rule (incremental/interrupt_nest.h): an exit closes the innermost open
            # context of its kind and those inside it (their exits lost); none open, nothing.
            kind = EXIT_KIND.get(name, "ipi:")
            for i in range(len(stack) - 1, -1, -1):
                if stack[i].startswith(kind):
                    del stack[i:]
                    break
        elif name == "net:net_dev_queue":
            packets["queued"] += 1
            queued[f["skbaddr"]] = comm.get(cur, "?")
        elif name == "net:netif_receive_skb":
            packets["received"] += 1
            sender = queued.pop(f["skbaddr"], None)
            if sender is not None:
                packets["matched"] += 1
                packets["by_sender"][sender] = packets["by_sender"].get(sender, 0) + 1
        elif name == "block:block_rq_issue":
            block["issued"] += 1
            who = f"{comm.get(cur, '?')}@{context_label(flags, stack)}"
            block["issued_by"][who] = block["issued_by"].get(who, 0) + 1
        elif name == "block:block_rq_complete":
            block["completed"] += 1
            where = f"{comm.get(cur, '?')}@{context_label(flags, stack)}"
            block["completed_in"][where] = block["completed_in"].get(where, 0) + 1

    out = []
    for tid in sorted(threads):
        t = threads[tid]
        if t["end_ns"] is None:  # still alive at the end of the trace
            advance(tid, last_ts, state[tid][0])
            t["end_ns"] = last_ts
        out.append(t)
    return {"trace_start_ns": first_ts, "trace_end_ns": last_ts, "threads": out,
            "packets": packets, "block": block}


def load_spec(path):
    with open(path) as f:
        return json.load(f)


def spec_of(spec, name):
    for w in spec["workloads"]:
        if w["workload"] == name:
            return w
    fail(f"unknown workload '{name}'")


def check_observed(w, obs):
    """The workload's own sanity checks on the raw trace (spec "observed_checks")."""
    problems = []
    for c in w.get("observed_checks", []):
        for t in obs["threads"]:
            if c["kind"] == "woken_by":
                n = sum(v["count"] for k, v in t["woken_by"].items() if re.fullmatch(c["match"], k))
                if n < c["min_count"]:
                    problems.append(f"tid {t['tid']}: {n} wake-ups match {c['match']!r}, "
                                    f"want >= {c['min_count']}")
            elif c["kind"] == "time_share":
                span = t["end_ns"] - t["start_ns"]
                share = t[c["what"] + "_ns"] / span if span else 0.0
                if share < c["min_share"]:
                    problems.append(f"tid {t['tid']}: {c['what']} share {share:.2f} "
                                    f"< {c['min_share']}")
        if c["kind"] == "threads" and len(obs["threads"]) != c["count"]:
            problems.append(f"{len(obs['threads'])} threads named {w['watch_comm']!r}, "
                            f"want {c['count']}")
    if not obs["threads"]:
        problems.append(f"no thread named {w['watch_comm']!r} in the trace")
    return problems


def cmd_write(a):
    spec = load_spec(a.spec)
    w = spec_of(spec, a.workload)
    per_stream = count_events_per_stream(a.trace)
    n = sum(per_stream.values())
    if a.muxer_ok:
        muxed = count_events_muxer(a.trace)
        if muxed != n:
            fail(f"{a.trace}: muxer counts {muxed} events, streams {n}")
        obs = facts(a.trace, w["watch_comm"])
    else:
        obs = None
    meta = open(os.path.join(a.trace, "metadata")).read()
    env = dict(re.findall(r'^\s*(\w+) = "?([^";]*)"?;', meta.split("env {", 1)[1].split("};", 1)[0],
                          re.M))
    program_output = open(a.program_output).read().strip() if a.program_output else ""
    doc = {
        "schema": SCHEMA,
        "workload": w["workload"],
        "trace": os.path.basename(os.path.normpath(a.trace)),
        "command": w["command"],
        "description": w["description"],
        "host": env.get("host"),
        "kernel": env.get("release"),
        "perf_version": env.get("version"),
        "recorded_events": a.events.split(",") if a.events else [],
        "events": n,
        "events_per_stream": per_stream,
        "babeltrace2_muxer_ok": bool(a.muxer_ok),
        # CPUs kept out of their idle task by wl-idle-fill while recording: on them,
        # interrupts interrupt wl-idle-fill instead of swapper/N.
        "idle_filled_cpus": ([] if a.idle_filled == "none"
                             else [int(c) for c in a.idle_filled.split(",")]),
        "program_output": program_output,
        "watch_comm": w["watch_comm"],
        "expect": w["expect"],
        "observed": obs,
    }
    if obs is not None:
        problems = check_observed(w, obs)
        if problems:
            fail(f"{a.workload}: the trace does not show the intended behaviour: "
                 + "; ".join(problems))
    with open(a.output, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def cmd_check(a):
    """Fixture validity: trace layout, event counts and observed facts reproduce."""
    files = sorted(glob.glob(os.path.join(a.dir, "*.expect.json")))
    if not files:
        fail(f"no *.expect.json in {a.dir}")
    bad = 0
    for path in files:
        try:
            with open(path) as f:
                doc = json.load(f)
            if doc.get("schema") != SCHEMA:
                raise RuntimeError(f"schema is {doc.get('schema')!r}, want {SCHEMA!r}")
            trace = os.path.join(os.path.dirname(path), doc["trace"])
            if not os.path.isfile(os.path.join(trace, "metadata")):
                raise RuntimeError(f"{trace}: no CTF metadata")
            if not glob.glob(os.path.join(trace, "perf_stream_*")):
                raise RuntimeError(f"{trace}: no perf_stream_* files")
            per_stream = count_events_per_stream(trace)
            if per_stream != doc["events_per_stream"] or sum(per_stream.values()) != doc["events"]:
                raise RuntimeError(f"{trace}: streams hold {per_stream}, expect file says "
                                   f"{doc['events_per_stream']}")
            if doc["babeltrace2_muxer_ok"]:
                if count_events_muxer(trace) != doc["events"]:
                    raise RuntimeError(f"{trace}: muxer count differs from {doc['events']}")
                if a.full and facts(trace, doc["watch_comm"]) != doc["observed"]:
                    raise RuntimeError(f"{trace}: observed facts do not reproduce")
            for e in doc["expect"]:
                if e.get("kind") not in ("state_share", "comm_share", "top_blamed_comm"):
                    raise RuntimeError(f"unknown expect kind {e.get('kind')!r}")
            print(f"ok   {doc['workload']}: {doc['events']} events")
        except (RuntimeError, KeyError, ValueError, OSError) as e:
            bad += 1
            print(f"FAIL {path}: {e}")
    sys.exit(1 if bad else 0)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("list")
    s.add_argument("--spec", required=True)
    s = sub.add_parser("command")
    s.add_argument("--spec", required=True)
    s.add_argument("--workload", required=True)
    s = sub.add_parser("write")
    s.add_argument("--spec", required=True)
    s.add_argument("--workload", required=True)
    s.add_argument("--trace", required=True)
    s.add_argument("--output", required=True)
    s.add_argument("--muxer-ok", type=int, default=1)
    s.add_argument("--program-output")
    s.add_argument("--events", default="")
    s.add_argument("--idle-filled", default="none")
    s = sub.add_parser("facts")
    s.add_argument("trace")
    s.add_argument("watch_comm")
    s = sub.add_parser("check")
    s.add_argument("dir")
    s.add_argument("--full", action="store_true", help="also recompute the observed facts")
    a = p.parse_args()
    try:
        if a.cmd == "list":
            print(" ".join(w["workload"] for w in load_spec(a.spec)["workloads"]))
        elif a.cmd == "command":
            print(" ".join(spec_of(load_spec(a.spec), a.workload)["command"]))
        elif a.cmd == "write":
            cmd_write(a)
        elif a.cmd == "facts":
            json.dump(facts(a.trace, a.watch_comm), sys.stdout, indent=1)
            print()
        elif a.cmd == "check":
            cmd_check(a)
    except (RuntimeError, OSError) as e:
        fail(str(e))


if __name__ == "__main__":
    main()
