#!/usr/bin/env python3
"""The VM lab's tests (docs/lab.md): real LTTng kernel live sessions, set up in QEMU guests by
configs/lttng/waitpath-session.sh, streamed to an lttng-relayd on the host, analysed by
`waitpath live` while they stream and by `waitpath analyze` on the relayd's stored copy.

  test_lab.py WAITPATH workloads [--fixtures DIR]   (a) findings, (c) live == analyze, (d) \
invariants
  test_lab.py WAITPATH rpc2                         (b) an RPC across two guests, clock sync
  test_lab.py WAITPATH restart                      (e) relayd and session daemons killed mid-stream
  test_lab.py WAITPATH overlay [--fixtures DIR]     (f) kmod/ (DKMS) over a VXLAN(+ESP) overlay, \
cgroups
  test_lab.py WAITPATH lttng216 [--trace-format F]  (a) (c) (d) on an LTTng 2.16 guest (Debian sid \
image),
                                                    CTF 2 (2.16's default) to a 2.16 relayd; \
F=ctf-1.8
                                                    records CTF 1.8 instead
  test_lab.py WAITPATH services [--all] [--table FILE] [--phases P,...]
                                                    (g) known causes injected into PostgreSQL and
                                                    pgbench across two guests; --all: every phase,
                                                    not CI's subset; --table: docs/accuracy.md's
  test_lab.py WAITPATH mixed [--trace-format F]     (b) with a 2.16 server guest (CTF 2, or F) and \
a 2.13
                                                    client guest (CTF 1.8), one 2.16 relayd

Exit 0 pass, 1 fail, 77 skip (no root, QEMU or debootstrap). WAITPATH_VMLAB_KEEP=1 keeps the
lab directory (serial logs, relayd output, waitpath output) under /var/tmp.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab as vmlab  # noqa: E402
import services  # noqa: E402
from lab import log  # noqa: E402

SRC = vmlab.SRC
BOOT_TIMEOUT = 300
failures = []


def check(ok, msg):
    if ok:
        log(f"ok: {msg}")
    else:
        log(f"FAIL: {msg}")
        failures.append(msg)
    return ok


def workloads():
    return json.load(open(os.path.join(SRC, "tools", "workloads", "workloads.json")))["workloads"]


def run(argv, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    return p.stdout


def records(text, kind="task"):
    return [json.loads(l) for l in text.splitlines() if l.startswith("{")
            and f'"type":"{kind}"' in l]


def task_lines(text):
    return sorted(l for l in text.splitlines() if '"type":"task"' in l)


ORACLE = os.path.join(SRC, "tests", "lttng216", "bt2-oracle.sh")


def trace_format(trace_dir):
    """"ctf-2" when the trace's metadata is CTF 2 (JSON records, each after 0x1E), else
    "ctf-1.8"."""
    with open(os.path.join(trace_dir, "metadata"), "rb") as f:
        return "ctf-2" if f.read(1) == b"\x1e" else "ctf-1.8"


def count_events(trace_dirs):
    total = 0
    for d in trace_dirs:
        # The host's babeltrace2 (2.0) cannot read CTF 2: babeltrace2 2.1 of the sid chroot can.
        bt2 = [ORACLE] if trace_format(d) == "ctf-2" else ["babeltrace2"]
        out = run(bt2 + [d, "-c", "sink.utils.counter"])
        # The counter prints running counts every 10,000 messages, then the totals: the last.
        counts = [int(l.split()[0]) for l in out.splitlines()
                  if l.split()[1:3] == ["Event", "messages"]]
        total += counts[-1] if counts else 0
    return total


def expectations_hold(task, expect, what):
    """The check of tests/e2e/analyze_cli_test.cc's RecordedWorkloadTest on one task record."""
    life = task["end_ns"] - task["start_ns"]
    groups, states = {}, {}
    for b in task["by_task"]:
        for s, ns in b["states"].items():
            groups[(b["comm"], s)] = groups.get((b["comm"], s), 0) + ns
            states[s] = states.get(s, 0) + ns
    ok = True
    for e in expect:
        if e["kind"] == "state_share":
            share = states.get(e["state"], 0) / life
        else:
            share = groups.get((e["comm"], e["state"]), 0) / life
        detail = f"{what}: {e['kind']} {e.get('comm', '')} {e['state']} share {share:.3f}"
        if e["kind"] == "top_blamed_comm":
            top = max(groups.items(), key=lambda kv: kv[1])[0]
            ok &= check(top == (e["comm"], e["state"]), f"{detail}: top is {top}")
        if "min_share" in e:
            ok &= check(share >= e["min_share"], f"{detail} >= {e['min_share']}")
        if "max_share" in e:
            ok &= check(share <= e["max_share"], f"{detail} <= {e['max_share']}")
    return ok


class Live:
    """`waitpath live --all --json` against the lab's relayd."""

    def __init__(self, lab, w, tag="live", metrics=False, extra=()):
        self.lab, self.out, self.err = (lab, os.path.join(lab.dir, f"{tag}.out"),
                                        os.path.join(lab.dir, f"{tag}.err"))
        self.metrics = f"127.0.0.1:{lab.base + 4}" if metrics else None
        self.proc = lab.spawn([w, "live", "--relayd", f"net://127.0.0.1:{lab.live}", "--all",
                               "--json"] +
                              (["--metrics", self.metrics] if metrics else []) + list(extra),
                              out=self.out, err=self.err)

    def scrape(self):
        """The Prometheus exposition live serves, saved next to its output."""
        import urllib.request
        text = urllib.request.urlopen(f"http://{self.metrics}/metrics", timeout=10).read().decode()
        path = os.path.join(self.lab.dir, "metrics.txt")
        open(path, "w").write(text)
        return text, path

    def stderr(self):
        return open(self.err, errors="replace").read()

    def wait_for(self, text, count, timeout):
        vmlab.wait_until(lambda: self.stderr().count(text) >= count, timeout,
                         f"{count} x '{text}' from waitpath live")

    def stop(self):
        rc = self.lab.stop(self.proc, signal.SIGINT, 30)
        check(rc == 0, f"waitpath live stopped cleanly (exit {rc})")
        return open(self.out).read()


def check_invariants(path, metrics=None):
    p = subprocess.run([sys.executable, os.path.join(SRC, "tests", "tools", "check_records.py"),
                        path] +
                       (["--metrics", metrics] if metrics else []),
                       capture_output=True, text=True)
    check(p.returncode == 0,
          f"check_records.py {os.path.basename(path)}: {(p.stdout + p.stderr).strip()[:500]}")


def kernel_dirs(session_dir):
    """The CTF trace dirs under a relayd session dir (kernel/ for a kernel session)."""
    res = []
    for root, dirs, files in os.walk(session_dir):
        if "metadata" in files:
            res.append(root)
    return sorted(res)


# --- (a) (c) (d): every workload in its own session ------------------------------------------
WL_SCRIPT = """
run_wl() {  # run_wl NAME COMMAND...: one session per workload, host named vm-NAME
  n=$1; shift
  hostname "vm-$n"
  $SESSION --no-start --name "wl-$n" "$RELAYD" || { echo "LAB: session wl-$n failed"; return 1; }
  sleep 3   # waitpath live discovers the session (once a second) before it starts
  lttng start "wl-$n" >/dev/null
  sleep 0.5
  echo "LAB: workload $n start"
  "$@"
  echo "LAB: workload $n exit=$?"
  sleep 0.5
  $SESSION --destroy --name "wl-$n"
}
"""


# Under TCG the guest runs code 10-50x slower than the host, and a process' own start (exec,
# the dynamic loader) costs tens of ms of `running`: the lab runs the workloads longer than the
# perf recordings did so that the same expectations (shares of the watched task's life) hold.
# diskwrite writes to the lab disk, which QEMU throttles (lab.py) so that its flushes are
# real waits instead of the host's page cache answering faster than the emulated CPU.
LAB_ARGS = {
    "rpc": ["--requests", "30", "--work-ms", "40"],
    "forkchain": ["--work-ms", "400"],
    "sleeper": ["--count", "20", "--sleep-ms", "50"],
    "mutex": ["--hold-ms", "60"],
    "pipe": ["--count", "30", "--work-ms", "40"],
    "diskwrite": ["--dir", "/lab"],
}


LAB_NOTE = (" In the lab (docs/lab.md) it runs with the longer arguments appended to command: under"
            " TCG, emulated code is 10-50x slower.")


def lab_command(x):
    return x["command"] + LAB_ARGS.get(x["workload"], [])


def test_workloads(w, fixtures=None, suite="bookworm", relayd="host", trace_fmt=None,
                   tag="workloads"):
    """suite/relayd/trace_fmt: the guest image, the relayd and the sessions' trace format
    (lab.Lab, lab.Lab.guest); the checks are the same for all."""
    wls = workloads()
    script = WL_SCRIPT + "".join(f"run_wl {x['workload']} {' '.join(lab_command(x))}\n"
                                 for x in wls)
    with vmlab.Lab(tag, suite=suite, relayd=relayd) as lab:
        lab.start_relayd()
        live = Live(lab, w)
        g = lab.guest("vm", script, smp=2, trace_format=trace_fmt).start()
        _, t_init = g.wait_line(r"^LAB: init", BOOT_TIMEOUT)
        _, t_ready = g.wait_line(r"^LAB: sessiond ready", BOOT_TIMEOUT)
        log(f"guest ({suite}: kernel {g.info['kernel']}, lttng-modules {g.info['lttng_modules']}, "
            f"lttng-tools {g.info.get('lttng_tools', '?')}; relayd {relayd}) init after "
            f"{t_init:.1f} s, lttng-sessiond ready after {t_ready:.1f} s")
        g.wait(BOOT_TIMEOUT + 60 * len(wls))
        lines = g.lab_lines()
        for x in wls:
            check(f"LAB: workload {x['workload']} exit=0" in lines,
                  f"workload {x['workload']} ran in the guest")
        live.wait_for("session ended", len(wls), 60)
        live_out = live.stop()
        live_path = os.path.join(lab.dir, "live.out")
        check_invariants(live_path)
        stored = lab.stored_sessions()
        check(len(stored) == len(wls), f"the relayd stored {len(wls)} sessions ({sorted(stored)})")
        analyze_lines, total_events, formats = [], 0, set()
        for x in wls:
            host = f"vm-{x['workload']}"
            dirs = [k for s in stored.get(host, []) for k in kernel_dirs(s)]
            if not check(len(dirs) == 1, f"{host}: one stored kernel trace ({dirs})"):
                continue
            fmt = trace_format(dirs[0])
            formats.add(fmt)
            n = count_events(dirs)
            # The decoder reads every event babeltrace2 reads (2.1's for CTF 2): a class it
            # cannot decode costs the rest of each packet holding one (a loss, not an error).
            st = subprocess.run([w, "stats", dirs[0]], capture_output=True, text=True)
            got = [int(l.split()[1]) for l in st.stdout.splitlines() if l.split()[:1] == ["events"]]
            warns = [l for l in st.stderr.splitlines() if "warning" in l]
            check(got == [n] and not warns,
                  f"{host}: waitpath reads the {n} events babeltrace2 reads ({got}, {len(warns)} "
                  f"warnings{': ' + warns[0][-300:] if warns else ''})")
            total_events += n
            a = run([w, "analyze", "--json", dirs[0]])
            apath = os.path.join(lab.dir, f"analyze-{host}.json")
            open(apath, "w").write(a)
            check_invariants(apath)
            analyze_lines += task_lines(a)
            # (a) the workload's findings, on the stored copy and on what live wrote.
            aw = run([w, "analyze", "--json", f"--watch=comm={x['watch_comm']}", "--top", "100000",
                      "--min-wait", "1ms", dirs[0]])
            wpath = os.path.join(lab.dir, f"analyze-watch-{host}.json")
            open(wpath, "w").write(aw)
            check_invariants(wpath)
            tasks = records(aw)
            if check(len(tasks) == 1,
                     f"{host}: one {x['watch_comm']} task ({len(tasks)}), {n} events"):
                expectations_hold(tasks[0], x["expect"], f"{host} analyze")
            lt = [t for t in records(live_out) if t["host"] == host
                  and t["comm"] == x["watch_comm"]]
            if check(len(lt) == 1, f"{host}: live has one {x['watch_comm']} task"):
                expectations_hold(lt[0], x["expect"], f"{host} live")
            if fixtures:
                save_fixture(fixtures, x, dirs[0], n, tasks[0] if tasks else None, lab.info)
        # (c) live equals analyze on the relayd's stored copy.
        ll = task_lines(live_out)
        same = ll == sorted(analyze_lines)
        if not same:
            only_live = set(ll) - set(analyze_lines)
            only_an = set(analyze_lines) - set(ll)
            log(f"live-only {len(only_live)}, analyze-only {len(only_an)}; e.g.\n  " +
                "\n  ".join(sorted(only_live)[:2] + sorted(only_an)[:2]))
        check(same and len(ll) > 0,
              f"live --all equals analyze on the stored sessions ({len(ll)} task records)")
        # The sessions were recorded in the format asked for (lttng's default when none: CTF 2
        # from 2.15 on).
        want = trace_fmt or ("ctf-2" if suite == "sid" else "ctf-1.8")
        check(formats == {want}, f"stored sessions in {want} ({sorted(formats)})")
        log(f"FIGURES {tag}: boot-to-init {t_init:.1f} s, sessiond-ready {t_ready:.1f} s, "
            f"events streamed {total_events} in {len(wls)} sessions ({', '.join(sorted(formats))})")


def save_fixture(root, x, trace, events, task, info):
    """Copies one workload's stored kernel trace (CTF: metadata, per-CPU streams, index) as a
    small fixture with an expect file (the workload's expectations)."""
    dest = os.path.join(root, x["workload"])
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(trace, dest)
    expect = {
        "schema": "waitpath-workload-expect/1", "workload": x["workload"], "trace": x["workload"],
        "command": lab_command(x), "description": x["description"] + LAB_NOTE,
        "host": f"vm-{x['workload']}",
        "kernel": info["kernel"],
        "tracer": f"lttng-modules {info['lttng_modules']} (QEMU TCG guest)",
        "session": "configs/lttng/waitpath-session.sh (defaults)", "events": events,
        "watch_comm": x["watch_comm"], "expect": x["expect"],
    }
    if task:
        expect["observed_task"] = {k: task[k]
                                   for k in ("tid", "start_ns", "end_ns", "breakdown_ns")}
    with open(os.path.join(root, f"{x['workload']}.expect.json"), "w") as f:
        json.dump(expect, f, indent=1)
        f.write("\n")
    log(f"fixture {dest}: {events} events")


# --- (b): the rpc workload across two guests -------------------------------------------------
RPC_SERVER = """
$SESSION --no-start --name rpc2 "$RELAYD" || exit 1
sleep 3
lttng start rpc2 >/dev/null
wl-rpc --listen 7001 --work-ms 10 &
rpc=$!
sleep 0.5
socat -u TCP-LISTEN:7000,reuseaddr,fork OPEN:/dev/null,append &
ready=$!
wait $rpc
echo "LAB: rpc server exit=$?"
kill $ready
sleep 1
$SESSION --destroy --name rpc2
"""
RPC_CLIENT = """
$SESSION --no-start --name rpc2 "$RELAYD" || exit 1
sleep 3
lttng start rpc2 >/dev/null
i=0
until socat -u OPEN:/dev/null TCP:192.168.77.1:7000,connect-timeout=1 2>/dev/null; do
  i=$((i + 1)); [ $i -gt 240 ] && { echo "LAB: server never ready"; break; }; sleep 0.5
done
sleep 1
wl-rpc --connect 192.168.77.1:7001 --requests 20 --work-ms 10
echo "LAB: rpc client exit=$?"
sleep 1
$SESSION --destroy --name rpc2
"""


def test_rpc2(w, tag="rpc2", relayd="host", server_suite="bookworm", client_suite="bookworm",
              sid_format=None):
    """The mixed case (tag "mixed"): a 2.16 server guest (sid) and a 2.13 client guest
    (bookworm), both streaming to one 2.16 relayd; sid_format: the sid guest's trace format
    (None: CTF 2, its default)."""
    with vmlab.Lab(tag, relayd=relayd) as lab:
        lab.start_relayd()
        live = Live(lab, w)
        fmt = {"sid": sid_format, "bookworm": None}
        srv = lab.guest("vm-server", RPC_SERVER, smp=1, workloads=["rpc"],
                        link=("listen", lab.link_port),
                        ip1="192.168.77.1/24", suite=server_suite, trace_format=fmt[server_suite])
        cli = lab.guest("vm-client", RPC_CLIENT, smp=1, workloads=["rpc"],
                        link=("connect", lab.link_port),
                        ip1="192.168.77.2/24", suite=client_suite, trace_format=fmt[client_suite])
        for g in (srv, cli):
            log(f"{g.name}: {g.suite} (kernel {g.info['kernel']}, lttng-modules "
                f"{g.info['lttng_modules']}), trace format {g.trace_format or 'default'}; relayd "
                f"{relayd}")
        srv.start()
        cli.start()
        for g in (srv, cli):
            g.wait(BOOT_TIMEOUT + 120)
        check("LAB: rpc client exit=0" in cli.lab_lines(),
              "the rpc client ran against the other guest")
        check("LAB: rpc server exit=0" in srv.lab_lines(), "the rpc server served it")
        live.wait_for("session ended", 2, 60)
        live_out = live.stop()
        check_invariants(os.path.join(lab.dir, "live.out"))
        stored = lab.stored_sessions()
        dirs = [k for h in ("vm-client", "vm-server") for s in stored.get(h, [])
                for k in kernel_dirs(s)]
        if not check(len(dirs) == 2, f"two stored kernel traces ({dirs})"):
            return
        n = count_events(dirs)
        for d in dirs:
            want = count_events([d])
            st = subprocess.run([w, "stats", d], capture_output=True, text=True)
            got = [int(l.split()[1]) for l in st.stdout.splitlines() if l.split()[:1] == ["events"]]
            fmt_line = [l.split(None, 1)[1] for l in st.stdout.splitlines()
                        if l.split()[:1] == ["format"]]
            warns = [l for l in st.stderr.splitlines() if "warning" in l]
            check(got == [want] and not warns,
                  f"{d.split('/relay-a/')[-1]} ({', '.join(fmt_line)}): waitpath reads the {want} "
                  f"events babeltrace2 reads ({got}, {len(warns)} "
                  f"warnings{': ' + warns[0][-200:] if warns else ''})")
        sync = run([w, "sync", "--json"] + dirs)
        open(os.path.join(lab.dir, "sync.json"), "w").write(sync)
        clocks = records(sync, "clock")
        log("sync: " + "; ".join(json.dumps(c) for c in clocks))
        linked = [c for c in clocks if c.get("host") != c.get("reference")]
        check(len(linked) == 1 and linked[0].get("quality") == "accurate",
              "clock sync quality accurate: " + "; ".join(
                  f"{c['host']} {c['quality']} ±{c['accuracy'] / 1e3:.1f} µs, {c['matches']} "
                  f"packets" for c in linked))
        a = run([w, "analyze", "--json"] + dirs)
        apath = os.path.join(lab.dir, "analyze.json")
        open(apath, "w").write(a)
        check_invariants(apath)
        aw = run([w, "analyze", "--json", "--watch=comm=wl-rpc-client", "--top", "100000",
                  "--min-wait", "1ms"] + dirs)
        open(os.path.join(lab.dir, "analyze-watch.json"), "w").write(aw)
        for what, text in (("analyze", aw), ("live", live_out)):
            tasks = [t for t in records(text) if t["comm"] == "wl-rpc-client"]
            if not check(len(tasks) == 1, f"{what}: one wl-rpc-client task"):
                continue
            t = tasks[0]
            srv_ns = sum(b["ns"] for b in t["by_task"] if b["host"] == "vm-server"
                         and b["comm"] == "wl-rpc-server")
            life = t["end_ns"] - t["start_ns"]
            check(t["host"] == "vm-client" and srv_ns > 0,
                  f"{what}: the client's path crosses into vm-server's wl-rpc-server "
                  f"({srv_ns / life:.3f} of its life)")
            running = sum(b["states"].get("running", 0) for b in t["by_task"]
                          if b["host"] == "vm-server" and b["comm"] == "wl-rpc-server")
            check(running / life >= 0.3, f"{what}: wl-rpc-server running {running / life:.3f} of "
                                         f"the client's life (>= 0.3)")
        # (c) for several hosts, live's transforms depend on how many packets had matched when
        # an event was released, so live can differ from analyze by up to the sync accuracy
        # (docs/live.md): the same tasks, every time within a tolerance of it, in the same
        # reference clock (analyze --reference, the one live chose).
        ref = next((l.split("clock of host ")[1].split(" ")[0] for l in live.stderr().splitlines()
                    if "clock of host" in l), None)
        ar = run([w, "analyze", "--json", "--reference", ref] + dirs) if ref else a
        acc = max((c["accuracy"] for c in linked), default=0)
        lt = {(t["host"], t["tid"]): t for t in records(live_out)}
        at = {(t["host"], t["tid"]): t for t in records(ar)}
        check(sorted(lt) == sorted(at), f"live and analyze report the same {len(lt)} tasks")
        worst, worst_what = 0, ""
        for k in set(lt) & set(at):
            x, y = lt[k], at[k]
            tol = 2 * acc + 1e-4 * (y["end_ns"] - y["start_ns"])
            diffs = {"start": x["start_ns"] - y["start_ns"], "end": x["end_ns"] - y["end_ns"]}
            diffs.update({s: x["breakdown_ns"][s] - y["breakdown_ns"][s]
                          for s in y["breakdown_ns"]})
            for what, d in diffs.items():
                if abs(d) / tol > worst:
                    worst, worst_what = (abs(d) / tol, f"{k} {what} {d / 1e3:.1f} µs "
                                                       f"(tolerance {tol / 1e3:.1f} µs)")
        # Not a failure (yet): live releases the first events with the transform it has at the
        # end of its bootstrap, from a handful of packets, which can be several ms off the
        # final one (7 ms measured, docs/lab.md). Reported, for the issue to decide.
        log(f"NOTE: live vs analyze --reference {ref}: worst difference {worst:.1f} x the "
            f"tolerance (2 x final accuracy ±{acc / 1e3:.0f} µs + 1e-4 x life): {worst_what}")
        log(f"identical records: {len(set(task_lines(live_out)) & set(task_lines(ar)))} of "
            f"{len(lt)}")
        log(f"FIGURES {tag}: events streamed {n} (two guests); formats "
            + ", ".join(f"{d.split('/relay-a/')[-1].split('/')[0]} {trace_format(d)}"
                        for d in dirs))


# --- (e): relayd and session daemons killed mid-stream ---------------------------------------
RESTART = """
$SESSION --no-start --name before "$RELAYD" || exit 1
sleep 3
lttng start before >/dev/null
echo "LAB: before started"
# Events until the host has killed the relayd and says so.
i=0
until [ "$(host_says)" = kill-sessiond ]; do
  wl-sleeper --count 5 --sleep-ms 20 >/dev/null
  i=$((i + 1)); [ $i -gt 400 ] && { echo "LAB: the host never said kill-sessiond"; exit 1; }
done
echo "LAB: killing lttng-sessiond and its consumers"
for p in $(pgrep -x lttng-sessiond) $(pgrep -x lttng-consumerd); do kill -9 $p; done
sleep 2
lttng-sessiond -d
until lttng list -k >/dev/null 2>&1; do sleep 0.2; done
echo "LAB: sessiond restarted"
i=0
until [ "$(host_says)" = relayd-back ] && $SESSION --no-start --name after "$RELAYD"; do
  lttng destroy after >/dev/null 2>&1
  i=$((i + 1)); [ $i -gt 120 ] && { echo "LAB: relayd never came back"; exit 1; }; sleep 1
done
echo "LAB: after created"
sleep 3
lttng start after >/dev/null
sleep 0.5
wl-rpc --requests 30 --work-ms 20
echo "LAB: rpc exit=$?"
sleep 0.5
$SESSION --destroy --name after
"""


def test_restart(w):
    rpc = next(x for x in workloads() if x["workload"] == "rpc")
    with vmlab.Lab("restart") as lab:
        lab.start_relayd("a")
        live = Live(lab, w, metrics=True)
        g = lab.guest("vm", RESTART, smp=2, workloads=["sleeper", "rpc"]).start()
        g.wait_line(r"^LAB: before started", BOOT_TIMEOUT)
        live.wait_for("following session before", 1, 30)
        time.sleep(5)
        log("killing the relayd (SIGKILL) mid-stream")
        lab.kill_relayd()
        live.wait_for("lost the relayd", 1, 30)
        time.sleep(2)
        g.say("kill-sessiond")
        g.wait_line(r"^LAB: sessiond restarted", 120)
        time.sleep(2)
        log("restarting the relayd")
        lab.start_relayd("b")
        g.say("relayd-back")
        g.wait(300)
        check("LAB: rpc exit=0" in g.lab_lines(),
              "the guest recreated its session and ran rpc after the restarts")
        live.wait_for("(session after): session ended", 1, 60)
        metrics, mpath = live.scrape()
        live_out = live.stop()
        check_invariants(os.path.join(lab.dir, "live.out"), mpath)
        reconnects = sum(float(l.split()[-1]) for l in metrics.splitlines()
                         if l.startswith("waitpath_relayd_reconnects_total"))
        check(reconnects >= 1,
              f"the loss is in the metrics: waitpath_relayd_reconnects_total {reconnects:g}")
        err = live.stderr()
        check("lost the relayd; reattaching" in err, "waitpath live reported the lost relayd")
        before = [t for t in records(live_out) if t["comm"] == "wl-sleeper"]
        unknown = sum(t["breakdown_ns"]["unknown"] for t in records(live_out))
        log(f"live: {len(before)} wl-sleeper tasks from the session before the kill; unknown time "
            f"over all tasks {unknown / 1e6:.1f} ms")
        stored = lab.stored_sessions(os.path.join(lab.dir, "relay-b"))
        dirs = [k for s in stored.get("vm", []) for k in kernel_dirs(s)]
        if not check(len(dirs) == 1, f"relayd b stored the new session ({dirs})"):
            return
        n = count_events(dirs)
        a = run([w, "analyze", "--json", dirs[0]])
        apath = os.path.join(lab.dir, "analyze-after.json")
        open(apath, "w").write(a)
        check_invariants(apath)
        got = set(task_lines(live_out))
        missing = [l for l in task_lines(a) if l not in got]
        check(not missing, f"after the restarts, live has analyze's {len(task_lines(a))} task "
                           f"records of the new session ({len(missing)} missing)")
        aw = run([w, "analyze", "--json", "--watch=comm=wl-rpc-client", "--top", "100000",
                  "--min-wait", "1ms", dirs[0]])
        tasks = records(aw)
        if check(len(tasks) == 1, "one wl-rpc-client in the new session"):
            expectations_hold(tasks[0], rpc["expect"], "after restart, analyze")
        lt = [t for t in records(live_out) if t["comm"] == "wl-rpc-client"]
        if check(len(lt) == 1, "live: one wl-rpc-client"):
            expectations_hold(lt[0], rpc["expect"], "after restart, live")
        log(f"FIGURES restart: events in the new session {n}")


# --- (f): kmod/ over an overlay: socket-level packets, cgroups ------------------------------
# Both guests build kmod/ with DKMS (as users install it), join a VXLAN overlay over their
# link (10.77.0.N in clear, 10.78.0.N also IPsec ESP in transport mode: an encrypted overlay),
# and put their rpc programs in cgroup v2 directories named like systemd units (PID 1 is the
# lab's init, not systemd). Session `plain` (stock events only): an rpc over the clear overlay,
# then one over ESP. With the module loaded (waitpath-session.sh --kmod): session `kmod`, an rpc
# over the clear overlay; session `kmodesp`, one over ESP.
OVERLAY_SETUP = """
t0=$(cut -d' ' -f1 /proc/uptime)
cp -r /lab/kmod /usr/src/waitpath-kmod-0.1
if dkms install waitpath-kmod/0.1 -k "$(uname -r)" >/tmp/dkms.log 2>&1; then
  echo "LAB: kmod built by dkms in $(awk -v a=$t0 -v b=$(cut -d' ' -f1 /proc/uptime) \\
    'BEGIN {{print b - a}}') s"
else
  echo "LAB: dkms failed"; tail -30 /tmp/dkms.log \\
    /var/lib/dkms/waitpath-kmod/0.1/build/make.log; exit 1
fi
ip link add vx0 type vxlan id 77 dev eth1 remote 192.168.77.{peer} dstport 4789
ip addr add 10.77.0.{me}/24 dev vx0
ip addr add 10.78.0.{me}/24 dev vx0
ip link set vx0 up
K=0x0123456789abcdef0123456789abcdef01234567
ip xfrm state add src 10.78.0.1 dst 10.78.0.2 proto esp spi 0x1002 mode transport \\
  aead 'rfc4106(gcm(aes))' $K 128
ip xfrm state add src 10.78.0.2 dst 10.78.0.1 proto esp spi 0x2001 mode transport \\
  aead 'rfc4106(gcm(aes))' $K 128
ip xfrm policy add src 10.78.0.{me} dst 10.78.0.{peer} dir out \\
  tmpl src 10.78.0.{me} dst 10.78.0.{peer} proto esp mode transport
ip xfrm policy add src 10.78.0.{peer} dst 10.78.0.{me} dir in \\
  tmpl src 10.78.0.{peer} dst 10.78.0.{me} proto esp mode transport
mount -t cgroup2 none /sys/fs/cgroup
mkdir -p /sys/fs/cgroup/system.slice/{unit}
session() {{  # session NAME [--kmod]: created, started 3 s later (live follows it from its start)
  n=$1
  shift
  $SESSION --no-start "$@" --name "$n" "$RELAYD" >/dev/null \\
    || {{ echo "LAB: session $n failed"; exit 1; }}
  sleep 3
  lttng start "$n" >/dev/null
}}
"""
OVERLAY_SERVER = OVERLAY_SETUP.format(me=1, peer=2, unit="wl-server.service") + """
serve() {  # serve WHAT READY_PORT: one rpc server, announced on READY_PORT
  wl-rpc --listen 7001 --work-ms 10 &
  rpc=$!
  sleep 0.5
  socat -u TCP-LISTEN:$2,reuseaddr,fork OPEN:/dev/null,append &
  ready=$!
  wait $rpc
  echo "LAB: rpc server $1 exit=$?"
  kill $ready
}
# In its unit before any session starts: the state dump says so, wl-rpc inherits it at fork.
echo $$ >/sys/fs/cgroup/system.slice/wl-server.service/cgroup.procs
session plain
serve vxlan 7100
serve esp 7101
sleep 1
$SESSION --destroy --name plain
modprobe lttng-probe-waitpath || echo "LAB: modprobe failed"
session kmod --kmod
serve kmod-vxlan 7102
sleep 1
$SESSION --destroy --name kmod
session kmodesp --kmod
serve kmod-esp 7103
sleep 1
$SESSION --destroy --name kmodesp
"""
OVERLAY_CLIENT = OVERLAY_SETUP.format(me=2, peer=1, unit="wl-client.service") + """
call() {  # call READY_PORT ADDR: once the server says it is ready; moved into its unit first
  i=0
  until socat -u OPEN:/dev/null TCP:192.168.77.1:$1,connect-timeout=1 2>/dev/null; do
    i=$((i + 1)); [ $i -gt 600 ] && { echo "LAB: server never ready ($1)"; return 1; }; sleep 0.5
  done
  sleep 1
  sh -c 'echo $$ >/sys/fs/cgroup/system.slice/wl-client.service/cgroup.procs &&
         exec wl-rpc --connect '"$2"':7001 --requests 20 --work-ms 10'
  echo "LAB: rpc client $2 exit=$?"
}
session plain
call 7100 10.77.0.1
call 7101 10.78.0.1
sleep 1
$SESSION --destroy --name plain
modprobe lttng-probe-waitpath || echo "LAB: modprobe failed"
session kmod --kmod
call 7102 10.77.0.1
sleep 1
$SESSION --destroy --name kmod
session kmodesp --kmod
call 7103 10.78.0.1
sleep 1
$SESSION --destroy --name kmodesp
"""
CLIENT_UNIT, SERVER_UNIT = "/system.slice/wl-client.service", "/system.slice/wl-server.service"


def crossing(task, what):
    """(share of the client's life with vm-server's wl-rpc-server on its path, running share)."""
    life = task["end_ns"] - task["start_ns"]
    on = [b for b in task["by_task"] if b["host"] == "vm-server" and b["comm"] == "wl-rpc-server"]
    return sum(b["ns"] for b in on) / life, sum(b["states"].get("running", 0) for b in on) / life


def sync_of(w, dirs, where):
    out = run([w, "sync", "--json"] + dirs)
    linked = [c for c in records(out, "clock") if c.get("host") != c.get("reference")]
    c = linked[0] if len(linked) == 1 else {}
    log(f"{where} sync: " + json.dumps(c))
    return c


def check_kmod_traces(w, dirs, tmp, where):
    """What the kmod's events give on the two `kmod` sessions (client, server): packets over
    the encrypted overlay matched (clock sync, the client's path into the server) and the
    tasks' cgroups (JSON records, metrics labelled by cgroup). Also the fast fixture test's."""
    c = sync_of(w, dirs, where)
    check(c.get("quality") == "accurate" and c.get("matches", 0) >= 20,
          f"{where}: clock sync from the kmod's packets: {c.get('quality')} "
          f"±{c.get('accuracy', 0) / 1e3:.0f} µs, {c.get('matches')} packets")
    mpath = os.path.join(tmp, f"metrics-{where}.txt")
    aw = run([w, "analyze", "--json", "--watch=comm=wl-rpc-client", "--top", "100000", "--min-wait",
              "1ms", "--metrics-file", mpath, "--label-by", "cgroup"] + dirs)
    apath = os.path.join(tmp, f"analyze-watch-{where}.json")
    open(apath, "w").write(aw)
    check_invariants(apath)
    tasks = [t for t in records(aw) if t["comm"] == "wl-rpc-client"]
    if check(len(tasks) == 1, f"{where}: one wl-rpc-client task"):
        share, running = crossing(tasks[0], where)
        check(share > 0 and running >= 0.3,
              f"{where}: the client's path crosses into vm-server's wl-rpc-server ({share:.3f} of "
              f"its life, running {running:.3f} >= 0.3)")
        check(tasks[0].get("cgroup") == CLIENT_UNIT,
              f"{where}: client task cgroup {tasks[0].get('cgroup')}")
    every = records(run([w, "analyze", "--json"] + dirs))
    servers = [t for t in every if t["comm"] == "wl-rpc-server" and t["host"] == "vm-server"]
    check(servers and all(t.get("cgroup") == SERVER_UNIT for t in servers),
          f"{where}: wl-rpc-server's cgroup (state dump, then fork): "
          f"{[t.get('cgroup') for t in servers]}")
    metrics = open(mpath).read()
    own = [l for l in metrics.splitlines() if l.startswith("waitpath_active_path_seconds_total{")
           and f'cgroup="{CLIENT_UNIT}"' in l and float(l.split()[-1]) > 0]
    blamed = [l for l in metrics.splitlines()
              if l.startswith("waitpath_active_path_blame_seconds_total{")
              and f'blamed_cgroup="{SERVER_UNIT}"' in l and 'blamed_host="vm-server"' in l
              and float(l.split()[-1]) > 0]
    check(own and blamed,
          f"{where}: --label-by cgroup: {len(own)} series of {CLIENT_UNIT}, {len(blamed)} blaming "
                          f"{SERVER_UNIT}; e.g. {(blamed or own or ['none'])[0]}")
    check(not any('process="' in l for l in metrics.splitlines()
                  if l.startswith("waitpath_active_path")),
          f"{where}: no process label with --label-by cgroup")


def save_overlay_fixture(root, dirs, events, info):
    dest = os.path.join(root, "overlay")
    shutil.rmtree(dest, ignore_errors=True)
    for host, d in zip(("vm-client", "vm-server"), dirs):
        shutil.copytree(d, os.path.join(dest, host))
    expect = {"schema": "waitpath-kmod-fixture/1",
              "traces": ["overlay/vm-client", "overlay/vm-server"],
              "events": events, "kernel": info["kernel"],
              "tracer": f"lttng-modules {info['lttng_modules']} + kmod/ lttng-probe-waitpath (QEMU "
                        f"TCG guests)",
              "session": "configs/lttng/waitpath-session.sh --kmod",
              "description": "wl-rpc --requests 20 --work-ms 10 from vm-client to vm-server over a "
                             "VXLAN overlay (10.77.0.0/24 on vx0 over the guests' link), client "
                             "in " + CLIENT_UNIT + ", server in "
                             + SERVER_UNIT + " (tests/vmlab/test_lab.py overlay)"}
    with open(os.path.join(root, "overlay.expect.json"), "w") as f:
        json.dump(expect, f, indent=1)
        f.write("\n")
    log(f"fixture {dest}: {events} events")


def test_overlay(w, fixtures=None):
    with vmlab.Lab("overlay") as lab:
        lab.start_relayd()
        live = Live(lab, w)
        srv = lab.guest("vm-server", OVERLAY_SERVER, smp=1, workloads=["rpc"],
                        link=("listen", lab.link_port), ip1="192.168.77.1/24")
        cli = lab.guest("vm-client", OVERLAY_CLIENT, smp=1, workloads=["rpc"],
                        link=("connect", lab.link_port), ip1="192.168.77.2/24")
        srv.start()
        cli.start()
        for g in (srv, cli):
            g.wait(BOOT_TIMEOUT + 400)
        for g in (srv, cli):
            built = [l for l in g.lab_lines() if l.startswith("LAB: kmod built")]
            check(bool(built),
                  f"{g.name}: "
                  f"{built[0] if built else 'kmod not built: ' + ' | '.join(g.lab_lines()[-5:])}")
        cl = cli.lab_lines()
        for a in ("10.77.0.1", "10.78.0.1"):
            n = cl.count(f"LAB: rpc client {a} exit=0")
            check(n == 2, f"the rpc client ran over {a} ({n} times)")
        live.wait_for("session ended", 6, 60)
        live_out = live.stop()
        check_invariants(os.path.join(lab.dir, "live.out"))
        stored = lab.stored_sessions()

        def dirs_of(session):
            return [k for h in ("vm-client", "vm-server") for s in stored.get(h, [])
                    if os.path.basename(s).startswith(session + "-") for k in kernel_dirs(s)]

        plain, kmod, kmodesp = dirs_of("plain"), dirs_of("kmod"), dirs_of("kmodesp")
        if not check(len(plain) == 2 and len(kmod) == 2 and len(kmodesp) == 2,
                     f"two traces of each session ({plain} {kmod} {kmodesp})"):
            return
        # Without the kmod: the clear overlay's packets have their inner TCP header in stock
        # events (vx0's net_dev_queue; on receive both eth1's net_if_receive_skb, whose network
        # header GRO set to the inner one, and vx0's): the clock sync matches them. Each
        # received packet is seen twice, in two NET_RX softirqs; the packet matcher gives the
        # second sighting (where the client is woken) the same send as the first, so the
        # client's path crosses into the server. The ESP packets have no TCP header in any
        # stock event (ESP inner and outer): nothing matched.
        c = sync_of(w, plain, "plain")
        check(c.get("quality") == "accurate",
              f"plain: clock sync from stock events over the clear overlay: "
                                                f"{c.get('quality')}, {c.get('matches')} packets")
        aw = run([w, "analyze", "--json", "--watch=comm=wl-rpc-client", "--top", "100000",
                  "--min-wait", "1ms"]
                 + plain)
        clients = sorted((t for t in records(aw) if t["comm"] == "wl-rpc-client"),
                         key=lambda t: t["start_ns"])
        if check(len(clients) == 2, f"plain: two wl-rpc-client tasks ({len(clients)})"):
            clear, esp = crossing(clients[0], "clear"), crossing(clients[1], "esp")
            check(clear[0] > 0 and clear[1] >= 0.3,
                  f"plain, clear VXLAN: packets seen twice on receive, both sightings matched: the "
                  f"path crosses into vm-server without the kmod ({clear[0]:.3f}, running "
                  f"{clear[1]:.3f} >= 0.3)")
            check(esp[0] == 0, f"plain, VXLAN+ESP: no packet matched, the path stays on vm-client "
                               f"({esp[0]:.3f})")
        # With the kmod, over the clear overlay: one socket-level event per packet and side.
        check_kmod_traces(w, kmod, lab.dir, "kmod")
        # With the kmod, over ESP: the packets are matched (clock sync from them alone), but
        # the receiver decrypts in a kworker (asynchronous crypto), whose LOCAL_IN and wake-up
        # of the client are in task context, where waitpath does not attribute a wake-up to a
        # received packet (only in interrupt context): the client's path stays on vm-client.
        c = sync_of(w, kmodesp, "kmodesp")
        check(c.get("quality") == "accurate" and c.get("matches", 0) >= 20,
              f"kmodesp: clock sync from the kmod's packets over ESP: {c.get('quality')}, "
              f"{c.get('matches')} packets")
        aw = run([w, "analyze", "--json", "--watch=comm=wl-rpc-client", "--top", "100000"]
                 + kmodesp)
        tasks = [t for t in records(aw) if t["comm"] == "wl-rpc-client"]
        if check(len(tasks) == 1, "kmodesp: one wl-rpc-client task"):
            share = crossing(tasks[0], "kmodesp")[0]
            kw = sum(b["ns"] for b in tasks[0]["by_task"] if b["comm"].startswith("kworker/"))
            life = tasks[0]["end_ns"] - tasks[0]["start_ns"]
            check(share == 0 and kw / life > 0.3,
                  f"kmodesp: the path stays on vm-client, through the decrypting kworker "
                  f"({kw / life:.3f} of its life; into vm-server {share:.3f})")
        lt = [t for t in records(live_out) if t["comm"] == "wl-rpc-client"
              and t.get("cgroup") == CLIENT_UNIT]
        check(len(lt) >= 1, f"live: wl-rpc-client records with cgroup {CLIENT_UNIT} ({len(lt)})")
        n_plain, n_kmod, n_esp = count_events(plain), count_events(kmod), count_events(kmodesp)
        if fixtures:
            save_overlay_fixture(fixtures, kmod, n_kmod, lab.info)
        log(f"FIGURES overlay: events plain {n_plain}, kmod {n_kmod}, kmodesp {n_esp}; "
            + "; ".join(l for g in (srv, cli) for l in g.lab_lines()
                        if l.startswith("LAB: kmod built")))


# --- (g): known causes injected into real software (docs/accuracy.md) -------------------------
def test_services(w, everything=False, table_path=None, only=None):
    """PostgreSQL in guest `db`, pgbench in guest `client`, one injected cause per phase
    (services.PHASES; without `everything`, the ones CI runs: one per cause class and the
    baselines). table_path: writes the accuracy table there (docs/accuracy.md)."""
    phases = [p for p in services.PHASES if (everything or p.ci) and (not only or p.name in only)]
    watch = ["--watch", "comm=pgbench", "--watch", "comm=postgres", "--watch", "comm=^ab$",
             "--watch", "comm=redis-benchmark"]
    with vmlab.Lab("services", suite="services") as lab:
        lab.start_relayd()
        t0 = time.time()
        live = Live(lab, w, extra=watch + ["--min-wait", "1ms"])
        db, cli = services.boot(lab, phases)
        t_boot = time.time() - t0
        facts = services.run_phases(lab, db, cli, phases)
        for p in phases:
            f = facts[p.name]
            check(f["exit"] == "0" and f["tx"] > 0, f"{p.name}: {p.service.client} ran ({f})")
        live.wait_for("session ended", 2 * len(phases), 60)
        live_out = live.stop()
        check_invariants(os.path.join(lab.dir, "live.out"))
        stored = lab.stored_sessions()
        live_records = [json.loads(l) for l in live_out.splitlines() if l.startswith("{")]
        said = {"analyze": {}, "live": {}}
        for p in phases:
            dirs = [k for h in (p.client_host, p.server_host) for s in stored.get(h, [])
                    for k in kernel_dirs(s)]
            if not check(len(dirs) == 2, f"{p.name}: two stored kernel traces ({dirs})"):
                return
            a = run([w, "analyze", "--json", "--min-wait", "1ms"] + watch + dirs)
            apath = os.path.join(lab.dir, f"analyze-{p.name}.json")
            open(apath, "w").write(a)
            check_invariants(apath)
            said["analyze"][p.name] = services.summarize(
                [json.loads(l) for l in a.splitlines()], p)
            said["live"][p.name] = services.summarize(live_records, p)
        rows = []
        for p in phases:
            row = services.verdict(p, facts, said)
            for ok, what in row["checks"]:
                if not ok and p.known:
                    log(f"KNOWN: {p.name}: {what} ({p.known}; docs/accuracy.md)")
                else:
                    check(ok, f"{p.name}: {what}")
            rows.append(row)
        text = services.table(rows, phases)
        log("accuracy table:\n" + text)
        if table_path:
            services.write_table(table_path, text, lab.infos["services"], facts, phases)
        log(f"FIGURES services: {len(phases)} phases, guests up (postgres reachable) after "
            f"{t_boot:.0f} s, all done after {time.time() - t0:.0f} s")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    w, which = os.path.abspath(sys.argv[1]), sys.argv[2]
    vmlab.exit_on_sigterm()
    try:
        vmlab.check_host()
        if which == "workloads":
            fx = sys.argv[sys.argv.index("--fixtures") + 1] if "--fixtures" in sys.argv else None
            test_workloads(w, fx)
        elif which == "rpc2":
            test_rpc2(w)
        elif which == "restart":
            test_restart(w)
        elif which == "overlay":
            fx = sys.argv[sys.argv.index("--fixtures") + 1] if "--fixtures" in sys.argv else None
            test_overlay(w, fx)
        elif which == "mixed":
            fmt = (sys.argv[sys.argv.index("--trace-format") + 1] if "--trace-format" in sys.argv
                   else None)
            test_rpc2(w, tag="mixed", relayd="2.16", server_suite="sid", client_suite="bookworm",
                      sid_format=fmt)
        elif which == "services":
            tp = sys.argv[sys.argv.index("--table") + 1] if "--table" in sys.argv else None
            only = (sys.argv[sys.argv.index("--phases") + 1].split(",")
                    if "--phases" in sys.argv else None)
            test_services(w, everything="--all" in sys.argv or bool(only), table_path=tp, only=only)
        elif which == "lttng216":
            fmt = (sys.argv[sys.argv.index("--trace-format") + 1] if "--trace-format" in sys.argv
                   else None)
            test_workloads(w, suite="sid", relayd="2.16", trace_fmt=fmt, tag="lttng216")
        else:
            print(__doc__)
            return 2
    except vmlab.Skip as e:
        print(f"SKIP: {e}")
        return 77
    except (TimeoutError, RuntimeError) as e:
        log(f"FAIL: {e}")
        return 1
    if failures:
        log(f"{len(failures)} check(s) failed")
        return 1
    log("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
