#include "tools/demo/demo.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/output.h"
#include "tools/demo/subprocess.h"

namespace waitpath::demo {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kSession = "waitpath-demo";
constexpr int kLiveTimerUs = 200000;  // what the live reader's latency is made of
constexpr int kFirstPort = 15342;     // away from the relayd defaults 5342-5344
// Generating and listing hosts take well under a second; not interruptible on purpose.
constexpr auto kToolTimeout = std::chrono::minutes(2);

// ---------------------------------------------------------------------------------------------
// Where things are

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

// A file shipped with waitpath (`source_path` in the source tree): the installed one,
// PREFIX/share/waitpath/NAME, for an installed waitpath (even where its source tree still is),
// else the source tree's copy when running from a build tree.
std::string FindShared(const std::string& source_path) {
  for (const fs::path& c :
       {fs::path(ExeDir()) / "../share/waitpath" / fs::path(source_path).filename(),
        fs::path(WAITPATH_SOURCE_DIR) / source_path}) {
    std::error_code ec;
    // Lexically normal: `ps` and the package test see PREFIX/share/waitpath/…, not
    // PREFIX/bin/../share/waitpath/… (the test looked for the first; it matched only when a
    // process happened to name it otherwise, so it failed under load).
    if (fs::is_regular_file(c, ec)) return c.lexically_normal().string();
  }
  return {};
}

std::string LastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last.empty() ? "no output" : last;
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

bool PortFree(int port) {
  return LoopbackSocketOp(port, bind);
}
bool PortAccepts(int port) {
  return LoopbackSocketOp(port, connect);
}

// The first of three consecutive free loopback ports at or after `from`; 0 if none.
int FreePortTriple(int from) {
  for (int p = from; p + 2 < 65536; ++p) {
    if (PortFree(p) && PortFree(p + 1) && PortFree(p + 2)) return p;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// One traced host: tools/replay/replay-hosts.sh for that host alone, with the demo's settings.
// Its session daemon and replayer run in their own namespaces; their pids come back in
// DIR/ready. On SIGTERM it stops the replayer, destroys the session and ends the daemon by pid.

struct Host {
  std::string name;
  std::string dir;
  Subprocess shell;  // replay-hosts.sh -H NAME
  pid_t sessiond = -1;
  pid_t replayer = -1;
  std::vector<ProcessInfo> helpers;  // the session daemon's children
};

// Whether `path` is a real directory (not a symlink) owned by this process's user.
bool OwnDirectory(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid();
}

// Where work directories go: $TMPDIR when set; as root /run/waitpath (root's own, mode 0700,
// so that no other user can plant or swap a directory there); else /tmp.
std::string WorkParent() {
  const char* env = getenv("TMPDIR");
  if (env && *env) return env;
  if (geteuid() != 0) return "/tmp";
  const std::string run = "/run/waitpath";
  mkdir(run.c_str(), 0700);
  struct stat st {};
  if (lstat(run.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
      (st.st_mode & 0077) != 0) {
    return "/tmp";  // not ours as expected: fall back rather than trust it
  }
  return run;
}

// Work directories of earlier demos whose waitpath was killed outright (SIGKILL, a crash):
// their children were ended (PR_SET_PDEATHSIG) but nobody removed the directory. Removed only
// when it is a real directory of ours (not a symlink, not another user's) whose `owner` file
// names a process that no longer exists.
void RemoveStaleWorkDirs(const std::string& tmp) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(tmp, ec)) {
    if (e.path().filename().string().rfind("waitpath-demo.", 0) != 0) continue;
    if (!OwnDirectory(e.path().string())) continue;
    std::ifstream in(e.path() / "owner");
    pid_t pid = 0;
    std::string start;
    if (!(in >> pid >> start) || pid <= 0) continue;
    if (ProcessIdentity(pid) == fmt::format("{} {}", pid, start)) continue;  // still running
    std::error_code rm;
    fs::remove_all(e.path(), rm);
    if (!rm) {
      Say("waitpath demo: removed {} (left by a demo that was killed)\n", e.path().string());
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The demo

class Demo {
 public:
  Demo(const DemoOptions& o, std::atomic<bool>& stop) : o_(o), stop_(stop) {}
  ~Demo() { Stop(); }

  int Run(const Analysis& analysis);

 private:
  bool Fail(const std::string& message) {
    Say("waitpath demo: {}\n", message);
    return false;
  }
  std::string HostsDir() const { return work_ + "/hosts"; }
  bool CheckTools();
  bool MakeWorkDir();
  bool PrepareTraces();
  // Generated traces: the shift between replay rounds in each host's clock, from the
  // generator's truth (one true period, scaled by each host's clock rate), so that the hosts'
  // clocks stay consistent from round to round; 0 for recorded traces (each replayer then
  // shifts by its own trace's span).
  void ReadPeriods();
  int64_t PeriodOf(const std::string& host) const {
    auto it = periods_.find(host);
    return it == periods_.end() ? 0 : it->second;
  }
  std::map<std::string, int64_t> periods_;
  bool StartRelayd();
  bool StartHosts();
  void WritePidFile();
  void Supervise();
  void Stop();

  DemoOptions o_;
  std::atomic<bool>& stop_;
  std::string gen_, replay_, hosts_script_, relayd_bin_, bash_;
  std::string work_;
  std::string traces_;
  Subprocess relayd_;
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
  const std::string unshare = Which("unshare");
  bash_ = Which("bash");
  if (unshare.empty() || bash_.empty()) {
    return Fail("unshare or bash not found (apt-get install util-linux bash)");
  }
  hosts_script_ = FindShared("tools/replay/replay-hosts.sh");
  if (hosts_script_.empty()) {
    return Fail("replay-hosts.sh not found in the source tree or in share/waitpath");
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
    if (builtin_scenario_) o_.scenario = FindShared("tools/demo/demo.toml");
    if (o_.scenario.empty()) {
      return Fail("no demo scenario found (pass --scenario FILE or --traces DIR)");
    }
  }
  // Probe namespaces up front: the per-host shells would otherwise fail one by one.
  if (!RunToEnd({unshare, "-m", "-u", "-p", "--fork", "--mount-proc", "true"}, "/dev/null",
                kToolTimeout)) {
    return Fail(
        "cannot create mount, UTS and PID namespaces here (unshare -m -u -p --fork --mount-proc "
        "failed)");
  }
  return true;
}

bool Demo::MakeWorkDir() {
  const std::string tmp = WorkParent();
  RemoveStaleWorkDirs(tmp);
  std::string pattern = tmp + "/waitpath-demo.XXXXXX";
  if (!mkdtemp(pattern.data())) return Fail(fmt::format("cannot create {}", pattern));
  work_ = pattern;
  fs::create_directories(work_ + "/relay");
  std::ofstream(work_ + "/owner") << ProcessIdentity(getpid()) << '\n';
  return true;
}

void Demo::ReadPeriods() {
  // truth.json (docs/generator.md): the scenario's true duration, and per host the transform
  // t_reference = slope * t_host + offset. A true period P lasts P / slope on the host's clock.
  std::ifstream in(traces_ + "/truth.json");
  const nlohmann::json truth = nlohmann::json::parse(in, nullptr, false);
  if (truth.is_discarded() || !truth.contains("duration_ns") || !truth.contains("clocks")) return;
  const double period = truth["duration_ns"].get<double>() + 1e6;
  for (const nlohmann::json& c : truth["clocks"]) {
    const double slope = c.value("slope", 1.0);
    if (slope > 0) periods_[c.value("host", "")] = std::llround(period / slope);
  }
}

bool Demo::PrepareTraces() {
  if (!o_.traces.empty()) {
    traces_ = o_.traces;
  } else {
    traces_ = work_ + "/traces";
    if (!RunToEnd({gen_, "-q", "--scenario", o_.scenario, "--out", traces_}, work_ + "/gen.log",
                  kToolTimeout)) {
      return Fail(
          fmt::format("waitpath-gen failed on {}: {}", o_.scenario, LastLine(work_ + "/gen.log")));
    }
    ReadPeriods();
  }
  const std::string list = work_ + "/hosts.txt";
  if (!RunToEnd({replay_, "--list-hosts", traces_}, list, kToolTimeout)) {
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
    h.dir = HostsDir() + "/" + name;
    hosts_.push_back(std::move(h));
  }
  if (hosts_.empty()) return Fail(fmt::format("no hosts in {}", traces_));
  return true;
}

bool Demo::StartRelayd() {
  const std::string log = work_ + "/relayd.log";
  int from = kFirstPort;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int port = FreePortTriple(from);
    if (port == 0) break;
    if (!relayd_.Start({relayd_bin_, "--output=" + work_ + "/relay",
                        fmt::format("--control-port=tcp://127.0.0.1:{}", port),
                        fmt::format("--data-port=tcp://127.0.0.1:{}", port + 1),
                        fmt::format("--live-port=tcp://127.0.0.1:{}", port + 2)},
                       log)) {
      return Fail("cannot start lttng-relayd");
    }
    WritePidFile();
    const auto deadline = Clock::now() + seconds(10);
    while (!relayd_.Exited() && Clock::now() < deadline) {
      if (PortAccepts(port + 2)) {
        port_ = port;
        return true;
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    relayd_.Terminate(seconds(2));
    // Most likely another program took one of the ports between the probe and the bind.
    from = port + 3;
  }
  return Fail(fmt::format("lttng-relayd did not start: {}", LastLine(log)));
}

bool Demo::StartHosts() {
  for (Host& h : hosts_) {
    fs::create_directories(h.dir);
    // 1 MiB x 4 sub-buffers per CPU are ample at the demo's few thousand events per second and
    // host; the relayd keeps the last 4 x 8 MiB of each stream, so a demo left running does
    // not fill /tmp.
    std::vector<std::string> args = {
        bash_,     hosts_script_,
        "-H",      h.name,
        "-w",      HostsDir(),
        "-r",      fmt::format("net://127.0.0.1:{}:{}", port_, port_ + 1),
        "-s",      kSession,
        "-l",      std::to_string(kLiveTimerUs),
        "-R",      replay_,
        "-b",      "1M:4",
        "-f",      "8M:4",
        traces_,   "--forever",
        "--speed", fmt::format("{}", o_.speed)};
    if (const int64_t period = PeriodOf(h.name); period > 0) {
      args.push_back("--period-ns");
      args.push_back(std::to_string(period));
    }
    if (!h.shell.Start(args, h.dir + "/host.log")) {
      return Fail(fmt::format("cannot start host {}", h.name));
    }
  }
  WritePidFile();
  // All hosts start in parallel; each is ready once its session streams and its replayer runs.
  const auto deadline = Clock::now() + seconds(30);
  for (Host& h : hosts_) {
    while (true) {
      std::ifstream ready(h.dir + "/ready");
      pid_t sessiond = -1, replayer = -1;
      std::string ns;
      if (ready >> sessiond >> replayer >> ns) {
        // The host runs in its own PID namespace: its pids, as this namespace numbers them.
        h.sessiond = PidFromNamespace(ns, sessiond);
        h.replayer = PidFromNamespace(ns, replayer);
        break;
      }
      if (h.shell.Exited()) {
        return Fail(fmt::format("host {} did not start: {}", h.name, LastLine(h.shell.log())));
      }
      if (stop_) return false;  // Ctrl-C while starting: not an error
      if (Clock::now() >= deadline) {
        return Fail(
            fmt::format("host {} did not start within 30 s: {}", h.name, LastLine(h.shell.log())));
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    h.helpers = ChildProcesses(h.sessiond);
  }
  WritePidFile();
  return true;
}

// What the demo started, for people and for tests that check it all ends (one per line:
// ROLE [HOST] PID, and the work directory).
void Demo::WritePidFile() {
  if (o_.pid_file.empty()) return;
  // Written beside the target and renamed over it; created exclusively and never through a
  // symlink (one planted there is removed, not followed).
  const std::string tmp = o_.pid_file + ".tmp";
  unlink(tmp.c_str());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    Say("waitpath demo: --pid-file {}: cannot create it\n", tmp);
    return;
  }
  std::ostringstream out;
  out << "workdir " << work_ << '\n';
  if (relayd_.pid() > 0) out << "relayd " << relayd_.pid() << '\n';
  for (const Host& h : hosts_) {
    if (h.shell.pid() > 0) out << "shell " << h.name << ' ' << h.shell.pid() << '\n';
    if (h.sessiond > 0) out << "sessiond " << h.name << ' ' << h.sessiond << '\n';
    for (const ProcessInfo& c : h.helpers) out << c.comm << ' ' << h.name << ' ' << c.pid << '\n';
    if (h.replayer > 0) out << "replay " << h.name << ' ' << h.replayer << '\n';
  }
  const std::string text = out.str();
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  std::error_code ec;
  if (written) fs::rename(tmp, o_.pid_file, ec);
}

// Runs next to the live analysis: ends it after the duration, or when something the demo
// started stops by itself (the demo would otherwise go on showing nothing).
void Demo::Supervise() {
  const auto deadline = Clock::now() + std::chrono::nanoseconds(o_.duration_ns);
  while (!stop_) {
    if (o_.duration_ns > 0 && Clock::now() >= deadline) break;
    if (relayd_.Exited()) {
      Say("waitpath demo: lttng-relayd stopped ({}): {}\n", relayd_.Describe(),
          LastLine(relayd_.log()));
      child_failed_ = true;
      break;
    }
    for (Host& h : hosts_) {
      if (h.shell.Exited()) {
        Say("waitpath demo: host {} stopped: {}\n", h.name, LastLine(h.shell.log()));
        child_failed_ = true;
      }
    }
    if (child_failed_) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  stop_ = true;
}

// Hosts first (replayers, sessions, session daemons), then the relayd they stream to.
void Demo::Stop() {
  if (stopped_) return;
  stopped_ = true;
  for (Host& h : hosts_) h.shell.Signal(SIGTERM);
  // The shells stop in parallel: each destroys its session (a flush to the relayd) and waits
  // for its daemon; one deadline for all of them.
  const auto deadline = Clock::now() + seconds(15);
  for (Host& h : hosts_) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (!h.shell.Wait(std::max(left, milliseconds(0)))) {
      Say("waitpath demo: host {} did not stop in 15 s; killing it\n", h.name);
      h.shell.Terminate(seconds(1));
    }
    if (h.replayer > 0 && ProcessAlive(h.replayer, "waitpath-replay")) {
      kill(h.replayer, SIGKILL);
    }
    bool ended = h.sessiond <= 0 || EndProcess(h.sessiond, "lttng-sessiond");
    for (const ProcessInfo& c : h.helpers) ended = EndProcess(c.pid, c.comm) && ended;
    if (!ended) {
      Say("waitpath demo: host {}: lttng-sessiond {} would not end\n", h.name, h.sessiond);
    }
  }
  relayd_.Terminate(seconds(5));
  if (!work_.empty()) {
    std::error_code ec;
    fs::remove_all(work_, ec);
    if (ec) Say("waitpath demo: cannot remove {}: {}\n", work_, ec.message());
  }
}

int Demo::Run(const Analysis& analysis) {
  if (!CheckTools() || !MakeWorkDir()) return 1;
  WritePidFile();
  if (!PrepareTraces() || !StartRelayd() || !StartHosts()) {
    Stop();
    return stop_ ? 0 : 1;
  }
  LiveRelay relay;
  relay.url = fmt::format("net://127.0.0.1:{}", port_ + 2);
  relay.output = work_ + "/relay";
  Say("waitpath demo: lttng-relayd pid {}, live at {} (control {}, data {})\n", relayd_.pid(),
      relay.url, port_, port_ + 1);
  for (const Host& h : hosts_) {
    Say("waitpath demo: host {:<8} lttng-sessiond pid {}, waitpath-replay pid {}, session "
        "{}/host/{}/{}\n",
        h.name, h.sessiond, h.replayer, relay.url, h.name, kSession);
  }
  Say("waitpath demo: replaying {} at speed {} in a loop; {}{}\n", traces_, o_.speed,
      o_.metrics.empty() ? "" : fmt::format("metrics at http://{}/metrics; ", o_.metrics),
      o_.duration_ns > 0
          ? fmt::format("stopping after {:g}s", static_cast<double>(o_.duration_ns) / 1e9)
          : "Ctrl-C stops");

  // The built-in scenario's three programs, not its background noise (a logger, a monitoring
  // agent): their waits are the story the demo tells.
  if (builtin_scenario_) relay.watch.push_back("comm=^(wrk|nginx|postgres)$");

  std::thread supervisor([this] { Supervise(); });
  const int code = analysis(relay, &stop_);
  stop_ = true;
  supervisor.join();
  Stop();
  if (child_failed_) return 1;
  return code;
}

}  // namespace

int RunDemo(const DemoOptions& options, std::atomic<bool>& stop, const Analysis& analysis) {
  return Demo(options, stop).Run(analysis);
}

}  // namespace waitpath::demo
