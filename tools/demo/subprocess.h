// The processes `waitpath demo` starts, and the daemons they start in turn: each started in
// its own process group, watched without blocking, and ended by its pid, never by its name.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace waitpath::demo {

// One child process, its output appended to a log file. It runs in its own process group, so
// that Ctrl-C in the terminal reaches only this process, which then stops its children in
// order; and it gets SIGTERM if this process dies without doing so (PR_SET_PDEATHSIG, which
// follows the thread that started it: start children from a thread that outlives them).
// A child still running when its Subprocess is destroyed is terminated.
class Subprocess {
 public:
  Subprocess() = default;
  ~Subprocess();
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // Starts argv (argv[0] an absolute path) with stdin from /dev/null and stdout and stderr
  // appended to `log`. False when it cannot start (the log cannot be opened, fork fails); a
  // program that cannot be executed exits with status 127.
  bool Start(const std::vector<std::string>& argv, const std::string& log);

  pid_t pid() const { return pid_; }  // -1 until started
  const std::string& log() const { return log_; }

  // Reaps it if it has exited, without waiting; true once it has (or was never started).
  bool Exited();
  // Waits up to `timeout` for it to exit; true once it has.
  bool Wait(std::chrono::milliseconds timeout);
  // SIGTERM, then SIGKILL if it is still there after `grace`; reaped either way.
  void Terminate(std::chrono::milliseconds grace);
  // Sends `signal` unless it has exited.
  void Signal(int signal);

  bool Succeeded() const;        // exited with status 0
  std::string Describe() const;  // "still running", "exit status 1", "killed by signal 9"

 private:
  pid_t pid_ = -1;
  std::string log_;
  bool exited_ = false;
  int status_ = 0;  // waitpid's, once exited
};

// Runs argv to its end, terminated after `timeout`; true on exit status 0.
bool RunToEnd(const std::vector<std::string>& argv, const std::string& log,
              std::chrono::milliseconds timeout);

// Processes this one did not start (a session daemon that daemonized, its consumer daemons),
// known by pid and checked against their name in /proc before every signal: a pid may have
// been reused by another program.
struct ProcessInfo {
  pid_t pid = -1;
  std::string comm;
};

// Whether `pid` is a live process named `comm` (not a zombie).
bool ProcessAlive(pid_t pid, const std::string& comm);
// SIGTERM, then SIGKILL if it is still there after `grace`; true once it is gone.
bool EndProcess(pid_t pid, const std::string& comm,
                std::chrono::milliseconds grace = std::chrono::seconds(5));
// The processes whose parent is `parent`.
std::vector<ProcessInfo> ChildProcesses(pid_t parent);
// "PID STARTTIME" (proc(5)): identifies a process even after its pid is reused; empty when
// there is no such process.
std::string ProcessIdentity(pid_t pid);
// The pid, in this process's PID namespace, of the process numbered `inner` in the PID
// namespace `ns` ("pid:[INODE]", as /proc/PID/ns/pid reads); -1 when there is none.
pid_t PidFromNamespace(const std::string& ns, pid_t inner);

}  // namespace waitpath::demo
