#!/usr/bin/env python3
"""The table of the hostile-input findings (docs/reading.md, "Hostile input"), measured again: each
finding's damage made on copies of the shared traces, waitpath run on them, and the outcome
summarized (docs/bench.md, "Hostile input"). Usage:

  tools/fuzz/findings.py [--waitpath build/app/waitpath] [--shared ../shared/traces]
"""
import argparse
import collections
import json
import os
import random
import shutil
import statistics
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz  # noqa: E402

ROOT = fuzz.ROOT


def copy(src, work, tag):
    dst = os.path.join(work, tag)
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("index"))
    for root, _, files in os.walk(dst):
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    return dst


class Peak:
    """Runs a command, sampling the resident size of it and its children."""

    def __init__(self, waitpath, timeout):
        self.waitpath, self.timeout = waitpath, timeout

    def __call__(self, args):
        import subprocess
        import signal
        start = time.monotonic()
        proc = subprocess.Popen([self.waitpath] + args, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        peak, hung = 0, False
        while proc.poll() is None:
            peak = max(peak, fuzz.tree_rss(proc.pid))
            if time.monotonic() - start > self.timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                hung = True
                break
            time.sleep(0.01)
        out, err = proc.communicate()
        return {"rc": None if hung else proc.returncode, "out": out.decode(errors="replace"),
                "err": err.decode(errors="replace"), "s": time.monotonic() - start,
                "rss_mb": peak / 2**20, "hung": hung}


def outcome(r):
    if r["hung"]:
        return "hang"
    if r["rc"] < 0 or r["rc"] >= 128:
        return "crash"
    lines = [l for l in r["err"].splitlines() if l.strip()]
    if r["rc"] == 0:
        return "ok"
    return "error" if lines and all(l.startswith("waitpath:") for l in lines) else "messy"


def tally(results):
    """How many runs had each outcome, as "N ok, M error"."""
    kinds = collections.Counter(outcome(r) for r in results)
    return ", ".join("%d %s" % (n, k) for k, n in sorted(kinds.items()))


def summary(name, results, clean_events=None):
    kinds = tally(results)
    read = ""
    if clean_events:
        fr = [fuzz.events_read(r["out"]) / clean_events if outcome(r) == "ok" else 0.0
              for r in results]
        read = "median %.0f %% of events read" % (100 * statistics.median(fr))
    named = sum(1 for r in results if r["err"].strip()
                and ("offset" in r["err"] or "line " in r["err"]))
    print("| %s | %s | %s; max %.2f s, max %.0f MB; %d of %d messages name an offset or line |" % (
        name, kinds, read,
        max(r["s"] for r in results), max(r["rss_mb"] for r in results), named, len(results)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--waitpath", default=os.path.join(ROOT, "build", "app", "waitpath"))
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared", "traces"))
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    run = Peak(a.waitpath, a.timeout)
    sh = lambda t: os.path.join(a.shared, t)  # noqa: E731
    if not os.path.isdir(sh("scp_src")):
        print("findings: ../shared/traces not present", file=sys.stderr)
        return 77
    work = tempfile.mkdtemp(prefix="waitpath-findings-")
    clean = {t: fuzz.events_read(run(["stats", "--json", sh(t)])["out"])
             for t in ("scp_src", "hello-lost", "bug446190", "many-threads", "scp_dest")}
    print("| finding | outcomes | detail |")
    print("|---|---|---|")
    try:
        # Truncated metadata: 22 cut points of scp_src's.
        size = os.path.getsize(sh("scp_src") + "/metadata")
        res = []
        for k in range(1, 23):
            d = copy(sh("scp_src"), work, "meta%d" % k)
            os.truncate(d + "/metadata", size * k // 23)
            res.append(run(["stats", d]))
        summary("truncated metadata (22 cuts of scp_src's)", res)

        # 512 random bytes in one stream of hello-lost (20 places).
        res = []
        for k in range(20):
            rng = random.Random(k)
            d = copy(sh("hello-lost"), work, "rand%d" % k)
            p = d + "/channel1_2"
            data = bytearray(open(p, "rb").read())
            at = rng.randrange(len(data) - 512)
            data[at:at + 512] = bytes(rng.randrange(256) for _ in range(512))
            open(p, "wb").write(bytes(data))
            res.append(run(["stats", "--json", d]))
        summary("512 random bytes in one stream of hello-lost (20 places)", res,
                clean["hello-lost"])

        # Metadata declaring _prev_tid[100000000], and a duplicated struct member (scp_src's,
        # its text re-packetized).
        for name, edit in (("metadata declaring `_prev_tid[100000000]`", "array"),
                           ("a duplicated struct member", "dup")):
            d = copy(sh("scp_src"), work, edit)
            text, header = fuzz.metadata_text(d + "/metadata")
            if edit == "array":
                text = text.replace(b"_prev_tid;", b"_prev_tid[100000000];", 1)
            else:
                i = text.index(b"_prev_tid;")
                line_start = text.rindex(b"\n", 0, i) + 1
                line = text[line_start:text.index(b"\n", i) + 1]
                text = text[:line_start] + line + text[line_start:]
            fuzz.write_metadata(d + "/metadata", text, header)
            summary(name, [run(["stats", d])])

        # packet_size = 2^63, timestamp_end = 2^64-1 in one packet of bug446190 (CPU 1).
        for name, field, value in (("packet_size = 2^63", 48, 2**63),
                                   ("timestamp_end = 2^64-1", 32, 2**64 - 1)):
            d = copy(sh("bug446190"), work, "field%d" % field)
            with open(d + "/channel0_1", "r+b") as f:
                f.seek(0x40000 + field)
                f.write(struct.pack("<Q", value))
            summary(name + " (one packet of bug446190)", [run(["stats", "--json", d])],
                    clean["bug446190"])

        # 1-2 flipped bits anywhere in one stream (50 cases over the shared traces).
        res, clean_of = [], []
        for k in range(50):
            rng = random.Random(1000 + k)
            t = rng.choice(["bug446190", "many-threads", "scp_src", "scp_dest", "hello-lost"])
            d = copy(sh(t), work, "flip%d" % k)
            s = rng.choice(fuzz.stream_files(d))
            data = bytearray(open(os.path.join(d, s), "rb").read())
            for _ in range(rng.choice([1, 2])):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            open(os.path.join(d, s), "wb").write(bytes(data))
            r = run(["stats", "--json", d])
            r["frac"] = fuzz.events_read(r["out"]) / clean[t] if outcome(r) == "ok" else 0.0
            res.append(r)
        kinds = tally(res)
        print("| 1–2 flipped bits in one stream (50) | %s | median %.0f %% of events read, "
              "worst %.0f %% |" % (kinds,
                                   100 * statistics.median(r["frac"] for r in res),
                                   100 * min(r["frac"] for r in res)))

        # A stream file truncated anywhere (67 cuts).
        res = []
        for k in range(67):
            rng = random.Random(2000 + k)
            t = rng.choice(["bug446190", "many-threads", "scp_src", "scp_dest", "hello-lost"])
            d = copy(sh(t), work, "cut%d" % k)
            s = rng.choice(fuzz.stream_files(d))
            p = os.path.join(d, s)
            os.truncate(p, rng.randrange(os.path.getsize(p)))
            r = run(["stats", "--json", d])
            r["frac"] = fuzz.events_read(r["out"]) / clean[t] if outcome(r) == "ok" else 0.0
            res.append(r)
        kinds = tally(res)
        refused = sum(1 for r in res if outcome(r) != "ok")
        print("| a stream file truncated anywhere (67) | %s | %d of 67 refuse the trace; median "
              "%.0f %% of events read |" % (kinds,
                                           refused,
                                           100 * statistics.median(r["frac"] for r in res)))

        # Two copies of one trace; one hostname on two machines.
        a_, b_ = copy(sh("bug446190"), work, "a"), copy(sh("bug446190"), work, "b")
        r = run(["stats", "--json", a_, b_])
        print("| two copies of one trace | %s | %d events (one copy: %d); warns: %s |" % (
            outcome(r), fuzz.events_read(r["out"]), clean["bug446190"], "a copy of" in r["err"]))
        pipe, mutex = (os.path.join(ROOT, "tests", "fixtures", "perf", x)
                       for x in ("pipe", "mutex"))
        r = run(["stats", "--json", pipe, mutex])
        r2 = run(["stats", "--json", "--host-from", "dir", pipe, mutex])
        print("| two machines with one hostname | %s | %d host(s), warns: %s; with --host-from "
              "dir: %d hosts |" % (outcome(r), len(r["out"].splitlines()),
                                   "--host-from" in r["err"], len(r2["out"].splitlines())))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
