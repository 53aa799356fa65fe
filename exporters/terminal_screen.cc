#include "exporters/terminal_screen.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace waitpath {
namespace {

// Columns of the process table: the states people act on, the rest summed as "other".
struct Column {
  std::string_view title;
  std::initializer_list<Leaf> leaves;
};
const Column kColumns[] = {
    {"running", {Leaf::kRunning}},
    {"preempt", {Leaf::kPreempted}},
    {"timer", {Leaf::kTimer}},
    {"disk", {Leaf::kDisk}},
    {"network", {Leaf::kNetwork}},
    {"blocked", {Leaf::kBlocked}},
    {"unknown", {Leaf::kUnknown}},
    {"other", {Leaf::kInterrupted, Leaf::kIrq, Leaf::kIpi, Leaf::kUserInput}},
};

// Cuts a line to `width` columns (the text is ASCII but for task names, which are cut by
// byte like top does).
std::string Fit(std::string line, int width) {
  if (width > 0 && static_cast<int>(line.size()) > width) line.resize(static_cast<size_t>(width));
  return line;
}

std::string Share(int64_t part, int64_t whole) {
  if (whole <= 0 || part <= 0) return "-";
  const double p = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  return p < 0.5 ? std::string("<1%") : fmt::format("{:.0f}%", p);
}

std::string Seconds(int64_t ns) {
  if (ns >= 100'000'000'000) return fmt::format("{:.0f} s", ns / 1e9);
  if (ns >= 1'000'000'000) return fmt::format("{:.2f} s", ns / 1e9);
  return fmt::format("{:.1f} ms", ns / 1e6);
}

// The time of day to the millisecond: the view has no room for nanoseconds.
std::string ShortTime(int64_t ns, const TimeFormat& format) {
  std::string t = FormatTime(ns, format);
  const size_t dot = t.rfind('.');
  if (dot != std::string::npos && t.size() - dot == 10) t.resize(dot + 4);
  return t;
}

// Lines of the slowest requests (with their title) on a bounded screen.
constexpr int kRequestRows = 6;

std::string Rate(double per_s) {
  if (per_s >= 1e6) return fmt::format("{:.1f}M", per_s / 1e6);
  if (per_s >= 1e3) return fmt::format("{:.1f}k", per_s / 1e3);
  return fmt::format("{:.0f}", per_s);
}

// The LOST column: events, then the time of outages (else the stretches of unknown size).
std::string Lost(const HostHealth& h) {
  std::string s = fmt::format("{}", h.lost);
  if (h.outage_s >= 0.5) return s + " +" + FormatAge(h.outage_s);
  if (h.gaps > 0) return s + fmt::format(" +{}gap", h.gaps);
  return s;
}

// How old the newest data is, in wall time: the smallest lag of the hosts still followed
// (negative: none known). The view's times and windows are then that far in the past.
double DataAge(const std::vector<HostHealth>& hosts) {
  double age = -1;
  for (const HostHealth& h : hosts) {
    if (h.lag_s >= 0 && (age < 0 || h.lag_s < age)) age = h.lag_s;
  }
  return age;
}

}  // namespace

std::string FormatAge(double seconds) {
  const auto s = static_cast<int64_t>(std::max(0.0, seconds) + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

std::vector<std::string> RenderTriage(const TriageView& view, const ScreenStatus& status, int width,
                                      int height, const std::deque<std::string>& messages) {
  const bool recent = !status.final;
  const bool bounded = height > 0;
  // Live data this much older than the wall clock (the relayd lost, a stalled stream) is said
  // to be so: in the title and in every "last N s" section.
  static constexpr double kStaleS = 5;
  const double age = DataAge(status.hosts);
  const std::string stale =
      !status.final && age >= kStaleS ? ", data " + FormatAge(age) + " old" : std::string();
  std::vector<std::string> lines;
  auto put = [&](std::string line) { lines.push_back(Fit(std::move(line), width)); };

  // Title: what is read, and the stream time the view is at.
  {
    std::string left = fmt::format("waitpath - {}", status.source);
    std::string right = view.now() == INT64_MIN ? std::string("waiting for data")
                                                : ShortTime(view.now(), status.time_format);
    if (status.final) right = "summary at the end, " + right;
    right += stale;
    const int pad = width - static_cast<int>(left.size() + right.size());
    put(left + std::string(static_cast<size_t>(std::max(2, pad)), ' ') + right);
  }

  // Hosts: one line each (a few at most on a small screen).
  const size_t host_rows = bounded ? std::min<size_t>(status.hosts.size(), 6) : status.hosts.size();
  put(fmt::format("{:<16} {:>9} {:>9} {:>9}  {:<22} {}", "HOST", "EVENTS/S", "LAG", "LOST", "CLOCK",
                  ""));
  for (size_t i = 0; i < host_rows; ++i) {
    const HostHealth& h = status.hosts[i];
    put(fmt::format("{:<16} {:>9} {:>9} {:>9}  {:<22} {}", h.name, Rate(h.events_per_s),
                    h.lag_s < 0 ? std::string("-") : fmt::format("{:.1f} s", h.lag_s), Lost(h),
                    h.sync.empty() ? std::string("-") : h.sync, h.state));
  }
  if (host_rows < status.hosts.size())
    put(fmt::format("... {} more hosts", status.hosts.size() - host_rows));
  if (status.hosts.empty()) put("(no host yet)");
  put("");

  const int window_s = static_cast<int>(view.options().window_ns / 1'000'000'000);
  const std::string span =
      recent ? fmt::format("last {} s{}", window_s, stale) : std::string("since the start");

  // The slowest requests (application spans) first: a request's headline, across hosts, is
  // the line most worth acting on.
  const bool requests = view.requests_seen() > 0;
  if (requests) {
    put(fmt::format("SLOWEST REQUESTS ({}): root spans", span));
    put(fmt::format("{:<12}  {:<28} {:>10}  {}", "ENDED", "HOST:OPERATION", "TOOK",
                    "LARGEST STATE OF ITS PATH, ON WHOM (RUNNER-UP)"));
    const std::vector<TriageRequest> slow =
        view.SlowestRequests(bounded ? kRequestRows - 2 : 20, recent);
    for (const TriageRequest& r : slow) {
      put(fmt::format("{:<12}  {:<28} {:>10}  {}", ShortTime(r.end, status.time_format),
                      r.operation, FormatWaitDuration(r.duration), r.headline));
    }
    if (slow.empty()) put("(none in the window)");
    put("");
  }

  // Processes: where their time went, by state of their active path.
  std::vector<TriageProcess> processes = view.Processes(recent);
  put(fmt::format("PROCESSES ({}): share of their threads' time by state of the active path",
                  span));
  std::string header = fmt::format("{:<24} {:>6} {:>9}", "HOST/PROCESS", "WAITS", "WAITED");
  for (const Column& c : kColumns) header += fmt::format(" {:>7}", c.title);
  header += fmt::format(" {:>8}", "untraced");
  put(header);
  // Rows: as many as leave the slowest waits at least 8 lines (plus their title and header).
  const int used = static_cast<int>(lines.size());
  const size_t process_rows =
      bounded ? static_cast<size_t>(std::clamp(height - used - 15, 1, 12)) : 20;
  uint64_t untraced_waits = 0, for_work_waits = 0;
  for (size_t i = 0; i < processes.size(); ++i) {
    const TriageProcess& p = processes[i];
    untraced_waits += p.untraced_waits;
    for_work_waits += p.for_work_waits;
    if (i >= process_rows) continue;
    const int64_t total = p.states.total();
    std::string row = fmt::format("{:<24} {:>6} {:>9}", p.name, p.waits, Seconds(p.waited_ns));
    for (const Column& c : kColumns) {
      int64_t ns = 0;
      for (Leaf l : c.leaves) ns += p.states[l];
      // Waits on untraced peers are idle time: network, but shown apart.
      if (c.leaves.size() == 1 && *c.leaves.begin() == Leaf::kNetwork)
        ns = std::max<int64_t>(0, ns - p.untraced_ns);
      row += fmt::format(" {:>7}", Share(ns, total));
    }
    row += fmt::format(" {:>8}", Share(p.untraced_ns, total));
    put(row);
  }
  if (processes.size() > process_rows)
    put(fmt::format("... {} more processes", processes.size() - process_rows));
  if (processes.empty()) put("(no watched process has run yet)");
  if (untraced_waits > 0 || for_work_waits > 0) {
    // One short line (it was cut at 120 columns): idle is not slow (docs/analyze.md, "Idle is
    // not slow").
    std::string idle = "idle, not below:";
    if (for_work_waits > 0)
      idle += fmt::format(" {} waits of servers for a request", for_work_waits);
    if (untraced_waits > 0)
      idle += fmt::format("{} {} on untraced peers", for_work_waits > 0 ? "," : "", untraced_waits);
    put(idle);
  }
  put("");

  // The slowest waits, with what to act on.
  put(fmt::format("SLOWEST WAITS ({}{})", span,
                  status.filters.empty() ? "" : ", " + status.filters));
  put(fmt::format("{:<12}  {:<28} {:>10} {:>5}  {}", "ENDED", "HOST/PROCESS TID", "WAITED", "TIMES",
                  "LARGEST STATE OF ITS PATH, ON WHOM (RUNNER-UP)"));
  const int footer = recent ? 1 + static_cast<int>(std::min<size_t>(messages.size(), 3)) : 0;
  const size_t wait_rows =
      bounded ? static_cast<size_t>(std::max(0, height - static_cast<int>(lines.size()) - footer))
              : 20;
  const std::vector<TriageWait> waits = view.Slowest(wait_rows, recent);
  for (const TriageWait& w : waits) {
    put(fmt::format("{:<12}  {:<28} {:>10} {:>5}  {}", ShortTime(w.end, status.time_format), w.who,
                    FormatWaitDuration(w.duration),
                    w.count > 1 ? fmt::format("x{}", w.count) : std::string(), w.headline));
  }
  if (waits.empty()) put(view.waits_seen() ? "(none matches)" : "(no wait resolved yet)");

  if (recent && bounded) {
    while (static_cast<int>(lines.size()) < height - footer) lines.emplace_back();
    const size_t first = messages.size() - std::min<size_t>(messages.size(), 3);
    for (size_t i = first; i < messages.size(); ++i) put("! " + messages[i]);
    put("q or Ctrl-C: quit with a summary | --plain: one line per wait | docs/analyze.md");
  }
  if (bounded && static_cast<int>(lines.size()) > height) lines.resize(static_cast<size_t>(height));
  return lines;
}

bool TerminalScreen::Usable() {
  if (!isatty(STDOUT_FILENO)) return false;
  const char* term = std::getenv("TERM");
  return term && *term && std::strcmp(term, "dumb") != 0;
}

void TerminalScreen::Size(int* width, int* height) {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
    *width = ws.ws_col;
    *height = ws.ws_row;
  } else {
    *width = 80;
    *height = 24;
  }
}

namespace {

// Whether two descriptors are the same terminal (stderr shown where the view is drawn).
bool SameTerminal(int a, int b) {
  struct stat sa {
  }, sb{};
  return isatty(a) && isatty(b) && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
         sa.st_rdev == sb.st_rdev;
}

void WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n <= 0) return;  // a closed terminal: nothing more to do
    text.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

TerminalScreen::TerminalScreen() {
  std::fflush(stdout);
  WriteAll(STDOUT_FILENO, "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J");
  if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_) == 0) {
    termios raw = saved_;
    // Keys without Enter and without echo; Ctrl-C still raises SIGINT (ISIG stays).
    raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    keys_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  int fds[2];
  if (SameTerminal(STDOUT_FILENO, STDERR_FILENO) && pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0) {
    std::fflush(stderr);
    saved_stderr_ = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (saved_stderr_ >= 0 && dup2(fds[1], STDERR_FILENO) >= 0) {
      messages_fd_ = fds[0];
    } else {
      close(fds[0]);
      if (saved_stderr_ >= 0) close(saved_stderr_);
      saved_stderr_ = -1;
    }
    close(fds[1]);
  }
}

TerminalScreen::~TerminalScreen() {
  DrainMessages();
  WriteAll(STDOUT_FILENO, "\x1b[?25h\x1b[?1049l");
  if (keys_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  if (messages_fd_ >= 0) {
    std::fflush(stderr);
    dup2(saved_stderr_, STDERR_FILENO);
    close(saved_stderr_);
    close(messages_fd_);
    if (!partial_.empty()) caught_.push_back(partial_);
    for (const std::string& m : caught_) WriteAll(STDERR_FILENO, m + "\n");
  }
}

void TerminalScreen::DrainMessages() {
  if (messages_fd_ < 0) return;
  std::fflush(stderr);
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(messages_fd_, buffer, sizeof buffer);
    if (n <= 0) break;
    partial_.append(buffer, static_cast<size_t>(n));
  }
  size_t nl;
  while ((nl = partial_.find('\n')) != std::string::npos) {
    std::string line = partial_.substr(0, nl);
    partial_.erase(0, nl + 1);
    if (line.empty()) continue;
    messages_.push_back(line);
    if (messages_.size() > 3) messages_.pop_front();
    // The first messages (what was followed, the clock) and the last ones matter most.
    if (caught_.size() < 200) {
      caught_.push_back(std::move(line));
    } else {
      caught_.back() = "... (messages in between dropped) " + line;
    }
  }
}

bool TerminalScreen::Poll() {
  DrainMessages();
  if (keys_) {
    char key;
    while (read(STDIN_FILENO, &key, 1) == 1) {
      if (key == 'q' || key == 'Q') quit_ = true;
    }
  }
  return quit_;
}

void TerminalScreen::Draw(const TriageView& view, const ScreenStatus& status) {
  DrainMessages();
  int width, height;
  Size(&width, &height);
  const std::vector<std::string> lines = RenderTriage(view, status, width, height, messages_);
  std::string frame = "\x1b[H";
  for (size_t i = 0; i < lines.size(); ++i) {
    frame += lines[i];
    frame += "\x1b[K";
    if (i + 1 < lines.size()) frame += "\r\n";
  }
  frame += "\x1b[J";
  WriteAll(STDOUT_FILENO, frame);
}

}  // namespace waitpath
