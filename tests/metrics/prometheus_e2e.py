#!/usr/bin/env python3
"""A real Prometheus server scrapes `waitpath analyze --metrics`: the families arrive with
plausible values, the rule files load and every rule, recording or alerting, is healthy, and
every PromQL expression of the rule files and of the Grafana dashboard evaluates without error.

Exit 0 on success, 1 on failure, 77 (ctest SKIP_RETURN_CODE) when prometheus is missing.
Every process it starts is killed by its pid; its temporary directory is removed."""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

FAMILIES = [
    "waitpath_active_path_seconds_total", "waitpath_active_path_blame_seconds_total",
    "waitpath_events_total", "waitpath_events_discarded_total",
    "waitpath_timestamp_regressions_total", "waitpath_stream_lag_seconds",
    "waitpath_clock_sync_quality", "waitpath_pending_cross_host_waits",
    "waitpath_history_bytes", "waitpath_history_evictions_total",
    "waitpath_history_evicted_reads_total", "waitpath_waits_resolved_total",
    "waitpath_wait_duration_seconds_bucket", "waitpath_untraced_peer_wait_seconds_total",
    "waitpath_build_info",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Prometheus:
    def __init__(self, base):
        self.base = base

    def get(self, path, **params):
        url = self.base + path + ("?" + urllib.parse.urlencode(params) if params else "")
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:  # 400/422 carry the PromQL error as JSON
            try:
                return json.load(e)
            except ValueError:  # e.g. 503 while the server is still starting: not ready yet
                return None
        except OSError:
            return None

    def query(self, expr):
        return self.get("/api/v1/query", query=expr)

    def vector(self, expr):
        r = self.query(expr)
        return r["data"]["result"] if r and r.get("status") == "success" else []


def dashboard_expressions(path):
    """Every target expression and template-variable query of the dashboard, as PromQL."""
    exprs = []

    def walk(node):
        if isinstance(node, dict):
            if "expr" in node and isinstance(node["expr"], str):
                exprs.append(node["expr"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    dashboard = json.load(open(path))
    walk(dashboard["panels"])
    for var in dashboard.get("templating", {}).get("list", []):
        q = var.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        m = re.fullmatch(r"label_values\((.*),\s*\w+\)", q or "")
        if m:  # Grafana's label_values(SELECTOR, LABEL): the selector is PromQL
            exprs.append(m.group(1))
    # Grafana's variables, as Grafana would substitute them with "All" selected.
    subst = {"$__rate_interval": "1m", "$__interval": "15s", "$host": ".*", "$process": ".*",
             "$job": ".*", "$instance": ".*", "$operation": ".*"}
    out = []
    for e in exprs:
        for k, v in subst.items():
            e = e.replace(k, v)
        out.append(e)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--waitpath", required=True)
    p.add_argument("--gen", required=True)
    p.add_argument("--scenario", required=True)
    p.add_argument("--rules", required=True)
    p.add_argument("--dashboard", required=True)
    p.add_argument("--source", choices=["analyze", "demo"], default="analyze",
                   help="what Prometheus scrapes: `analyze --metrics`, or the live pipeline of "
                        "`waitpath demo`")
    args = p.parse_args()
    if args.source == "demo":
        if os.geteuid() != 0:
            print("SKIP: the demo needs root (namespaces for its per-host session daemons)")
            return 77
        if not shutil.which("lttng-relayd") or not shutil.which("lttng-sessiond"):
            print("SKIP: lttng-tools is not installed")
            return 77

    prometheus_bin = shutil.which("prometheus")
    if not prometheus_bin:
        print("SKIP: the `prometheus` server is not installed (apt-get install prometheus)")
        return 77

    tmp = tempfile.mkdtemp(prefix="waitpath-prometheus-")
    procs = []
    try:
        trace = os.path.join(tmp, "trace")
        subprocess.run([args.gen, "--scenario", args.scenario, "--out", trace], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        err_path = os.path.join(tmp, "waitpath.err")
        if args.source == "demo":
            # The live pipeline: a private relayd, one session daemon per host, the engine
            # following the sessions, /metrics served by `waitpath live`'s exporter.
            command = [args.waitpath, "demo", "--metrics", f"127.0.0.1:{free_port()}", "--duration",
                       "90s"]
        else:
            command = [args.waitpath, "analyze", "--metrics", "127.0.0.1:0", "--metrics-linger",
                       "30s", trace]
        waitpath = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(err_path, "w"))
        procs.append(waitpath)
        if args.source == "demo":
            # SIGTERM (not a kill) lets the demo stop the daemons it started.
            waitpath.terminate = lambda: waitpath.send_signal(signal.SIGTERM)

        def metrics_address():
            m = re.search(r"metrics on http://(\S+)/metrics", open(err_path).read())
            return m.group(1) if m else None

        target = wait_for("waitpath's metrics address", metrics_address, 60)

        port = free_port()
        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - {os.path.abspath(args.rules)}
scrape_configs:
  - job_name: waitpath
    static_configs:
      - targets: ["{target}"]
""")
        log = open(os.path.join(tmp, "prometheus.log"), "w")
        server = subprocess.Popen(
            [prometheus_bin, f"--config.file={config}", f"--storage.tsdb.path={tmp}/data",
             f"--web.listen-address=127.0.0.1:{port}", "--web.enable-lifecycle"],
            stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
        procs.append(server)
        prom = Prometheus(f"http://127.0.0.1:{port}")

        wait_for("Prometheus to scrape waitpath (up == 1)",
                 lambda: any(r["value"][1] == "1" for r in prom.vector('up{job="waitpath"}')), 60)
        for family in FAMILIES:
            wait_for(f"family {family}", lambda: prom.vector(family), 30)
        failures = []

        def expect(cond, message):
            if not cond:
                failures.append(message)

        total = prom.vector("sum(waitpath_active_path_seconds_total)")
        blame = prom.vector("sum(waitpath_active_path_blame_seconds_total)")
        expect(total and float(total[0]["value"][1]) > 0, "no active-path time")
        expect(blame and abs(float(blame[0]["value"][1]) - float(total[0]["value"][1])) < 1e-6,
               "blame split does not add up to the active-path time")
        hosts = {r["metric"]["host"] for r in prom.vector("waitpath_events_total > 0")}
        expect(hosts == {"client", "web", "db"}, f"events by host: {hosts}")
        for r in prom.vector("sum by (host) (waitpath_clock_sync_quality)"):
            expect(r["value"][1] == "1", f"sync quality of {r['metric']} sums to {r['value'][1]}")
        expect(prom.vector("waitpath_history_bytes > 0"), "history bytes not positive")
        expect(prom.vector(
                   'waitpath_active_path_seconds_total{process="nginx",state="running"} > 0'),
               "nginx has no running time")
        if args.source == "demo":
            expect(prom.vector('waitpath_clock_sync_quality{quality="accurate"} == 1'),
                   "no host synchronized accurately while live")
            # Replay rounds keep the hosts' clocks consistent: the sync never fails.
            failed = prom.vector(
                'max_over_time(waitpath_clock_sync_quality{quality="fail"}[10m]) == 1')
            expect(not failed, f"clock sync failed while live: {failed}")
            lags = prom.vector("waitpath_stream_lag_seconds")
            expect(lags, "no stream lag reported while live")
            # Measured from when the replayer emitted the events, not from their original
            # (generated) times, which are years old.
            for r in lags:
                expect(float(r["value"][1]) < 60, f"stream lag {r['value'][1]} s for {r['metric']}")
            # Packets matched across hosts, by receiving host and sending peer.
            crossed = [r for r in prom.vector("waitpath_packets_matched_total > 0")
                       if r["metric"].get("host") != r["metric"].get("peer")]
            expect(crossed, "no packet matched between two hosts while live")
        # Every process's waits have a duration histogram whose count is the waits resolved.
        count = prom.vector("sum(waitpath_wait_duration_seconds_count)")
        expect(count and float(count[0]["value"][1]) > 0, "no wait in the duration histogram")
        latency = prom.vector('histogram_quantile(0.99, sum by (host, process, cause, le) '
                              '(waitpath_wait_duration_seconds_bucket{process="nginx"}))')
        expect(latency, "no wait-duration quantile for nginx")

        # The rule files: loaded, and every rule evaluated without error.
        rule_exprs = len(re.findall(r"^\s*expr:", open(args.rules).read(), re.M))

        def rules_evaluated():
            r = prom.get("/api/v1/rules")
            if not r or r.get("status") != "success":
                return None
            rules = [rule for g in r["data"]["groups"] for rule in g["rules"]]
            return rules if rules and all(rule["health"] != "unknown" for rule in rules) else None

        rules = wait_for("every rule to be evaluated once", rules_evaluated, 30)
        expect(len(rules) == rule_exprs, f"{len(rules)} rules loaded, {rule_exprs} in the file")
        expressions = []
        for rule in rules:
            expect(rule["health"] == "ok", f"rule {rule['name']}: {rule.get('lastError')}")
            expressions.append(rule["query"])
        expressions += dashboard_expressions(args.dashboard)
        for e in expressions:
            r = prom.query(e)
            expect(r and r.get("status") == "success",
                   f"PromQL error: {e}\n    {r and r.get('error')}")
        print(f"{len(FAMILIES)} families scraped; {len(rules)} rules healthy; "
              f"{len(expressions)} expressions evaluated")
        for f in failures:
            print("FAIL:", f)
        return 1 if failures else 0
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
