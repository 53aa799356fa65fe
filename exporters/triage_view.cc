#include "exporters/triage_view.h"

#include <fmt/format.h>

#include <algorithm>

#include "exporters/shown_name.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

// Floor division: stream times may be negative (perf's boot clock is not, but a transform
// to another host's clock can be).
int64_t SecondOf(int64_t ts) {
  return ts >= 0 ? ts / kSecond : -((-ts + kSecond - 1) / kSecond);
}

// TriageWait and TriageRequest alike.
template <class T>
bool Slower(const T& a, const T& b) {
  return a.duration != b.duration ? a.duration > b.duration : a.end < b.end;
}

// Keeps the `cap` slowest in a min-heap on "slower": its front is the fastest kept, the
// first to go.
template <class T>
void Keep(std::vector<T>& heap, size_t cap, T w) {
  auto cmp = [](const T& a, const T& b) { return Slower(a, b); };
  if (heap.size() < cap) {
    heap.push_back(std::move(w));
    std::push_heap(heap.begin(), heap.end(), cmp);
  } else if (Slower(w, heap.front())) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    heap.back() = std::move(w);
    std::push_heap(heap.begin(), heap.end(), cmp);
  }
}

// Whether `d` would make it into a heap of at most `cap`.
template <class T>
bool WouldKeep(const std::vector<T>& heap, size_t cap, int64_t d) {
  return heap.size() < cap || d > heap.front().duration;
}

}  // namespace

void TriageProcess::Add(const TriageProcess& other) {
  states += other.states;
  waits += other.waits;
  waited_ns += other.waited_ns;
  untraced_waits += other.untraced_waits;
  untraced_ns += other.untraced_ns;
  for_work_waits += other.for_work_waits;
  for_work_ns += other.for_work_ns;
}

TriageView::TriageView(WatchedAccounting& accounting, TriageOptions options)
    : accounting_(accounting), engine_(accounting.engine()), options_(options) {
  options_.window_ns = std::clamp<int64_t>(options_.window_ns, kSecond,
                                           static_cast<int64_t>(kSeconds - 2) * kSecond);
  accounting_.AddSink(this);
}

TriageView::Second& TriageView::BucketOf(int64_t ts) {
  const int64_t index = SecondOf(ts);
  Second& s = seconds_[static_cast<size_t>(
      ((index % static_cast<int64_t>(kSeconds)) + static_cast<int64_t>(kSeconds)) %
      static_cast<int64_t>(kSeconds))];
  if (s.index != index) {
    s.index = index;
    s.slowest.clear();
    s.requests.clear();
    for (TriageProcess& p : s.processes) p = TriageProcess{};
  }
  return s;
}

bool TriageView::InWindow(const Second& s) const {
  if (s.index == INT64_MIN || now_ == INT64_MIN) return false;
  const int64_t last = SecondOf(now_);
  const int64_t seconds = (options_.window_ns + kSecond - 1) / kSecond;
  return s.index <= last && s.index > last - seconds;
}

uint32_t TriageView::RowOf(Utid u) {
  const Task& t = engine_.tasks()[u];
  const uint64_t key = static_cast<uint64_t>(t.host) << 32 | t.comm;
  auto it = rows_.find(key);
  if (it != rows_.end()) return it->second;
  uint32_t row;
  if (totals_.size() < options_.max_processes) {
    row = static_cast<uint32_t>(totals_.size());
    const std::string& host =
        t.host < accounting_.hosts().size() ? accounting_.hosts()[t.host] : std::string("?");
    totals_.push_back(TriageProcess{
        fmt::format("{}/{}", host, ShownComm(StringTable::Global().Get(t.comm))), {}, 0, 0, 0, 0});
  } else {
    // Past the cap every new process shares the last row, named for it.
    if (totals_.size() == options_.max_processes) totals_.push_back(TriageProcess{"(other)"});
    row = static_cast<uint32_t>(options_.max_processes);
  }
  rows_.emplace(key, row);
  return row;
}

void TriageView::OnAccounted(Utid u, int64_t from, int64_t to, const StateVec& states,
                             std::span<const PathSegment> path) {
  (void)from;
  (void)path;
  now_ = std::max(now_, to);
  const uint32_t row = RowOf(u);
  totals_[row].states += states;
  // A piece counts in the second it ended (pieces end at waits, usually well under a second).
  Second& s = BucketOf(to);
  if (s.processes.size() <= row) s.processes.resize(row + 1u);
  s.processes[row].states += states;
}

void TriageView::OnWatchedWait(const ResolvedWait& wait, std::span<const PathSegment> path) {
  ++waits_seen_;
  now_ = std::max(now_, wait.end);
  const int64_t d = wait.end - wait.start;
  const uint32_t row = RowOf(wait.task);
  Second& s = BucketOf(wait.end);
  if (s.processes.size() <= row) s.processes.resize(row + 1u);
  TriageProcess& p = s.processes[row];
  TriageProcess& total = totals_[row];
  ++p.waits;
  ++total.waits;
  p.waited_ns += d;
  total.waited_ns += d;
  if (IsUntracedPeerWait(wait)) {
    // Idle, not slow: counted apart, never among the slowest.
    ++p.untraced_waits;
    ++total.untraced_waits;
    p.untraced_ns += d;
    total.untraced_ns += d;
    return;
  }
  if (wait.link.for_work) {
    // A server awaiting its next request: idle too, whatever its client did meanwhile.
    ++p.for_work_waits;
    ++total.for_work_waits;
    p.for_work_ns += d;
    total.for_work_ns += d;
    return;
  }
  if (d < options_.min_wait_ns) return;
  // Only a wait that could be shown pays for its headline and names.
  const bool could_show = WouldKeep(s.slowest, options_.slowest_per_second, d) ||
                          WouldKeep(slowest_ever_, options_.slowest_per_second, d);
  if (!could_show) return;
  const WaitHeadline h = HeadlineOf(wait, path);
  if (options_.states != 0 && !(options_.states & (1u << static_cast<int>(h.leaf)))) return;
  ++waits_shown_;
  const Task& t = engine_.tasks()[wait.task];
  const Task& where = engine_.tasks()[h.where];
  auto host = [this](uint16_t id) -> std::string_view {
    return id < accounting_.hosts().size() ? std::string_view(accounting_.hosts()[id]) : "?";
  };
  TriageWait w;
  w.end = wait.end;
  w.duration = d;
  w.leaf = h.leaf;
  w.who =
      fmt::format("{}/{} {}", host(t.host), ShownComm(StringTable::Global().Get(t.comm)), t.tid);
  w.where =
      fmt::format("{}/{}", host(where.host), ShownComm(StringTable::Global().Get(where.comm)));
  w.headline = FormatHeadline(h, w.where);
  Keep(slowest_ever_, options_.slowest_per_second, w);
  Keep(s.slowest, options_.slowest_per_second, std::move(w));
}

void TriageView::OnSpan(const ResolvedSpan& span) {
  // A request is a root span: a child's time is already in its request's path (across hosts,
  // when the context travelled with the request), so listing it too would say it twice.
  if (span.span.ids.parent != 0) return;
  ++requests_seen_;
  now_ = std::max(now_, span.end);
  const int64_t d = span.end - span.start;
  Second& s = BucketOf(span.end);
  if (!WouldKeep(s.requests, options_.slowest_per_second, d) &&
      !WouldKeep(requests_ever_, options_.slowest_per_second, d)) {
    return;
  }
  // The headline reads a span as a wait: its breakdown and the path that tiles it. Its link
  // says nothing (it is no wake-up), so it never reads as an untraced peer.
  ResolvedWait as_wait{};
  as_wait.task = span.task;
  as_wait.start = span.start;
  as_wait.end = span.end;
  as_wait.link.type = WaitLink::Type::kNone;
  as_wait.breakdown = span.breakdown;
  const WaitHeadline h = HeadlineOf(as_wait, span.path);
  auto host = [this](uint16_t id) -> std::string_view {
    return id < accounting_.hosts().size() ? std::string_view(accounting_.hosts()[id]) : "?";
  };
  const Task& where = engine_.tasks()[h.where == kNoTask ? span.task : h.where];
  TriageRequest r;
  r.end = span.end;
  r.duration = d;
  r.operation = fmt::format(
      "{}:{}", host(span.span.host),
      span.span.name == ~0u ? std::string_view("?") : StringTable::Global().Get(span.span.name));
  r.headline = FormatHeadline(
      h, fmt::format("{}/{}", host(where.host), ShownComm(StringTable::Global().Get(where.comm))));
  Keep(requests_ever_, options_.slowest_per_second, r);
  Keep(s.requests, options_.slowest_per_second, std::move(r));
}

std::vector<TriageRequest> TriageView::SlowestRequests(size_t n, bool recent) const {
  std::vector<TriageRequest> out;
  if (recent) {
    for (const Second& s : seconds_) {
      if (InWindow(s)) out.insert(out.end(), s.requests.begin(), s.requests.end());
    }
  } else {
    out = requests_ever_;
  }
  std::sort(out.begin(), out.end(), Slower<TriageRequest>);
  if (out.size() > n) out.resize(n);
  return out;
}

std::vector<TriageWait> TriageView::Slowest(size_t n, bool recent) const {
  std::vector<TriageWait> out;
  if (recent) {
    for (const Second& s : seconds_) {
      if (InWindow(s)) out.insert(out.end(), s.slowest.begin(), s.slowest.end());
    }
  } else {
    out = slowest_ever_;
  }
  std::sort(out.begin(), out.end(), Slower<TriageWait>);
  // A thread that waits the same way again and again (a poller, a periodic job) is one row
  // with its count, so that the rows left name different things to look at.
  std::vector<TriageWait> folded;
  for (TriageWait& w : out) {
    auto same = std::find_if(folded.begin(), folded.end(), [&w](const TriageWait& f) {
      return f.leaf == w.leaf && f.who == w.who && f.where == w.where;
    });
    if (same != folded.end()) {
      ++same->count;
    } else if (folded.size() < n) {
      folded.push_back(std::move(w));
    }
  }
  return folded;
}

std::vector<TriageProcess> TriageView::Processes(bool recent) const {
  std::vector<TriageProcess> out;
  if (recent) {
    out.resize(totals_.size());
    for (size_t row = 0; row < totals_.size(); ++row) out[row].name = totals_[row].name;
    for (const Second& s : seconds_) {
      if (!InWindow(s)) continue;
      for (size_t row = 0; row < s.processes.size() && row < out.size(); ++row)
        out[row].Add(s.processes[row]);
    }
  } else {
    out = totals_;
  }
  std::erase_if(out, [](const TriageProcess& p) { return p.states.total() == 0 && p.waits == 0; });
  std::sort(out.begin(), out.end(), [](const TriageProcess& a, const TriageProcess& b) {
    const int64_t ta = a.states.total(), tb = b.states.total();
    return ta != tb ? ta > tb : a.name < b.name;
  });
  return out;
}

}  // namespace waitpath
