#!/bin/bash
# configs/lttng/waitpath-session.sh cannot run here (no LTTng kernel tracer): checks its syntax,
# its help, its argument errors, and that --dry-run asks lttng for a live kernel session with
# exactly the events waitpath reads, in discard mode, to the given relayd.
#
# usage: test_session_script.sh SCRIPT
set -u
script=$1

fail() {
  echo "FAIL: $*"
  exit 1
}

bash -n "$script" || fail "syntax error"
help=$("$script" --help) || fail "--help did not exit 0"
grep -q "Channel sizing" <<<"$help" || fail "--help does not explain the channel sizes"

"$script" >/dev/null 2>&1
[ $? -eq 2 ] || fail "no RELAYD_URL should be a usage error (2)"
"$script" --bogus net://r >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown option should be a usage error (2)"
"$script" --dry-run /tmp/not-a-url >/dev/null 2>&1
[ $? -eq 2 ] || fail "a RELAYD_URL that is not net:// should be a usage error (2)"

out=$("$script" --dry-run --live-timer 500000 net://relay.example.com:6000:6001) ||
  fail "--dry-run failed"
echo "$out"
grep -qx "lttng create waitpath --live=500000 --set-url=net://relay.example.com:6000:6001" \
  <<<"$out" ||
  fail "no live session to the relayd"
grep -q \
  "^lttng enable-channel --kernel .*--discard .*--subbuf-size=1M --num-subbuf=8 .* waitpath$" \
  <<<"$out" || fail "no kernel channel with the documented sizes in discard mode"
grep -qx "lttng start waitpath" <<<"$out" || fail "the session is not started"

# Exactly the events waitpath needs, no more, no fewer.
want="block_rq_complete block_rq_issue irq_handler_entry irq_handler_exit irq_softirq_entry
irq_softirq_exit irq_softirq_raise lttng_statedump_process_state net_dev_queue net_if_receive_skb
sched_process_exit sched_process_fork sched_process_free sched_switch sched_wakeup
sched_wakeup_new sched_waking timer_hrtimer_expire_entry timer_hrtimer_expire_exit
x86_irq_vectors_*"
got=$(grep "^lttng enable-event --kernel " <<<"$out" | awk '{print $NF}' | tr -d "'" | tr ',' '\n' |
  sort | tr '\n' ' ')
want=$(tr ' \n' '\n\n' <<<"$want" | grep -v '^$' | sort | tr '\n' ' ')
[ "$got" = "$want" ] || fail "events differ
  want: $want
  got:  $got"
"$script" --dry-run net://r | grep -v "^lttng " && fail "--dry-run printed more than lttng commands"
[ "$("$script" --dry-run --destroy --name s)" = "lttng destroy s" ] || fail "--destroy"
echo PASS
