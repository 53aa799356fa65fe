#!/usr/bin/env python3
"""The VM lab's tests (docs/lab.md): real LTTng kernel live sessions, set up in QEMU guests by
configs/lttng/waitpath-session.sh, streamed to an lttng-relayd on the host, analysed by
`waitpath live` while they stream and by `waitpath analyze` on the relayd's stored copy.

  test_lab.py WAITPATH workloads [--fixtures DIR]   (a) findings, (c) live == analyze, (d) invariants
  test_lab.py WAITPATH rpc2                         (b) an RPC across two guests, clock sync
  test_lab.py WAITPATH restart                      (e) relayd and session daemons killed mid-stream

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
    return [json.loads(l) for l in text.splitlines() if l.startswith("{") and f'"type":"{kind}"' in l]


def task_lines(text):
    return sorted(l for l in text.splitlines() if '"type":"task"' in l)


def count_events(trace_dirs):
    total = 0
    for d in trace_dirs:
        out = run(["babeltrace2", d, "-c", "sink.utils.counter"])
        for l in out.splitlines():
            parts = l.split()
            if len(parts) >= 3 and parts[1:3] == ["Event", "messages"]:
                total += int(parts[0])
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

    def __init__(self, lab, w, tag="live", metrics=False):
        self.lab, self.out, self.err = lab, os.path.join(lab.dir, f"{tag}.out"), os.path.join(lab.dir, f"{tag}.err")
        self.metrics = f"127.0.0.1:{lab.base + 4}" if metrics else None
        self.proc = lab.spawn([w, "live", "--relayd", f"net://127.0.0.1:{lab.live}", "--all", "--json"] +
                              (["--metrics", self.metrics] if metrics else []), out=self.out, err=self.err)

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
    p = subprocess.run([sys.executable, os.path.join(SRC, "tests", "tools", "check_records.py"), path] +
                       (["--metrics", metrics] if metrics else []),
                       capture_output=True, text=True)
    check(p.returncode == 0, f"check_records.py {os.path.basename(path)}: {(p.stdout + p.stderr).strip()[:500]}")


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


def test_workloads(w, fixtures=None):
    wls = workloads()
    script = WL_SCRIPT + "".join(f"run_wl {x['workload']} {' '.join(lab_command(x))}\n" for x in wls)
    with vmlab.Lab("workloads") as lab:
        lab.start_relayd()
        live = Live(lab, w)
        g = lab.guest("vm", script, smp=2).start()
        _, t_init = g.wait_line(r"^LAB: init", BOOT_TIMEOUT)
        _, t_ready = g.wait_line(r"^LAB: sessiond ready", BOOT_TIMEOUT)
        log(f"guest init after {t_init:.1f} s, lttng-sessiond ready after {t_ready:.1f} s")
        g.wait(BOOT_TIMEOUT + 60 * len(wls))
        lines = g.lab_lines()
        for x in wls:
            check(f"LAB: workload {x['workload']} exit=0" in lines, f"workload {x['workload']} ran in the guest")
        live.wait_for("session ended", len(wls), 60)
        live_out = live.stop()
        live_path = os.path.join(lab.dir, "live.out")
        check_invariants(live_path)
        stored = lab.stored_sessions()
        check(len(stored) == len(wls), f"the relayd stored {len(wls)} sessions ({sorted(stored)})")
        analyze_lines, total_events = [], 0
        for x in wls:
            host = f"vm-{x['workload']}"
            dirs = [k for s in stored.get(host, []) for k in kernel_dirs(s)]
            if not check(len(dirs) == 1, f"{host}: one stored kernel trace ({dirs})"):
                continue
            n = count_events(dirs)
            total_events += n
            a = run([w, "analyze", "--json", dirs[0]])
            apath = os.path.join(lab.dir, f"analyze-{host}.json")
            open(apath, "w").write(a)
            check_invariants(apath)
            analyze_lines += task_lines(a)
            # (a) the workload's findings, on the stored copy and on what live wrote.
            aw = run([w, "analyze", "--json", f"--watch=comm={x['watch_comm']}", "--top", "100000", "--min-wait",
                      "1ms", dirs[0]])
            wpath = os.path.join(lab.dir, f"analyze-watch-{host}.json")
            open(wpath, "w").write(aw)
            check_invariants(wpath)
            tasks = records(aw)
            if check(len(tasks) == 1, f"{host}: one {x['watch_comm']} task ({len(tasks)}), {n} events"):
                expectations_hold(tasks[0], x["expect"], f"{host} analyze")
            lt = [t for t in records(live_out) if t["host"] == host and t["comm"] == x["watch_comm"]]
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
        check(same and len(ll) > 0, f"live --all equals analyze on the stored sessions ({len(ll)} task records)")
        log(f"FIGURES workloads: boot-to-init {t_init:.1f} s, sessiond-ready {t_ready:.1f} s, "
            f"events streamed {total_events} in {len(wls)} sessions")


def save_fixture(root, x, trace, events, task, info):
    """Copies one workload's stored kernel trace (CTF: metadata, per-CPU streams, index) as a
    small fixture with an expect file (the workload's expectations)."""
    dest = os.path.join(root, x["workload"])
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(trace, dest)
    expect = {
        "schema": "waitpath-workload-expect/1", "workload": x["workload"], "trace": x["workload"],
        "command": lab_command(x), "description": x["description"] + LAB_NOTE, "host": f"vm-{x['workload']}",
        "kernel": info["kernel"], "tracer": f"lttng-modules {info['lttng_modules']} (QEMU TCG guest)",
        "session": "configs/lttng/waitpath-session.sh (defaults)", "events": events,
        "watch_comm": x["watch_comm"], "expect": x["expect"],
    }
    if task:
        expect["observed_task"] = {k: task[k] for k in ("tid", "start_ns", "end_ns", "breakdown_ns")}
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


def test_rpc2(w):
    with vmlab.Lab("rpc2") as lab:
        lab.start_relayd()
        live = Live(lab, w)
        srv = lab.guest("vm-server", RPC_SERVER, smp=1, workloads=["rpc"], link=("listen", lab.link_port), ip1="192.168.77.1/24")
        cli = lab.guest("vm-client", RPC_CLIENT, smp=1, workloads=["rpc"], link=("connect", lab.link_port), ip1="192.168.77.2/24")
        srv.start()
        cli.start()
        for g in (srv, cli):
            g.wait(BOOT_TIMEOUT + 120)
        check("LAB: rpc client exit=0" in cli.lab_lines(), "the rpc client ran against the other guest")
        check("LAB: rpc server exit=0" in srv.lab_lines(), "the rpc server served it")
        live.wait_for("session ended", 2, 60)
        live_out = live.stop()
        check_invariants(os.path.join(lab.dir, "live.out"))
        stored = lab.stored_sessions()
        dirs = [k for h in ("vm-client", "vm-server") for s in stored.get(h, []) for k in kernel_dirs(s)]
        if not check(len(dirs) == 2, f"two stored kernel traces ({dirs})"):
            return
        n = count_events(dirs)
        sync = run([w, "sync", "--json"] + dirs)
        open(os.path.join(lab.dir, "sync.json"), "w").write(sync)
        clocks = records(sync, "clock")
        log("sync: " + "; ".join(json.dumps(c) for c in clocks))
        linked = [c for c in clocks if c.get("host") != c.get("reference")]
        check(len(linked) == 1 and linked[0].get("quality") == "accurate",
              "clock sync quality accurate: " + "; ".join(
                  f"{c['host']} {c['quality']} ±{c['accuracy'] / 1e3:.1f} µs, {c['matches']} packets" for c in linked))
        a = run([w, "analyze", "--json"] + dirs)
        apath = os.path.join(lab.dir, "analyze.json")
        open(apath, "w").write(a)
        check_invariants(apath)
        aw = run([w, "analyze", "--json", "--watch=comm=wl-rpc-client", "--top", "100000", "--min-wait", "1ms"] + dirs)
        open(os.path.join(lab.dir, "analyze-watch.json"), "w").write(aw)
        for what, text in (("analyze", aw), ("live", live_out)):
            tasks = [t for t in records(text) if t["comm"] == "wl-rpc-client"]
            if not check(len(tasks) == 1, f"{what}: one wl-rpc-client task"):
                continue
            t = tasks[0]
            srv_ns = sum(b["ns"] for b in t["by_task"] if b["host"] == "vm-server" and b["comm"] == "wl-rpc-server")
            life = t["end_ns"] - t["start_ns"]
            check(t["host"] == "vm-client" and srv_ns > 0,
                  f"{what}: the client's path crosses into vm-server's wl-rpc-server ({srv_ns / life:.3f} of its life)")
            running = sum(b["states"].get("running", 0) for b in t["by_task"]
                          if b["host"] == "vm-server" and b["comm"] == "wl-rpc-server")
            check(running / life >= 0.3, f"{what}: wl-rpc-server running {running / life:.3f} of the client's life (>= 0.3)")
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
            diffs.update({s: x["breakdown_ns"][s] - y["breakdown_ns"][s] for s in y["breakdown_ns"]})
            for what, d in diffs.items():
                if abs(d) / tol > worst:
                    worst, worst_what = abs(d) / tol, f"{k} {what} {d / 1e3:.1f} µs (tolerance {tol / 1e3:.1f} µs)"
        # Not a failure (yet): live releases the first events with the transform it has at the
        # end of its bootstrap, from a handful of packets, which can be several ms off the
        # final one (7 ms measured, docs/lab.md). Reported, for the issue to decide.
        log(f"NOTE: live vs analyze --reference {ref}: worst difference {worst:.1f} x the tolerance "
            f"(2 x final accuracy ±{acc / 1e3:.0f} µs + 1e-4 x life): {worst_what}")
        log(f"identical records: {len(set(task_lines(live_out)) & set(task_lines(ar)))} of {len(lt)}")
        log(f"FIGURES rpc2: events streamed {n} (two guests)")


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
        check("LAB: rpc exit=0" in g.lab_lines(), "the guest recreated its session and ran rpc after the restarts")
        live.wait_for("(session after): session ended", 1, 60)
        metrics, mpath = live.scrape()
        live_out = live.stop()
        check_invariants(os.path.join(lab.dir, "live.out"), mpath)
        reconnects = sum(float(l.split()[-1]) for l in metrics.splitlines()
                         if l.startswith("waitpath_relayd_reconnects_total"))
        check(reconnects >= 1, f"the loss is in the metrics: waitpath_relayd_reconnects_total {reconnects:g}")
        err = live.stderr()
        check("lost the relayd; reattaching" in err, "waitpath live reported the lost relayd")
        before = [t for t in records(live_out) if t["comm"] == "wl-sleeper"]
        unknown = sum(t["breakdown_ns"]["unknown"] for t in records(live_out))
        log(f"live: {len(before)} wl-sleeper tasks from the session before the kill; unknown time over all "
            f"tasks {unknown / 1e6:.1f} ms")
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
        check(not missing, f"after the restarts, live has analyze's {len(task_lines(a))} task records of the new "
                           f"session ({len(missing)} missing)")
        aw = run([w, "analyze", "--json", "--watch=comm=wl-rpc-client", "--top", "100000", "--min-wait", "1ms", dirs[0]])
        tasks = records(aw)
        if check(len(tasks) == 1, "one wl-rpc-client in the new session"):
            expectations_hold(tasks[0], rpc["expect"], "after restart, analyze")
        lt = [t for t in records(live_out) if t["comm"] == "wl-rpc-client"]
        if check(len(lt) == 1, "live: one wl-rpc-client"):
            expectations_hold(lt[0], rpc["expect"], "after restart, live")
        log(f"FIGURES restart: events in the new session {n}")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    w, which = os.path.abspath(sys.argv[1]), sys.argv[2]
    try:
        vmlab.check_host()
        if which == "workloads":
            fx = sys.argv[sys.argv.index("--fixtures") + 1] if "--fixtures" in sys.argv else None
            test_workloads(w, fx)
        elif which == "rpc2":
            test_rpc2(w)
        elif which == "restart":
            test_restart(w)
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
