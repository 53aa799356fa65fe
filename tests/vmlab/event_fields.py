#!/usr/bin/env python3
"""Compares the kernel event classes and fields of LTTng traces, for the events waitpath reads
(docs/lab.md, "LTTng 2.16 guests"): what changed between lttng-modules versions and between
CTF 1.8 and CTF 2.

  event_fields.py TRACE_DIR [TRACE_DIR...] [--markdown] [--all] [--raw]

Each trace's classes come from babeltrace2 2.1 (tests/lttng216/bt2-oracle.sh, the one that
reads CTF 2), sink.text.details without data: the same rendering of a field class whatever the
metadata's syntax (TSDL or CTF 2 JSON), so two traces differ here only where their fields do.
Prints, per event waitpath reads (model/event_schema.cc's names; x86_irq_vectors_* as one
family), each field path with its type per trace, marking the ones waitpath reads (*) and the
lines that differ (!). --all: every event class, not only waitpath's. Without --raw, what
only the metadata's syntax makes differ is folded: a leading underscore of a name (CTF 1.8's
enumeration labels "_tcp", CTF 2's "tcp"), the empty structures CTF 1.8 uses to align the
next member ("saddr_padding"; CTF 2 puts the alignment on the member's own class) and
structure member counts (the members are listed anyway). Exit 0; 77 when the sid chroot
cannot be built.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.path.join(HERE, "..", "lttng216", "bt2-oracle.sh")

# The event names waitpath reads from LTTng kernel traces (model/event_schema.cc) and, per event,
# the payload fields model/event_schema.h looks up (a field path joins members with '.').
PACKET = ["network_header_type", "network_header", "network_header.ipv4",
          "network_header.ipv4.saddr", "network_header.ipv4.daddr", "network_header.ipv4.tot_len",
          "network_header.ipv4.transport_header_type", "network_header.ipv4.transport_header",
          "network_header.ipv4.transport_header.tcp",
          "network_header.ipv4.transport_header.tcp.source_port",
          "network_header.ipv4.transport_header.tcp.dest_port",
          "network_header.ipv4.transport_header.tcp.seq",
          "network_header.ipv4.transport_header.tcp.ack_seq",
          "network_header.ipv4.transport_header.tcp.flags"]
READS = {
    "sched_switch": ["prev_comm", "prev_tid", "prev_state", "next_comm", "next_tid"],
    "sched_waking": ["comm", "tid", "target_cpu"],
    "sched_wakeup": ["comm", "tid", "target_cpu"],
    "sched_wakeup_new": ["comm", "tid", "target_cpu"],
    "sched_process_fork": ["parent_tid", "child_comm", "child_tid", "child_pid"],
    "sched_process_exit": ["tid"],
    "sched_process_free": ["tid"],
    "irq_handler_entry": ["irq", "name"],
    "irq_handler_exit": ["irq", "ret"],
    "irq_softirq_entry": ["vec"],
    "irq_softirq_exit": ["vec"],
    "irq_softirq_raise": ["vec"],
    "timer_hrtimer_expire_entry": ["hrtimer"],
    "timer_hrtimer_expire_exit": ["hrtimer"],
    "net_dev_queue": ["skbaddr", "len"] + PACKET,
    "net_if_receive_skb": ["skbaddr", "len"] + PACKET,
    "block_rq_issue": ["dev", "sector", "nr_sector"],
    "block_rq_complete": ["dev", "sector", "nr_sector"],
    "lttng_statedump_process_state": ["tid", "pid", "name", "status"],
    "x86_irq_vectors_*": ["vector"],
    # kmod/ (lttng-probe-waitpath), when the session has them (waitpath-session.sh --kmod).
    "waitpath_tcp_send": ["skbaddr", "sk", "len", "saddr", "daddr", "sport", "dport", "seq",
                          "ack_seq", "flags", "tot_len"],
    "waitpath_tcp_recv": ["skbaddr", "sk", "len", "saddr", "daddr", "sport", "dport", "seq",
                          "ack_seq", "flags", "tot_len"],
    "waitpath_cgroup_attach": ["tid", "pid", "path", "threadgroup", "hierarchy"],
    "waitpath_statedump_cgroup": ["tid", "pid", "path", "threadgroup", "hierarchy"],
}
# The stream-level classes: the packet context (cpu_id, the discarded events count) and the
# event common context (the tid and procname contexts waitpath-session.sh adds).
STREAM = {"(packet context)": ["cpu_id", "events_discarded"],
          "(event common context)": ["tid", "procname"]}


def details(trace):
    p = subprocess.run([ORACLE, trace, "-c", "sink.text.details", "--params=with-data=false"],
                       capture_output=True, text=True)
    if p.returncode == 77:
        print("SKIP: the sid chroot (babeltrace2 2.1) cannot be built here")
        sys.exit(77)
    if p.returncode != 0:
        raise SystemExit(f"babeltrace2 on {trace}: {p.stderr.strip()[-1000:]}")
    return p.stdout


def fold(cls):
    """The syntax-only differences folded (see the module's doc)."""
    out = {}
    for name, fields in cls.items():
        f2 = {}
        for path, desc in fields.items():
            if path.startswith("("):
                f2[path] = desc
                continue
            parts = path.split(".")
            if parts[-1].endswith("_padding") and desc.startswith("Structure (0 members)"):
                continue
            desc = re.sub(r"Structure \(\d+ members?\):?", "Structure", desc)
            f2[".".join(p[1:] if p.startswith("_") else p for p in parts)] = desc
        out[name] = f2
    return out


def classes(text):
    """{class name: {field path: description}} from sink.text.details' output."""
    res, cur, stack = {}, None, []
    for line in text.splitlines():
        ind = len(line) - len(line.lstrip(" "))
        s = line.strip()
        m = re.match(r"Event class `(.*)` \(ID \d+\):", s)
        if m:
            cur, stack = res.setdefault(m.group(1), {}), []
            cur["(indent)"] = ind
            continue
        if s.startswith("Packet context field class:"):
            cur, stack = res.setdefault("(packet context)", {}), []
            cur["(indent)"] = ind - 2
            cur["(type)"] = s.split(":", 1)[1].strip()
            continue
        if s.startswith("Event common context field class:"):
            cur, stack = res.setdefault("(event common context)", {}), []
            cur["(indent)"] = ind - 2
            cur["(type)"] = s.split(":", 1)[1].strip()
            continue
        if (cur is None or ind <= cur["(indent)"] or s.startswith("Payload field class")
                or ":" not in s):
            if cur is not None and ind <= cur["(indent)"]:
                cur = None
            continue
        name, desc = s.split(":", 1)
        name = name.strip()
        # Variant options read "ipv4: [1]: Structure ..."; enumeration mappings "_tcp: [6]".
        m = re.match(r"\[[^\]]*\]:?\s*(.*)", desc.strip())
        if m and not desc.strip().startswith("[Event"):
            desc = " " + (m.group(1) or "(mapping)")
        while stack and stack[-1][0] >= ind:
            stack.pop()
        path = ".".join([n for _, n in stack] + [name])
        cur[path] = desc.strip()
        stack.append((ind, name))
    for c in res.values():
        c.pop("(indent)", None)
    return res


def family(name):
    return "x86_irq_vectors_*" if name.startswith("x86_irq_vectors_") else name


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    md, every, raw = "--markdown" in sys.argv, "--all" in sys.argv, "--raw" in sys.argv
    if not args:
        print(__doc__)
        return 2
    per = [classes(details(t)) for t in args]
    if not raw:
        per = [fold(c) for c in per]
    names = sorted(set(n for c in per for n in c))
    wanted = list(STREAM) + list(READS)
    shown = wanted + ([n for n in names if n not in STREAM and family(n) not in READS] if every
                      else [])
    if md:
        print("| event | field | " + " | ".join(os.path.basename(os.path.normpath(t)) for t in args)
              + " |")
        print("|---" * (2 + len(args)) + "|")
    for ev in shown:
        reads = READS.get(ev, STREAM.get(ev, []))
        if ev == "x86_irq_vectors_*":
            members = [sorted(n for n in c if family(n) == ev) for c in per]
            fields = [c[m[0]] if m else None for c, m in zip(per, members)]
            counts = [len(m) for m in members]
        else:
            fields = [c.get(ev) for c in per]
            counts = None
        present = ["yes" if f is not None else "absent" for f in fields]
        if counts:
            present = [f"{n} classes" for n in counts]
        same = len(set(present)) == 1
        if not md:
            print(f"{'  ' if same else '! '}{ev}: " + " | ".join(present))
        else:
            print(f"| {'**' if not same else ''}{ev}{'**' if not same else ''} | (event) | "
                  + " | ".join(present) + " |")
        paths = []
        for f in fields:
            for p in (f or {}):
                if p not in paths and not p.startswith("("):
                    paths.append(p)
        for p in paths:
            descs = [(f or {}).get(p, "-") if f is not None else "" for f in fields]
            diff = len(set(d for d, f in zip(descs, fields) if f is not None)) > 1
            star = "*" if p in reads else " "
            if not every and not diff and star == " ":
                continue
            if md:
                if diff or star == "*":
                    print(f"| | "
                          f"{'**' if diff else ''}{p}{'**' if diff else ''}"
                          f"{' (read)' if star == '*' else ''} | "
                          + " | ".join(d.replace("|", "\\|") for d in descs) + " |")
            else:
                print(f"  {'!' if diff else ' '}{star} {p}: " + " | ".join(descs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
