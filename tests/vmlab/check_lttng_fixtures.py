#!/usr/bin/env python3
"""Fast test (no QEMU): the LTTng kernel traces recorded by the VM lab (tests/fixtures/lttng,
made by `test_lab.py WAITPATH workloads --fixtures DIR`) still give the workloads' findings.
For each <name>.expect.json: babeltrace2 reads the stated event count, `waitpath analyze
--watch comm=WATCH` finds one task whose by_task meets the expectations (the check of
RecordedWorkloadTest), and every record keeps the invariants (tests/tools/check_records.py).
A kmod fixture (schema waitpath-kmod-fixture/1, `test_lab.py WAITPATH overlay --fixtures DIR`)
is checked as the lab checks its `kmod` sessions (test_lab.check_kmod_traces).

usage: check_lttng_fixtures.py WAITPATH FIXTURE_DIR
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_lab as t  # noqa: E402


def main():
    w, root = sys.argv[1], sys.argv[2]
    expects = sorted(glob.glob(os.path.join(root, "*.expect.json")))
    if not expects:
        print(f"SKIP: no *.expect.json in {root}")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        for path in expects:
            e = json.load(open(path))
            if e.get("schema") == "waitpath-kmod-fixture/1":
                # Two hosts with the kmod's events (test_lab.py overlay): packets matched
                # across an encrypted overlay, cgroups in records and metric labels.
                traces = [os.path.join(root, d) for d in e["traces"]]
                n = t.count_events(traces)
                t.check(n == e["events"],
                        f"{os.path.basename(path)}: {n} events (expect file: {e['events']})")
                t.check_kmod_traces(w, traces, tmp, os.path.basename(path).split(".")[0])
                continue
            if e.get("schema") == "waitpath-overlay-stock-fixture/1":
                # Two hosts, stock events only, over a clear then an encrypted overlay: each
                # packet received over the clear one is seen twice; both sightings match, so
                # the first client's path crosses; nothing matches over ESP.
                traces = [os.path.join(root, d) for d in e["traces"]]
                n = t.count_events(traces)
                t.check(n == e["events"],
                        f"{os.path.basename(path)}: {n} events (expect file: {e['events']})")
                out = t.run([w, "analyze", "--json", "--watch=comm=wl-rpc-client", "--top",
                             "100000"] + traces)
                rec = os.path.join(tmp, "overlay-stock.json")
                open(rec, "w").write(out)
                t.check_invariants(rec)
                clients = sorted((r for r in t.records(out) if r["comm"] == "wl-rpc-client"),
                                 key=lambda r: r["start_ns"])
                if t.check(len(clients) == 2,
                           f"overlay-stock: two wl-rpc-client tasks ({len(clients)})"):
                    clear, esp = t.crossing(clients[0], "clear"), t.crossing(clients[1], "esp")
                    t.check(clear[0] > 0 and clear[1] >= 0.3,
                            f"overlay-stock: clear VXLAN, the path crosses into vm-server "
                            f"({clear[0]:.3f}, running {clear[1]:.3f})")
                    t.check(esp[0] == 0,
                            f"overlay-stock: VXLAN+ESP, nothing matched ({esp[0]:.3f})")
                continue
            trace = os.path.join(root, e["trace"])
            n = t.count_events([trace])
            t.check(n == e["events"], f"{e['workload']}: {n} events (expect file: {e['events']})")
            out = t.run([w, "analyze", "--json", f"--watch=comm={e['watch_comm']}", "--top",
                         "100000", "--min-wait", "1ms", trace])
            rec = os.path.join(tmp, f"{e['workload']}.json")
            open(rec, "w").write(out)
            t.check_invariants(rec)
            tasks = t.records(out)
            if t.check(len(tasks) == 1, f"{e['workload']}: one {e['watch_comm']} task"):
                t.expectations_hold(tasks[0], e["expect"], e["workload"])
    if t.failures:
        print(f"{len(t.failures)} check(s) failed")
        return 1
    print(f"OK: {len(expects)} LTTng fixtures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
