#!/usr/bin/env python3
"""Mutation fuzzing of waitpath's trace reading (docs/reading.md, "Hostile input").

Makes N damaged copies of real traces (bit flips, truncations, random byte runs, packet
header fields set to extremes, metadata edits), runs `waitpath stats` and `waitpath analyze`
on each under a time and memory limit, and classifies every run:

  ok          exit 0
  error       exit 1 with one or more "waitpath: ..." lines (a clean refusal or partial read)
  messy       exit 1 but some stderr line is not waitpath's (a leak of babeltrace2 output...)
  crash       a signal, or a sanitizer report (build with -fsanitize=address,undefined)
  hang        over the time limit
  memory      over the memory limit (resident size of waitpath and its children)

Every case is reproducible from (--seed, its index): `--only INDEX --keep DIR` leaves the
damaged copy in DIR. Prints a table by mutation kind; exit status 1 when any run crashed, hung
or ran away with memory. Usage:

  tools/fuzz/fuzz.py --waitpath build-asan/app/waitpath -n 200 [--traces DIR...] [--seed S]
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_TRACES = [
    os.path.join(ROOT, "..", "shared", "traces", t)
    for t in ("bug446190", "scp_src", "scp_dest", "hello-lost", "many-threads")
] + [os.path.join(ROOT, "tests", "fixtures", f)
     for f in ("perf/pipe", "perf/mutex", "lttng/rpc", "lttng216/ust-ctf2",
               "lttng216/kernel/rpc-ctf2")]

OUTCOMES = ["ok", "error", "messy", "crash", "hang", "memory"]
BAD = {"crash", "hang", "memory"}
METADATA_MAGIC = 0x75D11D57


def stream_files(trace):
    return sorted(
        f for f in os.listdir(trace)
        if f != "metadata" and not f.startswith(".") and os.path.isfile(os.path.join(trace, f)))


def packet_offsets(data):
    """Offsets of the packets of a CTF stream (LTTng/perf layout: header then context with
    packet_size at a known place is not assumed: the magic is searched)."""
    out, at = [], 0
    while True:
        at = data.find(b"\xc1\x1f\xfc\xc1", at)
        if at < 0:
            return out
        out.append(at)
        at += 4


def metadata_text(path):
    """The TSDL text and whether it was packetized (then edits re-packetize it)."""
    raw = open(path, "rb").read()
    if len(raw) >= 4 and struct.unpack_from("<I", raw)[0] == METADATA_MAGIC:
        text, off = b"", 0
        while off + 37 <= len(raw):
            content, size = struct.unpack_from("<II", raw, off + 24)
            text += raw[off + 37:off + content // 8]
            off += size // 8
        return text, raw[:37]
    return raw, None


def write_metadata(path, text, header):
    if header is None:
        open(path, "wb").write(text)
        return
    # One packet holding everything (babeltrace2 reads any packet size).
    size = 37 + len(text)
    packet = bytearray(header)
    struct.pack_into("<II", packet, 24, size * 8, size * 8)
    open(path, "wb").write(bytes(packet) + text)


def mutate(trace, rng):
    """Damages the copy in `trace`; returns (kind, description)."""
    streams = stream_files(trace)
    kind = rng.choice(["bitflip", "bitflip", "truncate_stream", "random_run", "header_field",
                       "truncate_metadata", "metadata_edit", "metadata_bitflip"])
    if kind in ("bitflip", "truncate_stream", "random_run", "header_field") and streams:
        name = rng.choice(streams)
        path = os.path.join(trace, name)
        data = bytearray(open(path, "rb").read())
        if not data:
            return kind, name + ": empty"
        if kind == "bitflip":
            flips = []
            for _ in range(rng.choice([1, 2])):
                at = rng.randrange(len(data))
                bit = rng.randrange(8)
                data[at] ^= 1 << bit
                flips.append("%#x.%d" % (at, bit))
            desc = "%s: bits %s" % (name, ",".join(flips))
        elif kind == "truncate_stream":
            at = rng.randrange(len(data))
            data = data[:at]
            desc = "%s: cut at %#x" % (name, at)
        elif kind == "random_run":
            at = rng.randrange(len(data))
            run = bytes(rng.randrange(256) for _ in range(512))
            data[at:at + 512] = run[:max(0, min(512, len(data) - at))]
            desc = "%s: 512 random bytes at %#x" % (name, at)
        else:
            packets = packet_offsets(bytes(data)) or [0]
            p = rng.choice(packets)
            field = rng.randrange(4, 72, 4)
            value = rng.choice([2**63, 2**64 - 1, 0, 2**32 - 1, rng.randrange(2**64)])
            if p + field + 8 <= len(data):
                struct.pack_into("<Q", data, p + field, value)
            desc = "%s: packet %#x +%d = %#x" % (name, p, field, value)
        open(path, "wb").write(bytes(data))
        return kind, desc
    meta = os.path.join(trace, "metadata")
    raw = bytearray(open(meta, "rb").read())
    if kind == "truncate_metadata" or not streams:
        at = rng.randrange(len(raw))
        open(meta, "wb").write(bytes(raw[:at]))
        return "truncate_metadata", "metadata: cut at %#x" % at
    if kind == "metadata_bitflip":
        at = rng.randrange(len(raw))
        raw[at] ^= 1 << rng.randrange(8)
        open(meta, "wb").write(bytes(raw))
        return kind, "metadata: bit flipped at %#x" % at
    if raw[:1] == b"\x1e":
        return ctf2_edit(meta, bytes(raw), rng)
    text, header = metadata_text(meta)
    lines = text.split(b"\n")
    edit = rng.choice(["huge_array", "duplicate_member", "delete_line", "huge_integer",
                       "swap_lines"])
    candidates = [i for i, l in enumerate(lines) if l.rstrip().endswith(b";") and b" " in l]
    if not candidates:
        return "metadata_edit", "nothing to edit"
    i = rng.choice(candidates)
    if edit == "huge_array":
        lines[i] = re.sub(rb"(\w+);\s*$", rb"\1[100000000];", lines[i])
    elif edit == "duplicate_member":
        lines.insert(i, lines[i])
    elif edit == "delete_line":
        del lines[i]
    elif edit == "huge_integer":
        lines[i] = re.sub(rb"size = \d+", b"size = 4096", lines[i])
    else:
        j = rng.choice(candidates)
        lines[i], lines[j] = lines[j], lines[i]
    write_metadata(meta, b"\n".join(lines), header)
    return "metadata_edit", "metadata: %s at line %d" % (edit, i + 1)


def json_nodes(value, out):
    """Every dict inside a JSON value, depth first."""
    if isinstance(value, dict):
        out.append(value)
        for v in value.values():
            json_nodes(v, out)
    elif isinstance(value, list):
        for v in value:
            json_nodes(v, out)
    return out


def ctf2_edit(meta, raw, rng):
    """A structural edit of CTF 2 metadata (a JSON text sequence): what a JSON front-end must
    bound or refuse in one line (docs/reading.md, "Metadata: one model, two front-ends")."""
    parts = raw.split(b"\x1e")
    records = [json.loads(p) for p in parts if p.strip()]
    edit = rng.choice(["huge_length", "unknown_type", "drop_record", "duplicate_record",
                       "deep_nesting", "many_members", "bad_location", "bad_alignment"])
    i = rng.randrange(len(records))
    nodes = json_nodes(records[i], [])
    if edit == "huge_length":
        hits = [n for n in nodes if "length" in n] or nodes
        rng.choice(hits)["length"] = rng.choice([2**40, 2**64 - 1, -1, 0])
    elif edit == "unknown_type":
        hits = [n for n in nodes if "type" in n] or nodes
        n = rng.choice(hits)
        n["type"] = str(n.get("type", "")) + "x"
    elif edit == "drop_record":
        del records[i]
    elif edit == "duplicate_record":
        records.insert(i, records[i])
    elif edit == "deep_nesting":
        hits = [n for n in nodes if "field-class" in n] or [records[i]]
        n = rng.choice(hits)
        inner = n.get("field-class", {"type": "null-terminated-string"})
        for _ in range(rng.choice([100, 5000])):
            inner = {"type": "structure", "member-classes": [{"name": "x", "field-class": inner}]}
        n["field-class"] = inner
    elif edit == "many_members":
        hits = [n for n in nodes if isinstance(n.get("member-classes"), list)
                and n["member-classes"]] or nodes
        n = rng.choice(hits)
        if n.get("member-classes"):
            n["member-classes"] = n["member-classes"] * (100000 // len(n["member-classes"]) + 1)
    elif edit == "bad_location":
        hits = [n for n in nodes if "length-field-location" in n or
                "selector-field-location" in n] or nodes
        n = rng.choice(hits)
        key = ("length-field-location" if "length-field-location" in n
               else "selector-field-location")
        n[key] = rng.choice([{"path": ["nope"]}, {"origin": "x", "path": []}, {"path": [None] * 9}])
    else:
        hits = [n for n in nodes if "alignment" in n] or nodes
        rng.choice(hits)["alignment"] = rng.choice([0, 3, 2**40])
    open(meta, "wb").write(b"".join(b"\x1e" + json.dumps(r).encode() for r in records))
    return "metadata_edit", "CTF 2 metadata: %s in record %d" % (edit, i + 1)


def tree_rss(pid):
    """Resident bytes of `pid` and its descendants."""
    total, todo = 0, [pid]
    page = os.sysconf("SC_PAGE_SIZE")
    while todo:
        p = todo.pop()
        try:
            with open("/proc/%d/statm" % p) as f:
                total += int(f.read().split()[1]) * page
            with open("/proc/%d/task/%d/children" % (p, p)) as f:
                todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            pass
    return total


def run(cmd, timeout, memory_mb, env):
    start = time.monotonic()
    err_file = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err_file, env=env,
                            start_new_session=True)
    outcome = None
    out_chunks = []
    os.set_blocking(proc.stdout.fileno(), False)
    while proc.poll() is None:
        chunk = proc.stdout.read()
        if chunk:
            out_chunks.append(chunk)
        if time.monotonic() - start > timeout:
            outcome = "hang"
        elif tree_rss(proc.pid) > memory_mb << 20:
            outcome = "memory"
        if outcome:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            break
        time.sleep(0.02)
    rest = proc.stdout.read()
    if rest:
        out_chunks.append(rest)
    err_file.seek(0)
    err = err_file.read().decode(errors="replace")
    elapsed = time.monotonic() - start
    if outcome is None:
        rc = proc.returncode
        if rc < 0 or rc >= 128 or our_fault(err, proc.pid):
            outcome = "crash"
        elif rc == 0:
            outcome = "ok"
        elif rc == 1:
            lines = [l for l in without_child_noise(err).splitlines() if l.strip()]
            outcome = ("error" if lines and all(l.startswith("waitpath:") for l in lines)
                       else "messy")
        else:
            outcome = "messy"
    return outcome, b"".join(out_chunks).decode(errors="replace"), err, elapsed


REPORT = re.compile(r"^==(\d+)==ERROR: (\w+Sanitizer)", re.M)


def our_fault(err, pid):
    """A sanitizer report is waitpath's fault when it is the process's own, or when the frames
    where it happened are waitpath's code. A reader child (docs/reading.md, "Containment")
    where babeltrace2 itself faults is contained: its host's error says so."""
    if "runtime error:" in err:  # UBSan: in our code (babeltrace2 is not instrumented)
        return True
    for m in REPORT.finditer(err):
        if int(m.group(1)) == pid:
            return True
        frames = re.findall(r"^\s+#[0-2] 0x[0-9a-f]+ in (.*)$", err[m.end():m.end() + 3000], re.M)
        if frames and not any("babeltrace" in f or "libglib" in f or "/lib/" in f for f in frames):
            return True
    return False


def without_child_noise(err):
    """stderr without what reader children print themselves (kept for their sanitizer
    reports by WAITPATH_READER_STDERR=1): GLib criticals and sanitizer report blocks."""
    out, in_report = [], False
    for line in err.splitlines():
        if REPORT.match(line) or line.startswith("AddressSanitizer") or line.startswith("=="):
            in_report = True
        if in_report:
            if line.startswith("==") and "ABORTING" in line:
                in_report = False
            continue
        if re.match(r"^\(process:\d+\): GLib", line) or not line.strip():
            continue
        out.append(line)
    return "\n".join(out)


def events_read(stats_out):
    total = 0
    for line in stats_out.splitlines():
        try:
            total += json.loads(line).get("events", 0)
        except ValueError:
            pass
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--waitpath", default=os.path.join(ROOT, "build", "app", "waitpath"))
    ap.add_argument("-n", type=int, default=200, help="mutations")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--traces", nargs="*", default=None)
    ap.add_argument("--timeout", type=float, default=30, help="seconds per run")
    ap.add_argument("--memory-mb", type=int, default=3072, help="resident limit per run")
    ap.add_argument("--commands", default="stats,analyze")
    ap.add_argument("--decoder", default=None,
                    help="pass --decoder (native, babeltrace2, auto) to every command")
    ap.add_argument("--budget", type=float, default=0, help="stop after this many seconds")
    ap.add_argument("--only", type=int, default=None, help="run case INDEX alone")
    ap.add_argument("--keep", default=None, help="with --only: leave the damaged copy here")
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="cases run at once")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()

    traces = [t for t in (a.traces or DEFAULT_TRACES)
              if os.path.isfile(os.path.join(t, "metadata"))]
    if not traces:
        print("fuzz: no traces found", file=sys.stderr)
        return 77
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1:allocator_may_return_null=1")
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    env.setdefault("WAITPATH_READER_STDERR", "1")  # sanitizer reports of reader children
    # A hang inside the reader is the watchdog's to find, well within --timeout.
    env.setdefault("WAITPATH_READER_WATCHDOG_S", str(max(2, int(a.timeout / 3))))
    commands = a.commands.split(",")

    clean = {}
    for t in traces:
        out = subprocess.run([a.waitpath, "stats", "--json"] +
                             (["--decoder", a.decoder] if a.decoder else []) + [t],
                             capture_output=True, text=True, env=env).stdout
        clean[t] = events_read(out)

    work = tempfile.mkdtemp(prefix="waitpath-fuzz-")
    budget_hit = threading.Event()

    def one_case(i):
        """Damages a copy for case i and runs every command on it: its records, in order."""
        if a.budget and time.monotonic() - start > a.budget:
            budget_hit.set()
            return None
        rng = random.Random(a.seed * 1000003 + i)
        src = traces[rng.randrange(len(traces))]
        copy = a.keep if (a.keep and a.only is not None) else os.path.join(work, "t%d" % i)
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("index"))
        for root, _, files in os.walk(copy):
            for f in files:
                os.chmod(os.path.join(root, f), 0o644)
        kind, desc = mutate(copy, rng)
        recs = []
        for c in commands:
            cmd = [a.waitpath, c] + (["--json"] if c == "stats" else []) + \
                (["--decoder", a.decoder] if a.decoder else []) + [copy]
            outcome, out, err, elapsed = run(cmd, a.timeout, a.memory_mb, env)
            frac = None
            if c == "stats" and clean[src]:
                frac = events_read(out) / clean[src] if outcome == "ok" else 0.0
            recs.append({"case": i, "trace": os.path.basename(src), "kind": kind, "what": desc,
                         "command": c, "outcome": outcome, "seconds": round(elapsed, 2),
                         "read": frac, "stderr": err.strip().splitlines()[:3],
                         "err_tail": err.strip()[-600:]})
        if not (a.keep and a.only is not None):
            shutil.rmtree(copy, ignore_errors=True)
        return recs

    table = {}
    fractions = {}
    results = []
    bad = []
    start = time.monotonic()
    try:
        indices = [a.only] if a.only is not None else range(a.n)
        # Cases are independent (each its own copy, its own processes): --jobs of them at once,
        # reported in case order, the same whatever the number of jobs.
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            for recs in pool.map(one_case, indices):
                if recs is None:
                    continue
                for rec in recs:
                    tail = rec.pop("err_tail")
                    kind, outcome = rec["kind"], rec["outcome"]
                    table.setdefault(kind, {o: 0 for o in OUTCOMES})[outcome] += 1
                    if rec["read"] is not None:
                        fractions.setdefault(kind, []).append(rec["read"])
                    results.append(rec)
                    if outcome in BAD or a.verbose:
                        print("case %d %s %s %s: %s (%.1f s) %s" % (
                            rec["case"], rec["trace"], rec["command"], rec["what"], outcome,
                            rec["seconds"], tail))
                    if outcome in BAD:
                        bad.append(rec)
        if budget_hit.is_set():
            print("fuzz: budget of %.0f s reached after %d cases" %
                  (a.budget, len({r["case"] for r in results})))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def median(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2] if xs else float("nan")

    print("%-18s %s %10s" % ("mutation", " ".join("%7s" % o for o in OUTCOMES), "read (med)"))
    for kind in sorted(table):
        row = table[kind]
        print("%-18s %s %9.0f%%" % (kind, " ".join("%7d" % row[o] for o in OUTCOMES),
                                   100 * median(fractions.get(kind, []))))
    total = {o: sum(r[o] for r in table.values()) for o in OUTCOMES}
    print("%-18s %s" % ("total", " ".join("%7d" % total[o] for o in OUTCOMES)))
    print("(%d runs in %.0f s; seed %d)" % (len(results), time.monotonic() - start, a.seed))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"table": table, "results": results}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
