// The bounded mutation run of the live viewer client (docs/live.md, "What a relayd, a trace and
// a metrics client can make waitpath do"): a scripted relayd (relayd/fake_relayd.h,
// TraceRelayd) serves the rpc fixture as a live session (protocol 2.8, 2.13 or 2.15; at once,
// or paced with retries, beacons, metadata in parts and late streams), and each case damages
// one of its replies: bytes flipped, the reply cut short or not sent, a count, length, offset or
// timestamp made huge or off by one, a wrong status, the reply sent twice or the previous one
// sent instead, a stream or session named "..", "/etc", with a NUL, a newline or 4 KiB, garbage
// after it, a stall, a trickle, an index whose offset, sizes or times plausibly lie. The case
// then reads the session (ReadLiveSession) or lists
// the relayd's sessions (ListRelaydSessions) with a stop request after a bound, and requires:
// no crash (run under ASan/UBSan: tests/fuzz/run_relayd_fuzz_ci.sh), no hang (returns within a
// second of the stop), every error and warning one printable line, and memory bounded.
//
// Seeded and deterministic: case K of seed S is the same mutation whatever ran before it, and
// --case K runs it alone. Exit 0 when every case held, 1 at the first that did not (naming it).
//
// Usage: waitpath_relayd_fuzz [--cases N] [--seed S] [--budget SECONDS] [--stop-after MS]
//        [--grace MS] [--max-memory-mb MB] [--case K] [--fixture DIR] [--verbose]
#include <signal.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
// From ASan's runtime (<sanitizer/allocator_interface.h>, which GCC 12 does not ship).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#else
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/untrusted_name.h"
#include "readers/live_reader.h"
#include "relayd/fake_relayd.h"
#include "relayd/session_discovery.h"

namespace waitpath {
namespace {

namespace w = viewer_wire;
using namespace fake_relayd;
using Clock = std::chrono::steady_clock;

// The case being run, for a crash report (written by the signal handler and ASan's death
// callback: no allocation there).
char g_case[512] = "(no case yet)";

void SayCase() {
  const char prefix[] = "\nrelayd-fuzz: died in ";
  [[maybe_unused]] ssize_t r = write(2, prefix, sizeof(prefix) - 1);
  r = write(2, g_case, strnlen(g_case, sizeof(g_case)));
  r = write(2, "\n", 1);
}
void OnFatalSignal(int sig) {
  SayCase();
  signal(sig, SIG_DFL);
  raise(sig);
}

size_t AllocatedBytes() {
#if defined(__SANITIZE_ADDRESS__)
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#endif
}

const char* CommandName(uint32_t cmd) {
  switch (cmd) {
    case w::kConnect:
      return "CONNECT";
    case w::kListSessions:
      return "LIST_SESSIONS";
    case w::kAttachSession:
      return "ATTACH_SESSION";
    case w::kGetNextIndex:
      return "GET_NEXT_INDEX";
    case w::kGetPacket:
      return "GET_PACKET";
    case w::kGetMetadata:
      return "GET_METADATA";
    case w::kGetNewStreams:
      return "GET_NEW_STREAMS";
    case w::kCreateSession:
      return "CREATE_SESSION";
    case w::kDetachSession:
      return "DETACH_SESSION";
  }
  return "UNKNOWN";
}

enum class Op : uint8_t {
  kFlip,      // 1 to 8 bytes flipped (half of the time in the first 64)
  kTruncate,  // a prefix sent, then the connection closed
  kCut,       // the connection closed instead of the reply
  kField,     // a count, length, offset, timestamp or flag made huge, zero or off by one
  kStatus,    // the status another code, known or not
  kRepeat,    // the reply sent twice
  kStale,     // the previous reply sent instead (a reply out of order)
  kName,      // a stream's path or channel, or the session's host or name, made hostile
  kGarbage,   // random bytes after the reply
  kStall,     // a prefix of the reply (maybe none), then silence
  kTrickle,   // the reply a few bytes at a time
  kIndexLie,  // an index's offset, sizes, times, discarded count or stream class plausibly wrong
  kCount
};
const char* OpName(Op op) {
  static const char* const kNames[] = {"flip",  "truncate", "cut",     "field", "status",  "repeat",
                                       "stale", "name",     "garbage", "stall", "trickle", "index"};
  return kNames[static_cast<size_t>(op)];
}

struct Field {
  size_t offset;
  size_t width;  // 4 or 8
  bool status;
};
// The integer fields of `cmd`'s reply as the fake sends it (the first record of a list).
std::vector<Field> FieldsOf(uint32_t cmd, uint32_t minor) {
  constexpr size_t kStream = sizeof(w::StreamRecord);
  switch (cmd) {
    case w::kConnect:
      return {{0, 8, false}, {8, 4, false}, {12, 4, false}, {16, 4, false}};
    case w::kCreateSession:
    case w::kDetachSession:
      return {{0, 4, true}};
    case w::kListSessions:
      if (minor >= w::kMinorSessionFormat)
        return {{0, 4, false},  {4, 8, false},  {12, 4, false}, {16, 4, false},
                {20, 4, false}, {24, 4, false}, {28, 4, false}, {32, 4, false}};
      return {{0, 4, false}, {4, 8, false}, {12, 4, false}, {16, 4, false}, {20, 4, false}};
    case w::kAttachSession:
      return {{0, 4, true},
              {4, 4, false},
              {8, 8, false},
              {16, 8, false},
              {24, 4, false},
              {8 + kStream, 8, false},
              {8 + kStream + 8, 8, false},
              {8 + kStream + 16, 4, false}};
    case w::kGetNewStreams:
      return {{0, 4, true}, {4, 4, false}};
    case w::kGetNextIndex:
      return {{0, 8, false},  {8, 8, false},  {16, 8, false}, {24, 8, false}, {32, 8, false},
              {40, 8, false}, {48, 8, false}, {56, 4, true},  {60, 4, false}};
    case w::kGetPacket:
      return {{0, 4, true}, {4, 4, false}, {8, 4, false}};
    case w::kGetMetadata:
      return {{0, 8, false}, {8, 4, true}};
  }
  return {};
}

uint64_t GetBig(const std::string& b, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v = v << 8 | static_cast<uint8_t>(b[at + i]);
  return v;
}
void SetBig(std::string& b, size_t at, size_t width, uint64_t v) {
  for (size_t i = width; i-- > 0;) {
    b[at + i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

// Hostile names: the parent directory, absolute paths, control characters, a NUL inside, a
// field filled to its end, CPU numbers that do not fit.
std::string HostileName(std::mt19937_64& rng, size_t field) {
  static const char* const kNames[] = {"",
                                       ".",
                                       "..",
                                       "../../../etc",
                                       "/etc/passwd",
                                       "/",
                                       "a/../../b",
                                       "line\nbreak",
                                       "\x1b[31mred\x1b[0m",
                                       "metadata",
                                       "chan_99999999999999999999",
                                       "chan_-1",
                                       "chan_65536",
                                       "\xff\xfe\xfd",
                                       "%s%n%s"};
  const size_t n = std::size(kNames) + 2;
  const size_t pick = rng() % n;
  if (pick == n - 2) return std::string(field, 'A');  // no NUL: the field's whole length
  if (pick == n - 1) return std::string("ab\0cd/..", 8);
  return kNames[pick];
}

struct Mutation {
  size_t at = 0;  // which reply (0: the first)
  Op op = Op::kFlip;
  uint64_t seed = 0;
};

// What the mutated relayd did, for the case's line.
struct MutationLog {
  std::string what;  // "reply 9 (GET_NEXT_INDEX): field +56 := 7"
  size_t replies = 0;
  std::vector<uint32_t> commands;  // of each reply
};

Answer Apply(const Mutation& m, uint32_t cmd, uint32_t minor, Answer a, const std::string& previous,
             std::string* what) {
  std::mt19937_64 rng(m.seed);
  std::string& b = a.bytes;
  auto say = [&](const std::string& s) { *what += s; };
  switch (m.op) {
    case Op::kFlip: {
      if (b.empty()) return Close();
      const size_t count = 1 + rng() % 8;
      say("flip");
      for (size_t i = 0; i < count; ++i) {
        const size_t span = rng() % 2 == 0 ? std::min<size_t>(b.size(), 64) : b.size();
        const size_t at = rng() % span;
        b[at] = static_cast<char>(b[at] ^ static_cast<char>(1 + rng() % 255));
        say(" " + std::to_string(at));
      }
      return a;
    }
    case Op::kTruncate:
      b.resize(b.empty() ? 0 : rng() % b.size());
      say("truncated to " + std::to_string(b.size()) + " bytes, closed");
      a.close = true;
      return a;
    case Op::kCut:
      say("closed instead");
      return Close();
    case Op::kField:
    case Op::kStatus: {
      std::vector<Field> fields;
      for (const Field& f : FieldsOf(cmd, minor)) {
        if (f.offset + f.width <= b.size() && (m.op == Op::kField || f.status)) fields.push_back(f);
      }
      if (fields.empty()) {
        say("no such field: closed instead");
        return Close();
      }
      const Field f = fields[rng() % fields.size()];
      const uint64_t old = GetBig(b, f.offset, f.width);
      const uint64_t max = f.width == 8 ? ~uint64_t{0} : uint64_t{0xffffffff};
      uint64_t v = 0;
      if (m.op == Op::kStatus) {
        v = rng() % 4 == 0 ? rng() & max : rng() % 9;
      } else {
        const uint64_t kValues[] = {max,
                                    max / 2 + 1,
                                    max / 2,
                                    0,
                                    1,
                                    old + 1,
                                    old - 1,
                                    old * 2,
                                    old / 2,
                                    old + 4096,
                                    uint64_t{1} << 31,
                                    (uint64_t{64} << 20) * (f.width == 8 ? 8 : 1),
                                    100001,
                                    65536,
                                    rng()};
        v = kValues[rng() % std::size(kValues)] & max;
      }
      SetBig(b, f.offset, f.width, v);
      say("field +" + std::to_string(f.offset) + " " + std::to_string(old) +
          " := " + std::to_string(v));
      return a;
    }
    case Op::kRepeat:
      b += b;
      say("sent twice");
      return a;
    case Op::kStale:
      if (previous.empty()) {
        say("no previous reply: closed instead");
        return Close();
      }
      b = previous;
      say("the previous reply instead");
      return a;
    case Op::kName: {
      // Stream records (ATTACH_SESSION, GET_NEW_STREAMS) or the session (LIST_SESSIONS).
      constexpr size_t kStream = sizeof(w::StreamRecord);
      constexpr size_t kPath = offsetof(w::StreamRecord, path_name);
      constexpr size_t kChannel = offsetof(w::StreamRecord, channel_name);
      const bool streams = cmd == w::kAttachSession || cmd == w::kGetNewStreams;
      if (streams && b.size() >= 8 + kStream) {
        const size_t records = (b.size() - 8) / kStream;
        const size_t record = 8 + (rng() % records) * kStream;
        const bool path = rng() % 2 == 0;
        const size_t field = path ? w::kPathMax : w::kNameMax;
        const std::string name = HostileName(rng, field);
        std::string padded(field, '\0');
        padded.replace(0, std::min(name.size(), field), name, 0, field);
        b.replace(record + (path ? kPath : kChannel), field, padded);
        say(std::string(path ? "path" : "channel") + " of record " +
            std::to_string((record - 8) / kStream) + " := " + std::to_string(name.size()) +
            " bytes");
        return a;
      }
      if (cmd == w::kListSessions && minor < w::kMinorSessionFormat &&
          b.size() >= 4 + sizeof(w::SessionRecord24)) {
        const bool host = rng() % 2 == 0;
        const size_t field = host ? w::kHostNameMax : w::kNameMax;
        const std::string name = HostileName(rng, field);
        std::string padded(field, '\0');
        padded.replace(0, std::min(name.size(), field), name, 0, field);
        b.replace(4 + offsetof(w::SessionRecord24, hostname) + (host ? 0 : w::kHostNameMax), field,
                  padded);
        say(std::string(host ? "hostname" : "session name") + " := " + std::to_string(name.size()) +
            " bytes");
        return a;
      }
      if (cmd == w::kListSessions && b.size() >= 4 + sizeof(w::SessionRecord215)) {
        constexpr size_t kRec = 4;
        const size_t host_len = GetBig(b, kRec + 20, 4);
        const size_t name_len = GetBig(b, kRec + 24, 4);
        const size_t names = kRec + sizeof(w::SessionRecord215);
        if (names + host_len + name_len > b.size()) return Close();
        std::string host = b.substr(names, host_len);
        std::string session = b.substr(names + host_len, name_len);
        const bool is_host = rng() % 2 == 0;
        (is_host ? host : session) = HostileName(rng, 4096);
        SetBig(b, kRec + 20, 4, host.size());
        SetBig(b, kRec + 24, 4, session.size());
        b = b.substr(0, names) + host + session + b.substr(names + host_len + name_len);
        say(std::string(is_host ? "hostname" : "session name") +
            " := " + std::to_string((is_host ? host : session).size()) + " bytes");
        return a;
      }
      say("no name: flipped instead ");
      Mutation flip = m;
      flip.op = Op::kFlip;
      return Apply(flip, cmd, minor, std::move(a), previous, what);
    }
    case Op::kGarbage: {
      const size_t n = 1 + rng() % 64;
      for (size_t i = 0; i < n; ++i) b += static_cast<char>(rng());
      say(std::to_string(n) + " bytes of garbage after");
      return a;
    }
    case Op::kStall:
      b.resize(b.empty() || rng() % 2 == 0 ? 0 : rng() % b.size());
      a.silent = true;
      say(std::to_string(b.size()) + " bytes, then silence");
      return a;
    case Op::kTrickle:
      a.trickle = std::chrono::milliseconds(1 + rng() % 20);
      a.chunk = 1 + rng() % 512;
      say(std::to_string(a.chunk) + " bytes every " + std::to_string(a.trickle.count()) + " ms");
      return a;
    case Op::kIndexLie: {
      // Values the client's own checks let through, for the decoder to meet: a packet cut
      // short or run into the next, a content size off, times out of order, the wrong class.
      if (cmd != w::kGetNextIndex || b.size() < sizeof(w::IndexReply)) {
        say("not an index: flipped instead ");
        Mutation flip = m;
        flip.op = Op::kFlip;
        return Apply(flip, cmd, minor, std::move(a), previous, what);
      }
      const uint64_t offset = GetBig(b, 0, 8), packet = GetBig(b, 8, 8), content = GetBig(b, 16, 8),
                     begin = GetBig(b, 24, 8), end = GetBig(b, 32, 8);
      const size_t field = rng() % 7;
      uint64_t v = 0;
      switch (field) {
        case 0: {
          const uint64_t kValues[] = {offset + 8,          offset - 8, offset + 4096, 0,
                                      offset + packet / 8, offset / 2, offset + 1};
          v = kValues[rng() % std::size(kValues)];
          break;
        }
        case 1: {
          const uint64_t kValues[] = {packet / 2 / 8 * 8,  packet - 8, packet + 8, packet * 2, 8,
                                      content / 8 * 8 + 8, 64 * 8};
          v = kValues[rng() % std::size(kValues)];
          break;
        }
        case 2: {
          const uint64_t kValues[] = {0, 1, content / 2, content - 1, packet, 8, content + 7};
          v = std::min(kValues[rng() % std::size(kValues)], packet);
          break;
        }
        case 3:
        case 4: {
          const uint64_t old = field == 3 ? begin : end;
          const uint64_t kValues[] = {0, old + 1000000000, old - 1000000000, ~uint64_t{0},
                                      field == 3 ? end + 1 : begin - 1};
          v = kValues[rng() % std::size(kValues)];
          break;
        }
        case 5:
          v = rng() % 2 == 0 ? ~uint64_t{0} : 1000;
          break;
        case 6:
          v = rng() % 3;
          break;
      }
      static const char* const kField[] = {"offset", "packet size", "content size", "begin",
                                           "end",    "discarded",   "stream class"};
      say(std::string("index ") + kField[field] + " " + std::to_string(GetBig(b, field * 8, 8)) +
          " := " + std::to_string(v));
      SetBig(b, field * 8, 8, v);
      return a;
    }
    case Op::kCount:
      break;
  }
  return a;
}

// `inner` with reply m.at mutated.
Script Mutated(Script inner, Mutation m, uint32_t minor, std::shared_ptr<MutationLog> log) {
  auto previous = std::make_shared<std::string>();
  return [=](uint32_t cmd, const std::string& payload) -> Answer {
    Answer a = inner(cmd, payload);
    const size_t n = log->replies++;
    log->commands.push_back(cmd);
    if (n != m.at) {
      *previous = a.bytes;
      return a;
    }
    log->what = "reply " + std::to_string(n) + " (" + CommandName(cmd) + "): ";
    Answer mutated = Apply(m, cmd, minor, std::move(a), *previous, &log->what);
    // For a crash report: the case line with what was done (a diagnostic only).
    const size_t len = strnlen(g_case, sizeof(g_case));
    std::snprintf(g_case + len, sizeof(g_case) - len, ": %s", log->what.c_str());
    *previous = mutated.bytes;
    return mutated;
  };
}

// One line, printable, bounded: what every error and warning must be.
bool OneLine(const std::string& s, std::string* why) {
  if (s.size() > 8192) {
    *why = "longer than 8 KiB (" + std::to_string(s.size()) + " bytes)";
    return false;
  }
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      *why = "holds control byte " + std::to_string(c);
      return false;
    }
  }
  return true;
}

// A message without its relayd's address and its numbers, to count kinds of errors.
std::string Shape(const std::string& message) {
  std::string out;
  for (size_t i = 0; i < message.size() && out.size() < 72; ++i) {
    if (message.compare(i, 17, "relayd 127.0.0.1:") == 0) {
      out += "relayd";
      for (i += 17; i + 1 < message.size() && message[i + 1] >= '0' && message[i + 1] <= '9';) ++i;
      continue;
    }
    if (message[i] >= '0' && message[i] <= '9') {
      if (out.empty() || out.back() != '#') out += '#';
      continue;
    }
    out += message[i];
  }
  return out;
}

struct Options {
  size_t cases = 300;
  uint64_t seed = 1;
  double budget_s = 75;
  std::chrono::milliseconds stop_after{2000};
  std::chrono::milliseconds grace{1000};
  size_t max_memory_mb = 256;
  long only_case = -1;
  std::string fixture = WAITPATH_FIXTURES "/lttng/rpc";
  bool verbose = false;
};

struct Outcome {
  std::string kind;  // "ended", "error", "refused", "stopped", "listed"
  std::string message;
  std::vector<std::string> warnings;
  std::chrono::milliseconds after_stop{0};  // how long it took to return after the stop
  bool stopped = false;                     // the stop was needed
  size_t events = 0;
};

// Runs `body` in a thread, raises `stop` after the bound, and waits the grace period for it.
// A hang ends the process (the thread cannot be joined).
template <typename Body>
Outcome Bounded(const Options& o, std::atomic<bool>& stop, Body body) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Outcome out;
  std::thread t([&] {
    Outcome r = body();
    std::lock_guard lock(mu);
    out = std::move(r);
    done = true;
    cv.notify_all();
  });
  std::unique_lock lock(mu);
  if (!cv.wait_for(lock, o.stop_after, [&] { return done; })) {
    stop = true;
    const auto stopped_at = Clock::now();
    if (!cv.wait_for(lock, o.grace, [&] { return done; })) {
      std::fprintf(stderr, "relayd-fuzz: FAIL %s: still running %lld ms after the stop (a hang)\n",
                   g_case, static_cast<long long>(o.grace.count()));
      std::fflush(stderr);
      _exit(1);
    }
    out.stopped = true;
    out.after_stop =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - stopped_at);
  }
  lock.unlock();
  t.join();
  return out;
}

Outcome ReadCase(const Options& o, const std::string& url) {
  std::atomic<bool> stop{false};
  return Bounded(o, stop, [&] {
    Outcome out;
    BatchPool pool{16};
    HostInput input{0, 512, pool, [&](Batch* b) {
                      out.events += b->events.size();
                      pool.Give(b);
                    }};
    input.warn = [&](const std::string& line) {
      if (out.warnings.size() < 100) out.warnings.push_back(line);
    };
    const LiveAttempt r = ReadLiveSession(input, url, LiveReadOptions{}, stop);
    input.Finish(r.error);
    out.message = r.error;
    out.kind = r.ended ? "ended" : r.refused ? "refused" : !r.error.empty() ? "error" : "stopped";
    return out;
  });
}

Outcome ListCase(const Options& o, const std::string& url) {
  std::atomic<bool> stop{false};
  return Bounded(o, stop, [&] {
    Outcome out;
    SessionQueryOptions q;
    q.stop = &stop;
    q.timeout = o.stop_after * 2;
    SessionListing listing;
    std::string error;
    if (ListRelaydSessions(url, q, &listing, &error)) {
      out.kind = "listed";
      for (const RefusedSession& r : listing.refused)
        out.warnings.push_back(DescribeRefusal(url, r));
    } else {
      out.kind = "error";
      out.message = error;
    }
    return out;
  });
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "relayd-fuzz: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--cases") {
      o.cases = std::stoul(next());
    } else if (a == "--seed") {
      o.seed = std::stoull(next());
    } else if (a == "--budget") {
      o.budget_s = std::stod(next());
    } else if (a == "--stop-after") {
      o.stop_after = std::chrono::milliseconds(std::stol(next()));
    } else if (a == "--grace") {
      o.grace = std::chrono::milliseconds(std::stol(next()));
    } else if (a == "--max-memory-mb") {
      o.max_memory_mb = std::stoul(next());
    } else if (a == "--case") {
      o.only_case = std::stol(next());
    } else if (a == "--fixture") {
      o.fixture = next();
    } else if (a == "--verbose") {
      o.verbose = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--cases N] [--seed S] [--budget S] [--stop-after MS] "
                   "[--grace MS] [--max-memory-mb MB] [--case K] [--fixture DIR] [--verbose]\n",
                   argv[0]);
      return 2;
    }
  }
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, OnFatalSignal);
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_set_death_callback(SayCase);
#endif

  ServedTrace trace;
  std::string why;
  if (!LoadServedTrace(o.fixture, {"waitpath_0_0", "waitpath_1_0"}, &trace, &why)) {
    std::fprintf(stderr, "relayd-fuzz: %s\n", why.c_str());
    return 1;
  }
  FakeSession session;
  session.id = 3;
  session.name = "rpc";
  const std::string session_path = "/host/" + session.hostname + "/" + session.name;
  const uint32_t kMinors[] = {8, 13, 15};
  // Everything at once; retries, beacons and metadata in parts; streams announced late too.
  const Pacing kPacings[] = {
      Pacing{}, Pacing{.retry_every = 3, .metadata_chunk = 4096},
      Pacing{.late_streams = true, .retry_every = 2, .metadata_chunk = 1000}};

  // The session unmutated, at each protocol version: it must end with every event, and it
  // says how many replies a case may pick from.
  // The command of each reply, by protocol minor and pacing.
  std::map<std::pair<uint32_t, size_t>, std::vector<uint32_t>> replies;
  size_t expected_events = 0;
  for (uint32_t minor : kMinors) {
    for (size_t pacing = 0; pacing < std::size(kPacings); ++pacing) {
      std::snprintf(g_case, sizeof(g_case), "reference read at protocol 2.%u, pacing %zu", minor,
                    pacing);
      auto log = std::make_shared<MutationLog>();
      auto relayd = std::make_shared<TraceRelayd>(trace, session, minor, kPacings[pacing]);
      FakeRelayd f(Mutated(TraceRelayd::Serve(relayd), {.at = ~size_t{0}}, minor, log));
      // Unhurried, whatever the cases' bound: the reference must end on a loaded machine too.
      Options unhurried = o;
      unhurried.stop_after = std::max(o.stop_after, std::chrono::milliseconds(10000));
      const Outcome r = ReadCase(unhurried, f.url() + session_path);
      if (r.kind != "ended" || r.events == 0 || (expected_events && r.events != expected_events)) {
        std::fprintf(stderr, "relayd-fuzz: FAIL %s: %s after %zu events: %s\n", g_case,
                     r.kind.c_str(), r.events, r.message.c_str());
        return 1;
      }
      expected_events = r.events;
      replies[{minor, pacing}] = log->commands;
    }
  }

  const auto start = Clock::now();
  const size_t baseline = AllocatedBytes();
  size_t peak = baseline;
  std::map<std::string, size_t> outcomes;
  std::map<std::string, size_t> by_op;
  std::chrono::milliseconds worst_after_stop{0};
  size_t ran = 0, stopped = 0;
  const size_t first = o.only_case >= 0 ? static_cast<size_t>(o.only_case) : 0;
  const size_t end = o.only_case >= 0 ? first + 1 : o.cases;
  for (size_t k = first; k < end; ++k) {
    if (o.only_case < 0 &&
        std::chrono::duration<double>(Clock::now() - start).count() > o.budget_s) {
      break;
    }
    // Case k's randomness is its own: the same whatever ran before.
    std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ull + k);
    const uint32_t minor = kMinors[rng() % std::size(kMinors)];
    const size_t pacing = rng() % std::size(kPacings);
    const bool listing = rng() % 5 == 0;  // else a read
    Mutation m;
    m.op = static_cast<Op>(rng() % static_cast<size_t>(Op::kCount));
    // Which reply: any (listing: CONNECT, CREATE_SESSION, LIST_SESSIONS), or one the mutation
    // applies to.
    std::vector<size_t> at;
    const std::vector<uint32_t>& commands = replies[{minor, pacing}];
    for (size_t i = 0; i < (listing ? 3 : commands.size()); ++i) {
      const uint32_t c = commands[i];
      if (m.op == Op::kIndexLie && c != w::kGetNextIndex) continue;
      if (m.op == Op::kName && c != w::kAttachSession && c != w::kListSessions) continue;
      at.push_back(i);
    }
    if (at.empty()) at.push_back(0);
    m.at = at[rng() % at.size()];
    m.seed = rng();
    auto log = std::make_shared<MutationLog>();
    auto relayd = std::make_shared<TraceRelayd>(trace, session, minor, kPacings[pacing]);
    std::atomic<bool> watching{true};
    std::atomic<size_t> case_peak{AllocatedBytes()};
    std::thread watch([&] {
      while (watching) {
        case_peak = std::max(case_peak.load(), AllocatedBytes());
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
    std::snprintf(g_case, sizeof(g_case),
                  "case %zu (seed %llu, --case %zu): %s at 2.%u, pacing %zu, %s", k,
                  static_cast<unsigned long long>(o.seed), k, listing ? "list" : "read", minor,
                  pacing, OpName(m.op));
    Outcome r;
    {
      FakeRelayd f(Mutated(TraceRelayd::Serve(relayd), m, minor, log));
      r = listing ? ListCase(o, f.url()) : ReadCase(o, f.url() + session_path);
    }
    watching = false;
    watch.join();
    std::snprintf(g_case, sizeof(g_case),
                  "case %zu (seed %llu, --case %zu): %s at 2.%u, pacing %zu, %s", k,
                  static_cast<unsigned long long>(o.seed), k, listing ? "list" : "read", minor,
                  pacing, log->what.empty() ? OpName(m.op) : log->what.c_str());
    ++ran;
    ++by_op[OpName(m.op)];
    stopped += r.stopped;
    worst_after_stop = std::max(worst_after_stop, r.after_stop);
    std::string kind = r.kind;
    if (!r.message.empty()) kind += ": " + Shape(r.message);
    ++outcomes[kind];
    peak = std::max(peak, case_peak.load());
    if (o.verbose) {
      std::printf("%s -> %s%s%s (%zu events, %zu warnings)\n", g_case, r.kind.c_str(),
                  r.message.empty() ? "" : ": ", r.message.c_str(), r.events, r.warnings.size());
      std::fflush(stdout);
    }
    std::vector<std::string> lines = r.warnings;
    lines.push_back(r.message);
    for (const std::string& line : lines) {
      if (!OneLine(line, &why)) {
        std::fprintf(stderr, "relayd-fuzz: FAIL %s: a message %s: %s\n", g_case, why.c_str(),
                     PrintableMessage(line).c_str());
        return 1;
      }
    }
    if (case_peak.load() - std::min(case_peak.load(), baseline) > (o.max_memory_mb << 20)) {
      std::fprintf(stderr, "relayd-fuzz: FAIL %s: %zu MiB allocated, over the bound of %zu\n",
                   g_case, (case_peak.load() - baseline) >> 20, o.max_memory_mb);
      return 1;
    }
  }
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf(
      "relayd-fuzz: %zu cases (seed %llu) in %.1f s, none crashed, hung or ran away; %zu needed "
      "the stop (after %lld ms), each back within %lld ms of it; peak %zu MiB allocated over "
      "the baseline; reference: %zu events\n",
      ran, static_cast<unsigned long long>(o.seed), took, stopped,
      static_cast<long long>(o.stop_after.count()),
      static_cast<long long>(worst_after_stop.count()), (peak - std::min(peak, baseline)) >> 20,
      expected_events);
  std::printf("  mutations:");
  for (const auto& [op, n] : by_op) std::printf(" %s %zu", op.c_str(), n);
  std::printf("\n  outcomes:\n");
  for (const auto& [kind, n] : outcomes) std::printf("  %5zu  %s\n", n, kind.c_str());
  return 0;
}

}  // namespace
}  // namespace waitpath

int main(int argc, char** argv) {
  return waitpath::Main(argc, argv);
}
