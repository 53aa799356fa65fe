#include "exporters/analysis_report.h"

#include <fmt/compile.h>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "exporters/shown_name.h"
#include "exporters/wait_headline.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

using Json = nlohmann::ordered_json;

}  // namespace

nlohmann::ordered_json StatesJson(const StateVec& v, bool nonzero_only) {
  Json j = Json::object();
  for (int i = 0; i < kLeafCount; ++i) {
    if (nonzero_only && v.ns[i] == 0) continue;
    j[std::string(LeafName(static_cast<Leaf>(i)))] = v.ns[i];
  }
  return j;
}

std::string Shares(const StateVec& v, int64_t total) {
  std::string s;
  for (int i = 0; i < kLeafCount; ++i) {
    if (v.ns[i] <= 0 || total <= 0) continue;
    s += fmt::format("{}{} {:.1f}%", s.empty() ? "" : ", ", LeafName(static_cast<Leaf>(i)),
                     100.0 * static_cast<double>(v.ns[i]) / static_cast<double>(total));
  }
  return s.empty() ? "-" : s;
}

std::string_view WaitCauseName(const WaitLink& link) {
  switch (link.type) {
    case WaitLink::Type::kTask:
      return "task";
    case WaitLink::Type::kPacket:
      return "network";
    case WaitLink::Type::kLeaf:
      return LeafName(link.leaf);
    case WaitLink::Type::kNone:
    case WaitLink::Type::kPending:
      return "blocked";
    case WaitLink::Type::kUnknown:
      return "unknown";
  }
  return "unknown";
}

AnalysisReport::AnalysisReport(WatchedAccounting& accounting, AnalysisOptions options,
                               std::ostream& out)
    : accounting_(accounting), engine_(accounting.engine()), options_(options), out_(out) {
  accounting_.AddSink(this);
}

// The fields every record starts with: its type and the task it is about.
nlohmann::ordered_json AnalysisReport::Record(std::string_view type, Utid u) const {
  const Task& t = engine_.tasks()[u];
  Json j;
  j["type"] = type;
  j["host"] = HostName(t.host);
  j["tid"] = t.tid;
  j["pid"] = t.pid < 0 ? t.tid : t.pid;
  j["comm"] = TaskName(u);
  return j;
}

std::string AnalysisReport::ShownName(Utid u) const {
  return u == kNoTask ? std::string("?") : std::string(ShownComm(TaskName(u)));
}

std::string AnalysisReport::TaskName(Utid u) const {
  if (u == kNoTask) return "?";
  return std::string(StringTable::Global().Get(engine_.tasks()[u].comm));
}

const std::string& AnalysisReport::HostJson(uint16_t host) {
  if (host >= host_json_.size()) host_json_.resize(accounting_.hosts().size());
  std::string& j = host_json_[host];
  if (j.empty()) j = Json(HostName(host)).dump(-1, ' ', false, Json::error_handler_t::replace);
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
    c.with_pid = fmt::format(R"("host":{},"tid":{},"pid":{},"comm":{})", host, t.tid,
                             t.pid < 0 ? t.tid : t.pid, comm);
    c.without_pid = fmt::format(R"("host":{},"tid":{},"comm":{})", host, t.tid, comm);
  }
  return with_pid ? c.with_pid : c.without_pid;
}

void AnalysisReport::OnAccounted(Utid u, int64_t from, int64_t to, const StateVec& states,
                                 std::span<const PathSegment> path) {
  (void)from;
  (void)to;
  if (!options_.task_records) return;  // tail: waits only
  Tracked& t = tracked_[u];
  t.total += states;
  // The pieces come in runs of one task (the task's own states, then each task its wait went
  // through): the map is looked up once per run, not per piece (this was per wait of every
  // watched task, docs/bench.md "Issue 15's CPU targets").
  Utid run_task = kNoTask;
  StateVec* run = nullptr;
  for (const PathSegment& p : path) {
    const Utid who = p.task == kNoTask ? u : p.task;
    if (!run || who != run_task) {
      const TaskRef ref = engine_.tasks().Ref(who);
      auto [it, inserted] = t.by_task.try_emplace(ref);
      if (inserted) ++credited_[ref];
      run_task = who;
      run = &it->second;
    }
    (*run)[p.leaf] += p.end - p.start;
  }
}

void AnalysisReport::OnWatchedWait(const ResolvedWait& wait, std::span<const PathSegment> path) {
  if (options_.min_wait_ns < 0 || wait.end - wait.start < options_.min_wait_ns) return;
  if (options_.states != 0 &&
      !(options_.states & (1u << static_cast<int>(HeadlineOf(wait, path).leaf))))
    return;
  WriteWait(wait, path);
}

void AnalysisReport::OnTaskReleased(Utid u) {
  const TaskRef ref = engine_.tasks().Ref(u);
  if (credited_.count(ref)) {
    const Task& t = engine_.tasks()[u];
    released_[ref] = Identity{t.host, t.tid, t.comm};
  }
  if (u < task_json_.size()) task_json_[u] = TaskJsonCache{};
}

AnalysisReport::Identity AnalysisReport::Who(TaskRef ref) const {
  if (auto it = released_.find(ref); it != released_.end()) return it->second;
  const Task& t = engine_.tasks()[RefUtid(ref)];
  return Identity{t.host, t.tid, t.comm};
}

namespace {

// A wait's JSON record, written straight into a string: literals of known length, integers
// formatted in place (a compiled "{}"), names already escaped (TaskJson). Through fmt::format_to it
// cost ~6,700 instructions a record (~15 a byte), more than decoding and analysing the events it
// explains when every wait is printed (`tail --json`; docs/bench.md, "Live overheads").
class JsonLine {
 public:
  explicit JsonLine(std::string& buffer) : b_(buffer) {
    if (b_.size() < 4096) b_.resize(4096);
  }
  template <size_t N>
  [[gnu::always_inline]] JsonLine& Lit(const char (&text)[N]) {
    Room(N - 1);
    std::memcpy(b_.data() + used_, text, N - 1);  // a constant size: a move or two
    used_ += N - 1;
    return *this;
  }
  [[gnu::always_inline]] JsonLine& Str(std::string_view text) {
    Room(text.size());
    std::memcpy(b_.data() + used_, text.data(), text.size());
    used_ += text.size();
    return *this;
  }
  [[gnu::always_inline]] JsonLine& Int(int64_t v) {
    Room(20);  // at most 20 characters, written in place
    char* const at = b_.data() + used_;
    used_ += static_cast<size_t>(fmt::format_to(at, FMT_COMPILE("{}"), v) - at);
    return *this;
  }
  std::string_view text() const { return {b_.data(), used_}; }

 private:
  [[gnu::always_inline]] void Room(size_t n) {
    if (b_.size() - used_ < n) [[unlikely]]
      Grow(n);
  }
  [[gnu::noinline]] void Grow(size_t n) { b_.resize(std::max(2 * b_.size(), used_ + n)); }
  std::string& b_;  // its size is the room; used_ bytes are the record
  size_t used_ = 0;
};

}  // namespace

void AnalysisReport::WriteWait(const ResolvedWait& wait, std::span<const PathSegment> pieces) {
  const Task& t = engine_.tasks()[wait.task];
  if (options_.json) {
    // Written directly rather than through a json object: one record per wait (tail prints
    // every one), and building the object was a quarter of a live process's CPU time. The
    // bytes are those nlohmann's dump() gave (same keys, order and escaping).
    JsonLine j(line_);
    j.Lit(R"({"type":"wait",)").Str(TaskJson(wait.task, true));
    j.Lit(R"(,"start_ns":)").Int(wait.start).Lit(R"(,"end_ns":)").Int(wait.end);
    j.Lit(R"(,"duration_ns":)").Int(wait.end - wait.start);
    j.Lit(R"(,"cause":")").Str(WaitCauseName(wait.link)).Lit("\"");
    if ((wait.link.type == WaitLink::Type::kTask || wait.link.type == WaitLink::Type::kPacket) &&
        wait.link.task != kNoTask) {
      j.Lit(R"(,"waker":{)").Str(TaskJson(wait.link.task, false)).Lit("}");
    }
    j.Lit(R"(,"breakdown_ns":{)");
    for (int i = 0; i < kLeafCount; ++i) {
      if (i) j.Lit(",");
      j.Lit("\"").Str(LeafName(static_cast<Leaf>(i))).Lit("\":").Int(wait.breakdown.ns[i]);
    }
    j.Lit(R"(},"path":[)");
    for (size_t i = 0; i < pieces.size(); ++i) {
      const PathSegment& p = pieces[i];
      if (i) j.Lit(",");
      j.Lit("{");
      if (p.task == kNoTask) {
        j.Lit(R"("host":"","tid":-1,"comm":"?")");
      } else {
        j.Str(TaskJson(p.task, false));
      }
      j.Lit(R"(,"state":")").Str(LeafName(p.leaf)).Lit(R"(","start_ns":)").Int(p.start);
      j.Lit(R"(,"end_ns":)").Int(p.end).Lit("}");
    }
    j.Lit("]}\n");
    out_.write(j.text().data(), static_cast<std::streamsize>(j.text().size()));
    return;
  }
  const int64_t d = wait.end - wait.start;
  // One line per wait, then its path as a tree: each task the path went through, indented by
  // how many wake-ups led to it, with the time spent there per state.
  // The headline first (exporters/wait_headline.h), then the shares of the whole path.
  const WaitHeadline h = HeadlineOf(wait, pieces);
  const Task& where = engine_.tasks()[h.where];
  fmt::print(out_, "{} {} {}/{} waited {:.3f} ms: {}\n  active path (cause {}): {}\n",
             FormatTime(wait.end, options_.time_format), ShownName(wait.task), HostName(t.host),
             t.tid, d / 1e6,
             FormatHeadline(h, fmt::format("{}/{}", HostName(where.host), ShownName(h.where))),
             WaitCauseName(wait.link), Shares(wait.breakdown, d));
  for (size_t i = 0; i < pieces.size();) {
    size_t j = i;
    StateVec here;
    while (j < pieces.size() && pieces[j].task == pieces[i].task &&
           pieces[j].depth == pieces[i].depth) {
      here[pieces[j].leaf] += pieces[j].end - pieces[j].start;
      ++j;
    }
    const PathSegment& p = pieces[i];
    std::string states;
    for (int k = 0; k < kLeafCount; ++k) {
      if (here.ns[k] > 0) {
        states += fmt::format("{}{} {:.3f} ms", states.empty() ? "" : ", ",
                              LeafName(static_cast<Leaf>(k)), here.ns[k] / 1e6);
      }
    }
    const std::string who = p.task == kNoTask ? std::string("?")
                                              : fmt::format("{} ({}/{})", ShownName(p.task),
                                                            HostName(engine_.tasks()[p.task].host),
                                                            engine_.tasks()[p.task].tid);
    fmt::print(out_, "  {:>{}}{}: {}\n", "", 2 * std::min<int>(p.depth, 20), who, states);
    i = j;
  }
}

void AnalysisReport::OnTaskDone(Utid u) {
  auto it = tracked_.find(u);
  if (it == tracked_.end()) return;
  Tracked& t = it->second;
  std::vector<std::pair<TaskRef, StateVec>> by_task(t.by_task.begin(), t.by_task.end());
  std::erase_if(by_task, [](const auto& b) { return b.second.total() == 0; });
  std::sort(by_task.begin(), by_task.end(), [](const auto& a, const auto& b) {
    const int64_t ta = a.second.total(), tb = b.second.total();
    return ta != tb ? ta > tb : a.first < b.first;
  });
  if (options_.format == TaskFormat::kFolded || options_.format == TaskFormat::kCsv) {
    WriteRows(u, by_task);  // every credited task: the rows sum to the task's time
  } else {
    if (by_task.size() > options_.top) by_task.resize(options_.top);
    WriteTask(u, t.total, by_task);
  }
  ++tasks_reported_;
  for (const auto& [ref, states] : t.by_task) {
    auto c = credited_.find(ref);
    if (--c->second == 0) {
      credited_.erase(c);
      released_.erase(ref);
    }
  }
  tracked_.erase(it);
}

namespace {

// A flame-graph frame: no ';' (the separator), no space or newline (the count follows a space).
std::string Frame(std::string_view host, std::string_view comm) {
  std::string out = std::string(host) + "/" + std::string(comm);
  for (char& c : out) {
    if (c == ';' || c == ' ' || c == '\n' || c == '\t') c = '_';
  }
  return out;
}

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

void AnalysisReport::WriteRows(Utid u, const std::vector<std::pair<TaskRef, StateVec>>& by_task) {
  const Task& t = engine_.tasks()[u];
  const std::string_view comm = StringTable::Global().Get(t.comm);
  if (options_.format == TaskFormat::kCsv && !csv_header_written_) {
    out_ << "host,tid,pid,comm,credited_host,credited_tid,credited_comm,state,ns\n";
    csv_header_written_ = true;
  }
  const std::string watched = Frame(HostName(t.host), ShownComm(comm));
  for (const auto& [ref, states] : by_task) {
    const Identity w = Who(ref);
    const std::string_view credited = StringTable::Global().Get(w.comm);
    for (int leaf = 0; leaf < kLeafCount; ++leaf) {
      const int64_t ns = states.ns[static_cast<size_t>(leaf)];
      if (ns == 0) continue;
      const std::string_view state = LeafName(static_cast<Leaf>(leaf));
      if (options_.format == TaskFormat::kFolded) {
        out_ << watched << ';' << Frame(HostName(w.host), ShownComm(credited)) << ';' << state
             << ' ' << ns << '\n';
      } else {
        out_ << CsvField(HostName(t.host)) << ',' << t.tid << ',' << (t.pid < 0 ? t.tid : t.pid)
             << ',' << CsvField(comm) << ',' << CsvField(HostName(w.host)) << ',' << w.tid << ','
             << CsvField(credited) << ',' << state << ',' << ns << '\n';
      }
    }
  }
}

void AnalysisReport::WriteTask(Utid u, const StateVec& breakdown,
                               const std::vector<std::pair<TaskRef, StateVec>>& by_task) {
  const Task& t = engine_.tasks()[u];
  const int64_t start = engine_.TaskStart(u), end = engine_.TaskEnd(u);
  if (options_.json) {
    Json j = Record("task", u);
    // Its cgroup (v2 path) when the kmod/ events said.
    if (t.cgroup != 0) j["cgroup"] = StringTable::Global().Get(t.cgroup);
    j["start_ns"] = start;
    j["end_ns"] = end;
    j["breakdown_ns"] = StatesJson(breakdown);
    Json list = Json::array();
    for (const auto& [ref, states] : by_task) {
      const Identity w = Who(ref);
      list.push_back(Json{{"host", HostName(w.host)},
                          {"tid", w.tid},
                          {"comm", StringTable::Global().Get(w.comm)},
                          {"ns", states.total()},
                          {"states", StatesJson(states)}});
    }
    j["by_task"] = std::move(list);
    out_ << j.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
    return;
  }
  const int64_t total = end - start;
  fmt::print(out_, "{} (host {}, tid {}, pid {})  {:.6f} s observed\n", ShownName(u),
             HostName(t.host), t.tid, t.pid < 0 ? t.tid : t.pid, total / 1e9);
  fmt::print(out_, "  breakdown: {}\n", Shares(breakdown, total));
  fmt::print(out_, "  path went through:\n");
  for (const auto& [ref, states] : by_task) {
    const Identity w = Who(ref);
    fmt::print(out_, "    {:>5.1f}%  {:<20} {}/{:<8} {}\n",
               total > 0 ? 100.0 * states.total() / total : 0.0,
               ShownComm(StringTable::Global().Get(w.comm)), HostName(w.host), w.tid,
               Shares(states, states.total()));
  }
}

}  // namespace waitpath
