// A recorded trace read by babeltrace2 in a child process: what babeltrace2 does on a trace
// the pre-flight check could not judge (a hang, an assertion abort, allocating without end)
// costs that host, not the process. The child is forked by the host's reader thread and runs
// the same graph and sink (HostReader::RunGraph); its batches, warnings and string look-ups
// come over a socket to that thread, which puts the batches into the host's queue as a
// thread reader would and watches the child: memory (RLIMIT_AS, and its resident size),
// progress (graph steps; none for `watchdog_s` while it is waited for is a hang), and how it
// ended (a signal, a limit). See docs/reading.md, "Containment".
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <type_traits>

#include "model/loss_marker.h"
#include "model/string_table.h"
#include "readers/bt_util.h"
#include "readers/host_input.h"
#include "readers/host_reader.h"

namespace waitpath {
namespace {

namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

enum FrameType : uint32_t { kBatch = 1, kString = 2, kWarning = 3, kFailed = 4 };

// Times a host is read again without a packet its reader died (or failed) in.
constexpr uint32_t kMaxRereads = 16;
constexpr int kFailedStatus = 4;  // the child's exit status after kFailed

struct BatchFrame {
  uint32_t type = kBatch;
  uint32_t last = 0;
  uint64_t events = 0, packets = 0, spans = 0, error_bytes = 0;
  int64_t watermark = 0;
  ReaderCounters counters;
};
struct TextFrame {
  uint32_t type = 0;
  uint32_t bytes = 0;
};
static_assert(std::is_trivially_copyable_v<Event> && std::is_trivially_copyable_v<PacketKey> &&
              std::is_trivially_copyable_v<ReaderCounters>);

// What the child shows the parent without a message: it is alive and moving.
struct Progress {
  std::atomic<uint64_t> steps{0};    // graph steps done
  std::atomic<uint32_t> waiting{0};  // 1 while it waits on the parent (a string id, a full socket)
  std::atomic<uint64_t> where{0};    // HostInput::where
  std::atomic<uint64_t> events{0};   // events read so far
};

bool WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// The child's virtual size now (bytes): what it shares with the parent after the fork.
size_t VirtualSize() {
  FILE* f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (f) {
    if (fscanf(f, "%lu", &pages) != 1) pages = 0;
    fclose(f);
  }
  return pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// The child's resident size (bytes), read by the parent.
size_t ResidentSize(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/statm";
  FILE* f = fopen(path.c_str(), "r");
  unsigned long size = 0, resident = 0;
  if (f) {
    if (fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
    fclose(f);
  }
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// Tests of the containment itself (tests/e2e/hostile_input_test.cc): the child misbehaves as
// babeltrace2 does on some damaged traces. WAITPATH_READER_FAULT=abort|hang|memory, on every
// host or on WAITPATH_READER_FAULT_HOST's.
void InjectFault(const std::string& host) {
  const char* fault = std::getenv("WAITPATH_READER_FAULT");
  const char* only = std::getenv("WAITPATH_READER_FAULT_HOST");
  if (!fault || (only && host != only)) return;
  const std::string f = fault;
  if (f == "abort") abort();
  if (f == "hang") {
    std::atomic<uint64_t> spins{0};
    for (;;) spins.fetch_add(1, std::memory_order_relaxed);
  }
  if (f == "memory") {
    for (;;) {
      auto* block = static_cast<char*>(malloc(16u << 20));
      if (!block) abort();
      memset(block, 1, 16u << 20);
    }
  }
}

}  // namespace

bool ReaderOptions::ContainByDefault() {
  const char* v = std::getenv("WAITPATH_READER");
  return !(v && std::string(v) == "thread");
}

size_t ReaderOptions::EnvOr(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  return end && *end == '\0' && n > 0 ? static_cast<size_t>(n) : fallback;
}

// What the parent drops from a child that reads again after its predecessor died: the events
// already delivered (every event up to the last time delivered, and as many at that time).
struct Replay {
  int64_t last_ts = std::numeric_limits<int64_t>::min();
  uint64_t at_last = 0;                                     // events delivered at last_ts
  int64_t watermark = std::numeric_limits<int64_t>::min();  // the highest delivered
  bool skipping = false;
  int64_t skip_ts = 0;
  uint64_t skip_at = 0;
  std::vector<Event> pending_holes;  // inserted where the skipping ends

  // Drops the already delivered events of `b`, notes what it delivers.
  void Filter(Batch* b) {
    if (!skipping && pending_holes.empty()) {
      for (const Event& e : b->events) Note(e.ts);
      return;
    }
    std::vector<Event> kept;
    kept.reserve(b->events.size() + pending_holes.size());
    for (const Event& e : b->events) {
      if (skipping) {
        if (e.ts < skip_ts || (e.ts == skip_ts && skip_at > 0)) {
          if (e.ts == skip_ts) --skip_at;
          continue;
        }
        skipping = false;
      }
      // The holes go where the new events begin (their time is the last delivered).
      for (const Event& h : pending_holes) kept.push_back(h);
      pending_holes.clear();
      kept.push_back(e);
      Note(e.ts);
    }
    if (b->last) {
      for (const Event& h : pending_holes) kept.push_back(h);
      pending_holes.clear();
    }
    b->events.swap(kept);
  }
  void Note(int64_t ts) {
    if (ts > last_ts) {
      last_ts = ts;
      at_last = 0;
    }
    ++at_last;
  }
};

HostReader::ChildEnd HostReader::RunChild(void* shared_page, Replay& replay, uint32_t holes) {
  auto* progress = static_cast<Progress*>(shared_page);
  progress->steps.store(0);
  progress->waiting.store(0);
  progress->where.store(0);
  progress->events.store(0);
  ChildEnd end;
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    end.why = std::string("cannot start its reader process: ") + strerror(errno);
    return end;
  }

  pid_t pid;
  // The child starts with the parent's pages: its own memory is what it adds to them.
  const size_t baseline = ResidentSize(getpid());
  {
    // No other thread is inside babeltrace2's set-up (or holds this lock) when the child is
    // made: the child has only this thread, and must find the lock free.
    std::lock_guard lock(BabeltraceSetupMutex());
    pid = fork();
  }
  if (pid == 0) {
    // The child. Only async-signal-safe work would be strictly right after forking a threaded
    // process; what runs here (malloc, babeltrace2 in this thread only) is what glibc keeps
    // usable, and no lock another thread held is taken: strings go to the parent, messages
    // too (stderr is not written here).
    close(fds[0]);
    const int fd = fds[1];
    // Nothing of the parent's stays open here but stdio and this socket: another host's
    // socket kept open by this child would hide that host's child's end from its reader.
    if (fd > 3) close_range(3, static_cast<unsigned>(fd) - 1, 0);
    close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // What babeltrace2 and GLib print on damaged input (their own criticals) is not for the
    // user: the parent says what happened. Kept with --verbose, and for sanitizer reports in
    // fuzzing (WAITPATH_READER_STDERR=1).
    const char* keep_stderr = std::getenv("WAITPATH_READER_STDERR");
    if (!options_.verbose && !(keep_stderr && std::string(keep_stderr) == "1")) {
      const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
      if (null >= 0) {
        dup2(null, STDERR_FILENO);
        close(null);
      }
    }
    if (!kAddressSanitizer) {
      // ASan reserves terabytes of address space: under it, the parent's resident-size watch
      // is the limit.
      const rlim_t limit = VirtualSize() + (rlim_t{options_.child_memory_mb} << 20);
      struct rlimit rl {
        limit, limit
      };
      setrlimit(RLIMIT_AS, &rl);
    }
    bool ok = true;
    auto send_text = [&](uint32_t type, const std::string& s) {
      TextFrame f{type, static_cast<uint32_t>(s.size())};
      progress->waiting.store(1, std::memory_order_relaxed);
      ok = ok && WriteAll(fd, &f, sizeof f) && WriteAll(fd, s.data(), s.size());
      progress->waiting.store(0, std::memory_order_relaxed);
    };
    SetRemoteInterner([&](std::string_view s) -> uint32_t {
      send_text(kString, std::string(s));
      uint32_t id = 0;
      progress->waiting.store(1, std::memory_order_relaxed);
      if (!ok || !ReadAll(fd, &id, sizeof id)) _exit(3);  // the parent is gone
      progress->waiting.store(0, std::memory_order_relaxed);
      return id;
    });
    BatchPool pool(2);
    HostInput input(host_id_, options_.batch_events, pool, [&](Batch* b) {
      BatchFrame f;
      f.last = b->last;
      f.events = b->events.size();
      f.packets = b->packets.size();
      f.spans = b->spans.size();
      f.error_bytes = b->error.size();
      f.watermark = b->watermark;
      f.counters = b->counters;
      progress->waiting.store(1, std::memory_order_relaxed);
      ok = ok && WriteAll(fd, &f, sizeof f) &&
           WriteAll(fd, b->events.data(), b->events.size() * sizeof(Event)) &&
           WriteAll(fd, b->packets.data(), b->packets.size() * sizeof(PacketKey)) &&
           WriteAll(fd, b->spans.data(), b->spans.size() * sizeof(SpanIds)) &&
           WriteAll(fd, b->error.data(), b->error.size());
      progress->waiting.store(0, std::memory_order_relaxed);
      progress->steps.fetch_add(1, std::memory_order_relaxed);
      pool.Give(b);
      if (!ok) _exit(3);
    });
    PrepareRecorded(input);
    input.warn = [&](const std::string& line) { send_text(kWarning, line); };
    input.where = &progress->where;
    if (holes < kMaxRereads) {
      input.on_stream_error = [&](const std::string& cause) {
        // Only a packet we can name can be left out; else the rest of the stream is.
        if ((progress->where.load(std::memory_order_relaxed) >> 32) == 0) return false;
        send_text(kFailed, cause);
        _exit(kFailedStatus);
        return true;
      };
    }
    step_counter_ = &progress->steps;
    event_counter_ = &progress->events;
    InjectFault(spec_.hostname);
    Attempt attempt = RunGraph(input, false);
    input.Finish(attempt.ended ? "" : attempt.error.empty() ? "stopped" : attempt.error);
    // No destructors, no atexit handlers: they are the parent's.
    _exit(ok ? 0 : 3);
  }

  close(fds[1]);
  const int fd = fds[0];
  const size_t memory_limit = options_.child_memory_mb << 20;
  if (pid < 0) end.why = std::string("cannot start its reader process: ") + strerror(errno);
  uint64_t seen_steps = 0;
  auto last_move = std::chrono::steady_clock::now();
  while (pid > 0 && !end.got_last) {
    if (stop_.load(std::memory_order_relaxed)) {
      end.why = "stopped";
      end.stopped = true;
      break;
    }
    pollfd pfd{fd, POLLIN, 0};
    const int n = poll(&pfd, 1, 200);
    const auto now = std::chrono::steady_clock::now();
    if (n == 0 || (n < 0 && errno == EINTR)) {
      // Nothing from the child: it is busy, stuck, or growing.
      const uint64_t steps = progress->steps.load(std::memory_order_relaxed);
      if (steps != seen_steps || progress->waiting.load(std::memory_order_relaxed)) {
        seen_steps = steps;
        last_move = now;
      }
      if (ResidentSize(pid) > baseline + memory_limit) {
        end.why = "its reader process went over its memory limit of " +
                  std::to_string(options_.child_memory_mb) +
                  " MB (babeltrace2 allocating without end on a damaged trace?): killed";
        break;
      }
      if (now - last_move > std::chrono::seconds(options_.watchdog_s)) {
        end.why = "its reader process made no progress for " + std::to_string(options_.watchdog_s) +
                  " s (babeltrace2 stuck on a damaged trace?): killed";
        break;
      }
      continue;
    }
    last_move = now;
    uint32_t type = 0;
    if (n < 0 || !ReadAll(fd, &type, sizeof type)) break;  // the child ended
    if (type == kString || type == kWarning || type == kFailed) {
      uint32_t bytes = 0;
      std::string s;
      if (!ReadAll(fd, &bytes, sizeof bytes) || bytes > (1u << 20)) break;
      s.resize(bytes);
      if (!ReadAll(fd, s.data(), bytes)) break;
      if (type == kWarning) {
        fprintf(stderr, "waitpath: host %s: warning: %s\n", spec_.hostname.c_str(), s.c_str());
      } else if (type == kFailed) {
        end.why = s.empty() ? "babeltrace2 cannot decode it" : s;
      } else {
        const uint32_t id = StringTable::Global().Intern(s);
        if (!WriteAll(fd, &id, sizeof id)) break;
      }
      continue;
    }
    BatchFrame f;
    if (type != kBatch ||
        !ReadAll(fd, reinterpret_cast<char*>(&f) + sizeof type, sizeof f - sizeof type)) {
      break;
    }
    if (f.events > (64u << 20) || f.packets > (64u << 20) || f.spans > (64u << 20) ||
        f.error_bytes > (1u << 20)) {
      break;
    }
    Batch* b = pool_.Take();
    b->host = host_id_;
    b->events.resize(f.events);
    b->packets.resize(f.packets);
    b->spans.resize(f.spans);
    b->error.resize(f.error_bytes);
    if (!ReadAll(fd, b->events.data(), f.events * sizeof(Event)) ||
        !ReadAll(fd, b->packets.data(), f.packets * sizeof(PacketKey)) ||
        !ReadAll(fd, b->spans.data(), f.spans * sizeof(SpanIds)) ||
        !ReadAll(fd, b->error.data(), f.error_bytes)) {
      pool_.Give(b);
      break;
    }
    // A child reading again starts from the beginning: the host's watermark never goes back.
    b->watermark = replay.watermark = std::max(replay.watermark, f.watermark);
    b->counters = end.counters = f.counters;
    b->counters.damaged += holes;
    b->last = end.got_last = f.last != 0;
    replay.Filter(b);
    end.counters = b->counters;
    Push(b);
  }

  int status = 0;
  if (pid > 0) {
    if (!end.got_last) kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  close(fd);
  end.where = progress->where.load();
  end.counters.events = std::max(end.counters.events, progress->events.load());
  if (end.got_last || !end.why.empty()) return end;  // (kFailed: the why is babeltrace2's)
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    end.why = std::string("its reader process died of signal ") + std::to_string(sig) + " (" +
              (sigabbrev_np(sig) ? sigabbrev_np(sig) : "?") + ")" +
              (sig == SIGABRT ? ": babeltrace2 aborted (an assertion, or an allocation over the " +
                                    std::to_string(options_.child_memory_mb) + " MB limit)"
                              : "");
  } else {
    end.why = "its reader process exited with status " +
              std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + " before the end";
  }
  return end;
}

void HostReader::RunContained() {
  void* shared =
      mmap(nullptr, sizeof(Progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    // No process to contain it: read in this thread.
    HostInput input(host_id_, options_.batch_events, pool_, [this](Batch* b) { Push(b); });
    PrepareRecorded(input);
    Attempt attempt = RunGraph(input, false);
    input.Finish(attempt.ended ? "" : attempt.error.empty() ? "stopped" : attempt.error);
    return;
  }
  new (shared) Progress;
  Replay replay;
  uint32_t holes = 0;  // streams cut after their reader died there
  ChildEnd end;
  for (;;) {
    end = RunChild(shared, replay, holes);
    if (end.got_last || end.stopped) break;
    // The child died, was killed or failed while babeltrace2 decoded a packet of a stream: read
    // again without that packet, the events already delivered dropped.
    const uint64_t stream = end.where >> 32;
    const uint64_t packet = end.where & 0xffffffffu;
    if (stream == 0 || stream > reading_.streams.size() || holes >= kMaxRereads) break;
    StreamPackets& s = reading_.streams[stream - 1];
    if (packet >= s.read_offsets.size()) break;
    const std::string read_dir = fs::path(s.read_path).parent_path().string();
    auto dir = std::find_if(reading_.read_dirs.begin(), reading_.read_dirs.end(),
                            [&](const std::string& d) {
                              std::error_code ec;
                              return fs::equivalent(d, read_dir, ec);
                            });
    if (dir == reading_.read_dirs.end()) break;
    std::string error;
    const uint64_t cut_begin = s.read_offsets[packet];
    const uint64_t cut_end =
        packet + 1 < s.read_offsets.size() ? s.read_offsets[packet + 1] : UINT64_MAX;
    const std::string view = MakeCutView(*dir, s.read_path, cut_begin, cut_end, &error);
    if (view.empty()) break;
    char hex[24];
    snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(s.offsets[packet]));
    fprintf(stderr,
            "waitpath: host %s: warning: %s: packet at offset %s: %s: that packet skipped (a "
            "loss on CPU %u), the host read again without it\n",
            spec_.hostname.c_str(), s.path.c_str(), hex, end.why.c_str(), s.cpu);
    // Every stream of that trace is now read from the new view.
    for (StreamPackets& other : reading_.streams) {
      if (fs::path(other.read_path).parent_path() == fs::path(s.read_path).parent_path())
        other.read_path = (fs::path(view) / fs::path(other.read_path).filename()).string();
    }
    s.offsets.erase(s.offsets.begin() + static_cast<std::ptrdiff_t>(packet));
    s.read_offsets.erase(s.read_offsets.begin() + static_cast<std::ptrdiff_t>(packet));
    for (size_t k = packet; k < s.read_offsets.size(); ++k)
      s.read_offsets[k] -= cut_end - cut_begin;
    *dir = view;
    replay.skipping = true;
    replay.skip_ts = replay.last_ts;
    replay.skip_at = replay.last_ts == std::numeric_limits<int64_t>::min() ? 0 : replay.at_last;
    const int64_t at = replay.last_ts == std::numeric_limits<int64_t>::min() ? 0 : replay.last_ts;
    replay.pending_holes.push_back(LossMarker(host_id_, s.cpu, at, at, -1));
    ++holes;
  }
  munmap(shared, sizeof(Progress));
  if (end.got_last) return;

  // The child ended without its last batch: say how, with what was read.
  Batch* b = pool_.Take();
  b->host = host_id_;
  b->counters = end.counters;
  b->counters.damaged += holes;
  b->watermark = replay.watermark;
  b->last = true;
  b->error = "read stopped after " + std::to_string(end.counters.events) + " events: " + end.why;
  replay.Filter(b);
  Push(b);
}

}  // namespace waitpath
