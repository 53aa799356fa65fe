#!/bin/sh
# Runs in a lab guest as /lab/init.sh (called by the image's /sbin/waitpath-lab-init, PID 1):
# names the host, configures the links, builds the project's workloads from their source on
# the lab disk, starts lttng-sessiond (which loads lttng-modules) and runs /lab/run.sh, the
# host's command for this boot. Every line it prints goes to the serial console, which the
# host logs; lines starting with "LAB:" are read by tests/vmlab/lab.py.
export PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
echo "LAB: init uptime=$(cut -d' ' -f1 /proc/uptime)"
hostname "$(cat /lab/hostname)"
ip link set lo up
# eth0: QEMU user networking (restrict=on): only 10.0.2.100:5342/5343, forwarded to the
# host's lttng-relayd.
ip addr add 10.0.2.15/24 dev eth0 && ip link set eth0 up
# eth1: the guest-to-guest link (-netdev socket), when there is one.
if [ -f /lab/ip1 ] && [ -e /sys/class/net/eth1 ]; then
  ip addr add "$(cat /lab/ip1)" dev eth1 && ip link set eth1 up
fi
# The workloads, from the project's source (tools/workloads); static, because under TCG the
# dynamic loader alone costs a process tens of ms of running.
mkdir -p /usr/local/bin
for c in /lab/workloads/wl_*.c; do
  n=$(basename "$c" .c)
  [ "$n" = wl_idle_fill ] && continue
  # Only the ones this boot needs, when the host says (building is slow under TCG).
  [ -f /lab/build-workloads ] && ! grep -qx "$n" /lab/build-workloads && continue
  { gcc -O2 -static -std=gnu11 -D_GNU_SOURCE -pthread \
    -o "/usr/local/bin/$(echo "$n" | tr _ -)" "$c" ||
    echo "LAB: cannot build $n"; } &
done
wait
echo "LAB: workloads built uptime=$(cut -d' ' -f1 /proc/uptime)"
start_sessiond() {
  lttng-sessiond -d
  i=0
  until lttng list -k >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -gt 100 ] && { echo "LAB: lttng-sessiond has no kernel tracer"; lsmod |
      grep lttng; return 1; }
    sleep 0.2
  done
  return 0
}
if start_sessiond; then
  echo "LAB: sessiond ready uptime=$(cut -d' ' -f1 /proc/uptime) probes=$(lttng list -k \
    2>/dev/null | grep -c '^ ')"
  cd /root
  sh /lab/run.sh
  echo "LAB: run.sh exit=$? uptime=$(cut -d' ' -f1 /proc/uptime)"
fi
echo "LAB: done"
