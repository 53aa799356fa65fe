#include "tools/gen/truth_file.h"

#include <algorithm>
#include <map>
#include <string>

#include "tools/gen/active_path_truth.h"

namespace waitpath::gen {
namespace {

nlohmann::json States(const LeafVector& v, bool all_keys) {
  nlohmann::json out = nlohmann::json::object();
  for (size_t i = 0; i < kLeafCount; ++i) {
    if (all_keys || v[i] != 0) out[std::string(kLeafNames[i])] = v[i];
  }
  return out;
}

std::string Hex(uint64_t v, int width) {
  static const char* digits = "0123456789abcdef";
  std::string out(static_cast<size_t>(width), '0');
  for (int i = width - 1; i >= 0 && v != 0; --i, v >>= 4)
    out[static_cast<size_t>(i)] = digits[v & 15];
  return out;
}

Ns Total(const LeafVector& v) {
  Ns n = 0;
  for (Ns x : v) n += x;
  return n;
}

// When a thread held a span: from its begin (or a handoff to it) to its end (or a handoff away).
struct Held {
  int32_t task;
  Ns start, end;
  size_t span;
};

// The spans' truth (docs/requests.md): each piece of a span, up to a handoff or its end, is
// the path of the task that emitted that event, from the span's previous event on; blocked_by
// is the time those paths spent in a task while it held another span (its innermost one).
std::vector<Held> HeldIntervals(const SimulationResult& sim) {
  std::vector<Held> held;
  for (size_t i = 0; i < sim.spans.size(); ++i) {
    const SpanInfo& s = sim.spans[i];
    int32_t holder = s.task;
    Ns since = s.begin;
    for (const auto& [task, t] : s.marks) {
      held.push_back({holder, since, t, i});
      holder = task;
      since = t;
    }
    if (s.end < 0) held.push_back({holder, since, sim.end, i});
  }
  return held;
}

// A task that held spans and holds none is idle until it holds one again: its path over the
// gaps between the union of its held intervals.
nlohmann::json SpanIdle(const Scenario& scenario, const SimulationResult& sim,
                        const ActivePathTruth& truth) {
  std::map<int32_t, std::vector<std::pair<Ns, Ns>>> by_task;
  for (const Held& h : HeldIntervals(sim)) by_task[h.task].push_back({h.start, h.end});
  nlohmann::json out = nlohmann::json::array();
  for (auto& [task, intervals] : by_task) {
    std::sort(intervals.begin(), intervals.end());
    LeafVector idle{};
    Ns covered = intervals.front().second;
    for (const auto& [a, b] : intervals) {
      if (a > covered) {
        const PathBreakdown gap = truth.Compute(task, covered, a);
        for (size_t l = 0; l < kLeafCount; ++l) idle[l] += gap.total[l];
      }
      covered = std::max(covered, b);
    }
    if (Total(idle) == 0) continue;
    const TaskInfo& t = sim.tasks[static_cast<size_t>(task)];
    out.push_back({{"host", scenario.hosts[static_cast<size_t>(t.host)].name},
                   {"tid", t.tid},
                   {"task", t.name},
                   {"breakdown_ns", States(idle, true)}});
  }
  return out;
}

nlohmann::json Spans(const Scenario& scenario, const SimulationResult& sim, const HostClock& ref,
                     const ActivePathTruth& truth) {
  using nlohmann::json;
  const std::vector<Held> held = HeldIntervals(sim);
  // Per task, the innermost span held over each elementary interval (the latest begun), by a
  // sweep over the task's intervals in order of their starts.
  std::map<int32_t, std::vector<const Held*>> by_task_held;
  for (const Held& h : held) by_task_held[h.task].push_back(&h);
  std::map<int32_t, std::vector<Held>> inner;
  for (auto& [task, hs] : by_task_held) {
    std::vector<Held>& out = inner[task];
    std::sort(hs.begin(), hs.end(),
              [](const Held* x, const Held* y) { return x->start < y->start; });
    std::vector<Ns> cuts;
    for (const Held* h : hs) cuts.insert(cuts.end(), {h->start, h->end});
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::multimap<Ns, const Held*> active;  // by start: the innermost is the last
    size_t next = 0;
    for (size_t c = 0; c + 1 < cuts.size(); ++c) {
      while (next < hs.size() && hs[next]->start <= cuts[c]) {
        active.emplace(hs[next]->start, hs[next]);
        ++next;
      }
      // Intervals over by now (lazily: only the innermost's end matters).
      while (!active.empty() && std::prev(active.end())->second->end <= cuts[c]) {
        active.erase(std::prev(active.end()));
      }
      if (!active.empty()) {
        out.push_back({task, cuts[c], cuts[c + 1], std::prev(active.end())->second->span});
      }
    }
  }

  json out = json::array();
  for (size_t i = 0; i < sim.spans.size(); ++i) {
    const SpanInfo& s = sim.spans[i];
    if (s.end < 0) continue;
    LeafVector total{};
    std::map<int32_t, LeafVector> by_task;
    std::map<size_t, Ns> blocked;
    Ns mark = s.begin;
    for (const auto& [task, t] : s.marks) {
      const PathBreakdown piece = truth.Compute(task, mark, t);
      for (size_t l = 0; l < kLeafCount; ++l) total[l] += piece.total[l];
      for (const auto& [who, v] : piece.by_task) {
        for (size_t l = 0; l < kLeafCount; ++l) by_task[who][l] += v[l];
      }
      for (const auto& [who, intervals] : inner) {
        // A task's innermost intervals are disjoint and in order: those overlapping the piece.
        auto h = std::partition_point(intervals.begin(), intervals.end(),
                                      [&](const Held& x) { return x.end <= mark; });
        for (; h != intervals.end() && h->start < t; ++h) {
          const Ns a = std::max(mark, h->start), b = std::min(t, h->end);
          if (a >= b || h->span == i) continue;
          const PathBreakdown part = truth.Compute(task, a, b);
          if (auto it = part.by_task.find(who); it != part.by_task.end()) {
            blocked[h->span] += Total(it->second);
          }
        }
      }
      mark = t;
    }
    json jby = json::array();
    for (const auto& [who, v] : by_task) {
      const TaskInfo& o = sim.tasks[static_cast<size_t>(who)];
      jby.push_back({{"host", scenario.hosts[static_cast<size_t>(o.host)].name},
                     {"tid", o.tid},
                     {"name", o.name},
                     {"ns", Total(v)},
                     {"states", States(v, false)}});
    }
    json jblocked = json::array();
    for (const auto& [other, ns] : blocked) {
      if (ns == 0) continue;
      const SpanInfo& o = sim.spans[other];
      jblocked.push_back({{"span_id", Hex(o.id, 16)}, {"operation", o.name}, {"ns", ns}});
    }
    const TaskInfo& t = sim.tasks[static_cast<size_t>(s.task)];
    out.push_back({{"host", scenario.hosts[static_cast<size_t>(s.host)].name},
                   {"name", s.name},
                   {"trace_id", Hex(s.trace_hi, 16) + Hex(s.trace_lo, 16)},
                   {"span_id", Hex(s.id, 16)},
                   {"parent", s.parent ? json(Hex(s.parent, 16)) : json(nullptr)},
                   {"tid", t.tid},
                   {"task", t.name},
                   {"handoffs", s.marks.size() - 1},
                   {"start_ns", ref.ReferenceNs(s.begin)},
                   {"end_ns", ref.ReferenceNs(s.end)},
                   {"breakdown_ns", States(total, true)},
                   {"by_task", jby},
                   {"blocked_by", jblocked}});
  }
  return out;
}

}  // namespace

nlohmann::json TruthFile::Build(const Scenario& scenario, const SimulationResult& sim,
                                const std::vector<HostClock>& clocks,
                                const std::vector<HostSummary>& hosts,
                                const std::vector<std::vector<DroppedRange>>& dropped) {
  using nlohmann::json;
  json out;
  out["scenario"] = scenario.name;
  out["seed"] = scenario.seed;
  out["reference_host"] = scenario.hosts.front().name;
  out["epoch_ns"] = scenario.epoch_ns;
  out["duration_ns"] = scenario.duration;
  if (scenario.truth_retention > 0) out["retention_ns"] = scenario.truth_retention;
  json jclocks = json::array();
  for (size_t h = 0; h < scenario.hosts.size(); ++h) {
    jclocks.push_back({{"host", scenario.hosts[h].name},
                       {"slope", clocks[h].Slope()},
                       {"offset_ns", clocks[h].OffsetNs()},
                       {"host_offset_ns", clocks[h].offset()},
                       {"drift_ppm", clocks[h].drift_ppm()}});
  }
  out["clocks"] = jclocks;
  json jhosts = json::array();
  for (size_t h = 0; h < scenario.hosts.size(); ++h) {
    json lost = json::array();
    for (const DroppedRange& d : dropped[h]) {
      lost.push_back({{"cpu", d.cpu},
                      {"count", d.count},
                      {"first_ns", clocks[h].ReferenceNs(d.first)},
                      {"last_ns", clocks[h].ReferenceNs(d.last)},
                      {"first_host_ns", clocks[h].HostNs(d.first)},
                      {"last_host_ns", clocks[h].HostNs(d.last)}});
    }
    jhosts.push_back({{"host", hosts[h].host},
                      {"cpus", scenario.hosts[h].cpus},
                      {"events", hosts[h].events},
                      {"discarded", hosts[h].discarded},
                      {"dropped", lost}});
  }
  out["hosts"] = jhosts;

  ActivePathTruth truth(sim.tasks, sim.timelines, scenario.truth_retention);
  json jtasks = json::array();
  for (size_t i = 0; i < sim.tasks.size(); ++i) {
    const TaskInfo& t = sim.tasks[i];
    const TaskTimeline& tl = sim.timelines[i];
    if (!t.watched || tl.segments().empty()) continue;
    const Ns a = tl.start();
    const Ns b = std::min(tl.end(), sim.end);
    PathBreakdown bd = truth.Compute(static_cast<int32_t>(i), a, b);
    std::vector<std::pair<int32_t, Ns>> order;
    for (const auto& [task, v] : bd.by_task) {
      Ns sum = 0;
      for (Ns x : v) sum += x;
      order.push_back({task, sum});
    }
    std::sort(order.begin(), order.end(), [&](const auto& x, const auto& y) {
      if (x.second != y.second) return x.second > y.second;
      return x.first < y.first;
    });
    json by_task = json::array();
    for (const auto& [task, ns] : order) {
      const TaskInfo& o = sim.tasks[static_cast<size_t>(task)];
      by_task.push_back({{"host", scenario.hosts[static_cast<size_t>(o.host)].name},
                         {"tid", o.tid},
                         {"comm", o.comm},
                         {"name", o.name},
                         {"ns", ns},
                         {"states", States(bd.by_task.at(task), false)}});
    }
    const HostClock& ref = clocks.front();
    jtasks.push_back({{"host", scenario.hosts[static_cast<size_t>(t.host)].name},
                      {"name", t.name},
                      {"tid", t.tid},
                      {"pid", t.pid},
                      {"comm", t.comm},
                      {"start_ns", ref.ReferenceNs(a)},
                      {"end_ns", ref.ReferenceNs(b)},
                      {"breakdown_ns", States(bd.total, true)},
                      {"by_task", by_task}});
  }
  out["tasks"] = jtasks;
  out["spans"] = Spans(scenario, sim, clocks.front(), truth);
  out["span_idle"] = SpanIdle(scenario, sim, truth);
  return out;
}

}  // namespace waitpath::gen
