#include "tools/demo/subprocess.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

namespace waitpath::demo {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(20);

// The fields of /proc/PID/stat this file needs.
struct ProcStat {
  std::string comm;
  char state = 0;
  pid_t ppid = 0;
  std::string starttime;
};

std::optional<ProcStat> ReadProcStat(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // comm is in parentheses and may itself hold spaces and parentheses: it ends at the last ')'.
  const size_t open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open ||
      close + 2 >= line.size()) {
    return std::nullopt;
  }
  ProcStat s;
  s.comm = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  if (!(rest >> s.state >> s.ppid)) return std::nullopt;
  for (int i = 5; i <= 22 && rest >> field; ++i) {  // field 22 is starttime
    if (i == 22) s.starttime = field;
  }
  return s;
}

}  // namespace

Subprocess::~Subprocess() {
  if (pid_ > 0) Terminate(std::chrono::seconds(1));
}

Subprocess::Subprocess(Subprocess&& other) noexcept {
  *this = std::move(other);
}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0) Terminate(std::chrono::seconds(1));
    pid_ = other.pid_;
    log_ = std::move(other.log_);
    exited_ = other.exited_;
    status_ = other.status_;
    other.pid_ = -1;
    other.exited_ = false;
  }
  return *this;
}

bool Subprocess::Start(const std::vector<std::string>& argv, const std::string& log) {
  if (argv.empty() || (pid_ > 0 && !Exited())) return false;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out < 0 || in < 0) {
    if (out >= 0) close(out);
    if (in >= 0) close(in);
    return false;
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // the parent is already gone
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
  if (pid < 0) return false;
  pid_ = pid;
  log_ = log;
  exited_ = false;
  status_ = 0;
  return true;
}

bool Subprocess::Exited() {
  if (exited_ || pid_ <= 0) return true;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    exited_ = true;
    status_ = status;
  }
  return exited_;
}

bool Subprocess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!Exited()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPoll);
  }
  return true;
}

void Subprocess::Terminate(std::chrono::milliseconds grace) {
  if (Exited()) return;
  kill(pid_, SIGTERM);
  if (Wait(grace)) return;
  kill(pid_, SIGKILL);
  Wait(std::chrono::seconds(2));
}

void Subprocess::Signal(int signal) {
  if (!Exited()) kill(pid_, signal);
}

bool Subprocess::Succeeded() const {
  return exited_ && WIFEXITED(status_) && WEXITSTATUS(status_) == 0;
}

std::string Subprocess::Describe() const {
  if (!exited_) return "still running";
  if (WIFEXITED(status_)) return fmt::format("exit status {}", WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) return fmt::format("killed by signal {}", WTERMSIG(status_));
  return "ended";
}

bool RunToEnd(const std::vector<std::string>& argv, const std::string& log,
              std::chrono::milliseconds timeout) {
  Subprocess p;
  if (!p.Start(argv, log)) return false;
  if (!p.Wait(timeout)) p.Terminate(std::chrono::seconds(1));
  return p.Succeeded();
}

bool ProcessAlive(pid_t pid, const std::string& comm) {
  const std::optional<ProcStat> s = ReadProcStat(pid);
  return s && s->comm == comm && s->state != 'Z';
}

bool EndProcess(pid_t pid, const std::string& comm, std::chrono::milliseconds grace) {
  auto gone_within = [&](std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (ProcessAlive(pid, comm)) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(kPoll);
    }
    return true;
  };
  if (!ProcessAlive(pid, comm)) return true;
  kill(pid, SIGTERM);
  if (gone_within(grace)) return true;
  kill(pid, SIGKILL);
  return gone_within(std::chrono::seconds(2));
}

std::vector<ProcessInfo> ChildProcesses(pid_t parent) {
  std::vector<ProcessInfo> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    const std::optional<ProcStat> s = ReadProcStat(pid);
    if (s && s->ppid == parent) out.push_back(ProcessInfo{pid, s->comm});
  }
  return out;
}

pid_t PidFromNamespace(const std::string& ns, pid_t inner) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code link_ec;
    if (std::filesystem::read_symlink(e.path() / "ns" / "pid", link_ec).string() != ns) continue;
    // "NSpid:\t<here>\t...\t<innermost>": the innermost is the number inside `ns`.
    std::ifstream status(e.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("NSpid:", 0) != 0) continue;
      std::istringstream fields(line.substr(6));
      pid_t here = -1, last = -1, v = 0;
      while (fields >> v) {
        if (here < 0) here = v;
        last = v;
      }
      if (last == inner) return here;
      break;
    }
  }
  return -1;
}

std::string ProcessIdentity(pid_t pid) {
  const std::optional<ProcStat> s = ReadProcStat(pid);
  if (!s || s->starttime.empty()) return {};
  return fmt::format("{} {}", pid, s->starttime);
}

}  // namespace waitpath::demo
