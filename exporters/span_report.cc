#include "exporters/span_report.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "exporters/analysis_report.h"
#include "exporters/shown_name.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

using Json = nlohmann::ordered_json;

// The p-th percentile (nearest rank) of sorted values.
int64_t Percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(sorted.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

std::vector<std::pair<std::string, int64_t>> Top(const std::map<std::string, int64_t>& m,
                                                 size_t n) {
  std::vector<std::pair<std::string, int64_t>> v(m.begin(), m.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (v.size() > n) v.resize(n);
  return v;
}

// A span's operation name ("?" when its event carried none).
std::string OperationOf(uint32_t name) {
  return name == ~0u ? std::string("?") : std::string(StringTable::Global().Get(name));
}

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

std::string SpanIdHex(uint64_t id) {
  return fmt::format("{:016x}", id);
}
std::string TraceIdHex(const SpanIds& ids) {
  return fmt::format("{:016x}{:016x}", ids.trace_hi, ids.trace_lo);
}

std::vector<std::pair<Utid, StateVec>> SpanTimeByTask(const ResolvedSpan& span) {
  std::vector<std::pair<Utid, StateVec>> by_task;
  for (const PathSegment& p : span.path) {
    const Utid u = p.task == kNoTask ? span.task : p.task;
    auto it =
        std::find_if(by_task.begin(), by_task.end(), [&](const auto& b) { return b.first == u; });
    if (it == by_task.end()) it = by_task.insert(by_task.end(), {u, StateVec{}});
    it->second[p.leaf] += p.end - p.start;
  }
  std::stable_sort(by_task.begin(), by_task.end(), [](const auto& a, const auto& b) {
    return a.second.total() > b.second.total();
  });
  return by_task;
}

nlohmann::ordered_json SpanRecordJson(const Engine& engine, const std::vector<std::string>& hosts,
                                      const ResolvedSpan& span, size_t top) {
  const Task& t = engine.tasks()[span.task];
  Json j;
  j["type"] = "span";
  j["trace_id"] = TraceIdHex(span.span.ids);
  j["span_id"] = SpanIdHex(span.span.span_id);
  j["parent"] = span.span.ids.parent ? Json(SpanIdHex(span.span.ids.parent)) : Json(nullptr);
  j["name"] = OperationOf(span.span.name);
  j["host"] = hosts[t.host];
  j["tid"] = t.tid;
  j["pid"] = t.pid < 0 ? t.tid : t.pid;
  j["comm"] = StringTable::Global().Get(t.comm);
  j["start_ns"] = span.start;
  j["end_ns"] = span.end;
  j["duration_ns"] = span.end - span.start;
  j["handoffs"] = span.handoffs;
  if (span.end_task != span.task && span.end_task != kNoTask) {
    j["end_tid"] = engine.tasks()[span.end_task].tid;
  }
  j["breakdown_ns"] = StatesJson(span.breakdown, false);
  const std::vector<std::pair<Utid, StateVec>> by_task = SpanTimeByTask(span);
  Json list = Json::array();
  for (size_t i = 0; i < by_task.size() && i < top; ++i) {
    const Task& w = engine.tasks()[by_task[i].first];
    list.push_back(Json{{"host", hosts[w.host]},
                        {"tid", w.tid},
                        {"comm", StringTable::Global().Get(w.comm)},
                        {"ns", by_task[i].second.total()},
                        {"states", StatesJson(by_task[i].second, true)}});
  }
  j["by_task"] = std::move(list);
  Json blocked = Json::array();
  for (size_t i = 0; i < span.blocked_by.size() && i < top; ++i) {
    const SpanBlocker& b = span.blocked_by[i];
    blocked.push_back(Json{{"span_id", SpanIdHex(b.span.span_id)},
                           {"trace_id", TraceIdHex(b.span.ids)},
                           {"operation", OperationOf(b.span.name)},
                           {"host", hosts[b.span.host]},
                           {"ns", b.ns}});
  }
  j["blocked_by"] = std::move(blocked);
  return j;
}

SpanReport::SpanReport(const Engine& engine, const std::vector<std::string>& host_names,
                       SpanReportOptions options, std::ostream& out)
    : engine_(engine), hosts_(host_names), options_(std::move(options)), out_(out) {
  if (!options_.operation.empty()) operation_re_ = std::make_unique<RE2>(options_.operation);
}

SpanReport::~SpanReport() = default;

bool SpanReport::CheckOperation(const std::string& pattern, std::string* error) {
  if (pattern.size() > 1024) {
    *error = "--operation: patterns longer than 1024 characters are refused";
    return false;
  }
  RE2 re(pattern, RE2::Quiet);
  if (!re.ok()) {
    *error = "--operation: " + re.error();
    return false;
  }
  return true;
}

std::string SpanReport::Who(Utid u) const {
  if (u == kNoTask) return "?";
  const Task& t = engine_.tasks()[u];
  return fmt::format("{}/{}", hosts_[t.host], ShownComm(StringTable::Global().Get(t.comm)));
}

void SpanReport::OnSpan(const ResolvedSpan& span) {
  ++seen_;
  const std::string op = OperationOf(span.span.name);
  const int64_t duration = span.end - span.start;
  const std::vector<std::pair<Utid, StateVec>> by_task = SpanTimeByTask(span);

  std::pair<std::string, std::string> key{hosts_[span.span.host], op};
  if (operations_.size() >= kMaxOperations && !operations_.count(key)) key.second = "other";
  OperationStats& o = operations_[key];
  ++o.spans;
  o.total_ns += duration;
  if (o.durations.size() < kMaxSamples) {
    o.durations.push_back(duration);
  } else {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    if (const uint64_t k = rng_ % o.spans; k < kMaxSamples) o.durations[k] = duration;
  }
  o.breakdown += span.breakdown;
  for (const auto& [u, states] : by_task) o.by_task[Who(u)] += states.total();
  for (const SpanBlocker& b : span.blocked_by) {
    o.blocked_by[fmt::format("{}:{}", hosts_[b.span.host], OperationOf(b.span.name))] += b.ns;
  }

  if (!options_.records || duration < options_.min_span_ns) return;
  if (operation_re_ && !RE2::FullMatch(op, *operation_re_)) return;
  ++written_;
  const Task& t = engine_.tasks()[span.task];
  if (options_.json) {
    out_ << Dump(SpanRecordJson(engine_, hosts_, span, options_.top)) << '\n';
    return;
  }
  // As a wait line of `tail`: when it ended, what, where, how long, and where the time went.
  fmt::print(out_, "{} span {} {} {}/{} {:.3f} ms: {}\n",
             FormatTime(span.end, options_.time_format), SpanIdHex(span.span.span_id), op,
             hosts_[t.host], t.tid, static_cast<double>(duration) / 1e6,
             Shares(span.breakdown, duration));
  for (size_t i = 0; i < by_task.size() && i < options_.top; ++i) {
    fmt::print(
        out_, "  {:>5.1f}%  {}\n",
        100.0 * static_cast<double>(by_task[i].second.total()) / static_cast<double>(duration),
        Who(by_task[i].first));
  }
  for (size_t i = 0; i < span.blocked_by.size() && i < options_.top; ++i) {
    const SpanBlocker& b = span.blocked_by[i];
    fmt::print(out_, "  blocked by span {} {} ({}): {:.3f} ms\n", SpanIdHex(b.span.span_id),
               OperationOf(b.span.name), hosts_[b.span.host], static_cast<double>(b.ns) / 1e6);
  }
}

void SpanReport::OnIdle(Utid u, int64_t from, int64_t to, const StateVec& states) {
  (void)from, (void)to;
  const Task& t = engine_.tasks()[u];
  IdleThread& i = idle_[{t.host, t.tid}];
  i.who = fmt::format("{}/{}", Who(u), t.tid);
  i.states += states;
}

void SpanReport::Finish() {
  if (options_.summary) WriteSummary();
}

void SpanReport::WriteSummary() {
  const SpanCounters& c = engine_.spans().counters();
  if (c.begun == 0 && c.unmatched_ends == 0 && c.unmatched_handoffs == 0 && c.without_thread == 0)
    return;
  for (auto& [key, o] : operations_) std::sort(o.durations.begin(), o.durations.end());
  if (options_.json) {
    for (const auto& [key, o] : operations_) {
      Json j;
      j["type"] = "operation";
      j["host"] = key.first;
      j["name"] = key.second;
      j["spans"] = o.spans;
      j["p50_ns"] = Percentile(o.durations, 50);
      j["p99_ns"] = Percentile(o.durations, 99);
      j["breakdown_ns"] = StatesJson(o.breakdown, false);
      Json tasks = Json::array();
      for (const auto& [who, ns] : Top(o.by_task, options_.top))
        tasks.push_back(Json{{"task", who}, {"ns", ns}});
      j["by_task"] = std::move(tasks);
      Json blocked = Json::array();
      for (const auto& [what, ns] : Top(o.blocked_by, options_.top))
        blocked.push_back(Json{{"operation", what}, {"ns", ns}});
      j["blocked_by"] = std::move(blocked);
      out_ << Dump(j) << '\n';
    }
    for (const auto& [key, i] : idle_) {
      Json j;
      j["type"] = "span_idle";
      j["host"] = hosts_[key.first];
      j["tid"] = key.second;
      j["task"] = i.who;
      j["breakdown_ns"] = StatesJson(i.states, false);
      out_ << Dump(j) << '\n';
    }
    Json j;
    j["type"] = "span_input";
    j["begun"] = c.begun;
    j["ended"] = c.ended;
    j["open_at_end"] = engine_.spans().open();
    j["unmatched_ends"] = c.unmatched_ends;
    j["unmatched_handoffs"] = c.unmatched_handoffs;
    j["reused_ids"] = c.reused_ids;
    j["dropped_full"] = c.dropped_full;
    j["thread_ended"] = c.thread_ended;
    j["without_thread"] = c.without_thread;
    out_ << Dump(j) << '\n';
    return;
  }
  fmt::print(out_, "requests (spans) by operation:\n");
  for (const auto& [key, o] : operations_) {
    const int64_t total = o.total_ns;
    fmt::print(out_, "  {} on {}: {} spans, p50 {:.3f} ms, p99 {:.3f} ms\n", key.second, key.first,
               o.spans, static_cast<double>(Percentile(o.durations, 50)) / 1e6,
               static_cast<double>(Percentile(o.durations, 99)) / 1e6);
    fmt::print(out_, "    breakdown: {}\n", Shares(o.breakdown, total));
    for (const auto& [who, ns] : Top(o.by_task, std::min<size_t>(options_.top, 5))) {
      fmt::print(out_, "    {:>5.1f}%  {}\n",
                 100.0 * static_cast<double>(ns) / static_cast<double>(total), who);
    }
    for (const auto& [what, ns] : Top(o.blocked_by, std::min<size_t>(options_.top, 5))) {
      fmt::print(out_, "    blocked by {}: {:.1f}%\n", what,
                 100.0 * static_cast<double>(ns) / static_cast<double>(total));
    }
  }
  for (const auto& [key, i] : idle_) {
    fmt::print(out_, "  idle (outside spans) {}: {:.3f} ms: {}\n", i.who,
               static_cast<double>(i.states.total()) / 1e6, Shares(i.states, i.states.total()));
  }
  fmt::print(out_,
             "  span input: {} begun, {} ended, {} open at the end, {} ends and {} handoffs "
             "without a begin, {} ids reused, {} dropped (too many open), {} in threads that "
             "ended, {} without a thread context\n",
             c.begun, c.ended, engine_.spans().open(), c.unmatched_ends, c.unmatched_handoffs,
             c.reused_ids, c.dropped_full, c.thread_ended, c.without_thread);
}

}  // namespace waitpath
