#include "exporters/analysis_report.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <ctime>
#include <iterator>
#include <nlohmann/json.hpp>

#include "live/string_table.h"

namespace waitpath {
namespace {

using Json = nlohmann::ordered_json;

Json StatesJson(const StateVec& v) {
  Json j = Json::object();
  for (int i = 0; i < kLeafCount; ++i) j[std::string(LeafName(static_cast<Leaf>(i)))] = v.ns[i];
  return j;
}

std::string_view CauseName(const WaitLink& link) {
  switch (link.type) {
    case WaitLink::Type::kTask: return "task";
    case WaitLink::Type::kPacket: return "network";
    case WaitLink::Type::kLeaf: return LeafName(link.leaf);
    case WaitLink::Type::kNone:
    case WaitLink::Type::kPending: return "blocked";
    case WaitLink::Type::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string Shares(const StateVec& v, int64_t total) {
  std::string s;
  for (int i = 0; i < kLeafCount; ++i) {
    if (v.ns[i] <= 0 || total <= 0) continue;
    s += fmt::format("{}{} {:.1f}%", s.empty() ? "" : ", ", LeafName(static_cast<Leaf>(i)), 100.0 * v.ns[i] / total);
  }
  return s.empty() ? "-" : s;
}

}  // namespace

AnalysisReport::AnalysisReport(Engine& engine, std::vector<std::string> host_names, WatchSet watch,
                               AnalysisOptions options, std::ostream& out)
    : engine_(engine), hosts_(std::move(host_names)), watch_(std::move(watch)), options_(options), out_(out) {}

bool AnalysisReport::Watched(Utid u) const {
  const Task& t = engine_.tasks()[u];
  const std::string_view host = t.host < hosts_.size() ? std::string_view(hosts_[t.host]) : std::string_view();
  return watch_.Matches(host, t.tid, t.pid < 0 ? t.tid : t.pid, StringTable::Global().Get(t.comm));
}

// The fields every record starts with: its type and the task it is about.
nlohmann::ordered_json AnalysisReport::Record(std::string_view type, Utid u) const {
  const Task& t = engine_.tasks()[u];
  Json j;
  j["type"] = type;
  j["host"] = hosts_[t.host];
  j["tid"] = t.tid;
  j["pid"] = t.pid < 0 ? t.tid : t.pid;
  j["comm"] = TaskName(u);
  return j;
}

std::string AnalysisReport::TaskName(Utid u) const {
  if (u == kNoTask) return "?";
  return std::string(StringTable::Global().Get(engine_.tasks()[u].comm));
}

const std::string& AnalysisReport::HostJson(uint16_t host) {
  if (host >= host_json_.size()) host_json_.resize(hosts_.size());
  std::string& j = host_json_[host];
  if (j.empty()) j = Json(hosts_[host]).dump(-1, ' ', false, Json::error_handler_t::replace);
  return j;
}

const std::string& AnalysisReport::TaskJson(Utid u, bool with_pid) {
  const Task& t = engine_.tasks()[u];
  if (u >= task_json_.size()) task_json_.resize(u + 1u);
  TaskJsonCache& c = task_json_[u];
  if (c.comm != t.comm || c.pid != t.pid || c.with_pid.empty()) {
    c.comm = t.comm;
    c.pid = t.pid;
    const std::string comm = Json(TaskName(u)).dump(-1, ' ', false, Json::error_handler_t::replace);
    const std::string& host = HostJson(t.host);
    c.with_pid = fmt::format(R"("host":{},"tid":{},"pid":{},"comm":{})", host, t.tid, t.pid < 0 ? t.tid : t.pid, comm);
    c.without_pid = fmt::format(R"("host":{},"tid":{},"comm":{})", host, t.tid, comm);
  }
  return with_pid ? c.with_pid : c.without_pid;
}

void AnalysisReport::AddPieces(Tracked& t, Utid self, const std::vector<PathSegment>& pieces) {
  for (const PathSegment& p : pieces) {
    t.by_task[p.task == kNoTask ? self : p.task].states[p.leaf] += p.end - p.start;
  }
}

void AnalysisReport::OnWait(const ResolvedWait& wait) {
  if (!Watched(wait.task)) return;
  auto [it, inserted] = tracked_.try_emplace(wait.task);
  Tracked& t = it->second;
  if (inserted) {
    t.from = wait.start;
    t.from_cum = wait.cum_start;
  }
  scratch_.clear();
  engine_.resolver().Expand(wait.task, wait.start, wait.end, &scratch_);
  t.waits += wait.breakdown;
  AddPieces(t, wait.task, scratch_);
  if (options_.min_wait_ns >= 0 && wait.end - wait.start >= options_.min_wait_ns) WriteWait(wait, scratch_);
}

void AnalysisReport::WriteWait(const ResolvedWait& wait, const std::vector<PathSegment>& pieces) {
  const Task& t = engine_.tasks()[wait.task];
  if (options_.json) {
    // Written directly rather than through a json object: one record per wait (tail prints
    // every one), and building the object was a quarter of a live process's CPU time. The
    // bytes are those nlohmann's dump() gave (same keys, order and escaping).
    auto out = std::back_inserter(line_);
    line_.clear();
    fmt::format_to(out, "{{\"type\":\"wait\",{},\"start_ns\":{},\"end_ns\":{},\"duration_ns\":{},\"cause\":\"{}\"",
                   TaskJson(wait.task, true), wait.start, wait.end, wait.end - wait.start, CauseName(wait.link));
    if ((wait.link.type == WaitLink::Type::kTask || wait.link.type == WaitLink::Type::kPacket) &&
        wait.link.task != kNoTask) {
      fmt::format_to(out, ",\"waker\":{{{}}}", TaskJson(wait.link.task, false));
    }
    line_ += ",\"breakdown_ns\":{";
    for (int i = 0; i < kLeafCount; ++i) {
      fmt::format_to(out, "{}\"{}\":{}", i ? "," : "", LeafName(static_cast<Leaf>(i)), wait.breakdown.ns[i]);
    }
    line_ += "},\"path\":[";
    for (size_t i = 0; i < pieces.size(); ++i) {
      const PathSegment& p = pieces[i];
      fmt::format_to(out, "{}{{{},\"state\":\"{}\",\"start_ns\":{},\"end_ns\":{}}}", i ? "," : "",
                     p.task == kNoTask ? std::string_view(R"("host":"","tid":-1,"comm":"?")")
                                       : std::string_view(TaskJson(p.task, false)),
                     LeafName(p.leaf), p.start, p.end);
    }
    line_ += "]}\n";
    out_ << line_;
    return;
  }
  const int64_t d = wait.end - wait.start;
  // One line per wait, then its path as a tree: each task the path went through, indented by
  // how many wake-ups led to it, with the time spent there per state.
  const time_t secs = static_cast<time_t>(wait.end / 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  fmt::print(out_, "{:02}:{:02}:{:02}.{:06} {} {}/{} waited {:.3f} ms ({}): {}\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
             (wait.end % 1000000000) / 1000, TaskName(wait.task), hosts_[t.host], t.tid, d / 1e6, CauseName(wait.link),
             Shares(wait.breakdown, d));
  for (size_t i = 0; i < pieces.size();) {
    size_t j = i;
    StateVec here;
    while (j < pieces.size() && pieces[j].task == pieces[i].task && pieces[j].depth == pieces[i].depth) {
      here[pieces[j].leaf] += pieces[j].end - pieces[j].start;
      ++j;
    }
    const PathSegment& p = pieces[i];
    std::string states;
    for (int k = 0; k < kLeafCount; ++k) {
      if (here.ns[k] > 0) {
        states += fmt::format("{}{} {:.3f} ms", states.empty() ? "" : ", ", LeafName(static_cast<Leaf>(k)), here.ns[k] / 1e6);
      }
    }
    const std::string who = p.task == kNoTask ? std::string("?")
                                              : fmt::format("{} ({}/{})", TaskName(p.task), hosts_[engine_.tasks()[p.task].host],
                                                            engine_.tasks()[p.task].tid);
    fmt::print(out_, "  {:>{}}{}: {}\n", "", 2 * std::min<int>(p.depth, 20), who, states);
    i = j;
  }
}

void AnalysisReport::Finish() {
  if (!options_.task_records) return;
  const TaskTable& tasks = engine_.tasks();
  for (Utid u = 0; u < tasks.size(); ++u) {
    const Task& task = tasks[u];
    if (!task.ran || engine_.history(u).empty() || !Watched(u)) continue;
    const int64_t start = engine_.TaskStart(u), end = engine_.TaskEnd(u);
    if (end <= start) continue;
    // The lifetime breakdown is the cumulative vector at the end (zero at the start): each
    // wait as resolved when it ended, so eviction since then changes nothing. Every
    // accounted piece below comes from stored values too, never from a difference of
    // re-read history, so none can be negative (docs/architecture.md, "Eviction").
    const StateVec breakdown = engine_.Cumulative(u, end);

    Tracked fresh{start, {}, {}, {}};
    auto it = tracked_.find(u);
    Tracked& t = it != tracked_.end() ? it->second : fresh;
    // Before the first tracked wait: the expanded path while its history is all retained,
    // else the task's own vector (its breakdown there), credited to itself.
    const int64_t from = std::min(std::max(t.from, start), end);
    const StateVec from_cum = t.from > start ? t.from_cum : StateVec{};
    if (from > start && start < engine_.history(u).start()) {
      t.by_task[u].states += from_cum;
    } else {
      scratch_.clear();
      engine_.resolver().Expand(u, start, from, &scratch_);
      AddPieces(t, u, scratch_);
    }
    // A wait still open at the end.
    const TaskHistory& h = engine_.history(u);
    StateVec open;
    if (h.blocked() && h.back().start < end) {
      const int64_t s = std::max(h.back().start, from);
      open = breakdown - (s == h.back().start ? h.back().cum : engine_.Cumulative(u, s));
      scratch_.clear();
      engine_.resolver().Expand(u, s, end, &scratch_);
      AddPieces(t, u, scratch_);
    }
    // The rest is the task's own time (running, interrupted, preempted, unknown).
    const StateVec own = breakdown - from_cum - t.waits - open;
    t.by_task[u].states += own;

    std::vector<std::pair<Utid, Blame>> by_task(t.by_task.begin(), t.by_task.end());
    std::erase_if(by_task, [](const auto& b) { return b.second.states.total() == 0; });
    std::sort(by_task.begin(), by_task.end(), [](const auto& a, const auto& b) {
      const int64_t ta = a.second.states.total(), tb = b.second.states.total();
      return ta != tb ? ta > tb : a.first < b.first;
    });
    if (by_task.size() > options_.top) by_task.resize(options_.top);
    WriteTask(u, breakdown, by_task);
    ++tasks_reported_;
  }
}

void AnalysisReport::WriteTask(Utid u, const StateVec& breakdown, const std::vector<std::pair<Utid, Blame>>& by_task) {
  const Task& t = engine_.tasks()[u];
  const int64_t start = engine_.TaskStart(u), end = engine_.TaskEnd(u);
  if (options_.json) {
    Json j = Record("task", u);
    j["start_ns"] = start;
    j["end_ns"] = end;
    j["breakdown_ns"] = StatesJson(breakdown);
    Json list = Json::array();
    for (const auto& [who, blame] : by_task) {
      const Task& w = engine_.tasks()[who];
      list.push_back(Json{{"host", hosts_[w.host]},
                          {"tid", w.tid},
                          {"comm", TaskName(who)},
                          {"ns", blame.states.total()},
                          {"states", StatesJson(blame.states)}});
    }
    j["by_task"] = std::move(list);
    out_ << j.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
    return;
  }
  const int64_t total = end - start;
  fmt::print(out_, "{} (host {}, tid {}, pid {})  {:.6f} s observed\n", TaskName(u), hosts_[t.host], t.tid,
             t.pid < 0 ? t.tid : t.pid, total / 1e9);
  fmt::print(out_, "  breakdown: {}\n", Shares(breakdown, total));
  fmt::print(out_, "  path went through:\n");
  for (const auto& [who, blame] : by_task) {
    const Task& w = engine_.tasks()[who];
    fmt::print(out_, "    {:>5.1f}%  {:<20} {}/{:<8} {}\n", total > 0 ? 100.0 * blame.states.total() / total : 0.0,
               TaskName(who), hosts_[w.host], w.tid, Shares(blame.states, blame.states.total()));
  }
}

}  // namespace waitpath
