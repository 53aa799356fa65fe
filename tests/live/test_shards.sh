#!/usr/bin/env bash
# Shards of a fleet over a real nats-server (docs/scale.md), a generated three-host system
# replayed into a real lttng-relayd (three-tier: client -> web -> db, clocks seconds apart and
# drifting): one shard per host, so every network wait crosses a shard boundary (client <-> web,
# web <-> db) and is resolved from the other shard's edge records and cumulative vectors, and
# chains cross two boundaries (the client's wait goes through web to db's disk). One host per
# shard keeps the live pipeline's own cross-host bootstrap (docs/live.md, "Limits") out of the
# comparison. Checked against one analyzer on the same traces (`analyze --json`) and against the
# generator's truth:
#   - every task of both shards is reported once, by its own shard, with the same lifetime
#     (to the drift between the clocks) and a breakdown that sums to it exactly;
#   - each state of each breakdown equals the single analyzer's (and the truth's) within 5 % of
#     the task's life (measured 0.2-0.7 %, also with busy loops beside it: docs/scale.md);
#   - the cross-shard waits were resolved through the bus (none left to `network`);
#   - the shard's metrics: every series labelled shard="NAME", its own families counting them.
# With `cluster`, the bus is a three-node NATS cluster (three nats-servers on loopback, the
# stream replicated x3, `--bus-replicas 3`) and the node leading the stream is killed (SIGKILL)
# mid-run; the system runs four times longer (100 requests) so that the kill falls inside it.
# Asserted besides the above: no shard crashes, and no edge is lost: none expired, every
# publish acknowledged (`bus failed 0`), every edge and clock sample published received. A
# receive whose edge the election or a shard's moving connection delayed past the bound does
# not wait for it (counted, printed), and once a shard counted one, the equivalence is printed,
# not asserted (docs/scale.md: the waits that needed it are `network`). The shards log the
# bus's events (WAITPATH_BUS_DEBUG=1: lost consumers, publishes sent again), printed when a
# message is missing.
# With `late`, the db shard starts 5 s after the others, once the system is running (a late
# attacher): its peers wait for its progress (the relayd lists db's session, so they know a shard
# of it is to come) rather than give up on its edges after a bound. Asserted besides the above:
# no receive without an edge, none unknown, no peer stalled, at any shard.
# usage: test_shards.sh WAITPATH WAITPATH_GEN WAITPATH_REPLAY SOURCE_DIR [cluster|late]
set -euo pipefail
W=$1 GEN=$2 REPLAY=$3 SRC=$4 MODE=${5:-one}
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces for the per-host session daemons)"
for t in lttng-relayd lttng-sessiond lttng unshare python3 nats-server; do
  command -v "$t" >/dev/null || skip "$t not installed"
done

# shellcheck source=tests/live/daemons.sh
. "$SRC/tests/live/daemons.sh"
live_setup shards-test 17000
scenario=$SRC/tools/gen/scenarios/three-tier.toml
longer() {  # the system four times longer: 100 requests instead of 25
  sed 's/"repeat 100"/"repeat 400"/; s/"repeat 25"/"repeat 100"/
       s/^duration = "400ms"/duration = "1600ms"/' "$scenario" >"$tmp/three-tier.toml"
  scenario=$tmp/three-tier.toml
}
if [ "$MODE" = cluster ]; then
  # On ports the kernel says are free (six: more than live_setup's range has).
  # shellcheck source=tests/live/nats_cluster.sh
  . "$SRC/tests/live/nats_cluster.sh"
  nats_cluster "$tmp" waitpath
  pids+=("${nats_pids[@]}")
  node=("${nats_pids[@]}")
  nats_url=$nats_urls
  # A new stream leader takes 4-9 s to elect (nats-server 2.9's raft): edges published
  # meanwhile are stored after it, and so is the progress that would release their receives,
  # which wait through it (within --stall-ms, 10 s) with no bound of their own.
  bus=(--bus "$nats_url" --bus-replicas 3)
  export WAITPATH_BUS_DEBUG=1
  # 100 requests instead of 25 (~8 s replayed at 0.2): the kill falls mid-run.
  longer
else
  if [ "$MODE" = late ]; then
    # 100 requests instead of 25: db's shard starts while it runs.
    longer
  fi
  nats_url=nats://127.0.0.1:$((base + 4))
  nats-server -a 127.0.0.1 -p $((base + 4)) -js -sd "$tmp/nats" >"$tmp/nats.log" 2>&1 &
  pids+=($!)
  bus=(--bus "$nats_url" --edge-wait-ms 5000)
  # The default bound: it no longer bounds a receive from a shard whose progress it waits on.
  [ "$MODE" = late ] && bus=(--bus "$nats_url")
fi

"$GEN" --scenario "$scenario" --out "$tmp/set" >/dev/null
"$W" analyze --json "$tmp/set" >"$tmp/analyze.json"

start_relayd a
shard() {  # shard NAME OWN [MORE OPTIONS]
  "$W" live --relayd "$live_url" --all --json --shard "$1" --own "$2" "${bus[@]}" "${@:3}" \
    >"$tmp/$1.json" 2>"$tmp/$1.err" &
  pids+=($!)
  eval "$1=\$!"
}
shard s1 client
metrics=127.0.0.1:$((base + 5))
shard s2 web --metrics "$metrics"
if [ "$MODE" = late ]; then
  # db's shard starts 5 s after the others, 3.5 s into the system's run (at 0.1 it runs ~6 s
  # on db), and reads db's session from its beginning (what the relayd kept of it).
  started=$(date +%s%N)
  for s in s1 s2; do wait_for "$tmp/$s.err" "shard $s" 1 10; done
  bash "$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s first -R "$REPLAY" "$tmp/set" \
    --start-delay-ms 1000 --speed 0.1 >"$tmp/replay.log" 2>&1 &
  pids+=($!)
  wait_for "$tmp/s2.err" "following session first" 1 30
  sleep "$(python3 -c "print(max(0, 5 - ($(date +%s%N) - $started) / 1e9))")"
  shard s3 db --attach beginning
  wait_for "$tmp/s3.err" "shard s3" 1 10
  echo "db's shard started $((($(date +%s%N) - started) / 1000000)) ms after the others"
else
  shard s3 db
  for s in s1 s2 s3; do wait_for "$tmp/$s.err" "shard $s" 1 10; done
  bash "$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s first -R "$REPLAY" "$tmp/set" \
    --start-delay-ms 4000 --speed 0.2 >"$tmp/replay.log" 2>&1 &
  pids+=($!)
fi
if [ "$MODE" = cluster ]; then
  # Mid-run (once web's shard has resolved 40 of its 200 cross-shard waits): the node that
  # leads the stream (the last to say so in its log) killed, while edges, samples and queries
  # flow.
  python3 - "$metrics" <<'PY'
import re, sys, time, urllib.request
for _ in range(600):
    try:
        body = urllib.request.urlopen("http://" + sys.argv[1] + "/metrics",
                                      timeout=5).read().decode()
        m = re.search(r'waitpath_shard_remote_waits_total\{kind="resolved",shard="s2"\} (\S+)',
                      body)
        if m and float(m.group(1)) >= 40:
            print(f"web's shard has resolved {m.group(1)} cross-shard waits")
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.1)
print("FAIL: web's shard resolved no 40 cross-shard waits within 60 s")
sys.exit(1)
PY
  leader=$(grep -H "new stream leader for '\$G > WAITPATH'" "$tmp"/nats?.log | sort -t' ' -k2,3 |
    tail -1 | sed 's/.*nats\([0-9]\)\.log.*/\1/')
  [ -n "$leader" ] || { echo "FAIL: no node leads the stream"; exit 1; }
  echo "killing n$leader, the stream's leader"
  kill -KILL "${node[leader]}"
  wait "${node[leader]}" 2>/dev/null || true
fi
for s in s1 s2 s3; do wait_for "$tmp/$s.err" "session ended" 1 90; done
# Every series the shard serves says which shard it is; its own families count the bus.
python3 - "$metrics" <<'PY'
import re, sys, time, urllib.request
for _ in range(50):  # the counters are copied at the shard's next poll
    body = urllib.request.urlopen("http://" + sys.argv[1] + "/metrics", timeout=5).read().decode()
    resolved = re.search(r'waitpath_shard_remote_waits_total\{kind="resolved",shard="s2"\} (\S+)',
                         body)
    if resolved and float(resolved.group(1)) >= 50:
        break
    time.sleep(0.1)
series = [l for l in body.splitlines() if l and not l.startswith("#")]
unlabelled = [l for l in series if 'shard="s2"' not in l]
if unlabelled or not resolved or float(resolved.group(1)) < 50:
    print("FAIL: metrics:", unlabelled[:3], resolved and resolved.group(0))
    sys.exit(1)
PY
# What the last receives published (their clock samples) is delivered before the shards stop,
# also by a consumer made again after one lost late (its heartbeats missed: 2-4 s; a new one
# from the last message delivered within a second).
[ "$MODE" = cluster ] && sleep 6
for p in "$s1" "$s2" "$s3"; do kill -INT "$p"; done
for p in "$s1" "$s2" "$s3"; do wait "$p"; done
grep -h "waitpath: shard.*edges" "$tmp"/s?.err

python3 - "$MODE" "$tmp/analyze.json" "$tmp"/s1.json "$tmp"/s2.json "$tmp"/s3.json "$tmp"/s?.err \
  <<'PY'
import json, re, sys
mode = sys.argv.pop(1)
def tasks(path):
    return {(r["host"], r["tid"]): r for r in map(json.loads, open(path))
            if r.get("type") == "task"}
want = tasks(sys.argv[1])
got = {"s1": tasks(sys.argv[2]), "s2": tasks(sys.argv[3]), "s3": tasks(sys.argv[4])}
owner = {"client": "s1", "web": "s2", "db": "s3"}
fail = []
worst = 0.0
# In cluster mode, once a shard counted receives without their edge or unknown (the election,
# or an edge its consumer lost at the tail and got again only with the next one: docs/scale.md,
# "Not done yet"), those waits are `network` or `unknown`, counted, and so is every answer that
# went through them (the client's go through web's, web's through db's): the states are then
# printed, not asserted.
excused = []
if mode == "cluster":
    for name, err in zip(("s1", "s2", "s3"), sys.argv[5:]):
        line = [l for l in open(err) if "waitpath: shard" in l and "edges published" in l][-1]
        if int(re.search(r"receives without an edge (\d+)", line).group(1)) > 0:
            excused.append(name)
        # A shard that stalled waiting for an edge its consumer lost while its connection
        # moved, the sender waiting for its answer (docs/scale.md, "Not done yet"): those
        # receives are `unknown`, counted, as those without an edge are `network`.
        elif int(re.search(r"receives unknown (\d+)", line).group(1)) > 0:
            excused.append(name)
            print(f"{name}, the bus's events:")
            print("".join(l for l in open(err) if l.startswith("bus ")
                          and "not acknowledged" not in l)[-3000:])
def mismatch(shard, text):
    if excused:
        print(f"not asserted ({', '.join(excused)} counted receives without an edge): {text}")
    else:
        fail.append(text)
for key, w in sorted(want.items()):
    shard = owner[key[0]]
    for other in got:
        if other != shard and key in got[other]:
            fail.append(f"{key} reported by {other}, which does not own it")
    g = got[shard].get(key)
    if g is None:
        fail.append(f"{key} missing from shard {shard}")
        continue
    life_w, life_g = w["end_ns"] - w["start_ns"], g["end_ns"] - g["start_ns"]
    if sum(g["breakdown_ns"].values()) != life_g:
        fail.append(f"{key}: breakdown sums to {sum(g['breakdown_ns'].values())}, life {life_g}")
    # The lifetime in the shard's clock (its host's) vs the reference's: the drift (35 ppm).
    if abs(life_g - life_w) > 1e-4 * life_w + 1000:
        fail.append(f"{key}: life {life_g} vs {life_w}")
    # Each state within 5 % of the life. Each cross-shard wait's boundary (the send) is placed
    # with the pair's clock as it is then: one way at the first exchange (within the fastest
    # packet's wire time), approximate for the next few (within half the offsets' band, up to a
    # round trip), then accurate (80-96 us here). Measured: 0.3-0.7 % on an idle machine, up to
    # 3.4 % with the machine loaded (the clock samples come later, more waits use early clocks).
    for state, v in w["breakdown_ns"].items():
        d = abs(g["breakdown_ns"][state] - v)
        worst = max(worst, d / life_w)
        if d > 0.05 * life_w:
            mismatch(shard, f"{key} {state}: {g['breakdown_ns'][state]} vs {v}")
# And the generator's truth (in true time: the lifetimes differ by the drift and the sync).
truth = json.load(open(sys.argv[1].replace("analyze.json", "set/truth.json")))
for t in truth["tasks"]:
    key = (t["host"], t["tid"])
    g = got[owner[t["host"]]].get(key)
    life = t["end_ns"] - t["start_ns"]
    for state, v in t["breakdown_ns"].items():
        if g is not None and abs(g["breakdown_ns"][state] - v) > 0.05 * life:
            mismatch(owner[t["host"]], f"{key} {state}: {g['breakdown_ns'][state]} vs truth {v}")
for err in sys.argv[5:]:
    line = [l for l in open(err) if "waitpath: shard" in l and "edges published" in l][-1]
    if mode == "late":
        # The late attacher cost nothing: its peers waited for its progress.
        for field in ("receives without an edge", "stalled peers", "receives unknown",
                      "remote waits resolved \\d+, unresolved"):
            v = int(re.search(field + r" (\d+)", line).group(1))
            if v != 0:
                fail.append(f"{err.rsplit('/', 1)[-1]}: {field} {v}")
        print(f"{err.rsplit('/', 1)[-1]}: longest wait for an edge "
              + re.search(r"longest wait for an edge (\d+ ms)", line).group(1))
    resolved = int(re.search(r"remote waits resolved (\d+)", line).group(1))
    if resolved < 20:
        fail.append(f"{err}: only {resolved} remote waits resolved")
    if mode == "cluster":
        # No edge lost with the node: none expired unmatched, every publish acknowledged (sent
        # again across the election). Receives that did not wait for an edge the election or a
        # moving connection delayed, and the waits and queries that cost, are counted and
        # printed, not asserted (docs/scale.md, "Not done yet"): the answers are held to the
        # 5 % above all the same.
        for field in ("expired", "bus published \\d+, failed"):
            for v in re.findall(field + r" (\d+)", line):
                if int(v) != 0:
                    fail.append(f"{err}: {field} {v}")
        late = {f: sum(map(int, re.findall(f + r" (\d+)", line)))
                for f in ("without an edge", "unresolved", "requests failed")}
        print(f"{err.rsplit('/', 1)[-1]}: " + ", ".join(f"{k} {v}" for k, v in late.items()))
if mode == "cluster":
    # Every edge and every clock sample published is received, by the one shard it is for.
    lines = [[l for l in open(e) if "waitpath: shard" in l and "edges published" in l][-1]
             for e in sys.argv[5:]]
    for what in ("edges", "samples"):
        pub = sum(int(re.search(what + r" published (\d+)", l).group(1)) for l in lines)
        got = sum(int(re.search(what + r" published \d+, received (\d+)", l).group(1))
                  for l in lines)
        if pub != got:
            fail.append(f"{what}: {pub} published, {got} received")
            for e in sys.argv[5:]:
                print(f"{e.rsplit('/', 1)[-1]}, the bus's events:")
                print("".join(l for l in open(e) if l.startswith("bus ")
                              and "not acknowledged" not in l)[-3000:])
print(f"worst state difference: {worst:.4%} of a task's life")
if fail:
    print("FAIL:\n  " + "\n  ".join(fail))
    sys.exit(1)
PY
echo "OK"
