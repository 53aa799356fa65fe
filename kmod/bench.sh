# The cost figures of kmod/README.md ("Cost"): run in a lab guest by
#   tests/vmlab/lab.py boot --guests 1 --smp 1 --timeout 1200 --run "$(cat kmod/bench.sh)"
# (run.sh context: $SESSION, $RELAYD; the workloads built in /usr/local/bin).
cp -r /lab/kmod /usr/src/waitpath-kmod-0.1
dkms install waitpath-kmod/0.1 -k "$(uname -r)" >/tmp/dkms.log 2>&1 ||
  { echo "LAB: dkms failed"; exit 1; }
N=3000
one() {  # one LABEL: loopback TCP request/reply rate of one wl-rpc run
  s=$(date +%s.%N); wl-rpc --requests $N --work-ms 0 >/dev/null; e=$(date +%s.%N)
  echo "LAB: bench $1 $(awk -v s=$s -v e=$e -v n=$N 'BEGIN {printf "%.0f", n / (e - s)}') req/s"
}
TCP=waitpath_tcp_send,waitpath_tcp_recv
for i in 1 2 3 4 5; do
  one unloaded
  modprobe lttng-probe-waitpath
  one loaded
  rmmod lttng-probe-waitpath
done
modprobe lttng-probe-waitpath
$SESSION --kmod --no-start --name b "$RELAYD" >/dev/null
lttng disable-event -k -s b -c waitpath $TCP >/dev/null
for i in 1 2 3 4 5; do
  lttng start b >/dev/null; sleep 1
  one stock
  lttng enable-event -k -s b -c waitpath $TCP >/dev/null
  one kmod
  lttng disable-event -k -s b -c waitpath $TCP >/dev/null
  lttng stop b >/dev/null
done
$SESSION --destroy --name b
