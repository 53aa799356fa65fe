#!/usr/bin/env bash
# Shards over a real nats-server and relayd (docs/scale.md), one per host of the generated
# three-tier system, following sessions one after another without faults: the system, then the
# same system 100 s later on the same clocks (SESSIONS="set later", the default). Prints each
# task's worst state difference against `analyze --json` of the same traces, per session: the
# second session checks that the shard pairs start over at the jump ahead instead of using a
# line extrapolated 100 s (ShardPeers::Outlived). Needs root, lttng-tools, nats-server.
# usage: bench/shard_sessions.sh WAITPATH WAITPATH_GEN WAITPATH_REPLAY SOURCE_DIR
set -euo pipefail
W=$1 GEN=$2 REPLAY=$3 SRC=$4
. "$SRC/tests/live/daemons.sh"
live_setup shard-sessions 19000
nats_port=$((base + 4)); nats_url=nats://127.0.0.1:$nats_port
nats-server -a 127.0.0.1 -p $nats_port -js -sd "$tmp/nats" >>"$tmp/nats.log" 2>&1 &
pids+=($!); sleep 1
"$GEN" --scenario "$SRC/tools/gen/scenarios/three-tier.toml" --out "$tmp/set" >/dev/null
sed 's/^seed = 42$/seed = 42\nepoch_ns = 1700000100000000000/; s/"3.2s"/"3203500us"/; s/"-1.75s"/"-1752000us"/' \
  "$SRC/tools/gen/scenarios/three-tier.toml" >"$tmp/later.toml"
"$GEN" --scenario "$tmp/later.toml" --out "$tmp/later" >/dev/null
"$W" analyze --json "$tmp/later" >"$tmp/analyze-later.json"
"$W" analyze --json "$tmp/set" >"$tmp/analyze-set.json"
start_relayd a
shard() {
  "$W" live --relayd "$live_url" --all --json --shard "$1" --own "$2" --bus "$nats_url" \
    --edge-wait-ms 3000 >"$tmp/$1.json" 2>"$tmp/$1.err" &
  pids+=($!); eval "$1=\$!"
}
shard s1 client; shard s2 web; shard s3 db
for s in s1 s2 s3; do wait_for "$tmp/$s.err" "shard $s" 1 10; done
n=0
for sess in ${SESSIONS:-set later}; do
  n=$((n+1))
  bash "$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s "x$n" -R "$REPLAY" "$tmp/$sess" \
    --start-delay-ms 4000 --speed 0.2 >"$tmp/replay-$n.log" 2>&1 &
  pids+=($!)
  for s in s1 s2 s3; do wait_for "$tmp/$s.err" "(session x$n): session ended" 1 90; done
done
for p in "$s1" "$s2" "$s3"; do kill -INT "$p"; done
for p in "$s1" "$s2" "$s3"; do wait "$p"; done
grep -h "waitpath: shard.*edges" "$tmp"/s?.err
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
for which, lo, hi in (("set", 0, 1700000050000000000), ("later", 1700000050000000000, 2**63)):
    want = {(r["host"], r["tid"]): r for r in map(json.loads, open(f"{tmp}/analyze-{which}.json"))
            if r.get("type") == "task"}
    for name, host in (("s1","client"),("s2","web"),("s3","db")):
        for r in map(json.loads, open(f"{tmp}/{name}.json")):
            if r.get("type") != "task" or not (lo <= r["start_ns"] < hi): continue
            w = want.get((r["host"], r["tid"]))
            if not w: continue
            life = w["end_ns"] - w["start_ns"]
            worst = max(abs(r["breakdown_ns"][s] - v) for s, v in w["breakdown_ns"].items()) / life
            print(which, r["host"], r["tid"], f"worst {worst:.2%}", "net",
                  r["breakdown_ns"]["network"], "vs", w["breakdown_ns"]["network"])
PY
