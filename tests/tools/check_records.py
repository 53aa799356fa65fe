#!/usr/bin/env python3
"""Checks the invariants of waitpath's JSON Lines (analyze, live, tail) and, optionally, of a
Prometheus text exposition it served: every task's and wait's breakdown sums to its interval
with no negative state; by_task entries are non-negative and sum to the task's life (at most
the life when --top cut the list); a wait's path tiles it and agrees with its breakdown;
no counter sample is negative. Prints one line of counts; exits 1 with the first problems.

usage: check_records.py RECORDS.jsonl [--metrics EXPOSITION.txt] [--full-by-task]
"""
import argparse
import json
import re
import sys

LEAVES = ["running", "interrupted", "preempted", "timer", "disk", "network", "irq", "ipi",
          "user_input", "blocked", "unknown"]


def check_records(path, full_by_task, problems):
    counts = {"task": 0, "wait": 0}
    for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        kind = r.get("type")
        if kind not in counts:
            continue
        counts[kind] += 1
        where = f"line {n} ({kind} {r.get('comm')}/{r.get('tid')})"
        start, end = r["start_ns"], r["end_ns"]
        b = r["breakdown_ns"]
        if sorted(b) != sorted(LEAVES):
            problems.append(f"{where}: breakdown keys {sorted(b)}")
        if any(v < 0 for v in b.values()):
            problems.append(f"{where}: negative state {b}")
        if sum(b.values()) != end - start:
            problems.append(f"{where}: breakdown sums to {sum(b.values())}, interval {end - start}")
        if kind == "task":
            total = 0
            for e in r["by_task"]:
                if any(v < 0 for v in e["states"].values()) or e["ns"] < 0:
                    problems.append(f"{where}: negative by_task entry {e}")
                if sum(e["states"].values()) != e["ns"]:
                    problems.append(f"{where}: by_task entry does not sum {e}")
                total += e["ns"]
            if total > end - start or (full_by_task and total != end - start):
                problems.append(f"{where}: by_task sums to {total}, life {end - start}")
        else:
            at, per = start, {}
            for p in r["path"]:
                if p["start_ns"] != at or p["end_ns"] <= p["start_ns"]:
                    problems.append(f"{where}: path piece {p} does not follow {at}")
                    break
                per[p["state"]] = per.get(p["state"], 0) + p["end_ns"] - p["start_ns"]
                at = p["end_ns"]
            if at != end:
                problems.append(f"{where}: path ends at {at}, wait at {end}")
            for k, v in per.items():
                if v != b.get(k):
                    problems.append(f"{where}: path has {k} {v}, breakdown {b.get(k)}")
        if len(problems) > 20:
            break
    return counts


def check_metrics(path, problems):
    samples = 0
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$", line.strip())
        if not m:
            continue
        samples += 1
        if m.group(1).endswith("_total") and float(m.group(3)) < 0:
            problems.append(f"metrics: negative counter {line.strip()}")
    return samples


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("records")
    ap.add_argument("--metrics")
    ap.add_argument("--full-by-task", action="store_true", help="by_task must sum to the life")
    a = ap.parse_args()
    problems = []
    counts = check_records(a.records, a.full_by_task, problems)
    samples = check_metrics(a.metrics, problems) if a.metrics else 0
    print(f"check_records: {counts['task']} tasks, {counts['wait']} waits, {samples} metric "
          f"samples, {len(problems)} problems")
    for p in problems[:20]:
        print("  " + p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
