#!/usr/bin/env python3
"""The VM lab (docs/lab.md): QEMU guests (TCG) with LTTng's kernel tracer, streaming live
sessions to an lttng-relayd on the host.

As a module: Lab (a temp dir, a relayd, guests; cleans its processes up by pid).
As a command:
  lab.py boot [--guests N] [--smp N] [--run 'SHELL'] [--keep DIR]
              [--suite bookworm|sid|mixed] [--relayd host|2.16] [--trace-format ctf-1.8]
      boots N guests that run the given shell command (after lttng-sessiond is up) and
      print their serial logs' LAB: lines and the boot time.

Images (build-image.sh): bookworm (Debian 12, LTTng 2.13) or sid (Debian's development suite,
LTTng 2.16, CTF 2 by default); `mixed` alternates them (guest0 bookworm, guest1 sid, ...).
Relayds: the host's lttng-relayd (2.13), or 2.16's from the sid chroot
(tests/lttng216/sid-chroot.sh), which 2.16 guests need for CTF 2 sessions (a 2.16 sessiond
refuses to stream CTF 2 to a 2.13 relayd).

Networking: user networking with restrict=on only; the guest reaches the host's relayd through
guestfwd 10.0.2.100:5342/5343 -> 127.0.0.1:CONTROL/DATA; guest-to-guest through -netdev socket
on 127.0.0.1 (guest i gets 192.168.77.(i+1)/24 on eth1).
"""
import argparse
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", ".."))
SKIP = 77
RELAYD_IP = "10.0.2.100"


class Skip(Exception):
    pass


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


SUITES = ("bookworm", "sid", "services")
SID_CHROOT = os.path.join(SRC, "tests", "lttng216", "sid-chroot.sh")


def image_dir(suite="bookworm"):
    """The cached guest image of `suite` (built by build-image.sh when missing; "services": the
    bookworm image with the services layer, build-services.sh). Raises Skip."""
    if suite == "services":
        argv = ["bash", os.path.join(HERE, "build-services.sh")]
    else:
        argv = ["bash", os.path.join(HERE, "build-image.sh"), "--suite", suite]
    p = subprocess.run(argv, stdout=subprocess.PIPE, text=True)
    if p.returncode == SKIP:
        raise Skip(f"the {suite} guest image cannot be built here")
    if p.returncode != 0:
        raise RuntimeError(f"build-image.sh --suite {suite} failed ({p.returncode})")
    return p.stdout.strip().splitlines()[-1]


def sid_chroot():
    """Makes sure the sid chroot with LTTng 2.16 exists (sid-chroot.sh build). Raises Skip."""
    p = subprocess.run(["bash", SID_CHROOT, "build"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode == SKIP:
        raise Skip("the sid chroot (LTTng 2.16) cannot be built here: " + p.stderr.strip()[-200:])
    if p.returncode != 0:
        raise RuntimeError(f"sid-chroot.sh build failed ({p.returncode}): "
                           f"{p.stderr.strip()[-500:]}")
    return p.stdout.strip()


def check_host():
    if os.geteuid() != 0:
        raise Skip("the VM lab needs root (debootstrap, chroot)")
    for t in ["qemu-system-x86_64", "lttng-relayd", "socat", "mkfs.ext4", "ss", "babeltrace2"]:
        if shutil.which(t) is None:
            raise Skip(f"{t} not installed")


PORT_LOCKS = "/tmp/waitpath-ports"


def free_port_base(n):
    """(base, lock): n <= 8 consecutive ports on 127.0.0.1 nobody listens on (away from LTTng's
    defaults), held while `lock` (an open file with an flock) is: tests/live/daemons.sh takes its
    blocks of 8 the same way, so tests run at once never share one."""
    assert n <= 8
    os.makedirs(PORT_LOCKS, exist_ok=True)
    used = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True).stdout
    busy = set(int(m) for m in re.findall(r":(\d+)\s", used))
    base = 20000 + (os.getpid() % 500) * 16
    for _ in range(1000):
        if not any(p in busy for p in range(base, base + n)):
            lock = open(os.path.join(PORT_LOCKS, f"{base}.lock"), "w")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return base, lock
            except OSError:
                lock.close()
        base += 16
    raise RuntimeError("no free block of ports from 20000")


class Lab:
    """suite: the guests' default image; relayd: "host" (the host's lttng-relayd, 2.13) or
    "2.16" (the sid chroot's)."""

    def __init__(self, name="lab", keep=None, suite="bookworm", relayd="host"):
        check_host()
        if suite not in SUITES or relayd not in ("host", "2.16"):
            raise ValueError(f"suite {suite}, relayd {relayd}")
        self.suite, self.relayd_kind = suite, relayd
        self.images, self.infos = {}, {}
        self.image = self.image_for(suite)
        self.info = self.infos[suite]
        if relayd == "2.16":
            self.relayd_versions = sid_chroot()
        self.dir = keep or tempfile.mkdtemp(prefix=f"waitpath-vmlab-{name}.", dir="/var/tmp")
        os.makedirs(self.dir, exist_ok=True)
        self.procs = []  # every process we started, ended by pid in close()
        self.guests = []
        self.base, self.port_lock = free_port_base(8)
        self.ctrl, self.data, self.live = self.base, self.base + 1, self.base + 2
        self.link_port = self.base + 3
        self.relayd = None
        self.relayd_out = None
        self.keep = keep is not None

    def image_for(self, suite):
        """The cached image of `suite` (built when missing) and its info.json in self.infos."""
        if suite not in self.images:
            self.images[suite] = image_dir(suite)
            self.infos[suite] = json.load(open(os.path.join(self.images[suite], "info.json")))
        return self.images[suite]

    # --- processes ---------------------------------------------------------------------
    def spawn(self, argv, out=None, err=None, **kw):
        fo = open(out, "w") if out else subprocess.DEVNULL
        fe = open(err, "w") if err else subprocess.DEVNULL
        p = subprocess.Popen(argv, stdout=fo, stderr=fe, start_new_session=True, **kw)
        self.procs.append(p)
        return p

    def stop(self, p, sig=signal.SIGTERM, timeout=15):
        if p is None or p.poll() is not None:
            return p.returncode if p else None
        try:
            p.send_signal(sig)
            return p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            return p.wait()

    def close(self):
        for g in self.guests:
            g.kill()
        # The chroot's relayd first, with time for sid-chroot.sh to end it and unmount.
        if self.relayd_kind == "2.16":
            self.stop(self.relayd, signal.SIGTERM, 30)
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    p.terminate()
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if not self.keep and os.environ.get("WAITPATH_VMLAB_KEEP") != "1":
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            log(f"kept {self.dir}")

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    # --- relayd ------------------------------------------------------------------------
    def start_relayd(self, tag="a"):
        self.relayd_out = os.path.join(self.dir, f"relay-{tag}")
        argv = ["lttng-relayd", "-C", f"tcp://127.0.0.1:{self.ctrl}", "-D",
                f"tcp://127.0.0.1:{self.data}",
                "-L", f"tcp://127.0.0.1:{self.live}", "-o", self.relayd_out]
        env = None
        if self.relayd_kind == "2.16":
            # In the sid chroot (its own mount namespace, the host's network): the lab
            # directory is bound at the same path, so the output lands where the host reads it.
            # Our pid is sid-chroot.sh's: SIGTERM ends the relayd and unmounts.
            argv = ["nice", "-n", "10", "bash", SID_CHROOT, "run"] + argv
            env = dict(os.environ, WAITPATH_SID_BIND=self.dir, WAITPATH_SID_BIND_RO="")
        self.relayd = self.spawn(argv, out=os.path.join(self.dir, f"relayd-{tag}.log"),
                                 err=os.path.join(self.dir, f"relayd-{tag}.err"), env=env)
        wait_until(lambda: self.listening(self.live), 30,
                   f"lttng-relayd ({self.relayd_kind}) listening")
        return self.relayd

    def kill_relayd(self):
        if self.relayd_kind == "2.16" and self.relayd is not None:
            # SIGKILL the relayd itself (the chroot's shell would not pass it on), then let
            # sid-chroot.sh clean up.
            for pid in children(self.relayd.pid, "lttng-relayd"):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.stop(self.relayd, signal.SIGTERM, 30)
            return
        self.stop(self.relayd, signal.SIGKILL)

    def listening(self, port):
        out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True,
                             text=True).stdout
        return bool(out.strip())

    def stored_sessions(self, out=None):
        """{host: [session dirs]} of what the relayd wrote (each a CTF trace set)."""
        out = out or self.relayd_out
        res = {}
        if not out or not os.path.isdir(out):
            return res
        for host in sorted(os.listdir(out)):
            for s in sorted(os.listdir(os.path.join(out, host))):
                res.setdefault(host, []).append(os.path.join(out, host, s))
        return res

    # --- guests ------------------------------------------------------------------------
    def guest(self, name, run_sh, smp=2, mem=1024, link=None, ip1=None, workloads=None, suite=None,
              trace_format=None, data_disk=None):
        """trace_format: None for lttng's default (CTF 1.8 on 2.13, CTF 2 on 2.16), or a
        --trace-format value every `lttng create` of the guest gets (waitpath-session.sh has
        no such option: a wrapper adds it). data_disk: an ext4 image the guest sees as
        /dev/vdc (never written: snapshot=on)."""
        g = Guest(self, name, run_sh, smp, mem, link, ip1, workloads, suite or self.suite,
                  trace_format, data_disk)
        self.guests.append(g)
        return g


def children(pid, comm):
    """The descendants of `pid` named `comm` (from /proc)."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = open(f"/proc/{d}/stat").read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append((int(d), name))
    res, todo = [], [pid]
    while todo:
        for c, name in kids.get(todo.pop(), []):
            todo.append(c)
            if name == comm:
                res.append(c)
    return res


def wait_until(pred, timeout, what):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.2)
    raise TimeoutError(f"waited {timeout} s for {what}")


class Guest:
    def __init__(self, lab, name, run_sh, smp, mem, link, ip1, workloads=None, suite="bookworm",
                 trace_format=None, data_disk=None):
        self.lab, self.name, self.smp, self.mem = lab, name, smp, mem
        self.data_disk = data_disk
        self.suite, self.trace_format = suite, trace_format
        self.image = lab.image_for(suite)
        self.info = lab.infos[suite]
        self.link, self.ip1 = link, ip1  # link: ("listen"|"connect", port)
        self.dir = os.path.join(lab.dir, f"guest-{name}")
        os.makedirs(self.dir, exist_ok=True)
        self.serial = os.path.join(self.dir, "serial.log")
        self.proc = None
        self.t_start = None
        self.workloads = workloads  # the ones the guest builds (None: all)
        self.control = os.path.join(self.dir, "control")
        self.say("start")
        self._make_disk(run_sh)

    def _make_disk(self, run_sh):
        d = os.path.join(self.dir, "lab")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "workloads"))
        for f in os.listdir(os.path.join(SRC, "tools", "workloads")):
            if f.endswith((".c", ".h")):
                shutil.copy(os.path.join(SRC, "tools", "workloads", f),
                            os.path.join(d, "workloads"))
        # The probe module's source (kmod/), for the tests that build it with DKMS in the guest.
        kmod = os.path.join(d, "kmod")
        os.makedirs(kmod)
        for f in os.listdir(os.path.join(SRC, "kmod")):
            if f in ("Kbuild", "Makefile", "dkms.conf") or f.endswith((".c", ".h", ".sh")):
                shutil.copy(os.path.join(SRC, "kmod", f), kmod)
        # The project's real session script, as users run it.
        shutil.copy(os.path.join(SRC, "configs", "lttng", "waitpath-session.sh"), d)
        shutil.copy(os.path.join(HERE, "guest-init.sh"), os.path.join(d, "init.sh"))
        with open(os.path.join(d, "hostname"), "w") as f:
            f.write(self.name + "\n")
        if self.workloads is not None:
            with open(os.path.join(d, "build-workloads"), "w") as f:
                f.write("".join(f"wl_{w}\n" for w in self.workloads))
        if self.ip1:
            with open(os.path.join(d, "ip1"), "w") as f:
                f.write(self.ip1 + "\n")
        with open(os.path.join(d, "run.sh"), "w") as f:
            f.write("set -u\nexport PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
                    f"RELAYD=net://{RELAYD_IP}:5342:5343\nSESSION=/lab/waitpath-session.sh\n"
                    f"host_says() {{ socat -u TCP:{RELAYD_IP}:7000 - 2>/dev/null; }}\n")
            if self.trace_format:
                # Every session in the given trace format, set up otherwise exactly as the
                # session script does: `lttng create` gets --trace-format appended.
                f.write("mkdir -p /usr/local/bin\n"
                        "cat >/usr/local/bin/lttng <<'EOF'\n#!/bin/sh\n"
                        "if [ \"$1\" = create ]; then "
                        f"exec /usr/bin/lttng \"$@\" --trace-format={self.trace_format}; fi\n"
                        "exec /usr/bin/lttng \"$@\"\nEOF\nchmod +x /usr/local/bin/lttng\n"
                        f"echo \"LAB: trace format {self.trace_format}\"\n")
            f.write(run_sh)
        for f in ("init.sh", "waitpath-session.sh", "run.sh"):
            os.chmod(os.path.join(d, f), 0o755)
        self.disk = os.path.join(self.dir, "lab.ext4")
        if os.path.exists(self.disk):
            os.unlink(self.disk)
        subprocess.run(["mkfs.ext4", "-q", "-F", "-d", d, self.disk, "32M"], check=True)

    def say(self, word):
        """Sets what the guest reads with `host_says` (atomically)."""
        with open(self.control + ".new", "w") as f:
            f.write(word + "\n")
        os.replace(self.control + ".new", self.control)

    def argv(self):
        img = self.image
        # socat, not nc: it passes the guest's close on to the relayd (with nc the relayd
        # never sees a destroyed session end, and live viewers wait for it forever).
        # Port 7000 reads the host's control file (`host_says` in run.sh): a phase word the
        # host writes to drive a test; no network behind it.
        fwd = (f"guestfwd=tcp:{RELAYD_IP}:5342-cmd:socat - TCP:127.0.0.1:{self.lab.ctrl},"
               f"guestfwd=tcp:{RELAYD_IP}:5343-cmd:socat - TCP:127.0.0.1:{self.lab.data},"
               f"guestfwd=tcp:{RELAYD_IP}:7000-cmd:cat {self.control}")
        # One host thread runs every vCPU (thread=single). With a thread per vCPU (QEMU 7.2's
        # MTTCG) a guest could hang for good when LTTng started or stopped a session: a CPU
        # patching a tracepoint's call site (text_poke_bp) waited on the other, which looped
        # on the int3 left at that site (__schedule) with interrupts off: "soft lockup - CPU#1
        # stuck for 600s" in text_poke_bp_batch, 2 runs of vmlab-workloads in 2 on a busy host.
        # Single-threaded, vmlab-workloads takes 80 s against 67.
        a = ["nice", "-n", "15", "qemu-system-x86_64", "-accel", "tcg,thread=single", "-cpu", "max",
             "-smp", str(self.smp), "-m", str(self.mem), "-display", "none", "-monitor", "none",
             "-serial", f"file:{self.serial}", "-no-reboot",
             "-kernel", os.path.join(img, "vmlinuz"), "-initrd", os.path.join(img, "initrd.img"),
             "-append",
             "root=/dev/vda rw console=ttyS0 net.ifnames=0 quiet init=/sbin/waitpath-lab-init "
             # A soft lockup's backtraces (every CPU's) in serial.log, past `quiet`.
             "softlockup_all_cpu_backtrace=1 loglevel=5 "
             # A panic ends QEMU (-no-reboot) instead of hanging until the test's timeout.
             "panic=1",
             "-drive", f"file={os.path.join(img, 'image.ext4')},format=raw,if=virtio,snapshot=on",
             # The lab disk is slow on purpose (100 I/O per second): diskwrite's flushes there
             # are disk waits, not answered at once by the host's page cache.
             "-drive", f"file={self.disk},format=raw,if=virtio,throttling.iops-total=100",
             "-netdev", f"user,id=u0,restrict=on,{fwd}", "-device", "virtio-net-pci,netdev=u0"]
        if self.data_disk:
            # /dev/vdc. cache=unsafe: the guest's flushes do not reach the host's disk, so that
            # the guest's own disk waits are short and steady and an injected delay (dm-delay
            # in the guest) is what stands out, not the host's shared disk.
            a += ["-drive", f"file={self.data_disk},format=raw,if=virtio,snapshot=on,cache=unsafe"]
        if self.link:
            mode, port = self.link
            mac = "52:54:00:77:00:%02x" % (len(self.lab.guests) + 1)
            a += ["-netdev", f"socket,id=s0,{mode}=127.0.0.1:{port}",
                  "-device", f"virtio-net-pci,netdev=s0,mac={mac}"]
        return a

    def start(self):
        if self.link and self.link[0] == "connect":
            wait_until(lambda: self.lab.listening(self.link[1]), 30,
                       "the peer guest's socket listener")
        self.t_start = time.time()
        self.proc = self.lab.spawn(self.argv(), out=os.path.join(self.dir, "qemu.out"),
                                   err=os.path.join(self.dir, "qemu.err"))
        return self

    def lines(self):
        try:
            with open(self.serial, errors="replace") as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def lab_lines(self):
        return [l[l.index("LAB: "):] for l in self.lines() if "LAB: " in l]

    def wait_line(self, pattern, timeout):
        rx = re.compile(pattern)
        end = time.time() + timeout
        while time.time() < end:
            for l in self.lab_lines():
                if rx.search(l):
                    return l, time.time() - self.t_start
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        raise TimeoutError(f"guest {self.name}: no '{pattern}' in {timeout} s; serial tail:\n" +
                           "\n".join(self.lines()[-30:]))

    def wait(self, timeout):
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"guest {self.name} still running after {timeout} s; "
                               "serial tail:\n" +
                               "\n".join(self.lines()[-30:]))
        return self.proc.returncode

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def exit_on_sigterm():
    """SIGTERM ends the program through SystemExit, so that Lab.close() stops the guests and
    daemons it started (Python's default would leave them running)."""
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(128 + signal.SIGTERM))


def main():
    exit_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("boot")
    b.add_argument("--guests", type=int, default=1)
    b.add_argument("--smp", type=int, default=2)
    b.add_argument("--run", default="lttng list -k | head -5\n")
    b.add_argument("--keep")
    b.add_argument("--timeout", type=int, default=300)
    b.add_argument("--suite", choices=SUITES + ("mixed",), default="bookworm")
    b.add_argument("--relayd", choices=("host", "2.16"), default="host")
    b.add_argument("--trace-format")
    args = ap.parse_args()
    try:
        suites = ["bookworm", "sid"] if args.suite == "mixed" else [args.suite]
        with Lab("boot", keep=args.keep, suite=suites[0], relayd=args.relayd) as lab:
            lab.start_relayd()
            gs = []
            for i in range(args.guests):
                link = None
                if args.guests > 1:
                    link = ("listen" if i == 0 else "connect", lab.link_port)
                gs.append(lab.guest(f"guest{i}", args.run, smp=args.smp, link=link,
                                    ip1=f"192.168.77.{i + 1}/24" if link else None,
                                    suite=suites[i % len(suites)], trace_format=args.trace_format))
            for g in gs:
                g.start()
            for g in gs:
                _, t_init = g.wait_line(r"^LAB: init", args.timeout)
                _, t_ready = g.wait_line(r"^LAB: sessiond ready", args.timeout)
                g.wait(args.timeout)
                print(f"{g.name} ({g.suite}: {g.info['kernel']}, lttng-modules "
                      f"{g.info['lttng_modules']}): init after {t_init:.1f} s, sessiond ready "
                      f"after {t_ready:.1f} s, off after {time.time() - g.t_start:.1f} s")
                for l in g.lab_lines():
                    print(f"  {l}")
    except Skip as e:
        print(f"SKIP: {e}")
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
