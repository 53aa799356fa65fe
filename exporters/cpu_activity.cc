#include "exporters/cpu_activity.h"

#include <algorithm>
#include <string>

#include "model/event_views.h"
#include "model/string_table.h"

namespace waitpath {

TimelineWindow TimelineWindow::Resolve(int64_t first_ts) const {
  TimelineWindow w = *this;
  if (from_is_offset) w.from = first_ts + from;
  if (to_is_offset) w.to = first_ts + to;
  w.from_is_offset = w.to_is_offset = false;
  return w;
}

CpuActivity::CpuActivity(TimelineWindow window, size_t max_slices)
    : window_(window), max_slices_(max_slices) {
  StringTable& strings = StringTable::Global();
  idle_name_ = strings.Intern("idle");
  hrtimer_name_ = strings.Intern("hrtimer");
  // Linux's softirq vectors (include/linux/interrupt.h), stable since 2.6.
  const char* softirqs[] = {"HI",       "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
                            "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU"};
  for (size_t i = 0; i < std::size(softirqs); ++i)
    softirq_names_[i] = strings.Intern(std::string("softirq ") + softirqs[i]);
  const char* ipis[] = {"ipi", "ipi call_function", "ipi reschedule", "local_timer"};
  for (size_t i = 0; i < std::size(ipis); ++i) ipi_names_[i] = strings.Intern(ipis[i]);
}

CpuActivity::CpuState& CpuActivity::Cpu(uint16_t host, uint16_t cpu) {
  if (host >= cpus_.size()) {
    cpus_.resize(host + 1u);
    host_last_.resize(host + 1u, std::numeric_limits<int64_t>::min());
  }
  std::vector<CpuState>& cpus = cpus_[host];
  if (cpu >= cpus.size()) cpus.resize(cpu + 1u);
  return cpus[cpu];
}

void CpuActivity::Close(uint16_t host, uint16_t cpu, Kind kind, int32_t tid, uint32_t name,
                        int64_t start, int64_t end) {
  start = std::max(start, window_.from);
  end = std::min(end, window_.to);
  if (start >= end) return;
  if (slices_.size() >= max_slices_) {
    overflowed_ = true;
    return;
  }
  slices_.push_back(Slice{start, end, tid, name, host, cpu, kind});
}

void CpuActivity::Enter(const Event& e, Kind kind, uint32_t name) {
  Cpu(e.host, e.cpu).interrupts.Enter(OpenInterrupt{e.ts, name, kind});
}

void CpuActivity::Exit(const Event& e, Kind kind) {
  CpuState& c = Cpu(e.host, e.cpu);
  // As the engine sees it: the exit closes the innermost open interrupt of its kind with those
  // inside it whose exits were lost, or nothing if its entry was lost.
  c.interrupts.Exit(kind, [&](const OpenInterrupt& o) {
    Close(e.host, e.cpu, o.kind, c.tid, o.name, o.start, e.ts);
  });
}

void CpuActivity::Observe(const Event& e) {
  if (!started_) {
    started_ = true;
    first_ts_ = e.ts;
    window_ = window_.Resolve(e.ts);
  }
  CpuState& c = Cpu(e.host, e.cpu);
  host_last_[e.host] = std::max(host_last_[e.host], e.ts);
  switch (e.kind) {
    case EventKind::kSchedSwitch: {
      const auto s = AsSchedSwitch(e);
      if (c.tid > 0) Close(e.host, e.cpu, Kind::kTask, c.tid, c.name, c.since, e.ts);
      c.tid = s.next_tid();
      c.name = s.next_comm() >= 0 ? static_cast<uint32_t>(s.next_comm()) : idle_name_;
      c.since = e.ts;
      return;
    }
    case EventKind::kIrqEntry: {
      const int32_t name = AsIrqEntry(e).name();
      Enter(e, Kind::kIrq,
            name >= 0 ? static_cast<uint32_t>(name)
                      : StringTable::Global().Intern("irq " + std::to_string(AsIrqEntry(e).irq())));
      return;
    }
    case EventKind::kIrqExit:
      Exit(e, Kind::kIrq);
      return;
    case EventKind::kSoftirqEntry: {
      const int32_t vec = AsSoftirq(e).vec();
      Enter(e, Kind::kSoftirq,
            vec >= 0 && vec < 10 ? softirq_names_[vec]
                                 : StringTable::Global().Intern("softirq " + std::to_string(vec)));
      return;
    }
    case EventKind::kSoftirqExit:
      Exit(e, Kind::kSoftirq);
      return;
    case EventKind::kHrtimerEntry:
      Enter(e, Kind::kTimer, hrtimer_name_);
      return;
    case EventKind::kHrtimerExit:
      Exit(e, Kind::kTimer);
      return;
    case EventKind::kIpiEntry: {
      const int32_t type = AsIpi(e).type();
      Enter(e, Kind::kIpi, ipi_names_[type >= 0 && type < 4 ? type : 0]);
      return;
    }
    case EventKind::kIpiExit:
      Exit(e, Kind::kIpi);
      return;
    case EventKind::kLost:
      // What ran during the loss is not known: close what was open at the loss.
      for (const OpenInterrupt& o : c.interrupts.open())
        Close(e.host, e.cpu, o.kind, c.tid, o.name, o.start, e.ts);
      c.interrupts.Clear();
      if (c.tid > 0) Close(e.host, e.cpu, Kind::kTask, c.tid, c.name, c.since, e.ts);
      c.tid = -1;
      return;
    default:
      return;
  }
}

void CpuActivity::Finish() {
  for (uint16_t h = 0; h < cpus_.size(); ++h) {
    for (uint16_t cpu = 0; cpu < cpus_[h].size(); ++cpu) {
      CpuState& c = cpus_[h][cpu];
      for (const OpenInterrupt& o : c.interrupts.open())
        Close(h, cpu, o.kind, c.tid, o.name, o.start, host_last_[h]);
      c.interrupts.Clear();
      if (c.tid > 0) Close(h, cpu, Kind::kTask, c.tid, c.name, c.since, host_last_[h]);
      c.tid = -1;
    }
  }
  by_task_.clear();
  interrupts_.clear();
  for (uint32_t i = 0; i < slices_.size(); ++i) {
    (slices_[i].kind == Kind::kTask ? by_task_ : interrupts_).push_back(i);
  }
  std::sort(interrupts_.begin(), interrupts_.end(), [this](uint32_t a, uint32_t b) {
    const Slice &x = slices_[a], &y = slices_[b];
    return std::tie(x.host, x.start) < std::tie(y.host, y.start);
  });
  std::sort(by_task_.begin(), by_task_.end(), [this](uint32_t a, uint32_t b) {
    const Slice &x = slices_[a], &y = slices_[b];
    return std::tie(x.host, x.tid, x.start) < std::tie(y.host, y.tid, y.start);
  });
}

const CpuActivity::Slice* CpuActivity::RanAt(uint16_t host, int32_t tid, int64_t t) const {
  // The last slice of the task starting at or before t.
  auto it = std::upper_bound(by_task_.begin(), by_task_.end(), std::tie(host, tid, t),
                             [this](const auto& key, uint32_t i) {
                               const Slice& s = slices_[i];
                               return key < std::tie(s.host, s.tid, s.start);
                             });
  if (it == by_task_.begin()) return nullptr;
  const Slice& s = slices_[*std::prev(it)];
  if (s.host != host || s.tid != tid || s.end < t) return nullptr;
  return &s;
}

}  // namespace waitpath

namespace waitpath {

const CpuActivity::Slice* CpuActivity::InterruptAt(uint16_t host, int64_t t) const {
  // Interrupts are short: look back from t over those that began within the last 100 ms.
  constexpr int64_t kLongest = 100'000'000;
  auto it = std::upper_bound(interrupts_.begin(), interrupts_.end(), std::tie(host, t),
                             [this](const auto& key, uint32_t i) {
                               const Slice& s = slices_[i];
                               return key < std::tie(s.host, s.start);
                             });
  while (it != interrupts_.begin()) {
    const Slice& s = slices_[*--it];
    if (s.host != host || s.start < t - kLongest) break;
    if (s.end >= t) return &s;
  }
  return nullptr;
}

}  // namespace waitpath
