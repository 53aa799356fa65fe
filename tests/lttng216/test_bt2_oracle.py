#!/usr/bin/env python3
"""An oracle that is not us: babeltrace2 2.1 (tests/lttng216/bt2-oracle.sh, the sid chroot) and
the native CTF decoder (ctf/, through tools/ctf_dump's waitpath-ctf-dump) decode the same
traces; every event must be the same, field by field.

  test_bt2_oracle.py WAITPATH_CTF_DUMP TRACE_DIR [TRACE_DIR...]
  test_bt2_oracle.py WAITPATH_CTF_DUMP --under DIR [--under DIR...] --format ctf2|ctf1.8

--under: every trace below each DIR (a directory holding `metadata`) of that format (CTF 2: the
metadata's first byte is the JSON text sequence's 0x1E), at least one.

Per trace, two comparisons:

- per stream, in the stream's own order: babeltrace2 reads a copy of the trace holding the
  metadata and that one stream file, the native decoder the stream file; the same number of
  events, and event k the same (class name, timestamp in clock cycles, every field of every scope
  babeltrace2's text sink prints: packet context, common context, specific context, payload);
- merged, the whole trace as babeltrace2 prints it (its muxer's order): the same events by
  timestamp; events of one timestamp (on different streams) are compared as a set, since the
  muxer's order among them is its own.

Only what is formatting is normalized (`norm` below): integers compared as numbers (babeltrace2
prints them in their preferred display base: 0xDEAD0000, 0x0; a signed one of base 2, 8 or 16
as its bits, which the native dump gives it too); floating point numbers as
babeltrace2's "%g" of the native value; strings unescaped (babeltrace2 escapes \\, ", control
bytes); BLOBs (babeltrace2: `{ 00 11 }`) and arrays (`[ [0] = 0x0, ... ]`) as the list of their
values (CTF 2's BLOBs are CTF 1.8's arrays of 8-bit integers); enumeration / mapped integer labels
as a sorted set; a variant as its option's value (babeltrace2 does not print the option's name).
Names are compared as printed (the native dump applies babeltrace2's CTF 1.8 rule, one leading
underscore dropped).

Exit 0 when every trace agrees, 1 otherwise (the first differences printed), 77 when the sid
chroot cannot be built (no root, no debootstrap, no network the first time).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.path.join(HERE, "bt2-oracle.sh")
BT2_OPTIONS = ["--clock-cycles", "--no-delta", "--names=scope,payload,context"]
SCOPES = ["stream.packet.context", "stream.event.context", "event.context", "event.fields"]


class Skip(Exception):
    pass


# ---- babeltrace2's text (sink.text.pretty) ------------------------------------------------

class Parser:
    """One line's values: { a = V, ... } structure, { V } variant, { 00 11 } BLOB, [ [0] = V ]
    array, ( "L" : container = N ) enumeration, "..." string, numbers."""

    def __init__(self, text):
        self.s = text
        self.i = 0

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1

    def peek(self, t):
        self.ws()
        return self.s.startswith(t, self.i)

    def eat(self, t):
        self.ws()
        if not self.s.startswith(t, self.i):
            raise ValueError(f"expected {t!r} at {self.i}: {self.s[self.i:self.i + 40]!r}")
        self.i += len(t)

    def name(self):
        self.ws()
        m = re.compile(r"[A-Za-z_][A-Za-z0-9_.:]*").match(self.s, self.i)
        if not m:
            raise ValueError(f"expected a name at {self.i}: {self.s[self.i:self.i + 40]!r}")
        self.i = m.end()
        return m.group(0)

    def string(self):
        self.eat('"')
        out = []
        esc = {"\\": "\\", "'": "'", '"': '"', "?": "?", "0": "\0", "a": "\a", "b": "\b",
               "e": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
        while True:
            c = self.s[self.i]
            self.i += 1
            if c == '"':
                return "".join(out)
            if c == "\\":
                d = self.s[self.i]
                self.i += 1
                if d == "x":
                    out.append(chr(int(self.s[self.i:self.i + 2], 16)))
                    self.i += 2
                else:
                    out.append(esc.get(d, d))
            else:
                out.append(c)

    def scalar(self):
        self.ws()
        m = re.compile(r"[^ ,\]\}\)]+").match(self.s, self.i)
        self.i = m.end()
        return m.group(0)

    def value(self):
        self.ws()
        c = self.s[self.i]
        if c == '"':
            return ("str", self.string())
        if c == "[":
            self.eat("[")
            items = []
            while not self.peek("]"):
                self.eat("[")
                self.scalar()  # the index
                self.eat("]")
                self.eat("=")
                items.append(self.value())
                if self.peek(","):
                    self.eat(",")
            self.eat("]")
            return ("list", tuple(items))
        if c == "(":
            self.eat("(")
            if self.peek('"'):
                labels = [self.string()]
            elif self.peek("{"):
                self.eat("{")
                labels = [self.string()]
                while self.peek(","):
                    self.eat(",")
                    labels.append(self.string())
                self.eat("}")
            else:
                self.eat("<unknown>")
                labels = []
            self.eat(":")
            self.eat("container")
            self.eat("=")
            n = number(self.scalar())
            self.eat(")")
            return ("enum", n, tuple(sorted(labels)))
        if c == "{":
            self.eat("{")
            if self.peek("}"):
                self.eat("}")
                return ("list", ())  # an empty structure, or BLOB
            if self.peek("{") or self.peek("[") or self.peek("(") or self.peek('"'):
                v = self.value()
                self.eat("}")
                return ("variant", v)
            save = self.i
            m = re.compile(r"\s*([0-9a-f]{2}( [0-9a-f]{2})*) \}").match(self.s, self.i)
            if m:  # a BLOB: its bytes in hexadecimal
                self.i = m.end()
                return ("list", tuple(("num", int(b, 16)) for b in m.group(1).split()))
            self.i = save
            members = []
            while True:
                n = self.name()
                self.eat("=")
                members.append((n, self.value()))
                if not self.peek(","):
                    break
                self.eat(",")
            self.eat("}")
            return ("struct", tuple(members))
        return number(self.scalar())


def number(text):
    t = text
    neg = t.startswith("-")
    if neg:
        t = t[1:]
    try:
        if t.startswith("0x"):
            v = int(t, 16)
        elif t.startswith("0b"):
            v = int(t[2:], 2)
        elif len(t) > 1 and t.startswith("0") and t.isdigit():
            v = int(t, 8)
        else:
            v = int(t)
        # "-0": a floating point number (no integer prints so), its sign kept.
        return ("num", "-0" if text == "-0" else -v if neg else v)
    except ValueError:
        return ("float", text)  # babeltrace2 prints floats with "%g"


def parse_bt2_line(line):
    m = re.match(r"\[(\d+)\] (?:(\S+) )?(\S+): (.*)$", line)
    if not m:
        raise ValueError(f"not an event line: {line!r}")
    ts, name, rest = int(m.group(1)), m.group(3), m.group(4)
    p = Parser(rest)
    scopes = {}
    while p.i < len(p.s):
        scope = p.name()
        p.eat("=")
        scopes[scope] = p.value()
        p.ws()
        if p.i < len(p.s):
            p.eat(",")
    return {"ts": ts, "name": name, "scopes": scopes}


# ---- the native dump ----------------------------------------------------------------------

def norm(v):
    """A native value in the parsed babeltrace2 form."""
    if "labels" in v:
        return ("enum", ("num", v["i"]), tuple(sorted(v["labels"])))
    if "i" in v:
        return ("num", v["i"])
    if "f" in v:
        return number("%g" % v["f"])  # what babeltrace2 prints, read as its text is
    if "t" in v:
        return ("str", v["t"])
    if "s" in v:
        if not v["s"]:
            return ("list", ())
        return ("struct", tuple((n, norm(m)) for n, m in v["s"]))
    if "a" in v:
        return ("list", tuple(norm(e) for e in v["a"]))
    if "v" in v:
        return ("variant", norm(v["v"]))
    raise ValueError(f"unknown native value {v}")


def native_events(dump, trace):
    p = subprocess.run([dump, trace], capture_output=True, text=True, errors="replace")
    events = []
    for line in p.stdout.splitlines():
        e = json.loads(line)
        if "error" in e:
            raise SystemExit(f"{trace}: native decoder: {e['error']}")
        events.append({"stream": e["stream"], "ts": e["ts"], "name": e["name"],
                       "scopes": {k: norm(v) for k, v in e["scopes"].items()}})
    if p.returncode != 0:
        raise SystemExit(f"{trace}: waitpath-ctf-dump exited {p.returncode}: {p.stderr}")
    return events


def bt2_events(trace):
    p = subprocess.run([ORACLE, trace] + BT2_OPTIONS, capture_output=True, text=True,
                       errors="replace")
    if p.returncode == 77:
        raise Skip()
    if p.returncode != 0:
        raise SystemExit(f"babeltrace2 on {trace}: {p.stderr.strip()[-2000:]}")
    return [parse_bt2_line(l) for l in p.stdout.splitlines() if l]


# ---- comparing ----------------------------------------------------------------------------

def diff_value(path, a, b, out):
    """Where babeltrace2's `a` and the native `b` differ (field paths)."""
    if a == b:
        return
    if a[0] == b[0] == "struct" and [n for n, _ in a[1]] == [n for n, _ in b[1]]:
        for (n, x), (_, y) in zip(a[1], b[1]):
            diff_value(f"{path}.{n}", x, y, out)
        return
    if a[0] == b[0] == "list" and len(a[1]) == len(b[1]):
        for k, (x, y) in enumerate(zip(a[1], b[1])):
            diff_value(f"{path}[{k}]", x, y, out)
        return
    if a[0] == b[0] == "variant":
        diff_value(path, a[1], b[1], out)
        return
    out.append(f"{path}: babeltrace2 {a} native {b}")


def diff_event(a, b):
    out = []
    if a["name"] != b["name"]:
        out.append(f"name: babeltrace2 {a['name']} native {b['name']}")
    if a["ts"] != b["ts"]:
        out.append(f"timestamp: babeltrace2 {a['ts']} native {b['ts']}")
    for s in SCOPES:
        if (s in a["scopes"]) != (s in b["scopes"]):
            out.append(f"{s}: babeltrace2 {'has' if s in a['scopes'] else 'lacks'} it")
        elif s in a["scopes"]:
            diff_value(s, a["scopes"][s], b["scopes"][s], out)
    return out


def compare(label, bt2, native, failures):
    """Event by event; the first differences go to `failures`. The number of fields compared."""
    if len(bt2) != len(native):
        failures.append(f"{label}: babeltrace2 {len(bt2)} events, native {len(native)}")
    fields = 0
    shown = 0
    for k, (a, b) in enumerate(zip(bt2, native)):
        d = diff_event(a, b)
        if d:
            shown += 1
            if shown <= 5:
                failures.append(f"{label}: event {k} ({a['name']} at {a['ts']}): "
                                + "; ".join(d[:4]))
        fields += count_fields(a["scopes"])
    if shown > 5:
        failures.append(f"{label}: {shown} events differ in all")
    return fields


def count_fields(v):
    if isinstance(v, dict):
        return sum(count_fields(x) for x in v.values())
    if v[0] == "struct":
        return sum(count_fields(m) for _, m in v[1])
    if v[0] == "list":
        return sum(count_fields(m) for m in v[1]) if v[1] else 1
    if v[0] == "variant":
        return count_fields(v[1])
    return 1


def by_timestamp(events):
    """The merged order up to ties: per timestamp, the events as a sorted list."""
    groups = {}
    for e in events:
        groups.setdefault(e["ts"], []).append(repr((e["name"], sorted(e["scopes"].items()))))
    return [(ts, sorted(g)) for ts, g in sorted(groups.items())]


def check_trace(dump, trace, failures):
    native = native_events(dump, trace)
    streams = []
    for e in native:
        if e["stream"] not in streams:
            streams.append(e["stream"])
    fields = 0
    for s in streams:
        view = tempfile.mkdtemp(prefix="waitpath-bt2-oracle-")
        try:
            shutil.copy(os.path.join(trace, "metadata"), view)
            shutil.copy(os.path.join(trace, s), view)
            mine = [e for e in native if e["stream"] == s]
            fields += compare(f"{trace} stream {s}", bt2_events(view), mine, failures)
        finally:
            shutil.rmtree(view)
    merged = bt2_events(trace)
    if len(merged) != len(native):
        failures.append(f"{trace} merged: babeltrace2 {len(merged)} events, native {len(native)}")
    a, b = by_timestamp(merged), by_timestamp(native)
    if [ts for ts, _ in a] != [ts for ts, _ in b]:
        failures.append(f"{trace} merged: not the same timestamps")
    elif a != b:
        bad = next(ts for (ts, x), (_, y) in zip(a, b) if x != y)
        failures.append(f"{trace} merged: the events at {bad} differ")
    names = len(set(e["name"] for e in native))
    print(f"{trace}: {len(native)} events ({names} classes) in {len(streams)} streams, "
          f"{fields} field values compared per stream; merged order checked")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    dump, traces = sys.argv[1], sys.argv[2:]
    if traces[0] == "--under":
        args = traces
        fmt = args[args.index("--format") + 1]
        roots = [args[i + 1] for i, a in enumerate(args) if a == "--under"]
        traces = []
        for root in roots:
            for d, _, files in sorted(os.walk(root)):
                if "metadata" in files:
                    with open(os.path.join(d, "metadata"), "rb") as f:
                        ctf2 = f.read(1) == b"\x1e"
                    if ctf2 == (fmt == "ctf2"):
                        traces.append(d)
        if not traces:
            print(f"FAIL no {fmt} trace under {' '.join(roots)}")
            return 1
    failures = []
    try:
        for t in traces:
            check_trace(dump, t, failures)
    except Skip:
        print("SKIP: the sid chroot (babeltrace2 2.1) cannot be built here")
        return 77
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
