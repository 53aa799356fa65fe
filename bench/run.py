#!/usr/bin/env python3
"""Driver of bench/run.sh (which builds first): runs every benchmark, prints the table and
writes bench/results/bench.json and bench/results/bench.md. See docs/bench.md."""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "tools/gen/scenarios/scale.toml")
MANY_THREADS = os.path.join(os.environ.get("WAITPATH_SHARED_TRACES",
                                           os.path.join(ROOT, "../shared/traces")),
                            "many-threads")
MANY_THREADS = os.path.normpath(MANY_THREADS)

# Sizes. Throughput traces: `duration` at `rate` events/s (all hosts together), so every host
# count has the same number of events. Memory: `mem_base` x 1, 4, 16 at `mem_rate`, with a
# retention below the 1x duration so that every run is in the evicting steady state.
FULL = dict(duration="5s", rate=1_000_000, hosts=[1, 4, 16], reps=3, mt_reps=5, engine_reps=5,
            mem_rate=200_000, mem_base=8.0, mem_retention="1s",
            cg_duration="0.5s", cg_tiny="0.01s", cg_many_threads=True, profile_hz=999)
QUICK = dict(duration="1s", rate=1_000_000, hosts=[1, 4, 16], reps=3, mt_reps=3, engine_reps=3,
             mem_rate=100_000, mem_base=2.0, mem_retention="500ms",
             cg_duration="0.1s", cg_tiny="0.01s", cg_many_threads=False, profile_hz=499)

TARGETS = {"analyze_over_babeltrace2": 1.30, "analyze_cpu_over_babeltrace2": 0.33,
           "stats_cpu_over_babeltrace2": 0.20,
           "analyze_cpu_over_babeltrace2_hosts": 0.50, "engine_ns_per_event": 150.0,
           "memory_growth_1x_16x": 1.10}


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(cmd, stdout=subprocess.DEVNULL, env=None):
    """Runs cmd; returns (wall s, user+sys s of it and its waited-for descendants, max RSS KB)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: "
                           f"{err.decode(errors='replace')[-2000:]}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def median(xs):
    return statistics.median(xs) if xs else None


def host_dirs(trace):
    if os.path.exists(os.path.join(trace, "metadata")):
        return [trace]
    return sorted(os.path.join(trace, d) for d in os.listdir(trace)
                  if os.path.exists(os.path.join(trace, d, "metadata")))


def bt2_cmd(d):
    # babeltrace2's muxer rejects single-stream traces with timestamp regressions (see
    # bench/read_throughput.sh); those are read without it, the same decoding work.
    streams = [f for f in os.listdir(d) if f != "metadata" and os.path.isfile(os.path.join(d, f))]
    if len(streams) == 1:
        return ["babeltrace2", "run", "--component=src:source.ctf.fs", f'--params=inputs=["{d}"]',
                "--component=d:sink.utils.dummy", "--connect=src:d"]
    return ["babeltrace2", d, "-o", "dummy"]


class Bench:
    def __init__(self, args):
        self.args = args
        self.cfg = QUICK if args.quick else FULL
        b = os.path.join(ROOT, args.build)
        self.waitpath = os.path.join(b, "app/waitpath")
        self.gen = os.path.join(b, "tools/gen/waitpath-gen")
        self.engine_bench = os.path.join(b, "bench/waitpath_engine_bench")
        self.work = args.work or tempfile.mkdtemp(prefix="waitpath-bench.", dir="/var/tmp")
        self.nproc = os.cpu_count() or 1
        self.res = {"mode": "quick" if args.quick else "full", "config": self.cfg}

    # ---- inputs -------------------------------------------------------------------------------
    def generate(self, name, duration, rate, hosts):
        out = os.path.join(self.work, name)
        if not os.path.exists(os.path.join(out, "truth.json")):
            run([self.gen, "-q", "--scenario", SCENARIO, "--out", out, "--set",
                 f"duration={duration}",
                 "--set", f"scale.event_rate={rate}", "--set", f"scale.hosts={hosts}"])
        truth = json.load(open(os.path.join(out, "truth.json")))
        return out, sum(h["events"] for h in truth["hosts"])

    def count_events(self, trace):
        out = subprocess.run([self.waitpath, "stats", "--json", trace], capture_output=True,
                             text=True, check=True)
        return sum(json.loads(line)["events"] for line in out.stdout.splitlines() if line.strip())

    # ---- throughput ---------------------------------------------------------------------------
    def bt2_parallel(self, trace):
        """babeltrace2 -o dummy on every host's trace, nproc of them at a time (one process per
        host, like waitpath's one reader thread per host); CPU time summed over them."""
        dirs = host_dirs(trace)
        if len(dirs) == 1:
            return run(bt2_cmd(dirs[0]))
        script = ("printf '%s\\0' \"$@\" | xargs -0 -P {} -I{{}} babeltrace2 {{}} -o dummy"
                  .format(self.nproc))
        return run(["sh", "-c", script, "sh"] + dirs)

    def throughput(self, name, trace, events, reps):
        log(f"throughput {name}: {events} events, {reps} reps")
        tools = {
            "babeltrace2": lambda: self.bt2_parallel(trace),
            "stats": lambda: run([self.waitpath, "stats", "--decoder", "native", trace]),
            "analyze": lambda: run([self.waitpath, "analyze", "--json", "--decoder", "native",
                                    trace]),
            # the same through babeltrace2 (the decoder before the native one, docs/reading.md)
            "stats_babeltrace2_decoder": lambda: run([self.waitpath, "stats", "--decoder",
                                                      "babeltrace2", trace]),
            "analyze_babeltrace2_decoder": lambda: run([self.waitpath, "analyze", "--json",
                                                        "--decoder", "babeltrace2", trace]),
            # the evicting steady state of a long run (the default 30 s keeps a short trace whole)
            "analyze_retention_1s": lambda: run([self.waitpath, "analyze", "--json", "--retention",
                                                 "1s", trace]),
        }
        if len(host_dirs(trace)) > 1:  # the sync pass's batches not kept: every event decoded twice
            tools["analyze_decode_twice"] = lambda: run([self.waitpath, "analyze", "--json",
                                                         "--keep-decoded-mb", "0", trace])
        samples = {k: [] for k in tools}
        for _ in range(reps):  # interleaved, so that a slow period of the machine hits all three
            for k, f in tools.items():
                samples[k].append(f())
        row = {"trace": name, "hosts": len(host_dirs(trace)), "events": events, "reps": reps}
        for k, s in samples.items():
            wall = median([x[0] for x in s])
            cpu = median([x[1] for x in s])
            row[k] = {"wall_s": [round(x[0], 4) for x in s], "cpu_s": [round(x[1], 4) for x in s],
                      "max_rss_kb": max(x[2] for x in s), "wall_median_s": round(wall, 4),
                      "cpu_median_s": round(cpu, 4), "events_per_s": round(events / wall),
                      "cpu_per_wall": round(cpu / wall, 2)}
        bt = row["babeltrace2"]
        for k in [k for k in tools if k != "babeltrace2"]:
            row[k]["time_over_babeltrace2"] = round(row[k]["wall_median_s"] / bt["wall_median_s"],
                                                    3)
            row[k]["cpu_over_babeltrace2"] = round(row[k]["cpu_median_s"] / bt["cpu_median_s"], 3)
            # The issue's measure: run i of the tool over babeltrace2's run i (same round), sorted.
            pairs = sorted(x[1] / b[1] for x, b in zip(samples[k], samples["babeltrace2"]))
            row[k]["cpu_pair_ratios"] = [round(x, 3) for x in pairs]
            row[k]["cpu_pair_ratio_median"] = round(median(pairs), 3)
        return row

    # ---- engine alone -------------------------------------------------------------------------
    def engine(self, trace):
        log(f"engine alone: {self.cfg['engine_reps']} reps")
        rows = []
        # default retention (30 s: nothing evicted in a short trace, history only grows), then a
        # short one (the steady state of a long run: evicted segments are reused)
        for extra in ([], ["--retention-ms", "250"]):
            out = subprocess.run([self.engine_bench, "--reps", str(self.cfg["engine_reps"]), *extra,
                                  trace],
                                 capture_output=True, text=True, check=True)
            rows.append(json.loads(out.stdout))
        return rows

    # ---- memory -------------------------------------------------------------------------------
    def memory(self, thr_traces):
        c = self.cfg
        ret = c["mem_retention"]
        log(f"memory: duration series at {c['mem_rate']} ev/s, retention {ret}")
        dur_rows = []
        for mult in (1, 4, 16):
            secs = c["mem_base"] * mult
            trace, events = self.generate(f"mem{mult}", f"{secs:g}s", c["mem_rate"], 1)
            # median of 3: how far the reader runs ahead of the engine (up to its queue bound,
            # ~12 MB) varies from run to run by a few MB
            runs = [run([self.waitpath, "analyze", "--json", "--retention", ret, trace])
                    for _ in range(3)]
            wall, cpu, rss = sorted(runs, key=lambda x: x[2])[1]
            # babeltrace2 alone on the same trace: the reader side's own memory, for reference
            _, _, bt_rss = run(bt2_cmd(host_dirs(trace)[0]))
            dur_rows.append({"scale": mult, "duration_s": secs, "events": events, "max_rss_kb": rss,
                             "max_rss_kb_runs": [x[2] for x in runs],
                             "babeltrace2_max_rss_kb": bt_rss, "wall_s": round(wall, 3),
                             "cpu_s": round(cpu, 3)})
            shutil.rmtree(trace, ignore_errors=True)
        host_rows = []
        log(f"memory: host series (throughput traces), retention {ret}")
        for name, trace, events in thr_traces:
            wall, cpu, rss = run([self.waitpath, "analyze", "--json", "--retention", ret, trace])
            host_rows.append({"trace": name, "hosts": len(host_dirs(trace)), "events": events,
                              "max_rss_kb": rss, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3)})
        growth = dur_rows[-1]["max_rss_kb"] / dur_rows[0]["max_rss_kb"]
        own = [x["max_rss_kb"] - x["babeltrace2_max_rss_kb"] for x in dur_rows]
        return {"retention": ret, "rate": c["mem_rate"], "by_duration": dur_rows,
                "by_hosts": host_rows,
                "growth_1x_16x": round(growth, 3),
                "growth_1x_16x_minus_babeltrace2": round(own[-1] / own[0], 3)}

    # ---- callgrind ----------------------------------------------------------------------------
    def callgrind_ir(self, cmd, outfile, extra=()):
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={outfile}", *extra,
                        *cmd],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        with open(outfile) as f:
            for line in f:
                if line.startswith("summary:") or line.startswith("totals:"):
                    return int(line.split()[1])
        raise RuntimeError(f"no totals in {outfile}")

    def callgrind(self):
        c = self.cfg
        big, ev_big = self.generate("cg", c["cg_duration"], 1_000_000, 1)
        tiny, ev_tiny = self.generate("cg-tiny", c["cg_tiny"], 1_000_000, 1)
        log(f"callgrind: {ev_big} and {ev_tiny} events")
        cgdir = os.path.join(ROOT, "bench/results/callgrind")
        os.makedirs(cgdir, exist_ok=True)
        cmds = {
            "babeltrace2": lambda t: bt2_cmd(host_dirs(t)[0]),
            "stats": lambda t: [self.waitpath, "stats", "--decoder", "native", t],
            "analyze": lambda t: [self.waitpath, "analyze", "--json", "--decoder", "native", t],
            "stats_babeltrace2_decoder": lambda t: [self.waitpath, "stats", "--decoder",
                                                    "babeltrace2", t],
            "analyze_babeltrace2_decoder": lambda t: [self.waitpath, "analyze", "--json",
                                                      "--decoder", "babeltrace2", t],
        }
        rows = []
        for k, mk in cmds.items():
            ir_big = self.callgrind_ir(mk(big), os.path.join(cgdir, f"{k}.scale.out"))
            ir_tiny = self.callgrind_ir(mk(tiny), os.path.join(cgdir, f"{k}.tiny.out"))
            rows.append({"tool": k, "trace": f"scale {c['cg_duration']} 1 host", "events": ev_big,
                         "instructions": ir_big, "per_event": round(ir_big / ev_big),
                         # start-up (plugin loading, metadata) removed: the difference with a
                         # tiny trace
                         "marginal_per_event": round((ir_big - ir_tiny) / (ev_big - ev_tiny)),
                         "tiny_events": ev_tiny, "tiny_instructions": ir_tiny})
        bt = rows[0]
        for r in rows:
            r["marginal_over_babeltrace2"] = round(
                r["marginal_per_event"] / bt["marginal_per_event"], 3)
        # The engine alone: only the Push loop is counted (reading happens outside it).
        ir = self.callgrind_ir([self.engine_bench, "--reps", "1", big],
                               os.path.join(cgdir, "engine.out"), ["--toggle-collect=*PushAll*"])
        engine = {"events": ev_big, "instructions": ir, "per_event": round(ir / ev_big, 1)}
        mt = []
        if c["cg_many_threads"] and os.path.isdir(MANY_THREADS):
            ev = self.count_events(MANY_THREADS)
            log(f"callgrind: many-threads ({ev} events)")
            for k, mk in cmds.items():
                ir = self.callgrind_ir(mk(MANY_THREADS),
                                       os.path.join(cgdir, f"{k}.many-threads.out"))
                mt.append({"tool": k, "trace": "many-threads", "events": ev, "instructions": ir,
                           "per_event": round(ir / ev)})
            for r in mt:
                r["over_babeltrace2"] = round(r["instructions"] / mt[0]["instructions"], 3)
        top, objects = self.annotate(os.path.join(cgdir, "analyze.scale.out"))
        return {"scale": rows, "engine": engine, "many_threads": mt, "annotate_top": top,
                "annotate_objects": objects}

    def annotate(self, outfile, n=15):
        """Top functions by exclusive instructions, from callgrind_annotate."""
        try:
            out = subprocess.run(["callgrind_annotate", "--threshold=100", outfile],
                                 capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return [], {}
        total, top, objects = None, [], {}
        for line in out.splitlines():
            m = re.match(r"^\s*([\d,]+)\s+(?:\([\d.]+%\)\s+)?PROGRAM TOTALS", line)
            if m:
                total = int(m.group(1).replace(",", ""))
                continue
            m = re.match(r"^\s*([\d,]+)\s+(?:\([\d.]+%\)\s+)?(\S.*?):(.*?) \[(/[^\]]*)\]$", line)
            if m and total:
                ir = int(m.group(1).replace(",", ""))
                fn = m.group(3).strip()
                obj = os.path.basename(m.group(4) or "")
                objects[obj] = round(objects.get(obj, 0) + 100 * ir / total, 2)
                if len(top) < n:
                    top.append({"share": round(100 * ir / total, 2), "instructions": ir,
                                "function": fn[:160], "object": obj})
        return top, objects

    # ---- profile ------------------------------------------------------------------------------
    def profile(self, trace):
        log("perf record: analyze")
        data = os.path.join(self.work, "perf.data")
        try:
            run(["perf", "record", "-q", "-F", str(self.cfg["profile_hz"]), "-g", "-o", data, "--",
                 self.waitpath, "analyze", "--json", trace])
        except (OSError, RuntimeError) as e:
            return {"error": str(e)[:300]}

        def report(sort, n):
            out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", sort,
                                  "--stdio", "-g", "none", "--percent-limit", "0.3"],
                                 capture_output=True, text=True).stdout
            rows = []
            for line in out.splitlines():
                m = re.match(r"^\s+([\d.]+)%\s+(\S+)(?:\s+\[[.k]\]\s+(.*))?$", line.rstrip())
                if m and len(rows) < n:
                    rows.append({"share": float(m.group(1)), "object": m.group(2),
                                 **({"function": m.group(3).strip()[:160]} if m.group(3) else {})})
            return rows

        def owner(obj):
            if obj == "waitpath":
                return "waitpath"
            if "babeltrace" in obj or "glib" in obj:
                return "babeltrace2"
            if obj.startswith("libc") or obj.startswith("libstdc++") or obj.startswith("ld-linux"):
                return "libc/libstdc++ (both)"
            if "kernel" in obj:
                return "kernel"
            return "other"

        by_dso = report("dso", 30)
        owners = {}
        for r in by_dso:
            owners[owner(r["object"])] = round(owners.get(owner(r["object"]), 0) + r["share"], 2)
        return {"trace": "scale 1 host", "by_object": by_dso, "by_owner": owners,
                "top_functions": report("dso,sym", 25)}

    # ---- everything ---------------------------------------------------------------------------
    def machine(self):
        cpu = ""
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip() != ""
        return {"nproc": self.nproc, "cpu": cpu, "kernel": platform.release(),
                "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                "commit": commit + ("+dirty" if dirty else ""), "loadavg_start": os.getloadavg()[0],
                "babeltrace2": subprocess.run(["babeltrace2", "--version"], capture_output=True,
                                              text=True).stdout.splitlines()[0]}

    def main(self):
        t0 = time.time()
        c = self.cfg
        self.res["machine"] = self.machine()
        log(f"work directory {self.work} ({self.res['mode']} mode)")
        thr = []
        for h in c["hosts"]:
            log(f"generating scale {c['duration']} at {c['rate']} ev/s, {h} host(s)")
            trace, ev = self.generate(f"scale-{h}h", c["duration"], c["rate"], h)
            thr.append((f"scale {h}h", trace, ev))
        rows = [self.throughput(n, t, e, c["reps"]) for n, t, e in thr]
        if os.path.isdir(MANY_THREADS):
            rows.append(self.throughput("many-threads", MANY_THREADS,
                                        self.count_events(MANY_THREADS), c["mt_reps"]))
        else:
            log(f"{MANY_THREADS} absent: skipped")
        self.res["throughput"] = rows
        self.res["engine"] = self.engine(thr[0][1])
        self.res["memory"] = self.memory(thr)
        self.res["callgrind"] = self.callgrind()
        self.res["profile"] = self.profile(thr[0][1])
        self.res["live"] = {"status": "measured separately", "latency": None, "scale": None,
                            "note": "live latency and scale: bench/live_latency.sh and "
                                    "bench/live_scale.sh (bench/run.sh runs them after this)"}
        self.res["machine"]["loadavg_end"] = os.getloadavg()[0]
        self.res["elapsed_s"] = round(time.time() - t0, 1)
        self.res["targets"] = self.targets()
        os.makedirs(os.path.join(ROOT, "bench/results"), exist_ok=True)
        with open(os.path.join(ROOT, "bench/results/bench.json"), "w") as f:
            json.dump(self.res, f, indent=1)
        md = self.markdown()
        with open(os.path.join(ROOT, "bench/results/bench.md"), "w") as f:
            f.write(md)
        print(md)
        if self.args.keep:
            log(f"traces kept in {self.work}")
        elif not self.args.work:
            shutil.rmtree(self.work, ignore_errors=True)

    def targets(self):
        r = self.res
        worst = max(row["analyze"]["time_over_babeltrace2"] for row in r["throughput"])
        ratios = {f"{row['trace']} {variant}": row[variant]["time_over_babeltrace2"]
                  for row in r["throughput"] for variant in ("analyze", "analyze_retention_1s")}
        cg = next(x for x in r["callgrind"]["scale"]
                  if x["tool"] == "analyze")["marginal_over_babeltrace2"]
        ns = min(x["ns_per_event"] for x in r["engine"])
        g = r["memory"]["growth_1x_16x"]
        # the decoder targets: CPU (user+sys) over babeltrace2's, medians of the pair-by-pair ratios
        cpu = []
        for row in r["throughput"]:
            one = row["hosts"] == 1
            checks = ([("analyze", TARGETS["analyze_cpu_over_babeltrace2"]),
                       ("stats", TARGETS["stats_cpu_over_babeltrace2"])]
                      if one else [("analyze", TARGETS["analyze_cpu_over_babeltrace2_hosts"])])
            for tool, target in checks:
                pairs = row[tool]["cpu_pair_ratios"]
                whose = "stats'" if tool == "stats" else tool + "'s"
                cpu.append({"goal": f"native decoder, {row['trace']}: {whose} CPU <= {target:g} x "
                                    f"babeltrace2 -o dummy's"
                                    + (" (one per host, summed; one decoding pass)" if not one
                                       else ""),
                            "target": target, "trace": row["trace"], "tool": tool,
                            "measured_cpu_ratio": row[tool]["cpu_pair_ratio_median"],
                            "cpu_ratio_min": pairs[0], "cpu_ratio_max": pairs[-1],
                            "met": row[tool]["cpu_pair_ratio_median"] <= target})
        return cpu + [
            {"goal": "analyze adds <= 30 % to babeltrace2's decoding time",
             "target": TARGETS["analyze_over_babeltrace2"],
             "measured_worst_wall_ratio": worst, "measured_instruction_ratio": cg,
             "wall_ratios": ratios, "met": worst <= TARGETS["analyze_over_babeltrace2"]},
            {"goal": "engine < 150 ns/event", "target": TARGETS["engine_ns_per_event"],
             "measured": ns, "met": ns < TARGETS["engine_ns_per_event"]},
            {"goal": "memory flat: <= 10 % growth from 1x to 16x duration",
             "target": TARGETS["memory_growth_1x_16x"],
             "measured": g,
             "measured_minus_babeltrace2": r["memory"]["growth_1x_16x_minus_babeltrace2"],
             "met": g <= TARGETS["memory_growth_1x_16x"]},
        ]

    def markdown(self):
        r, c = self.res, self.cfg
        m = r["machine"]
        L = []
        L.append(f"Machine: {m['nproc']} cores, {m['cpu']}, kernel {m['kernel']}, "
                 f"{m['babeltrace2']}; {m['date']}; commit {m['commit']}; load average "
                 f"{m['loadavg_start']:.2f} at start, {m['loadavg_end']:.2f} at end; "
                 f"`bench/run.sh{' --quick' if r['mode'] == 'quick' else ''}` took "
                 f"{r['elapsed_s']:.0f} s.\n")
        L.append("### Throughput (wall: median of the runs; CPU: user+sys)\n")
        L.append(f"Generated `scale` traces: {c['duration']} at {c['rate']:,} events/s over all "
                 f"hosts. babeltrace2 = `babeltrace2 TRACE -o dummy`, one process per host, "
                 f"{self.nproc} at a time (its CPU time is the sum over hosts). Ratio = waitpath "
                 "time / babeltrace2 time (target for analyze: ≤ 1.30).\n")
        L.append("| trace | hosts | events | runs | bt2 s | stats s | analyze s | bt2 Mev/s | "
                 "stats Mev/s | analyze Mev/s | stats/bt2 wall | analyze/bt2 wall | analyze/bt2 "
                 "CPU | analyze CPU/wall |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for row in r["throughput"]:
            b, s, a = row["babeltrace2"], row["stats"], row["analyze"]
            L.append(f"| {row['trace']} | {row['hosts']} | {row['events']:,} | {row['reps']} | "
                     f"{b['wall_median_s']:.2f} | {s['wall_median_s']:.2f} | "
                     f"{a['wall_median_s']:.2f} | {b['events_per_s'] / 1e6:.2f} | "
                     f"{s['events_per_s'] / 1e6:.2f} | {a['events_per_s'] / 1e6:.2f} | "
                     f"{s['time_over_babeltrace2']:.2f} | **{a['time_over_babeltrace2']:.2f}** | "
                     f"{a['cpu_over_babeltrace2']:.2f} | {a['cpu_per_wall']:.2f} |")
        L.append("")
        L.append("CPU (user+sys) beside babeltrace2's, same runs (the decoder targets' measure: "
                 "run i of each command over babeltrace2's run i of the same round; median, "
                 "min–max of those ratios; targets: 1 host stats ≤ 0.20, analyze ≤ 0.33; several "
                 "hosts analyze ≤ 0.50 in one decoding pass).\n")
        L.append("| trace | hosts | bt2 CPU s | stats CPU s | stats/bt2 CPU | analyze CPU s | "
                 "analyze/bt2 CPU | analyze --decoder babeltrace2 /bt2 CPU |")
        L.append("|---|---|---|---|---|---|---|---|")
        for row in r["throughput"]:
            b, s, a, ab = (row["babeltrace2"], row["stats"], row["analyze"],
                           row["analyze_babeltrace2_decoder"])
            rng = lambda x: (f"**{x['cpu_pair_ratio_median']:.2f}** ({x['cpu_pair_ratios'][0]:.2f}–"
                             f"{x['cpu_pair_ratios'][-1]:.2f})")
            L.append(f"| {row['trace']} | {row['hosts']} | {b['cpu_median_s']:.2f} | "
                     f"{s['cpu_median_s']:.2f} | {rng(s)} | {a['cpu_median_s']:.2f} | {rng(a)} | "
                     f"{rng(ab)} |")
        L.append("")
        L.append("Variants of analyze on the same traces, same runs: `--retention 1s` (the "
                 f"evicting steady state of a long run; the default 30 s keeps these "
                 f"{c['duration']} traces whole, so history only grows) and, with several hosts, "
                 "`--keep-decoded-mb 0` (the clock-sync pass's batches are not kept: every event "
                 "is decoded twice).\n")
        L.append("| trace | hosts | analyze s | --retention 1s s | /bt2 wall | /bt2 CPU | "
                 "--keep-decoded-mb 0 s | /bt2 wall | /bt2 CPU | peak RSS MB: analyze, 1s, keep 0 "
                 "|")
        L.append("|---|---|---|---|---|---|---|---|---|---|")
        for row in r["throughput"]:
            a, e = row["analyze"], row["analyze_retention_1s"]
            t = row.get("analyze_decode_twice")
            tw = (f"{t['wall_median_s']:.2f} | {t['time_over_babeltrace2']:.2f} | "
                  f"{t['cpu_over_babeltrace2']:.2f}"
                  if t else "– | – | –")
            rss = f"{a['max_rss_kb'] / 1024:.0f}, {e['max_rss_kb'] / 1024:.0f}, " + (
                f"{t['max_rss_kb'] / 1024:.0f}" if t else "–")
            L.append(f"| {row['trace']} | {row['hosts']} | {a['wall_median_s']:.2f} | "
                     f"{e['wall_median_s']:.2f} | **{e['time_over_babeltrace2']:.2f}** | "
                     f"{e['cpu_over_babeltrace2']:.2f} | {tw} | {rss} |")
        L.append("")
        cg = r["callgrind"]
        L.append("### Instructions (callgrind, repeatable)\n")
        L.append(f"Marginal = (Ir(trace) − Ir(tiny trace of {cg['scale'][0]['tiny_events']:,} "
                 f"events)) / extra events: start-up (plugin loading, metadata parsing) removed.\n")
        L.append("| command | trace | events | instructions | per event | marginal per event | vs "
                 "babeltrace2 |")
        L.append("|---|---|---|---|---|---|---|")
        for x in cg["scale"]:
            L.append(f"| {x['tool']} | {x['trace']} | {x['events']:,} | {x['instructions']:,} | "
                     f"{x['per_event']:,} | {x['marginal_per_event']:,} | "
                     f"{x['marginal_over_babeltrace2']:.2f} |")
        for x in cg["many_threads"]:
            L.append(f"| {x['tool']} | many-threads | {x['events']:,} | {x['instructions']:,} | "
                     f"{x['per_event']:,} | | {x['over_babeltrace2']:.2f} (total) |")
        e = cg["engine"]
        L.append(f"| engine alone (`Engine::Push` loop) | {cg['scale'][0]['trace']} | "
                 f"{e['events']:,} | {e['instructions']:,} | {e['per_event']:,} | | |")
        L.append("")
        L.append("### Engine alone (`bench/engine_bench.cc`: batches read into memory, then "
                 "`Engine::Push`)\n")
        L.append("Fresh engine per repetition, no listener. Default retention (30 s): a short "
                 "trace never evicts, history only grows; 250 ms: the steady state of a long run. "
                 "The first repetition takes its history memory from the system (page faults); "
                 "later ones reuse what the previous engine gave back to the chunk pool, as a "
                 f"long-running process does. Instructions/event: callgrind on the `Push` loop "
                 f"only, {cg['scale'][0]['trace']}, default retention. Target < 150 ns/event.\n")
        L.append("| trace | retention | events | reps | median s | ns/event | best ns/event | "
                 "first rep ns/event | Mevents/s | resolved waits | waits/s | evicted segments |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for en in r["engine"]:
            L.append(f"| scale {c['duration']} 1 host | {en['retention_ns'] / 1e9:g} s | "
                     f"{en['events']:,} | {en['reps']} | {en['push_median_s']:.3f} | "
                     f"**{en['ns_per_event']:.0f}** | {en['min_ns_per_event']:.0f} | "
                     f"{en.get('first_ns_per_event', 0):.0f} | {en['events_per_s'] / 1e6:.2f} | "
                     f"{en['waits']:,} | {en['waits_per_s']:,.0f} | {en['evicted_segments']:,} |")
        L.append(f"\nEngine instructions per event (callgrind): **{e['per_event']:,}**.\n")
        me = r["memory"]
        L.append(f"### Memory (peak RSS of `waitpath analyze --json --retention "
                 f"{me['retention']}`)\n")
        L.append(f"Retention {me['retention']} is below the 1× duration, so every run is in the "
                 f"evicting steady state (with the default 30 s nothing would be evicted in the "
                 "short runs).\n")
        L.append("babeltrace2 RSS: `babeltrace2 TRACE -o dummy` on the same trace (the decoder's "
                 "own memory).\n")
        L.append(f"| series | events | peak RSS MB (median of 3) | the 3 runs | vs first | "
                 f"babeltrace2 RSS MB | analyze − babeltrace2 MB | wall s |")
        L.append("|---|---|---|---|---|---|---|---|")
        base = me["by_duration"][0]["max_rss_kb"]
        for x in me["by_duration"]:
            runs = ", ".join(f"{v / 1024:.1f}" for v in x.get("max_rss_kb_runs", []))
            L.append(f"| {x['scale']}× ({x['duration_s']:g} s at {me['rate']:,} ev/s, 1 host) | "
                     f"{x['events']:,} | {x['max_rss_kb'] / 1024:.1f} | {runs} | "
                     f"{x['max_rss_kb'] / base:.2f} | {x['babeltrace2_max_rss_kb'] / 1024:.1f} | "
                     f"{(x['max_rss_kb'] - x['babeltrace2_max_rss_kb']) / 1024:.1f} | "
                     f"{x['wall_s']:.2f} |")
        base = me["by_hosts"][0]["max_rss_kb"]
        for x in me["by_hosts"]:
            L.append(f"| {x['trace']} ({c['duration']} at {c['rate']:,} ev/s) | {x['events']:,} | "
                     f"{x['max_rss_kb'] / 1024:.1f} | | {x['max_rss_kb'] / base:.2f} | | | "
                     f"{x['wall_s']:.2f} |")
        L.append("")
        L.append("### Reader threads: CPU time / wall time of analyze\n")
        L.append("| trace | hosts | analyze user+sys s | wall s | CPU/wall | bt2 CPU/wall |")
        L.append("|---|---|---|---|---|---|")
        for row in r["throughput"]:
            a = row["analyze"]
            L.append(f"| {row['trace']} | {row['hosts']} | {a['cpu_median_s']:.2f} | "
                     f"{a['wall_median_s']:.2f} | {a['cpu_per_wall']:.2f} | "
                     f"{row['babeltrace2']['cpu_per_wall']:.2f} |")
        L.append("")
        p = r["profile"]
        L.append("### Profile (`perf record -g`, `waitpath analyze --json`, scale 1 host)\n")
        if "error" in p:
            L.append(f"perf failed: {p['error']}\n")
        else:
            L.append("By owner: "
                     + ", ".join(f"{k} {v:.1f} %"
                                 for k, v in sorted(p["by_owner"].items(), key=lambda kv: -kv[1]))
                     + "\n")
            L.append("| share | object | function |")
            L.append("|---|---|---|")
            for x in p["top_functions"][:20]:
                L.append(f"| {x['share']:.1f} % | {x['object']} | `{x.get('function', '')[:100]}` "
                         f"|")
            L.append("")
        if cg["annotate_top"]:
            L.append("Callgrind, analyze, instructions by object: " + ", ".join(
                f"{k} {v:.1f} %" for k, v in sorted(cg["annotate_objects"].items(),
                                                    key=lambda kv: -kv[1])[:8]) + "\n")
            L.append("Callgrind, analyze, exclusive instructions:\n")
            L.append("| share | object | function |")
            L.append("|---|---|---|")
            for x in cg["annotate_top"]:
                L.append(f"| {x['share']:.1f} % | {x['object']} | `{x['function'][:100]}` |")
            L.append("")
        L.append("Live latency and live scale (`bench/live_latency.sh`, `bench/live_scale.sh`, run "
                 "after this by `bench/run.sh` as root) print their own tables.\n")
        L.append("### Targets (goals, not assertions)\n")
        L.append("| goal | measured | met |")
        L.append("|---|---|---|")
        for t in r["targets"]:
            if "measured_worst_wall_ratio" in t:
                meas = (f"worst wall ratio {t['measured_worst_wall_ratio']:.2f}, "
                        f"instructions {t['measured_instruction_ratio']:.2f}; wall ratios: " +
                        ", ".join(f"{k.replace('analyze_retention_1s', '--retention 1s').replace(' analyze', '')} "  # noqa: line-length
                                  f"{v:.2f}" for k, v in t["wall_ratios"].items()))
            elif "measured_cpu_ratio" in t:
                meas = (f"CPU ratio {t['measured_cpu_ratio']:.2f} (pairs: min "
                        f"{t['cpu_ratio_min']:.2f}, max {t['cpu_ratio_max']:.2f})")
            elif "measured_minus_babeltrace2" in t:
                meas = (f"{t['measured']:.2f}× (analyze − babeltrace2 RSS: "
                        f"{t['measured_minus_babeltrace2']:.2f}×)")
            else:
                meas = f"{t['measured']:.0f} ns/event (best setting)"
            L.append(f"| {t['goal']} | {meas} | {'yes' if t['met'] else 'no'} |")
        L.append("")
        return "\n".join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--build", default="build-bench")
    ap.add_argument("--work", default=os.environ.get("BENCH_WORK"))
    Bench(ap.parse_args()).main()


if __name__ == "__main__":
    main()
