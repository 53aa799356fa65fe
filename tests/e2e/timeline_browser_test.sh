#!/usr/bin/env bash
# A timeline opened in a real browser: headless Chromium loads the offline viewer
# (tools/timeline_view/timeline.html) on the timeline of a generated three-host system, and
# what it drew (its #summary) must be the file's content: the hosts in order, every slice and
# flow arrow, and per watched task the states summed from its slices equal to the task's
# breakdown in `analyze --json` (to the nanosecond per slice: the file's times are
# microseconds with nanosecond decimals). It also renders a screenshot.
# usage: timeline_browser_test.sh WAITPATH WAITPATH_GEN SOURCE_DIR
set -euo pipefail
W=$1 GEN=$2 SRC=$3
command -v chromium >/dev/null || { echo "SKIP: chromium not installed"; exit 77; }
tmp=$(mktemp -d /tmp/waitpath-timeline-browser.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

"$GEN" -q --scenario "$SRC/tools/demo/demo.toml" --out "$tmp/g" >/dev/null
watch='comm=^(wrk|nginx|postgres)$'
"$W" analyze --json --watch "$watch" --timeline "$tmp/t.json" "$tmp/g" >"$tmp/a.json"
"$SRC/tools/timeline_view/view.sh" "$tmp/t.json" "$tmp/view" >/dev/null
# --no-sandbox: tests run as root, where Chromium's sandbox cannot start; the page is ours.
chromium --headless=new --no-sandbox --disable-gpu --virtual-time-budget=10000 \
  --dump-dom "file://$tmp/view/timeline.html" >"$tmp/dom.html" 2>"$tmp/chromium.err" ||
  { echo "FAIL: chromium --dump-dom: $(tail -3 "$tmp/chromium.err")"; exit 1; }
python3 - "$tmp/dom.html" "$tmp/t.json" "$tmp/a.json" <<'PY'
import html, json, re, sys
m = re.search(r'<pre id="summary">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
assert m and m.group(1).strip(), "the viewer drew nothing (no summary in the page)"
drawn = json.loads(html.unescape(m.group(1)))
events = json.load(open(sys.argv[2]))["traceEvents"]
tasks = [json.loads(l) for l in open(sys.argv[3]) if '"type":"task"' in l]
hosts = [e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"]
assert drawn["processes"] == hosts, (drawn["processes"], hosts)
assert drawn["slices"] == sum(e["ph"] == "X" for e in events), drawn["slices"]
starts = {e["id"] for e in events if e["ph"] == "s"}
assert drawn["flows"] == sum(e["ph"] == "f" and e["id"] in starts
                             for e in events) > 0, drawn["flows"]
assert drawn["waits"] > 0 and drawn["drawn"] > 0, drawn
checked = 0
for t in tasks:
    who = f'{t["host"]}/{t["comm"]}'
    mine = [k for k in drawn["state_us"] if k.startswith(who)]
    assert len(mine) == 1, (who, list(drawn["state_us"]))
    got = drawn["state_us"][mine[0]]
    slices = sum(1 for e in events if e["ph"] == "X" and e.get("cat") == "state")
    for state, ns in t["breakdown_ns"].items():
        assert abs(got.get(state, 0) * 1000 - ns) <= slices, (who, state, got.get(state, 0) * 1000,
                                                              ns)
    checked += 1
assert checked == 3, checked
# An axis with units along the top; a legend naming every state drawn; the window opened on is
# the watched tasks' time (their states and waits); too many arrows to tell apart are hidden.
assert len(drawn["axis"]) >= 3 and all(re.fullmatch(r"\+[0-9.]+ (us|ms|s)", a)
                                       for a in drawn["axis"]), drawn["axis"]
assert drawn["axis"][0].startswith("+0"), drawn["axis"]
states = {e["args"]["state"] for e in events if e["ph"] == "X" and e.get("cat") == "state"}
assert set(drawn["legend"]) == states, (drawn["legend"], states)
watched = [e for e in events if e["ph"] == "X" and e.get("cat") in ("state", "wait")]
assert drawn["window_us"] == [min(e["ts"] for e in watched),
                              max(e["ts"] + e["dur"] for e in watched)], drawn["window_us"]
assert drawn["arrows_drawn"] == 0 < drawn["flows"], drawn["arrows_drawn"]
print(f"the browser drew {len(hosts)} hosts, {drawn['slices']} slices, {drawn['flows']} arrows;"
      f" the states of {checked} tasks equal their breakdowns; axis {drawn['axis'][:3]}...")
PY
# Zoomed to one wait (what a click on it does): the window is that wait and a sixth of it on
# each side, and its arrows are drawn.
chromium --headless=new --no-sandbox --disable-gpu --virtual-time-budget=10000 \
  --dump-dom "file://$tmp/view/timeline.html#wait=40" >"$tmp/dom40.html" 2>"$tmp/chromium.err" ||
  { echo "FAIL: chromium --dump-dom #wait=40: $(tail -3 "$tmp/chromium.err")"; exit 1; }
python3 - "$tmp/dom40.html" "$tmp/t.json" <<'PY'
import html, json, re, sys
m = re.search(r'<pre id="summary">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
drawn = json.loads(html.unescape(m.group(1)))
events = json.load(open(sys.argv[2]))["traceEvents"]
waits = sorted((e for e in events if e["ph"] == "X" and e.get("cat") == "wait"),
               key=lambda e: e["ts"])
w = waits[40]
pad = max(w["dur"] / 6, 1)
want = [w["ts"] - pad, w["ts"] + w["dur"] + pad]
assert all(abs(a - b) < 1e-6 for a, b in zip(drawn["window_us"], want)), (drawn["window_us"], want)
assert 0 < drawn["arrows_drawn"] <= 300, drawn["arrows_drawn"]
print(f"zoomed to wait 40 ({w['name']}): {drawn['arrows_drawn']} arrows drawn")
PY
"$SRC/tools/timeline_view/view.sh" "$tmp/t.json" "$tmp/view" --png "$tmp/t.png" >/dev/null
[ "$(stat -c %s "$tmp/t.png")" -gt 10000 ] || { echo "FAIL: the screenshot is empty"; exit 1; }
head -c 8 "$tmp/t.png" | od -An -tx1 | grep -q "89 50 4e 47" || { echo "FAIL: not a PNG"; exit 1; }
echo "OK"
