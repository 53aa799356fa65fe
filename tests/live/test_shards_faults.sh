#!/usr/bin/env bash
# Shards over a real nats-server and a real relayd under faults (docs/scale.md, "Bounds and
# failures"), the generated three-tier system replayed in a loop, one shard per host:
#  1. the nats-server killed (SIGKILL) mid-run and restarted on its store: no shard crashes, each
#     counts the disconnection and its reconnection, what could not go through is counted;
#  2. the db shard killed (SIGKILL) mid-run and restarted: the others keep going and count what
#     its absence cost; the restarted shard takes over the session the killed one followed (the
#     relayd frees a session when its viewer's connection closes, as the kernel closes it for a
#     killed process);
#  3. after both, a new session (the same system 100 s later on the same clocks): every shard
#     reports its tasks once; every record of the whole run sums to its task's life exactly.
# After recovery every shard's clock of each peer is accurate again (within 1 ms; after the
# clocks' jumps it was tens of ms to seconds off before each pair started over at a jump ahead).
# The answers after recovery, those of the session after both faults, are asserted equal to one
# analyzer's (`analyze --json` of the same traces) and to the generator's truth, 5 % of a task's
# life per state as in test_shards.sh: measured, the worst state 0.2-1.4 % (docs/scale.md).
# Before a shard pair's line was held to the rates clocks have, they were 1.3-13.4 % off and
# were printed only. So is the last round of each looped session (after the nats-server's
# return, after the db shard's restart), asserted since the receives wait on their sender's
# progress rather than for a wall-clock bound (measured 0.01-0.02 %): before, with the 2 cores
# shared, a shard that fell seconds behind its peers (the db shard attached 4-7 s after the
# others) had the waits that needed it go to `network` for the rest of the session (37-83 %).
# usage: test_shards_faults.sh WAITPATH WAITPATH_GEN WAITPATH_REPLAY SOURCE_DIR
set -euo pipefail
W=$1 GEN=$2 REPLAY=$3 SRC=$4
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces for the per-host session daemons)"
for t in lttng-relayd lttng-sessiond lttng unshare python3 nats-server; do
  command -v "$t" >/dev/null || skip "$t not installed"
done

# shellcheck source=tests/live/daemons.sh
. "$SRC/tests/live/daemons.sh"
live_setup shards-faults 18000
nats_port=$((base + 4))
nats_url=nats://127.0.0.1:$nats_port
start_nats() {
  nats-server -a 127.0.0.1 -p $nats_port -js -sd "$tmp/nats" >>"$tmp/nats.log" 2>&1 &
  nats=$!
  pids+=("$nats")
  sleep 1
}
start_nats

"$GEN" --scenario "$SRC/tools/gen/scenarios/three-tier.toml" --out "$tmp/set" >/dev/null
# The session after the faults: the same system 100 s later on the same clocks (each offset
# moved by its drift over those 100 s), as a fleet's next minutes would be; its records are
# told apart from the looped rounds' by their times.
sed 's/^seed = 42$/seed = 42\nepoch_ns = 1700000100000000000/; s/"3.2s"/"3203500us"/; s/"-1.75s"/"-1752000us"/' \
  "$SRC/tools/gen/scenarios/three-tier.toml" >"$tmp/later.toml"
"$GEN" --scenario "$tmp/later.toml" --out "$tmp/later" >/dev/null
"$W" analyze --json "$tmp/later" >"$tmp/analyze.json"
"$W" analyze --json "$tmp/set" >"$tmp/analyze-set.json"
start_relayd a
shard() {  # shard NAME OWN OUT: started in the background, its pid in $NAME
  "$W" live --relayd "$live_url" --all --json --shard "$1" --own "$2" --bus "$nats_url" \
    --edge-wait-ms 3000 >"$tmp/$3.json" 2>"$tmp/$3.err" &
  pids+=($!)
  eval "$1=\$!"
}
shard s1 client s1
shard s2 web s2
shard s3 db s3
for s in s1 s2 s3; do wait_for "$tmp/$s.err" "shard $s" 1 10; done
# Looped: each host shifted by one true period in its own clock (docs/replay.md, "--loop"), so
# that the hosts' clocks keep their relation from round to round; replay-hosts.sh passes it from
# the set's truth.json.
replay_loop() {  # replay_loop SESSION ROUNDS
  local h
  for h in client web db; do
    bash "$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s "$1" -H "$h" -R "$REPLAY" \
      "$tmp/set" \
      --loop "$2" --speed 0.5 >"$tmp/replay-$1-$h.log" 2>&1 &
    pids+=($!)
  done
}
alive() {
  for p in "$@"; do kill -0 "$p" 2>/dev/null || { echo "FAIL: a shard died"; exit 1; }; done
}

echo "1. nats-server killed mid-run and restarted"
replay_loop first 12
for s in s1 s2 s3; do wait_for "$tmp/$s.err" "following session first" 1 30; done
sleep 3
kill -KILL "$nats"
sleep 2
alive "$s1" "$s2" "$s3"
start_nats
for s in s1 s2 s3; do wait_for "$tmp/$s.err" "(session first): session ended" 1 120; done
alive "$s1" "$s2" "$s3"

echo "2. the db shard killed mid-run and restarted"
replay_loop second 12
for s in s1 s2 s3; do wait_for "$tmp/$s.err" "following session second" 1 30; done
sleep 3
kill -KILL "$s3"
sleep 2
alive "$s1" "$s2"
# The killed viewer's connection is closed by the kernel and the relayd lets its session go:
# the restarted shard takes it over (from its live position).
shard s3 db s3b
wait_for "$tmp/s3b.err" "following session second" 1 30
for s in s1 s2 s3b; do wait_for "$tmp/$s.err" "(session second): session ended" 1 120; done
if grep -q "another viewer" "$tmp/s3b.err"; then
  echo "FAIL: the restarted shard could not take its session over:"
  cat "$tmp/s3b.err"
  exit 1
fi
alive "$s1" "$s2" "$s3"

echo "3. a new session after the faults"
bash "$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s third -R "$REPLAY" "$tmp/later" \
  --start-delay-ms 4000 --speed 0.2 >"$tmp/replay-third.log" 2>&1 &
pids+=($!)
for s in s1 s2 s3b; do wait_for "$tmp/$s.err" "(session third): session ended" 1 90; done
for p in "$s1" "$s2" "$s3"; do kill -INT "$p"; done
for p in "$s1" "$s2" "$s3"; do wait "$p"; done
grep -h "waitpath: shard.*edges" "$tmp"/s1.err "$tmp"/s2.err "$tmp"/s3b.err

python3 - "$tmp" <<'PY'
import json, re, sys
tmp = sys.argv[1]
def records(name):
    return [r for r in map(json.loads, open(f"{tmp}/{name}.json")) if r.get("type") == "task"]
fail = []
def count(line, what):
    return int(re.search(what + r" (\d+)", line).group(1))
for name in ("s1", "s2"):
    line = [l for l in open(f"{tmp}/{name}.err") if "edges published" in l][-1]
    if count(line, "disconnects") < 1 or count(line, "reconnects") < 1:
        fail.append(f"{name}: the bus's loss and return are not counted: {line}")
    lost = (count(line, "failed") + count(line, "receives without an edge")
            + count(line, "unresolved") + count(line, "receives unknown"))
    # s2 (web) waits on the db shard, killed in step 2: its waits of that stretch cannot all be
    # resolved, and must be counted. s1 (the client) talks to web only: the 2 s without the
    # bus may cost it nothing (libnats holds its publications until the server is back, and it
    # may need no query meanwhile: "failed 0, disconnects 1, reconnects 1" in 1 run of ~6), so
    # for it only the outage itself is asserted, above.
    if name == "s2" and lost == 0:
        fail.append(f"{name}: nothing counted lost: {line}")
for name in ("s1", "s2", "s3b"):
    line = [l for l in open(f"{tmp}/{name}.err") if "edges published" in l][-1]
    for peer, quality, us in re.findall(r"clock of shard (\w+): (\w+) \+/-(\d+) us", line):
        if quality != "accurate" or int(us) > 1000:
            fail.append(f"{name}: its clock of {peer} after recovery: {quality} +/-{us} us")
    if "clock of shard" not in line:
        fail.append(f"{name}: no clock of its peers: {line}")
for name in ("s1", "s2", "s3", "s3b"):
    for r in records(name):
        if sum(r["breakdown_ns"].values()) != r["end_ns"] - r["start_ns"]:
            fail.append(f"{name}: {r['host']}/{r['tid']} breakdown does not sum to its life")
def tasks(path):
    return {(r["host"], r["tid"]): r for r in map(json.loads, open(path))
            if r.get("type") == "task"}
def compare(what, key, got, want, life, asserted=True):
    worst = 0.0
    for state, v in want.items():
        d = abs(got["breakdown_ns"][state] - v)
        worst = max(worst, d / life)
        if d > 0.05 * life:
            line = f"{what} {key} {state}: {got['breakdown_ns'][state]} vs {v}"
            if asserted:
                fail.append(line)
            else:
                print("not asserted:", line)
    return worst
worst = {}
owner = {"client": "s1", "web": "s2", "db": "s3b"}
# The third session (after both faults): analyze's answer and the generator's truth.
want = tasks(f"{tmp}/analyze.json")
truth = {(t["host"], t["tid"]): t for t in json.load(open(f"{tmp}/later/truth.json"))["tasks"]}
for key, w in sorted(want.items()):
    mine = [r for r in records(owner[key[0]]) if (r["host"], r["tid"]) == key]
    later = [r for r in mine if r["start_ns"] > 1700000050000000000]  # the third session's
    if len(later) != 1:
        fail.append(f"{key}: {len(later)} records of the third session")
        continue
    g = later[0]
    life = w["end_ns"] - w["start_ns"]
    worst["third session"] = max(worst.get("third session", 0),
                                 compare("third session", key, g, w["breakdown_ns"], life))
    t = truth.get(key)
    if t is not None:
        compare("third session (truth)", key, g, t["breakdown_ns"], t["end_ns"] - t["start_ns"])
# The last round of each looped session (the same system shifted by whole periods): the round
# after the nats-server's return (first session) and after the db shard's restart (second).
want = tasks(f"{tmp}/analyze-set.json")
for key, w in sorted(want.items()):
    looped = [r for r in records(owner[key[0]]) if (r["host"], r["tid"]) == key
              and r["start_ns"] < 1700000050000000000]
    if not looped:
        fail.append(f"{key}: no record of the looped sessions")
        continue
    last = max(r["start_ns"] for r in looped)
    rounds = [r for r in looped if r["start_ns"] == last]
    # Both looped sessions for the survivors; the second only for the restarted db shard.
    if len(rounds) != (1 if key[0] == "db" else 2):
        fail.append(f"{key}: {len(rounds)} records of the looped sessions' last round")
    life = w["end_ns"] - w["start_ns"]
    for g in rounds:
        worst["last rounds"] = max(worst.get("last rounds", 0),
                                   compare("last round", key, g, w["breakdown_ns"], life))
print("worst state difference after recovery:",
      ", ".join(f"{k} {v:.2%} of a task's life" for k, v in worst.items()))
if fail:
    print("FAIL:\n  " + "\n  ".join(fail))
    sys.exit(1)
PY
echo "OK"
