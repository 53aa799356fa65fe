#!/bin/bash
# What a person at a 120x40 terminal sees: `waitpath demo` (real relayd and session daemons)
# in a tmux pane of that size, its screen captured with `tmux capture-pane` and checked:
#  - it fits (at most 40 lines, none wider than 120 columns) and is redrawn in place;
#  - the three hosts with their event rates, lag and clock (the reference and two synchronized
#    accurately: the replayers shift their rounds by one true period, so clocks stay consistent);
#  - the three watched processes with their shares by state;
#  - the slowest recent waits, slowest first, each with a headline `STATE N% on HOST/PROCESS`;
#  - the demo's messages caught at the bottom instead of tearing the screen.
# Then `q`: the normal screen comes back with the summary since the start, exit 0, nothing of
# the demo left running. Then `tail TRACE` in the same pane prints the summary of the trace,
# and `--plain` prints one line per wait.
#
# usage: test_screen.sh WAITPATH TRACE_DIR
# Exit 77 (skipped) without tmux, root, lttng-tools or namespaces.
set -u
waitpath=$1
trace=$2

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

command -v tmux >/dev/null || skip "tmux not found (apt-get install tmux)"
need_lttng_namespaces
demo_workdir waitpath-screen-test
socket="$work/tmux.sock"
pane=screen
tmux_() { tmux -S "$socket" "$@"; }
screen_cleanup() {
  tmux_ kill-server 2>/dev/null
  demo_cleanup
}
trap screen_cleanup EXIT

# run COMMAND: in a fresh 120x40 pane (TERM as tmux sets it), its exit status in $work/status.
runs=0
run() {
  tmux_ kill-server 2>/dev/null
  # A server of its own per command: a killed server takes a moment to go, and a new session
  # on its socket meanwhile fails ("server exited unexpectedly").
  socket=$work/tmux-$((++runs)).sock
  rm -f "$work/status"
  tmux_ -f /dev/null new-session -d -s "$pane" -x 120 -y 40 \
    "$1; echo \$? >$work/status; sleep 600"
}

# wait_for TEXT SECONDS: until the pane shows TEXT.
wait_for() {
  local i
  for ((i = 0; i < $2 * 2; i++)); do
    tmux_ capture-pane -p -t "$pane" | grep -qF -- "$1" && return 0
    sleep 0.5
  done
  echo "--- the pane:"
  tmux_ capture-pane -p -t "$pane"
  fail "waited $2 s for '$1' on the screen"
}

wait_status() {
  local i
  for ((i = 0; i < $1 * 2; i++)); do
    [ -s "$work/status" ] && return 0
    sleep 0.5
  done
  tmux_ capture-pane -p -t "$pane" -S -200
  fail "the command did not end within $1 s"
}

# --- The demo's screen.
run "$waitpath demo --no-metrics --min-wait 1ms --pid-file $work/pids"
wait_for "SLOWEST WAITS (last 10 s, min-wait 1ms)" 120
# Let it synchronize the clocks and fill the window.
wait_for "clock accurate" 60
# The demo's requests are spans: client checkouts, listed with their cross-host headline.
wait_for "client:checkout" 60
sleep 12
tmux_ capture-pane -p -t "$pane" >"$work/screen"
echo "--- the screen at 120x40:"
cat "$work/screen"
lines=$(wc -l <"$work/screen")
[ "$lines" -le 40 ] || fail "$lines lines on a 40-line screen"
awk 'length($0) > 120 { print "FAIL: line " NR " is " length($0) " columns"; bad = 1 }
     END { exit bad }' "$work/screen" || exit 1
head -1 "$work/screen" | grep -q '^waitpath - relayd net://127.0.0.1:' || fail "no title line"
for host in client web db; do
  grep -Eq "^$host +[0-9.]+k? +[0-9.]+ s +[0-9]+  (reference|\+/-[0-9.]+ [mun]?s accurate)" \
    "$work/screen" || fail "no health line for host $host"
done
[ "$(grep -Ec '  reference( |$)' "$work/screen")" -eq 1 ] || fail "not exactly one reference host"
for process in client/wrk web/nginx db/postgres; do
  grep -Eq "^$process +[0-9]+ +[0-9.]+ m?s( +(-|<1%|[0-9]+%)){9}$" "$work/screen" ||
    fail "no share row for $process"
done
# Under the title, a header naming every column; then the slowest wait, with how many times
# its path recurred and a headline naming a state and a task.
grep -A1 '^SLOWEST WAITS' "$work/screen" | tail -1 |
  grep -q '^ENDED  *HOST/PROCESS TID  *WAITED  *TIMES  LARGEST STATE' || fail "no column header"
first=$(grep -A2 '^SLOWEST WAITS' "$work/screen" | tail -1)
echo "$first" | grep -Eq \
  '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}  (client|web|db)/[a-z]+ [0-9]+ +[0-9.]+ m?s +(x[0-9]+)?  [a-z_]+ [0-9<]+% on (client|web|db)/[a-z]+' ||  # noqa: line-length
  fail "the first wait has no headline: '$first'"
rows=$(grep -A30 '^SLOWEST WAITS' "$work/screen" | grep -E '^[0-9]{2}:')
durations=$(echo "$rows" | grep -Eo '  [0-9.]+ ms  ' | tr -d ' ms')
[ "$durations" = "$(echo "$durations" | sort -rn)" ] || fail "waits not slowest first"
[ "$(echo "$rows" | wc -l)" -ge 3 ] || fail "fewer than 3 waits shown"
# Repeats are folded: no two rows of one thread with one headline state on one task.
path='s/^[^ ]+  ([^ ]+ [0-9]+) .*  ([a-z_]+) [0-9<]+% on ([^ ]+).*/\1 \2 \3/'
paths=$(echo "$rows" | sed -E "$path")
[ "$(echo "$paths" | sort | uniq -d | wc -l)" -eq 0 ] ||
  fail "a path repeated in the slowest waits"
# A server awaiting a request is idle, not slow: counted above the list, never in it.
# Whole, not cut at the screen's width (the line before it was: '...not belo').
grep -Eq '^idle, not below: [0-9]+ waits of servers for a request(, [0-9]+ on untraced peers)?$' \
  "$work/screen" || fail "no idle line, or one cut short"
# The slowest request: a client checkout whose headline names where its path was, on any host.
request=$(grep -A2 '^SLOWEST REQUESTS (last 10 s)' "$work/screen" | tail -1)
[ "$(grep -n '^SLOWEST REQUESTS' "$work/screen" | cut -d: -f1)" -lt \
  "$(grep -n '^PROCESSES' "$work/screen" | cut -d: -f1)" ] || fail "the requests are not on top"
echo "$request" | grep -Eq \
  '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}  client:checkout +[0-9.]+ m?s  [a-z_]+ [0-9<]+% on (client|web|db)/[a-z]+' ||  # noqa: line-length
  fail "no slowest request with a headline: '$request'"
grep -q '^! waitpath: .*clock accurate' "$work/screen" || fail "messages not shown at the bottom"
tail -1 "$work/screen" | grep -q '^q or Ctrl-C' || fail "no key help on the last line"

# --- The relayd frozen (SIGSTOP) until the readers give it up: the screen says its data is
# old (title and every "last 10 s" section), the hosts' state says since when the relayd is
# lost, and LOST the outage's time, not "1" (issue 31, item 4: the clock froze while the
# sections kept minutes-old data). Then it runs again and the demo goes on.
relayd_pid=$(awk '$1 == "relayd" { print $2 }' "$work/pids")
[ -n "$relayd_pid" ] || fail "no relayd in the demo's pid file"
kill -STOP "$relayd_pid"
wait_for "relayd lost for" 40
# Until the outage is a few seconds old (LOST then shows its time, `+3s`).
for ((i = 0; i < 60; i++)); do
  tmux_ capture-pane -p -t "$pane" | grep -Eq 'relayd lost for ([3-9]|[1-9][0-9])s' && break
  sleep 0.5
done
tmux_ capture-pane -p -t "$pane" >"$work/stale"
kill -CONT "$relayd_pid"
echo "--- the screen with the relayd lost:"
cat "$work/stale"
head -1 "$work/stale" | grep -Eq ', data [0-9]+(s|m[0-9]{2}s) old$' || fail "the title says no age"
grep -Eq '^PROCESSES \(last 10 s, data [0-9]+(s|m[0-9]{2}s) old\)' "$work/stale" ||
  fail "the processes' window says no age"
grep -Eq '^(client|web|db) .* [0-9]+ \+[0-9]+(s|m[0-9]{2}s) .*relayd lost for [0-9]+' \
  "$work/stale" || fail "no host shows the outage's time and state"
# Followed again: the outage's state leaves the screen.
for ((i = 0; i < 120; i++)); do
  tmux_ capture-pane -p -t "$pane" | grep -q "relayd lost for" || break
  sleep 0.5
done
tmux_ capture-pane -p -t "$pane" | grep -q "relayd lost for" &&
  fail "the relayd was not followed again within 60 s"

# --- q: the summary on the normal screen, exit 0, everything ended.
tmux_ send-keys -t "$pane" q
wait_status 60
[ "$(cat "$work/status")" = 0 ] || fail "demo exited $(cat "$work/status") after q"
tmux_ capture-pane -p -t "$pane" -S -200 >"$work/after"
grep -q 'summary at the end' "$work/after" || fail "no summary after q"
grep -q '^SLOWEST WAITS (since the start' "$work/after" || fail "no slowest waits in the summary"
grep -q '^SLOWEST REQUESTS (since the start)' "$work/after" ||
  fail "no slowest requests in the summary"
grep -q '^waitpath: following session' "$work/after" ||
  fail "the caught messages were not printed at the end"
check_ended() {
  local role rest pid
  while read -r role rest; do
    pid=${rest##* }
    if [ "$role" = workdir ]; then
      [ -e "$pid" ] && fail "work directory $pid left behind"
      continue
    fi
    if [ -r "/proc/$pid/stat" ] && ! grep -q ') Z' "/proc/$pid/stat"; then
      case $(cat "/proc/$pid/comm") in
        lttng-* | waitpath-replay*) fail "$role $rest still runs" ;;
      esac
    fi
  done <"$work/pids"
}
check_ended
echo "ok: demo screen fits 120x40, q leaves a summary, everything ended"

# --- tail on a recorded trace in the terminal: the summary; --plain: lines.
if [ -d "$trace" ]; then
  run "$waitpath tail $trace"
  wait_status 120
  tmux_ capture-pane -p -t "$pane" -S -200 >"$work/tail"
  grep -q '^waitpath - 1 host from recorded traces' "$work/tail" || fail "tail: no summary"
  grep -Eq ' waited [0-9.]+ ms' "$work/tail" && fail "tail in a terminal printed wait lines"
  run "$waitpath tail --plain $trace | head -3"
  wait_status 120
  tmux_ capture-pane -p -t "$pane" >"$work/plain"
  grep -Eq ' waited [0-9.]+ ms: [a-z_]+ [0-9<]+% ' "$work/plain" ||
    fail "tail --plain: no wait line"
  echo "ok: tail on a trace in a terminal: summary; --plain: lines"
else
  echo "note: $trace not found: tail part not run"
fi
