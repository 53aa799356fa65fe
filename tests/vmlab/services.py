"""Known causes on real software (docs/accuracy.md): Debian 12's PostgreSQL, nginx proxying to
a small Python app, and Redis in one lab guest, their load generators (pgbench, ab,
redis-benchmark) in another, and one injected cause of a known size per phase (network delay
with netem, disk latency with dm-delay under the database's files or Redis' AOF, a busy task
on the server's CPU, one hot row, a sleep per request in the server), plus baselines with
none. Each phase is its own pair of LTTng live sessions (hosts renamed db-PHASE, web-PHASE or
redis-PHASE, and client-PHASE), analysed by
`waitpath live` while it streams and by `waitpath analyze` on the relayd's copy; the checks
and the table rows are in check_phase().

Used by test_lab.py (`services`); the guests boot the services layer (build-services.sh).
"""
import json
import os
import time

import lab as vmlab
from lab import log

PG = "15"
SCALE_ROWS = 100000  # pgbench -i -s 1
DB_IP = "192.168.77.1"

# pgbench scripts (custom, -f): one statement per transaction (autocommit), so that a
# transaction is one round trip and, for writes, one commit that reaches the disk.
SCRIPTS = {
    "select": f"\\set aid random(1, {SCALE_ROWS})\n"
              "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
    "update": f"\\set aid random(1, {SCALE_ROWS})\n"
              "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;\n",
    # One hot row held across a round trip: BEGIN, the hot row, a second statement, END.
    "hot": f"\\set aid random(1, {SCALE_ROWS})\n"
           "BEGIN;\n"
           "UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1;\n"
           "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;\n"
           "END;\n",
    "sleep20": "SELECT pg_sleep(0.020);\n",
    "sleep5": "SELECT pg_sleep(0.005);\n",
}


class Service:
    """What runs on the server guest and drives it from the client: `server`, the server
    host's name before the phase (db-PHASE, web-PHASE, ...); `client`, the load generator's
    comm (whose waits are read); `tasks`, the server's comms (where the causes should be)."""

    def __init__(self, key, label, server, client, tasks, unit):
        self.key, self.label, self.server, self.client = key, label, server, client
        self.tasks, self.unit = tasks, unit


SERVICES = {
    "pg": Service("pg", "PostgreSQL 15 / pgbench", "db", "pgbench", ("postgres",), "tx"),
    "web": Service("web", "nginx + python app / ab", "web", "ab", ("nginx", "python3"), "req"),
    # comm is 15 characters at most: redis-benchmark fits.
    "redis": Service("redis", "Redis 7 / redis-benchmark", "redis", "redis-benchmark",
                     ("redis-server",), "req"),
}


class Phase:
    """One run: `cause` (the leaf state it should show, None for the baseline), `size_ms`,
    where it is injected, the shell that turns it on and off there, the load: for pgbench a
    script (SCRIPTS), for ab a URL path, for redis-benchmark its test arguments; `base`, the
    baseline phase it is measured against (the same load, nothing injected)."""

    def __init__(self, name, cause, size_ms, where, on, off, script, clients=1, seconds=8,
                 ci=False, headline=True, known=None, service="pg", base=None, requests=0,
                 base_ignore=()):
        self.name, self.cause, self.size_ms, self.where = name, cause, size_ms, where
        self.on, self.off, self.script = on, off, script
        self.clients, self.seconds, self.ci = clients, seconds, ci
        self.headline = headline  # the cause is expected to be the headline
        self.known = known  # a deviation found and documented (docs/accuracy.md): not a failure
        self.service = SERVICES[service]
        self.base = base or BASE_OF.get(script)
        self.requests = requests  # redis-benchmark -n (it has no time limit)
        # A baseline's causes not checked (still shown): the service's own, not an injection's.
        self.base_ignore = base_ignore

    @property
    def server_host(self):
        return f"{self.service.server}-{self.name}"

    @property
    def client_host(self):
        return f"client-{self.name}"


def dm_delay(ms):
    # dm-delay with one delay delays reads, writes and flushes alike (Linux 6.1).
    return (f"dmsetup suspend pgdisk && dmsetup reload pgdisk --table \"0 $(blockdev --getsz "
            f"/dev/vdc) delay /dev/vdc 0 {ms}\" && dmsetup resume pgdisk")


def hog(nice=0):
    """A busy loop pinned on the database's CPU (the guest has one: CPU 0), at `nice`."""
    return f"taskset -c 0 nice -n {nice} sh -c 'while :; do :; done' & echo $! >/tmp/hog"



HOG_OFF = "kill $(cat /tmp/hog)"


def netem(ms):
    return f"tc qdisc add dev eth1 root netem delay {ms}ms"


NETEM_OFF = "tc qdisc del dev eth1 root"

# The baseline each injection is measured against: the same pgbench script, nothing injected.
BASE_OF = {"select": "base-select", "sleep20": "base-select", "sleep5": "base-select",
           "update": "base-update", "hot": "base-update"}

PHASES = [
    Phase("base-select", None, 0, "-", "", "", "select", ci=True),
    Phase("base-update", None, 0, "-", "", "", "update", ci=True),
    Phase("net10", "network", 10, "client", netem(10), NETEM_OFF, "select", ci=True),
    Phase("net2", "network", 2, "client", netem(2), NETEM_OFF, "select"),
    Phase("disk10", "disk", 10, "db", dm_delay(10), dm_delay(0), "update", ci=True),
    Phase("disk3", "disk", 3, "db", dm_delay(3), dm_delay(0), "update",
          known="disk is 2/3 of ΔL; the emulated link's delays and postgres' running grow too"),
    # An equal-weight loop costs the backend at most its own running time: running stays the
    # headline.
    Phase("cpu", "preempted", 0, "db", hog(), HOG_OFF, "select", headline=False),
    Phase("cpu-nice", "preempted", -5, "db", hog(-5), HOG_OFF, "select", ci=True),
    Phase("lock", "lock", 0, "db", "", "", "hot", clients=8, ci=True),
    Phase("timer20", "timer", 20, "db", "", "", "sleep20"),
    Phase("timer5", "timer", 5, "db", "", "", "sleep5"),
    # The web tier: nginx (one worker) proxying to a Python app (ThreadingHTTPServer, a thread
    # per request) on the same guest, over loopback (a new upstream connection per request);
    # ab with keep-alive (-k): one client connection, one round trip per request.
    Phase("web-base", None, 0, "-", "", "", "/", service="web", base="web-base", ci=True),
    Phase("web-net10", "network", 10, "client", netem(10), NETEM_OFF, "/", service="web",
          base="web-base"),
    Phase("web-cpu", "preempted", -5, "db", hog(-5), HOG_OFF, "/", service="web",
          base="web-base"),
    Phase("web-timer20", "timer", 20, "db", "", "", "/sleep/20", service="web",
          base="web-base", ci=True),
    # Redis: redis-benchmark -c 1 (one connection, -P 1: one round trip per request); its
    # DEBUG SLEEP (enable-debug-command yes) sleeps in the server's only thread.
    # A GET (0.8 ms a request under TCG, the server running ~0.2 ms of it) is mostly its own
    # round trip on the emulated link, and the waits of at least 1 ms are its slowest few
    # percent: network is the baseline's largest state, not an injection (docs/accuracy.md).
    Phase("redis-base", None, 0, "-", "", "", "-t get", service="redis", base="redis-base",
          requests=8000, base_ignore=("network",)),
    Phase("redis-net10", "network", 10, "client", netem(10), NETEM_OFF, "-t get",
          service="redis", base="redis-base", requests=600),
    Phase("redis-timer5", "timer", 5, "db", "", "", "debug sleep 0.005", service="redis",
          base="redis-base", requests=1000),
    # appendonly yes, appendfsync always, the AOF on the dm-delay disk: each SET is written
    # and fdatasync'ed by the server's main thread before its reply.
    # The SET baseline's own fdatasync (undelayed) is up to a third of its waits.
    Phase("redis-set", None, 0, "-", "", "", "-t set", service="redis", base="redis-set",
          requests=3000, base_ignore=("network", "disk")),
    Phase("redis-disk10", "disk", 10, "db", dm_delay(10), dm_delay(0), "-t set",
          service="redis", base="redis-set", requests=200),
]

COMMON = """
await() {  # await WORD: until the host says it
  i=0
  until [ "$(host_says)" = "$1" ]; do
    i=$((i + 1)); [ $i -gt 2400 ] && { echo "LAB: never heard '$1'"; exit 1; }; sleep 0.25
  done
}
# Writes and flushes completed by the dm-delay device (the only dm device): each one delayed.
iostat() { awk '{print $5, $16}' /sys/block/dm-0/stat; }
"""

DB_SETUP = """
modprobe dm-delay
dmsetup create pgdisk --table "0 $(blockdev --getsz /dev/vdc) delay /dev/vdc 0 0" ||
  { echo "LAB: dmsetup failed"; exit 1; }
dmsetup mknodes pgdisk  # no udev in the guest
mkdir -p /var/lib/postgresql/{pg}
mount /dev/mapper/pgdisk /var/lib/postgresql/{pg} || {{ echo "LAB: mount failed"; exit 1; }}
pg_ctlcluster {pg} main start ||
  {{ echo "LAB: postgres failed"; tail -20 /var/log/postgresql/*.log; exit 1; }}
echo "LAB: postgres up uptime=$(cut -d' ' -f1 /proc/uptime)"
""".replace("{pg}", PG).replace("{{", "{").replace("}}", "}")

CLIENT_SETUP = """
i=0
until pg_isready -q -h {db}; do
  i=$((i + 1)); [ $i -gt 600 ] && { echo "LAB: postgres never ready"; exit 1; }; sleep 0.5
done
echo "LAB: postgres reachable uptime=$(cut -d' ' -f1 /proc/uptime)"
""".replace("{db}", DB_IP)


# The web tier on the server guest: a Python app (standard library: a thread per request; GET
# /sleep/MS sleeps MS ms first) behind nginx (one worker, proxy_pass over loopback: a new
# upstream connection per request, as nginx's default), keep-alive with the client.
WEB_APP = """import http.server, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/sleep/"):
            time.sleep(int(self.path[7:]) / 1000)
        body = b"ok\\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", 8000), H).serve_forever()
"""
NGINX_CONF = """user www-data;
worker_processes 1;
pid /run/nginx-lab.pid;
error_log /tmp/nginx-error.log;
events { worker_connections 256; }
http {
  access_log off;
  keepalive_requests 1000000;
  server {
    listen 80;
    location / { proxy_pass http://127.0.0.1:8000; }
  }
}
"""
# Started before the first phase of the service, stopped after its last (before that phase's
# session, so that the state dump names them); postgres is started by DB_SETUP.
SERVICE_START = {
    "pg": "",
    "web": f"""cat >/tmp/app.py <<'EOF'
{WEB_APP}EOF
cat >/tmp/nginx.conf <<'EOF'
{NGINX_CONF}EOF
python3 /tmp/app.py & echo $! >/tmp/app.pid
nginx -c /tmp/nginx.conf || echo "LAB: nginx failed"
i=0
until [ "$(curl -s http://127.0.0.1/)" = ok ]; do
  i=$((i + 1)); [ $i -gt 100 ] && {{ echo "LAB: web never ready"; break; }}; sleep 0.2
done
""",
    "redis": f"""mkdir -p /var/lib/postgresql/{PG}/redis
redis-server --daemonize yes --bind 0.0.0.0 --protected-mode no --save '' \\
  --appendonly yes --appendfsync always --dir /var/lib/postgresql/{PG}/redis \\
  --enable-debug-command yes --logfile /tmp/redis.log
i=0
until [ "$(redis-cli ping 2>/dev/null)" = PONG ]; do
  i=$((i + 1)); [ $i -gt 100 ] && {{ echo "LAB: redis never ready"; break; }}; sleep 0.2
done
""",
}
SERVICE_STOP = {
    "pg": f"pg_ctlcluster {PG} main stop\n",
    "web": "nginx -c /tmp/nginx.conf -s stop; kill $(cat /tmp/app.pid)\n",
    "redis": "redis-cli shutdown nosave >/dev/null\n",
}


def client_run(p):
    """The client's load for phase p, then its `LAB: ran` line: exit, tx (transactions or
    requests done), latency_ms (the generator's own average)."""
    out = f"/tmp/run-{p.name}.out"
    if p.service.key == "pg":
        cmd = (f"pgbench -h {DB_IP} -U postgres -n -c {p.clients} -j 1 -T {p.seconds} "
               f"-f /tmp/{p.script}.sql bench")
        parse = ("tx=$(sed -n 's/^number of transactions actually processed: "
                 f"\\([0-9]*\\).*/\\1/p' {out})\n"
                 f"lat=$(sed -n 's/^latency average = \\([0-9.]*\\) ms.*/\\1/p' {out})\n")
    elif p.service.key == "web":
        # 20 requests by one curl first, each on its own connection (~10 packets), so that
        # `live` has synchronized the new pair's clocks before ab's first waits: before, their
        # hop to the server is not followed (docs/accuracy.md, "What waitpath got wrong").
        cmd = (f"curl -s -H 'Connection: close' 'http://{DB_IP}/?[1-20]' >/dev/null\n"
               f"ab -k -q -c {p.clients} -t {p.seconds} http://{DB_IP}{p.script}")
        parse = (f"tx=$(sed -n 's/^Complete requests: *\\([0-9]*\\).*/\\1/p' {out})\n"
                 "lat=$(sed -n 's/^Time per request: *\\([0-9.]*\\) \\[ms\\] (mean)$/\\1/p' "
                 f"{out})\n"
                 f"[ \"$(sed -n 's/^Failed requests: *//p' {out})\" = 0 ] || rc=failed\n")
    else:
        # As the web tier's curl: 10 redis-cli PINGs, a connection each, first.
        cmd = (f"for i in $(seq 10); do redis-cli -h {DB_IP} ping >/dev/null; done\n"
               f"redis-benchmark -h {DB_IP} -c {p.clients} -n {p.requests} --csv {p.script}")
        # --csv: a header, then "TEST","RPS","AVG_LATENCY_MS",...
        parse = (f"tx={p.requests}\n"
                 f"lat=$(tail -1 {out} | cut -d, -f3 | tr -d '\"')\n")
    return (f"{cmd} >{out} 2>&1\nrc=$?\n{parse}"
            f'echo "LAB: ran {p.name} exit=$rc tx=$tx latency_ms=$lat"\n'
            f"[ $rc = 0 ] || tail -5 {out}\n")


def guest_script(role, phases):
    """The run.sh of the db or client guest: per phase, inject (when it is this guest's),
    create the session as the host says, start it, (client) run the load, stop, undo. The
    server guest starts each service before its first phase and stops it after its last."""
    s = COMMON + (DB_SETUP if role == "db" else CLIENT_SETUP)
    for name, text in SCRIPTS.items():
        s += f"cat >/tmp/{name}.sql <<'EOF'\n{text}EOF\n"
    first = {p.service.key: p.name for p in reversed(phases)}
    last = {p.service.key: p.name for p in phases}
    for p in phases:
        mine = p.where == role
        host = p.server_host if role == "db" else p.client_host
        start = SERVICE_START[p.service.key] if role == "db" and first[p.service.key] == p.name \
            else ""
        s += f"""
await "trace {p.name}"
{start}{p.on if mine and p.on else ':'}
hostname {host}
$SESSION --no-start --name {p.name} "$RELAYD" >/dev/null || echo "LAB: session {p.name} failed"
echo "LAB: created {p.name}"
await "start {p.name}"
lttng start {p.name} >/dev/null
echo "LAB: started {p.name}"
"""
        if role == "db":
            # Blocked (no CPU) until the load is done: polling the host here would fork socat
            # and sleep on the server's CPU while it is traced.
            s += f"""io0=$(iostat)
socat -u TCP-LISTEN:7100,reuseaddr OPEN:/dev/null
"""
        else:
            s += f'await "run {p.name}"\n' + client_run(p) + \
                f"socat -u OPEN:/dev/null TCP:{DB_IP}:7100,retry=20,interval=0.5\n"
        s += f"""await "stop {p.name}"
"""
        if role == "db":
            s += f'echo "LAB: io {p.name} $(iostat) $io0"\n'
        s += f"""$SESSION --destroy --name {p.name}
{p.off if mine and p.off else ':'}
"""
        if role == "db" and last[p.service.key] == p.name:
            s += SERVICE_STOP[p.service.key]
        s += f"""echo "LAB: stopped {p.name}"
"""
    s += 'echo "LAB: phases done"\n'
    if role == "db" and "pg" not in last:
        s += SERVICE_STOP["pg"]
    return s


def lab_value(lines, prefix, key):
    """`key=value` from the guest's line starting with `prefix`."""
    for l in lines:
        if l.startswith(prefix):
            for w in l.split():
                if w.startswith(key + "="):
                    return w.split("=", 1)[1]
    return None


def run_phases(lab, db, cli, phases, timeout=180):
    """Drives both guests through the phases (host_says words); returns {phase: facts}."""
    facts = {}

    def both(word, line):
        for g in (db, cli):
            g.say(word)
        for g in (db, cli):
            g.wait_line(line, timeout)

    for p in phases:
        t0 = time.time()
        both(f"trace {p.name}", rf"^LAB: created {p.name}$")
        time.sleep(2)  # waitpath live looks for new sessions once a second
        both(f"start {p.name}", rf"^LAB: started {p.name}$")
        time.sleep(0.5)
        cli.say(f"run {p.name}")
        cli.wait_line(rf"^LAB: ran {p.name} ", timeout)
        time.sleep(0.5)
        both(f"stop {p.name}", rf"^LAB: stopped {p.name}$")
        lines = cli.lab_lines()
        f = {"exit": lab_value(lines, f"LAB: ran {p.name} ", "exit"),
             "tx": int(lab_value(lines, f"LAB: ran {p.name} ", "tx") or 0),
             "latency_ms": float(lab_value(lines, f"LAB: ran {p.name} ", "latency_ms") or 0)}
        io = next((l.split()[3:] for l in db.lab_lines() if l.startswith(f"LAB: io {p.name} ")),
                  None)
        if io and len(io) == 4:
            w1, f1, w0, f0 = (int(x) for x in io)
            f["writes"], f["flushes"] = w1 - w0, f1 - f0
        facts[p.name] = f
        log(f"phase {p.name}: {json.dumps(f)} ({time.time() - t0:.0f} s)")
    return facts


def boot(lab, phases):
    img = lab.image_for("services")
    db = lab.guest("db", guest_script("db", phases), smp=1, workloads=[],
                   link=("listen", lab.link_port), ip1=f"{DB_IP}/24", suite="services",
                   data_disk=os.path.join(img, "pgdata.ext4"))
    cli = lab.guest("client", guest_script("client", phases), smp=1, workloads=[],
                    link=("connect", lab.link_port), ip1="192.168.77.2/24", suite="services")
    db.start()
    cli.start()
    _, t_db = db.wait_line(r"^LAB: postgres up", 300)
    _, t_cli = cli.wait_line(r"^LAB: postgres reachable", 300)
    log(f"postgres up after {t_db:.1f} s, reachable from the client after {t_cli:.1f} s")
    return db, cli


# --- what waitpath said ---------------------------------------------------------------------
CAUSES = ("network", "disk", "preempted", "timer")


def short(host):
    """db-net10 -> db: the phase suffix the hosts carry (one session pair per phase) dropped."""
    return host.split("-", 1)[0]


def path_summary(waits):
    """The client's waits summed: ns per state of their active paths, and for each state the
    task (host/comm) that holds most of it (as a headline's "on ...")."""
    states, where = {}, {}
    for w in waits:
        for k, v in w["breakdown_ns"].items():
            states[k] = states.get(k, 0) + v
        for piece in w["path"]:
            key = (piece["state"], f"{short(piece['host'])}/{piece['comm']}")
            where[key] = where.get(key, 0) + piece["end_ns"] - piece["start_ns"]
    total = sum(w["duration_ns"] for w in waits)
    pieces = {f"{task} {state}": ns for (state, task), ns in where.items()}
    top = {}
    for (state, task), ns in where.items():
        if ns > top.get(state, ("", 0))[1]:
            top[state] = (task, ns)
    headline = max(states, key=lambda k: states[k]) if states else None
    return {"n": len(waits), "total": total, "states": states, "headline": headline,
            "where": {k: v[0] for k, v in top.items()}, "pieces": pieces}


def backends_on_others(tasks, host):
    """The postgres backends of `host` (forked during the phase: pgbench's connections; the
    server's own processes are in the state dump at the session's start): the mean share of
    their lives spent on the paths of *other* postgres tasks (a lock holder)."""
    pg = [t for t in tasks if t["host"] == host and t["comm"] == "postgres"]
    if not pg:
        return 0.0, 0
    first = min(t["start_ns"] for t in pg)
    shares = []
    for t in pg:
        if t["start_ns"] < first + 500_000_000:
            continue
        life = t["end_ns"] - t["start_ns"]
        other = sum(b["ns"] for b in t["by_task"]
                    if b["host"] == host and b["comm"] == "postgres" and b["tid"] != t["tid"])
        shares.append(other / life)
    return (sum(shares) / len(shares) if shares else 0.0), len(shares)


def summarize(records, p):
    """{client: path summary of the load generator's waits >= 1 ms (pgbench, ab, ...),
    backends: (share, n)}."""
    waits = [r for r in records if r.get("type") == "wait" and r["host"] == p.client_host
             and r["comm"] == p.service.client]
    tasks = [r for r in records if r.get("type") == "task"]
    return {"client": path_summary(waits), "backends": backends_on_others(tasks, p.server_host)}


# --- what the injection implies, and the verdict ----------------------------------------------
# What an injection adds to each transaction, in the cause's state of the client's waits (the
# cause's time per transaction minus the baseline's: same script, nothing injected):
#   network: the netem delay (one delayed packet per transaction: the request);
#   timer:   the pg_sleep;
#   disk:    no exact nominal size (dm-delay's timer has jiffy resolution, HZ=250, and a commit
#            makes 4-7 delayed writes): what pgbench itself measured, its average latency
#            minus the baseline's, ΔL;
# with a tolerance of 20 % of that plus 1 ms per transaction (TCG: a baseline's per-transaction
# times move by about 1 ms between runs, and ΔL with the host's load: it is shown, and used
# only where no exact size is known).
TOL_REL, TOL_MS = 0.20, 1.0
CPU_RANGE = (0.5, 1.5)
NICE_WEIGHT = {0: 1024, -5: 3121, -10: 9548}  # the kernel's sched_prio_to_weight
LIVE_VS_ANALYZE = 0.05  # the cause's share of the client's waits, live against analyze
LOCK_MIN = 0.15         # backends' share of life on another backend, 8 clients on one row
BASE_MAX = 0.35         # no cause above this share of the client's waits with nothing injected
# Where each cause should be: on the server's tasks (disk: or ext4's journal thread).
def where_expected(p):
    mine = tuple(f"{p.service.server}/{c}" for c in p.service.tasks)
    if p.service.key == "web" and p.cause == "timer":
        mine = ("web/python3",)  # the app sleeps, not nginx
    return {"disk": mine + (f"{p.service.server}/jbd2",), "timer": mine,
            "preempted": mine}.get(p.cause)


HEADLINE_SHARE = 0.5  # a cause expected above half of the waits must be their headline


def delta_latency_ms(p, facts):
    return facts[p.name]["latency_ms"] - facts[p.base]["latency_ms"]


def nominal_ms(p, facts):
    """The injection's nominal cost per transaction (None for the busy loop)."""
    f = facts[p.name]
    if p.cause in ("network", "timer"):
        return float(p.size_ms)
    if p.cause == "disk":
        return p.size_ms * (f.get("writes", 0) + f.get("flushes", 0)) / max(f["tx"], 1)
    return None


def verdict(p, facts, said):
    """One table row: {phase fields, expected, per tool what it said, pass, why}."""
    row = {"phase": p.name, "cause": p.cause or "none", "size": size_text(p),
           "tx": facts[p.name]["tx"], "latency_ms": facts[p.name]["latency_ms"], "checks": []}

    def check(ok, what):
        row["checks"].append((bool(ok), what))

    tx = max(facts[p.name]["tx"], 1)
    u = p.service.unit
    if p.cause is None:
        for tool in ("analyze", "live"):
            c = said[tool][p.name]["client"]
            top = max((c["states"].get(s, 0) / max(c["total"], 1), s) for s in CAUSES
                      if s not in p.base_ignore)
            row[tool] = (f"{c['headline']} {share(c, c['headline'])}; "
                         f"top cause {top[1]} {top[0]:.2f}")
            check(top[0] <= BASE_MAX, f"{tool}: no cause above {BASE_MAX} ({top[1]} {top[0]:.2f})")
        own = {"network": "network (a request's own round trip)", "disk": "disk (its own fsync)"}
        row["expected"] = f"no cause > {BASE_MAX}" + (
            " but " + ", ".join(own[s] for s in p.base_ignore) if p.base_ignore else "")
        row["tolerance"] = "-"
    elif p.cause == "lock":
        for tool in ("analyze", "live"):
            s, n = said[tool][p.name]["backends"]
            b, _ = said[tool][p.base]["backends"]
            c = said[tool][p.name]["client"]
            row[tool] = (f"backends on another backend {s:.2f} (baseline {b:.2f}, {n} backends); "
                         f"client: {c['headline']} {share(c, c['headline'])} "
                         f"on {c['where'].get(c['headline'])}")
            check(n >= p.clients and s >= LOCK_MIN,
                  f"{tool}: {n} backends, {s:.2f} of their lives on another backend "
                  f"(>= {LOCK_MIN})")
        row["expected"] = f"backends on another backend >= {LOCK_MIN}"
        row["tolerance"] = "-"
    else:
        nom = nominal_ms(p, facts)
        shares = {}
        for tool in ("analyze", "live"):
            c, b = said[tool][p.name]["client"], said[tool][p.base]["client"]
            base_ms = b["states"].get(p.cause, 0) / 1e6 / max(facts[p.base]["tx"], 1)
            excess = c["states"].get(p.cause, 0) / 1e6 / tx - base_ms
            shares[tool] = c["states"].get(p.cause, 0) / max(c["total"], 1)
            if p.cause == "preempted":
                run_ms = sum(c["pieces"].get(f"{p.service.server}/{t} running", 0)
                             for t in p.service.tasks) / 1e6 / tx
                ratio = NICE_WEIGHT[p.size_ms] / NICE_WEIGHT[0]
                exp_ms, tol_ms = ratio * run_ms, (CPU_RANGE[1] - 1) * ratio * run_ms
                basis = (f"{ratio:.2f} x the {'backend' if p.service.key == 'pg' else 'server'}'s"
                         f" running {run_ms:.1f} ms")
            else:
                exp_ms = nom if p.cause in ("network", "timer") else delta_latency_ms(p, facts)
                tol_ms = TOL_REL * exp_ms + TOL_MS
                basis = "nominal" if p.cause in ("network", "timer") else f"ΔL; {nom:.1f} nominal"
            basis += f"; ΔL {delta_latency_ms(p, facts):+.1f}"
            row[tool] = (f"{c['headline']} {share(c, c['headline'])} "
                         f"on {c['where'].get(c['headline'], '-')}; {p.cause} {excess:+.1f} ms/{u}")
            check(abs(excess - exp_ms) <= tol_ms,
                  f"{tool}: {p.cause} per transaction {excess:+.1f} ms over the baseline, expected "
                  f"+{exp_ms:.1f} ± {tol_ms:.1f} ms ({basis})")
            want = (base_ms + exp_ms) * tx * 1e6 / max(c["total"], 1)
            if p.headline and want >= HEADLINE_SHARE:
                check(c["headline"] == p.cause, f"{tool}: headline {c['headline']} is {p.cause} "
                                                f"(expected share {want:.2f})")
            where, wanted = c["where"].get(p.cause, "-"), where_expected(p)
            if wanted:
                check(where.startswith(wanted),
                      f"{tool}: {p.cause} on {where} ({' or '.join(wanted)})")
            if tool == "analyze":
                tol_share = tol_ms * tx * 1e6 / max(c["total"], 1)
                row["expected"] = (f"{p.cause} {want:.2f} (+{exp_ms:.1f} ms/{u}: {basis})"
                                   + ("" if p.headline else "; not the headline"))
                row["tolerance"] = f"±{tol_share:.2f} (±{tol_ms:.1f} ms/{u})"
        check(abs(shares["live"] - shares["analyze"]) <= LIVE_VS_ANALYZE,
              f"live {shares['live']:.3f} and analyze {shares['analyze']:.3f} agree within "
              f"{LIVE_VS_ANALYZE}")
    row["pass"] = all(ok for ok, _ in row["checks"])
    row["known"] = p.known
    return row


def share(summary, state):
    return f"{summary['states'].get(state, 0) / max(summary['total'], 1):.2f}" if state else "-"


def size_text(p):
    return {"network": f"netem delay {p.size_ms} ms (client's eth1)",
            "disk": f"dm-delay {p.size_ms} ms ("
                    f"{'database' if p.service.key == 'pg' else 'the AOF'}'s disk)",
            "preempted": f"busy loop at nice {p.size_ms} on the "
                         f"{'database' if p.service.key == 'pg' else 'server'}'s CPU",
            "lock": f"{p.clients} clients, one hot row",
            "timer": {"pg": f"pg_sleep {p.size_ms} ms per transaction",
                      "web": f"the app sleeps {p.size_ms} ms per request",
                      "redis": f"DEBUG SLEEP {p.size_ms / 1000:g} per request"}[p.service.key]
            }.get(p.cause, "none")


TABLE_HEAD = ("| service | phase | cause injected | size | expected (share of the client's waits) "
              "| `live` said | `analyze` said | tolerance | pass |\n"
              "|---|---|---|---|---|---|---|---|---|\n")


def table(rows, phases):
    out = TABLE_HEAD
    label = {p.name: p.service.label for p in phases}
    for r in rows:
        verdict_text = ("yes" if r["pass"] else f"**no** (known: {r['known']})" if r["known"]
                        else "**no**")
        out += (f"| {label[r['phase']]} | {r['phase']} | {r['cause']} | {r['size']} "
                f"| {r['expected']} | {r['live']} | {r['analyze']} | {r['tolerance']} "
                f"| {verdict_text} |\n")
    return out


BEGIN = "<!-- services table: begin (test_lab.py services --table) -->"
END = "<!-- services table: end -->"


def write_table(path, text, info, facts, phases):
    """Replaces the table between the markers of `path` (the rest is prose) with this run's."""
    when = time.strftime("%Y-%m-%d", time.gmtime())
    runs = ", ".join(f"{p.name} {facts[p.name]['tx']} {p.service.unit} at "
                     f"{facts[p.name]['latency_ms']:.1f} ms" for p in phases)
    block = (f"{BEGIN}\nRun of {when}: guests of the services layer "
             f"({info.get('packages', '?')}; kernel {info['kernel']}, lttng-modules "
             f"{info['lttng_modules']}), QEMU TCG, 1 vCPU each. pgbench, ab, redis-benchmark "
             f"(transactions or requests, the generator's average latency): {runs}.\n\n{text}{END}")
    doc = open(path).read() if os.path.exists(path) else f"{BEGIN}\n{END}\n"
    if BEGIN not in doc or END not in doc:
        raise RuntimeError(f"{path}: no table markers ({BEGIN} ... {END})")
    doc = doc[:doc.index(BEGIN)] + block + doc[doc.index(END) + len(END):]
    with open(path, "w") as f:
        f.write(doc)
    log(f"table written to {path}")
