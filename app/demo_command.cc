// `waitpath demo`: the whole live path on one machine, with nothing to configure. It generates
// a multi-host trace set, starts a private lttng-relayd and one private lttng-sessiond per
// host (each in its own mount + UTS namespace carrying the host's name), replays every host's
// trace into a live session in a loop, and attaches `waitpath live` to the relayd
// (docs/demo.md). Everything it starts is stopped by pid, never by name, and its temporary
// directory is removed, on Ctrl-C, SIGTERM or after --duration.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "app/analyze_command.h"
#include "app/command.h"
#include "app/live_command.h"
#include "base/duration.h"
#include "base/stop_signal.h"
#include "exporters/metrics_server.h"

namespace waitpath {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kSession = "waitpath-demo";
constexpr int kLiveTimerUs = 200000;  // what the live reader's latency is made of
constexpr int kFirstPort = 15342;     // away from the relayd defaults 5342-5344

struct DemoOptions {
  double speed = 1.0;
  std::string duration;  // empty: until a signal
  bool json = false;
  std::vector<std::string> watch;
  std::string min_wait;
  std::string metrics = "127.0.0.1:9464";
  bool no_metrics = false;
  std::string scenario;  // empty: tools/demo/demo.toml
  std::string traces;    // replay these instead of generating
  std::string pid_file;
  bool verbose = false;
};

// Raised by SIGINT, SIGTERM and SIGHUP, by --duration, or when a child stops by itself.
std::atomic<bool>& g_stop = StopRequested();

// ---------------------------------------------------------------------------------------------
// Processes

std::string ExeDir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

bool IsExecutable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0 && !fs::is_directory(path);
}

// `name` on PATH, or empty.
std::string Which(const std::string& name) {
  const char* path = getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (IsExecutable(candidate)) return candidate;
  }
  return {};
}

// A tool built with waitpath: next to the binary, in the build tree's tools/, or on PATH.
std::string FindTool(const std::string& name, const std::string& build_subdir) {
  const std::string dir = ExeDir();
  for (const std::string& c : {dir + "/" + name, dir + "/../tools/" + build_subdir + "/" + name}) {
    if (IsExecutable(c)) return fs::weakly_canonical(c).string();
  }
  return Which(name);
}

// The demo scenario: the source tree's copy when running from a build tree (this file's path
// is absolute at compile time), else an installed one.
std::string FindScenario() {
  const fs::path source_root = fs::path(__FILE__).parent_path().parent_path();
  for (const fs::path& c :
       {source_root / "tools/demo/demo.toml", fs::path(ExeDir()) / "../share/waitpath/demo.toml"}) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c.string();
  }
  return {};
}

struct Child {
  std::string what;  // for messages: "lttng-relayd", "host web"
  pid_t pid = -1;
  std::string log;
  bool exited = false;
  int status = 0;
};

// Starts argv (argv[0] an absolute path) with stdout and stderr appended to `log`.
// The child gets its own process group, so that Ctrl-C in the terminal reaches only waitpath,
// which then stops the children in order; and SIGTERM if waitpath dies without doing so.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out < 0 || in < 0) {
    if (out >= 0) close(out);
    if (in >= 0) close(in);
    return -1;
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out);
  close(in);
  return pid;
}

// Reaps `c` if it has exited; true when it has.
bool Reap(Child& c) {
  if (c.exited || c.pid <= 0) return true;
  int status = 0;
  const pid_t r = waitpid(c.pid, &status, WNOHANG);
  if (r == c.pid || (r < 0 && errno == ECHILD)) {
    c.exited = true;
    c.status = status;
  }
  return c.exited;
}

bool WaitExit(Child& c, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!Reap(c)) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// SIGTERM, then SIGKILL if it is still there after `grace`.
void Terminate(Child& c, std::chrono::milliseconds grace) {
  if (Reap(c)) return;
  kill(c.pid, SIGTERM);
  if (WaitExit(c, grace)) return;
  kill(c.pid, SIGKILL);
  WaitExit(c, std::chrono::seconds(2));
}

// Whether `pid` is a live process named `comm` (not a zombie, not a reused pid).
bool ProcessAlive(pid_t pid, const std::string& comm) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (pid <= 0 || !std::getline(in, stat)) return false;
  const size_t open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 >= stat.size()) {
    return false;
  }
  return stat.substr(open + 1, close - open - 1) == comm && stat[close + 2] != 'Z';
}

// A process we did not fork (a daemonized session daemon): SIGTERM, then SIGKILL.
bool EndDaemon(pid_t pid, const std::string& comm) {
  if (!ProcessAlive(pid, comm)) return true;
  kill(pid, SIGTERM);
  for (int i = 0; i < 100 && ProcessAlive(pid, comm); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!ProcessAlive(pid, comm)) return true;
  kill(pid, SIGKILL);
  for (int i = 0; i < 40 && ProcessAlive(pid, comm); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !ProcessAlive(pid, comm);
}

struct Proc {
  pid_t pid;
  std::string comm;
};

// Children of `parent` (the session daemon's consumer daemons and run-as helpers), from /proc.
std::vector<Proc> ChildrenOf(pid_t parent) {
  std::vector<Proc> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    const size_t open = stat.find('(');
    if (rest >> state >> ppid && ppid == parent && open < close) {
      out.push_back(Proc{std::stoi(name), stat.substr(open + 1, close - open - 1)});
    }
  }
  return out;
}

std::string LastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last.empty() ? "no output" : last;
}

std::string Describe(const Child& c) {
  if (!c.exited) return "still running";
  if (WIFEXITED(c.status)) return fmt::format("exit status {}", WEXITSTATUS(c.status));
  if (WIFSIGNALED(c.status)) return fmt::format("killed by signal {}", WTERMSIG(c.status));
  return "ended";
}

// Runs argv to completion; true on exit status 0.
bool RunToEnd(const std::vector<std::string>& argv, const std::string& log) {
  Child c{argv[0], Spawn(argv, log), log};
  if (c.pid < 0) return false;
  // Not interruptible on purpose: generating and listing take well under a second.
  WaitExit(c, std::chrono::minutes(2));
  if (!c.exited) Terminate(c, std::chrono::seconds(1));
  return c.exited && WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0;
}

// ---------------------------------------------------------------------------------------------
// Ports

// Whether `op` (bind or connect) succeeds on a fresh TCP socket for 127.0.0.1:`port`.
bool LoopbackSocketOp(int port, int (*op)(int, const sockaddr*, socklen_t)) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = op(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

bool PortFree(int port) { return LoopbackSocketOp(port, bind); }
bool PortAccepts(int port) { return LoopbackSocketOp(port, connect); }

// The first of three consecutive free loopback ports at or after `from`; 0 if none.
int FreePortTriple(int from) {
  for (int p = from; p + 2 < 65536; ++p) {
    if (PortFree(p) && PortFree(p + 1) && PortFree(p + 2)) return p;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// One traced host: a shell in its own mount + UTS namespace (hostname = the host's) that
// starts a session daemon whose sockets (/var/run/lttng) and lttng-ust shared memory
// (/dev/shm) are private, creates a live session streaming to the relayd, starts the
// replayer, and writes `ready` (session daemon and replayer pids). On SIGTERM or SIGINT it
// stops the replayer, destroys the session and ends the daemon by its pid. The same steps as
// tools/replay/replay-hosts.sh, with pids reported to the caller.
constexpr const char* kHostScript = R"SH(
host=$1 dir=$2 ctrl=$3 data=$4 session=$5 timer=$6 trace=$7 replay=$8 speed=$9
sessiond="" replayer=""
stop() {
  # A second signal while stopping changes nothing (re-trapping inside a handler upsets bash).
  [ -n "${stopping:-}" ] && return
  stopping=1
  # SIGTERM, not SIGINT: a non-interactive shell starts background jobs with SIGINT ignored,
  # so a replayer that has not installed its handler yet would never see a SIGINT.
  if [ -n "$replayer" ]; then
    kill -TERM "$replayer" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$replayer" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$replayer" 2>/dev/null
    wait "$replayer"
  fi
  lttng stop "$session" >/dev/null 2>&1
  lttng destroy "$session" >/dev/null 2>&1
  if [ -n "$sessiond" ]; then
    kill "$sessiond" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$sessiond" 2>/dev/null || break; sleep 0.05; done
  fi
  exit "${1:-0}"
}
fail() { echo "host $host: $*"; stop 1; }
trap stop INT TERM
mkdir -p /var/run/lttng || fail "cannot create /var/run/lttng"
mount --bind "$dir/run" /var/run/lttng || fail "cannot bind-mount a private /var/run/lttng"
mount -t tmpfs tmpfs /dev/shm || fail "cannot mount a private /dev/shm"
hostname "$host" || fail "cannot set the hostname"
export LTTNG_HOME=$dir/home
lttng-sessiond -d --no-kernel || fail "lttng-sessiond did not start"
sessiond=$(cat "$dir/run/lttng-sessiond.pid") || fail "no pid file from lttng-sessiond"
lttng create "$session" --live="$timer" --ctrl-url="$ctrl" --data-url="$data" >/dev/null ||
  fail "lttng create failed (is the relayd reachable at $ctrl?)"
# Blocking channel: a slow consumer makes the replayer wait instead of discarding. 1 MiB x 4
# per CPU is ample at the demo's few thousand events per second and host. The relayd rotates
# each stream's file and keeps the last 4 x 8 MiB: a demo left running does not fill /tmp.
lttng enable-channel -u --subbuf-size 1M --num-subbuf 4 --blocking-timeout=inf \
  --tracefile-size 8M --tracefile-count 4 rp >/dev/null ||
  fail "lttng enable-channel failed"
lttng enable-event -u -c rp 'waitpath_replay:*' >/dev/null || fail "lttng enable-event failed"
lttng start >/dev/null || fail "lttng start failed"
LTTNG_UST_ALLOW_BLOCKING=1 "$replay" --host "$host" --forever --speed "$speed" "$trace" &
replayer=$!
echo "$sessiond $replayer" >"$dir/ready.tmp" && mv "$dir/ready.tmp" "$dir/ready"
wait "$replayer"
status=$?
replayer=""
echo "host $host: waitpath-replay ended by itself (status $status)"
stop 1
)SH";

struct Host {
  std::string name;
  std::string dir;
  Child shell;
  pid_t sessiond = -1;
  pid_t replayer = -1;
  std::vector<Proc> helpers;  // the session daemon's children
};

// ---------------------------------------------------------------------------------------------
// The demo

class Demo {
 public:
  explicit Demo(const DemoOptions& o) : o_(o) {}
  ~Demo() { Stop(); }

  int Run();

 private:
  bool Fail(const std::string& message) {
    fmt::print(stderr, "waitpath demo: {}\n", message);
    return false;
  }
  bool CheckTools();
  bool MakeWorkDir();
  bool PrepareTraces();
  bool StartRelayd();
  bool StartHosts();
  void WritePidFile();
  void Supervise(int64_t duration_ns);
  void Stop();

  DemoOptions o_;
  std::string gen_, replay_, unshare_, relayd_bin_, bash_;
  std::string work_;
  std::string traces_;
  Child relayd_;
  int port_ = 0;  // control; data = +1, live = +2
  std::vector<Host> hosts_;
  std::atomic<bool> child_failed_{false};
  bool stopped_ = false;
  bool builtin_scenario_ = false;
};

bool Demo::CheckTools() {
  if (geteuid() != 0) {
    return Fail("needs root: one lttng-sessiond per host, each in its own mount and UTS namespace");
  }
  for (const char* tool : {"lttng", "lttng-sessiond", "lttng-relayd"}) {
    if (Which(tool).empty()) {
      return Fail(fmt::format("{} not found (apt-get install lttng-tools)", tool));
    }
  }
  relayd_bin_ = Which("lttng-relayd");
  unshare_ = Which("unshare");
  bash_ = Which("bash");
  if (unshare_.empty() || bash_.empty()) {
    return Fail("unshare or bash not found (apt-get install util-linux bash)");
  }
  replay_ = FindTool("waitpath-replay", "replay");
  if (replay_.empty()) {
    return Fail(
        "waitpath-replay not found next to waitpath, in its build tree or on PATH (it is built "
        "when liblttng-ust-dev is installed)");
  }
  if (o_.traces.empty()) {
    gen_ = FindTool("waitpath-gen", "gen");
    if (gen_.empty()) return Fail("waitpath-gen not found (or pass --traces DIR)");
    builtin_scenario_ = o_.scenario.empty();
    if (builtin_scenario_) o_.scenario = FindScenario();
    if (o_.scenario.empty()) {
      return Fail("no demo scenario found (pass --scenario FILE or --traces DIR)");
    }
  }
  // Probe namespaces up front: the per-host shells would otherwise fail one by one.
  if (!RunToEnd({unshare_, "-m", "-u", "true"}, "/dev/null")) {
    return Fail("cannot create mount and UTS namespaces here (unshare -m -u failed)");
  }
  return true;
}

// This process as "PID STARTTIME": a pid alone could be reused by the time someone checks.
std::string ProcessIdentity(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return {};
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {  // field 22 of proc(5) is starttime
    if (i == 22) return fmt::format("{} {}", pid, field);
  }
  return {};
}

// Work directories of earlier demos whose waitpath was killed outright (SIGKILL, a crash):
// their children were ended (PR_SET_PDEATHSIG) but nobody removed the directory. Removed only
// when the `owner` file names a process that no longer exists.
void RemoveStaleWorkDirs(const std::string& tmp) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(tmp, ec)) {
    if (e.path().filename().string().rfind("waitpath-demo.", 0) != 0) continue;
    std::ifstream in(e.path() / "owner");
    pid_t pid = 0;
    std::string owner, start;
    if (!(in >> pid >> start) || pid <= 0) continue;
    owner = fmt::format("{} {}", pid, start);
    if (ProcessIdentity(pid) == owner) continue;  // still running
    std::error_code rm;
    fs::remove_all(e.path(), rm);
    if (!rm)
      fmt::print(stderr, "waitpath demo: removed {} (left by a demo that was killed)\n",
                 e.path().string());
  }
}

bool Demo::MakeWorkDir() {
  const char* env = getenv("TMPDIR");
  const std::string tmp = env && *env ? env : "/tmp";
  RemoveStaleWorkDirs(tmp);
  std::string pattern = tmp + "/waitpath-demo.XXXXXX";
  if (!mkdtemp(pattern.data())) return Fail(fmt::format("cannot create {}", pattern));
  work_ = pattern;
  fs::create_directories(work_ + "/relay");
  std::ofstream(work_ + "/owner") << ProcessIdentity(getpid()) << '\n';
  return true;
}

bool Demo::PrepareTraces() {
  if (!o_.traces.empty()) {
    traces_ = o_.traces;
  } else {
    traces_ = work_ + "/traces";
    if (!RunToEnd({gen_, "-q", "--scenario", o_.scenario, "--out", traces_}, work_ + "/gen.log")) {
      return Fail(
          fmt::format("waitpath-gen failed on {}: {}", o_.scenario, LastLine(work_ + "/gen.log")));
    }
  }
  const std::string list = work_ + "/hosts.txt";
  if (!RunToEnd({replay_, "--list-hosts", traces_}, list)) {
    return Fail(fmt::format("cannot read {}: {}", traces_, LastLine(list)));
  }
  std::ifstream in(list);
  std::string name;
  while (std::getline(in, name)) {
    if (name.empty()) continue;
    // The name becomes a hostname, a directory and a relayd path component.
    if (name.find_first_not_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") !=
            std::string::npos ||
        name[0] == '.') {
      return Fail(fmt::format("host name '{}' in {} cannot be a hostname", name, traces_));
    }
    Host h;
    h.name = name;
    h.dir = work_ + "/hosts/" + name;
    hosts_.push_back(std::move(h));
  }
  if (hosts_.empty()) return Fail(fmt::format("no hosts in {}", traces_));
  return true;
}

bool Demo::StartRelayd() {
  int from = kFirstPort;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int port = FreePortTriple(from);
    if (port == 0) break;
    relayd_ = Child{"lttng-relayd",
                    Spawn({relayd_bin_, "--output=" + work_ + "/relay",
                           fmt::format("--control-port=tcp://127.0.0.1:{}", port),
                           fmt::format("--data-port=tcp://127.0.0.1:{}", port + 1),
                           fmt::format("--live-port=tcp://127.0.0.1:{}", port + 2)},
                          work_ + "/relayd.log"),
                    work_ + "/relayd.log"};
    if (relayd_.pid < 0) return Fail("cannot start lttng-relayd");
    WritePidFile();
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (!Reap(relayd_) && Clock::now() < deadline) {
      if (PortAccepts(port + 2)) {
        port_ = port;
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    Terminate(relayd_, std::chrono::seconds(2));
    // Most likely another program took one of the ports between the probe and the bind.
    from = port + 3;
  }
  return Fail(fmt::format("lttng-relayd did not start: {}", LastLine(work_ + "/relayd.log")));
}

bool Demo::StartHosts() {
  const std::string ctrl = fmt::format("tcp://127.0.0.1:{}", port_);
  const std::string data = fmt::format("tcp://127.0.0.1:{}", port_ + 1);
  for (Host& h : hosts_) {
    fs::create_directories(h.dir + "/run");
    fs::create_directories(h.dir + "/home");
    const std::string log = h.dir + "/host.log";
    h.shell =
        Child{"host " + h.name,
              Spawn({unshare_, "-m", "-u", "--propagation", "private", bash_, "-c", kHostScript,
                     "waitpath-demo-host", h.name, h.dir, ctrl, data, kSession,
                     std::to_string(kLiveTimerUs), traces_, replay_, fmt::format("{}", o_.speed)},
                    log),
              log};
    if (h.shell.pid < 0) return Fail(fmt::format("cannot start host {}", h.name));
  }
  WritePidFile();
  // All hosts start in parallel; each is ready once its session streams and its replayer runs.
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  for (Host& h : hosts_) {
    while (true) {
      std::ifstream ready(h.dir + "/ready");
      if (ready >> h.sessiond >> h.replayer) break;
      if (Reap(h.shell)) {
        return Fail(fmt::format("host {} did not start: {}", h.name, LastLine(h.shell.log)));
      }
      if (g_stop) return false;  // Ctrl-C while starting: not an error
      if (Clock::now() >= deadline) {
        return Fail(
            fmt::format("host {} did not start within 30 s: {}", h.name, LastLine(h.shell.log)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    h.helpers = ChildrenOf(h.sessiond);
  }
  WritePidFile();
  return true;
}

// What the demo started, for people and for tests that check it all ends (one per line:
// ROLE [HOST] PID, and the work directory).
void Demo::WritePidFile() {
  if (o_.pid_file.empty()) return;
  std::ofstream out(o_.pid_file + ".tmp");
  out << "workdir " << work_ << '\n';
  if (relayd_.pid > 0) out << "relayd " << relayd_.pid << '\n';
  for (const Host& h : hosts_) {
    if (h.shell.pid > 0) out << "shell " << h.name << ' ' << h.shell.pid << '\n';
    if (h.sessiond > 0) out << "sessiond " << h.name << ' ' << h.sessiond << '\n';
    for (const Proc& c : h.helpers) out << c.comm << ' ' << h.name << ' ' << c.pid << '\n';
    if (h.replayer > 0) out << "replay " << h.name << ' ' << h.replayer << '\n';
  }
  out.close();
  std::error_code ec;
  fs::rename(o_.pid_file + ".tmp", o_.pid_file, ec);
}

// Runs next to the live analysis: ends it after the duration, or when something the demo
// started stops by itself (the demo would otherwise go on showing nothing).
void Demo::Supervise(int64_t duration_ns) {
  const auto deadline = Clock::now() + std::chrono::nanoseconds(duration_ns);
  while (!g_stop) {
    if (duration_ns > 0 && Clock::now() >= deadline) break;
    if (Reap(relayd_)) {
      fmt::print(stderr, "waitpath demo: lttng-relayd stopped ({}): {}\n", Describe(relayd_),
                 LastLine(relayd_.log));
      child_failed_ = true;
      break;
    }
    for (Host& h : hosts_) {
      if (Reap(h.shell)) {
        fmt::print(stderr, "waitpath demo: host {} stopped: {}\n", h.name, LastLine(h.shell.log));
        child_failed_ = true;
      }
    }
    if (child_failed_) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  g_stop = true;
}

// Hosts first (replayers, sessions, session daemons), then the relayd they stream to.
void Demo::Stop() {
  if (stopped_) return;
  stopped_ = true;
  for (Host& h : hosts_) {
    if (!Reap(h.shell)) kill(h.shell.pid, SIGTERM);
  }
  // The shells stop in parallel: each destroys its session (a flush to the relayd) and waits
  // for its daemon; one deadline for all of them.
  const auto deadline = Clock::now() + std::chrono::seconds(15);
  for (Host& h : hosts_) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (h.shell.pid > 0 && !WaitExit(h.shell, std::max(left, std::chrono::milliseconds(0)))) {
      fmt::print(stderr, "waitpath demo: host {} did not stop in 15 s; killing it\n", h.name);
      Terminate(h.shell, std::chrono::seconds(1));
    }
    if (h.replayer > 0 && ProcessAlive(h.replayer, "waitpath-replay")) {
      kill(h.replayer, SIGKILL);
    }
    bool ended = h.sessiond <= 0 || EndDaemon(h.sessiond, "lttng-sessiond");
    for (const Proc& c : h.helpers) ended = EndDaemon(c.pid, c.comm) && ended;
    if (!ended) {
      fmt::print(stderr, "waitpath demo: host {}: lttng-sessiond {} would not end\n", h.name,
                 h.sessiond);
    }
  }
  if (relayd_.pid > 0) Terminate(relayd_, std::chrono::seconds(5));
  if (!work_.empty()) {
    std::error_code ec;
    fs::remove_all(work_, ec);
    if (ec) fmt::print(stderr, "waitpath demo: cannot remove {}: {}\n", work_, ec.message());
  }
}

int Demo::Run() {
  int64_t duration_ns = 0;
  std::string error;
  if (!o_.duration.empty() && !ParseDurationFlag("--duration", o_.duration, &duration_ns, &error)) {
    fmt::print(stderr, "waitpath demo: {}\n", error);
    return 2;
  }
  if (!o_.duration.empty() && duration_ns == 0) {
    fmt::print(stderr, "waitpath demo: --duration: '{}' must be more than 0\n", o_.duration);
    return 2;
  }
  if (!(o_.speed > 0)) {
    fmt::print(stderr, "waitpath demo: --speed must be positive\n");
    return 2;
  }
  // Signals only set the flag: the children are stopped here, in order, not by the terminal.
  InstallStopSignal({SIGHUP});

  // Before any daemon starts: the default port may well be taken by a `waitpath live` service.
  if (!o_.no_metrics) {
    std::string address;
    if (!ParseListenAddress(o_.metrics, &address, &error)) {
      fmt::print(stderr, "waitpath demo: {}\n", error);
      return 2;
    }
    if (!MetricsServer::Start(o_.metrics, std::make_shared<prometheus::Registry>(), &error)) {
      fmt::print(stderr,
                 "waitpath demo: {} (choose another with --metrics ADDR:PORT, or --no-metrics)\n",
                 error);
      return 1;
    }
  }
  if (!CheckTools() || !MakeWorkDir()) return 1;
  WritePidFile();
  if (!PrepareTraces() || !StartRelayd() || !StartHosts()) {
    Stop();
    return g_stop ? 0 : 1;
  }
  const std::string live_url = fmt::format("net://127.0.0.1:{}", port_ + 2);
  fmt::print(stderr, "waitpath demo: lttng-relayd pid {}, live at {} (control {}, data {})\n",
             relayd_.pid, live_url, port_, port_ + 1);
  for (const Host& h : hosts_) {
    fmt::print(stderr,
               "waitpath demo: host {:<8} lttng-sessiond pid {}, waitpath-replay pid {}, session "
               "{}/host/{}/{}\n",
               h.name, h.sessiond, h.replayer, live_url, h.name, kSession);
  }
  fmt::print(stderr, "waitpath demo: replaying {} at speed {} in a loop; {}{}\n", traces_, o_.speed,
             o_.no_metrics ? "" : fmt::format("metrics at http://{}/metrics; ", o_.metrics),
             duration_ns > 0 ? fmt::format("stopping after {}", o_.duration) : "Ctrl-C stops");

  // The built-in scenario's three programs, not its background noise (a logger, a monitoring
  // agent): their waits are the story the demo tells.
  std::vector<std::string> watch = o_.watch;
  if (watch.empty() && builtin_scenario_) {
    watch.push_back("comm=^(wrk|nginx|postgres)$");
  }

  LiveOptions live;
  live.relayd = live_url;
  live.all = true;
  live.tail = true;
  live.json = o_.json;
  live.watch = watch;
  live.min_wait = o_.min_wait;
  live.metrics = o_.no_metrics ? "" : o_.metrics;
  live.verbose = o_.verbose;

  std::thread supervisor([this, duration_ns] { Supervise(duration_ns); });
  const int code = RunLive(live, &g_stop);
  g_stop = true;
  supervisor.join();
  Stop();
  if (child_failed_) return 1;
  return code;
}

}  // namespace

Command AddDemoCommand(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "demo",
      "Live demo: replays a generated three-host trace set through private LTTng daemons and "
      "tails why its tasks wait (needs root and lttng-tools)");
  cmd->add_option("--speed", o->speed, "Replay speed (1 = real time)")->capture_default_str();
  cmd->add_option("--duration", o->duration, "Stop by itself after this long (e.g. 30s)");
  cmd->add_flag("--json", o->json, "JSON Lines output, as waitpath live --json");
  cmd->add_option("--watch", o->watch,
                  "Tasks to watch, as for analyze (default: the built-in scenario's client, web "
                  "server and database; all tasks of --traces or --scenario)");
  cmd->add_option("--min-wait", o->min_wait, "Print waits at least this long (e.g. 1ms)");
  cmd->add_option("--metrics", o->metrics, "Serve Prometheus /metrics at ADDR:PORT")
      ->capture_default_str();
  cmd->add_flag("--no-metrics", o->no_metrics, "Do not serve /metrics");
  cmd->add_option("--scenario", o->scenario,
                  "Generator scenario to replay (default: tools/demo/demo.toml)");
  cmd->add_option("--traces", o->traces, "Replay these recorded traces instead of generating")
      ->excludes("--scenario");
  cmd->add_option("--pid-file", o->pid_file,
                  "Write the pids of what the demo started, and its work directory, here");
  cmd->add_flag("-v,--verbose", o->verbose, "babeltrace2 warnings and full error chains");
  return Command{cmd, [o] { return Demo(*o).Run(); }};
}

}  // namespace waitpath
