#include "exporters/timeline_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <tuple>

#include "exporters/analysis_report.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

// Rough size of one recorded slice or flow once written, to stop recording early; the cap is
// checked exactly while writing.
constexpr size_t kBytesPerRecord = 200;

// Tracks of a host's CPUs get thread ids above any kernel tid (pid_max is at most 2^22), so
// that they never take a task's track; unique across hosts too.
constexpr int64_t kCpuTrackBase = int64_t{1} << 23;
int64_t CpuTrack(uint16_t host, uint16_t cpu, bool interrupts) {
  return kCpuTrackBase + (int64_t{host} << 13) + 2 * int64_t{cpu} + (interrupts ? 1 : 0);
}
// pid 0 is the idle task's in chrome://tracing's eyes: hosts start at 1.
int64_t HostPid(uint16_t host) {
  return int64_t{host} + 1;
}

std::string Quoted(std::string_view s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// chrome://tracing's reserved colour names (Perfetto colours by name instead).
std::string_view LeafColour(Leaf leaf) {
  switch (leaf) {
    case Leaf::kRunning:
      return "thread_state_running";
    case Leaf::kInterrupted:
    case Leaf::kPreempted:
      return "thread_state_runnable";
    case Leaf::kDisk:
      return "thread_state_iowait";
    case Leaf::kUnknown:
      return "thread_state_unknown";
    default:
      return "thread_state_sleeping";
  }
}

std::string_view KindName(CpuActivity::Kind kind) {
  switch (kind) {
    case CpuActivity::Kind::kTask:
      return "task";
    case CpuActivity::Kind::kIrq:
      return "irq";
    case CpuActivity::Kind::kSoftirq:
      return "softirq";
    case CpuActivity::Kind::kTimer:
      return "hrtimer";
    case CpuActivity::Kind::kIpi:
      return "ipi";
  }
  return "?";
}

// One trace event, kept with what orders it: time, then enclosing before enclosed (longer
// first, then the lower level), so that viewers nest equal-start slices the right way.
struct Line {
  int64_t ts;
  int64_t dur;
  int level;
  std::string json;
};

}  // namespace

TimelineWriter::TimelineWriter(WatchedAccounting& accounting, TimelineOptions options)
    : accounting_(accounting),
      engine_(accounting.engine()),
      options_(options),
      cpus_(options.window, options.max_bytes / kBytesPerRecord + 1) {
  accounting_.AddSink(this);
}

TimelineWriter::Who TimelineWriter::WhoIs(Utid u) const {
  if (u == kNoTask) return Who{0, -1, StringTable::Global().Intern("?")};
  const Task& t = engine_.tasks()[u];
  return Who{t.host, t.tid, t.comm};
}

void TimelineWriter::NoteThread(const Who& w) {
  const uint64_t key = (uint64_t{w.host} << 32) | static_cast<uint32_t>(w.tid);
  auto [it, inserted] = thread_index_.try_emplace(key, static_cast<uint32_t>(threads_.size()));
  if (inserted) {
    threads_.push_back(w);
  } else {
    threads_[it->second].comm = w.comm;  // the latest name (exec renames)
  }
}

bool TimelineWriter::Reserve(size_t bytes) {
  if (overflowed_) return false;
  estimated_bytes_ += bytes;
  if (estimated_bytes_ > options_.max_bytes) overflowed_ = true;
  return !overflowed_;
}

void TimelineWriter::OnAccounted(Utid u, int64_t from, int64_t to, const StateVec& states,
                                 std::span<const PathSegment> path) {
  (void)states;
  const TimelineWindow& window = cpus_.window();
  if (!window.Overlaps(from, to) || overflowed_) return;
  const Who track = WhoIs(u);
  NoteThread(track);
  // The pieces tile [from, to), except those the accounting could not place in time (its own
  // states from before its retained history, all starting at `from`): laid end to end.
  int64_t cursor = from;
  for (const PathSegment& p : path) {
    const int64_t start = std::max(p.start, cursor);
    const int64_t end = start + (p.end - p.start);
    cursor = end;
    const int64_t a = std::max(start, window.from), b = std::min(end, window.to);
    if (a >= b) continue;
    if (!Reserve(kBytesPerRecord)) {
      overflow_at_ = a;
      return;
    }
    states_.push_back(StateSlice{a, b, track, WhoIs(p.task == kNoTask ? u : p.task), p.leaf});
  }
}

void TimelineWriter::OnWatchedWait(const ResolvedWait& wait, std::span<const PathSegment> path) {
  const TimelineWindow& window = cpus_.window();
  if (wait.end - wait.start < options_.min_wait_ns || !window.Overlaps(wait.start, wait.end) ||
      overflowed_) {
    return;
  }
  if (!Reserve(kBytesPerRecord)) {
    overflow_at_ = wait.start;
    return;
  }
  const Who track = WhoIs(wait.task);
  NoteThread(track);
  Who waker{0, -1, 0};
  if ((wait.link.type == WaitLink::Type::kTask || wait.link.type == WaitLink::Type::kPacket) &&
      wait.link.task != kNoTask) {
    waker = WhoIs(wait.link.task);
  }
  waits_.push_back(WaitSlice{std::max(wait.start, window.from), std::min(wait.end, window.to),
                             wait.end - wait.start, track, waker,
                             std::string(WaitCauseName(wait.link))});
  // The path's hand-overs: where it moves up to a shallower task, the deeper one woke it; where
  // it moves from a task to the waiter's `network` at the same depth, that task sent the packet
  // the waiter receives at the piece's end. Arrows land on the watched task's track, on the
  // piece that starts there (or the wait's last piece, for the final wake-up), 1 ns inside it
  // so that no viewer binds them to the piece before.
  auto add = [&](Utid from, int64_t from_ts, int64_t to_ts, bool packet) {
    if (from == kNoTask || !window.Overlaps(from_ts, from_ts + 1) ||
        !window.Overlaps(to_ts, to_ts + 1) || !Reserve(2 * kBytesPerRecord)) {
      return;
    }
    const Task& t = engine_.tasks()[from];
    flows_.push_back(Flow{t.host, t.tid, from_ts, track, to_ts, packet});
  };
  for (size_t i = 0; i < path.size(); ++i) {
    const PathSegment& p = path[i];
    if (i + 1 == path.size()) {
      if (p.task != wait.task && p.depth > 0) {
        add(p.task, wait.end, wait.end - 1, false);
      } else if (wait.link.type == WaitLink::Type::kLeaf &&
                 window.Overlaps(wait.end, wait.end + 1) && Reserve(2 * kBytesPerRecord)) {
        // Woken from interrupt context (a timer, a disk completion...): from that interrupt.
        flows_.push_back(Flow{track.host, -1, wait.end, track, wait.end - 1, false});
      }
      break;
    }
    const PathSegment& q = path[i + 1];
    if (q.depth < p.depth && q.task != p.task && p.task != kNoTask) {
      add(p.task, p.end, q.end - q.start > 1 ? q.start + 1 : q.start, false);
    } else if (q.leaf == Leaf::kNetwork && q.depth == p.depth && q.task != p.task) {
      add(p.task, p.end, q.end - 1, true);
    }
  }
}

// What Write() builds: the trace events with what orders them, and how times and names are
// spelled in them.
struct TimelineWriter::Output {
  int64_t origin = 0;
  const std::vector<std::string>& hosts;
  std::vector<Line> lines;

  static std::string Micros(int64_t d) { return fmt::format("{}.{:03}", d / 1000, d % 1000); }
  std::string Us(int64_t t) const { return Micros(t - origin); }
  std::string HostName(uint16_t h) const {
    return h < hosts.size() ? hosts[h] : fmt::format("host {}", h);
  }
  static std::string Comm(uint32_t id) { return std::string(StringTable::Global().Get(id)); }
  std::string Name(const Who& w) const {
    return w.tid < 0 ? std::string("?")
                     : fmt::format("{} {}/{}", Comm(w.comm), HostName(w.host), w.tid);
  }
  void Meta(int64_t pid, int64_t tid, std::string_view what, const std::string& args) {
    lines.push_back(Line{std::numeric_limits<int64_t>::min(), 0, 0,
                         fmt::format(R"({{"ph":"M","pid":{},"tid":{},"name":"{}","args":{{{}}}}})",
                                     pid, tid, what, args)});
  }
};

int64_t TimelineWriter::Origin() const {
  // Times are written in microseconds from an origin (the window's start, or the first thing
  // drawn): absolute nanoseconds since the epoch do not fit a double's 53 bits.
  int64_t origin = cpus_.window().from;
  if (origin != std::numeric_limits<int64_t>::min()) return origin;
  origin = std::numeric_limits<int64_t>::max();
  for (const auto& s : cpus_.slices()) origin = std::min(origin, s.start);
  for (const auto& s : states_) origin = std::min(origin, s.start);
  return origin == std::numeric_limits<int64_t>::max() ? 0 : origin;
}

// Names and order of the tracks: per host a process; its CPUs first, then the watched tasks.
void TimelineWriter::DrawTracks(Output& o) const {
  std::vector<std::vector<bool>> cpu_seen;
  for (const auto& s : cpus_.slices()) {
    if (s.host >= cpu_seen.size()) cpu_seen.resize(s.host + 1u);
    if (s.cpu >= cpu_seen[s.host].size()) cpu_seen[s.host].resize(s.cpu + 1u);
    cpu_seen[s.host][s.cpu] = true;
  }
  std::vector<bool> host_seen(std::max(o.hosts.size(), cpu_seen.size()));
  for (uint16_t h = 0; h < cpu_seen.size(); ++h) host_seen[h] = true;
  for (const Who& t : threads_) {
    if (t.host >= host_seen.size()) host_seen.resize(t.host + 1u);
    host_seen[t.host] = true;
  }
  for (uint16_t h = 0; h < host_seen.size(); ++h) {
    if (!host_seen[h]) continue;
    o.Meta(HostPid(h), 0, "process_name", "\"name\":" + Quoted(o.HostName(h)));
    o.Meta(HostPid(h), 0, "process_sort_index", fmt::format("\"sort_index\":{}", h));
    for (uint16_t cpu = 0; h < cpu_seen.size() && cpu < cpu_seen[h].size(); ++cpu) {
      if (!cpu_seen[h][cpu]) continue;
      for (bool irq : {false, true}) {
        const int64_t tid = CpuTrack(h, cpu, irq);
        o.Meta(HostPid(h), tid, "thread_name",
               "\"name\":" + Quoted(fmt::format("CPU {}{}", cpu, irq ? " interrupts" : "")));
        o.Meta(HostPid(h), tid, "thread_sort_index",
               fmt::format("\"sort_index\":{}", 2 * cpu + irq));
      }
    }
  }
  for (const Who& t : threads_) {
    o.Meta(HostPid(t.host), t.tid, "thread_name", "\"name\":" + Quoted(Output::Comm(t.comm)));
    o.Meta(HostPid(t.host), t.tid, "thread_sort_index",
           fmt::format("\"sort_index\":{}", 1'000'000 + t.tid));
  }
}

void TimelineWriter::DrawCpus(Output& o) const {
  for (const auto& s : cpus_.slices()) {
    const bool task = s.kind == CpuActivity::Kind::kTask;
    o.lines.push_back(Line{
        s.start, s.end - s.start, 0,
        fmt::format(
            R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"cat":"{}","args":{{{}}}}})",
            HostPid(s.host), CpuTrack(s.host, s.cpu, !task), o.Us(s.start),
            Output::Micros(s.end - s.start), Quoted(Output::Comm(s.name)),
            task ? "cpu" : "interrupt",
            task ? fmt::format("\"tid\":{}", s.tid)
                 : fmt::format("\"kind\":\"{}\",\"over_tid\":{}", KindName(s.kind), s.tid))});
  }
}

void TimelineWriter::DrawWatched(Output& o) const {
  for (const WaitSlice& w : waits_) {
    std::string name = fmt::format("wait {:.3f} ms ({})", w.duration / 1e6, w.cause);
    std::string args = fmt::format(R"("cause":"{}","duration_ns":{})", w.cause, w.duration);
    if (w.waker.tid >= 0) {
      name += " woken by " + Output::Comm(w.waker.comm);
      args += ",\"waker\":" + Quoted(o.Name(w.waker));
    }
    o.lines.push_back(Line{
        w.start, w.end - w.start, 0,
        fmt::format(
            R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"cat":"wait","cname":"terrible","args":{{{}}}}})",
            HostPid(w.track.host), w.track.tid, o.Us(w.start), Output::Micros(w.end - w.start),
            Quoted(name), args)});
  }
  for (const StateSlice& s : states_) {
    const bool own = s.on.host == s.track.host && s.on.tid == s.track.tid;
    const std::string_view leaf = LeafName(s.leaf);
    const std::string name =
        own ? std::string(leaf) : fmt::format("{} · {}", leaf, Output::Comm(s.on.comm));
    o.lines.push_back(Line{
        s.start, s.end - s.start, 1,
        fmt::format(
            R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"cat":"state","cname":"{}","args":{{"state":"{}","on":{}}}}})",
            HostPid(s.track.host), s.track.tid, o.Us(s.start), Output::Micros(s.end - s.start),
            Quoted(name), LeafColour(s.leaf), leaf, Quoted(o.Name(s.on)))});
  }
}

// A flow starts on the CPU where its task (or, from interrupt context, an interrupt) ran at
// that time, found after the fact (the CPU slice closes later); dropped when there is none.
void TimelineWriter::DrawFlows(Output& o) const {
  uint64_t id = 0;
  for (const Flow& f : flows_) {
    const bool from_interrupt = f.from_tid < 0;
    const CpuActivity::Slice* ran = from_interrupt
                                        ? cpus_.InterruptAt(f.from_host, f.from_ts)
                                        : cpus_.RanAt(f.from_host, f.from_tid, f.from_ts);
    if (!ran) continue;
    // Inside the slice, not on its edge, where a viewer could bind it to a neighbour.
    const int64_t from_ts = std::max(ran->start, std::min(f.from_ts, ran->end - 1));
    ++id;
    const std::string_view name = f.packet ? "packet" : "wake-up";
    o.lines.push_back(Line{
        from_ts, 0, 2,
        fmt::format(R"({{"ph":"s","id":{},"pid":{},"tid":{},"ts":{},"name":"{}","cat":"path"}})",
                    id, HostPid(f.from_host), CpuTrack(f.from_host, ran->cpu, from_interrupt),
                    o.Us(from_ts), name)});
    o.lines.push_back(Line{
        f.to_ts, 0, 2,
        fmt::format(
            R"({{"ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{},"name":"{}","cat":"path"}})",
            id, HostPid(f.to.host), f.to.tid, o.Us(f.to_ts), name)});
  }
}

bool TimelineWriter::Write(std::ostream& out, std::string* error) {
  cpus_.Finish();
  const size_t cap_mb = options_.max_bytes >> 20;
  if (overflowed_ || cpus_.overflowed()) {
    *error = fmt::format(
        "--timeline: the timeline would be larger than --timeline-max-mb {} (recording stopped "
        "{}); give a narrower --from/--to or a larger --timeline-max-mb",
        cap_mb,
        overflowed_ ? fmt::format("{:.3f} s after the first event",
                                  static_cast<double>(overflow_at_ - cpus_.first_ts()) / 1e9)
                    : std::string("in the CPU tracks"));
    return false;
  }
  Output o{Origin(), accounting_.hosts(), {}};
  DrawTracks(o);
  DrawCpus(o);
  DrawWatched(o);
  DrawFlows(o);
  std::stable_sort(o.lines.begin(), o.lines.end(), [](const Line& a, const Line& b) {
    return std::tie(a.ts, b.dur, a.level) < std::tie(b.ts, a.dur, b.level);
  });
  size_t bytes = 0;
  for (const Line& l : o.lines) bytes += l.json.size() + 2;
  if (bytes > options_.max_bytes) {
    *error = fmt::format(
        "--timeline: the timeline would be {} MB, larger than --timeline-max-mb {}; give a "
        "narrower --from/--to or a larger --timeline-max-mb",
        (bytes + (1u << 20) - 1) >> 20, cap_mb);
    return false;
  }
  const std::vector<std::string>& hosts = accounting_.hosts();
  const std::string reference = !reference_.empty() ? reference_
                                : hosts.empty()     ? std::string("?")
                                                    : hosts[0];
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"waitpath\",\"origin_ns\":\""
      << o.origin << "\",\"clock\":" << Quoted("reference host " + reference) << "},\n"
      << "\"traceEvents\":[\n";
  for (size_t i = 0; i < o.lines.size(); ++i)
    out << o.lines[i].json << (i + 1 < o.lines.size() ? ",\n" : "\n");
  out << "]}\n";
  return true;
}

}  // namespace waitpath
