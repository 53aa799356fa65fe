// What ran on each CPU of each host inside a time window: the task slices (from sched_switch)
// and the interrupt slices (hard irqs, softirqs, hrtimers, IPIs, from their entry and exit)
// that a timeline draws as per-CPU tracks. Fed every event by the pipeline's sink, and only
// when a timeline is asked for: the engine itself keeps no per-CPU history.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "incremental/interrupt_nest.h"
#include "model/event.h"

namespace waitpath {

// [from, to) of a timeline. A bound given as an offset (a duration) counts from the first
// event seen, which is only known once the input starts: Resolve() fixes it then.
struct TimelineWindow {
  int64_t from = std::numeric_limits<int64_t>::min();
  int64_t to = std::numeric_limits<int64_t>::max();
  bool from_is_offset = false;
  bool to_is_offset = false;

  // Both bounds absolute, offsets taken from `first_ts`.
  TimelineWindow Resolve(int64_t first_ts) const;
  bool Overlaps(int64_t a, int64_t b) const { return a < to && b > from; }
};

class CpuActivity {
 public:
  enum class Kind : uint8_t { kTask, kIrq, kSoftirq, kTimer, kIpi };
  struct Slice {
    int64_t start, end;  // clipped to the window
    int32_t tid;         // kTask: the task; otherwise the task the interrupt ran over
    uint32_t name;       // StringTable id: the task's or the interrupt's name
    uint16_t host, cpu;
    Kind kind;
  };

  // At most `max_slices` are kept; past that, overflowed() and nothing more is recorded.
  CpuActivity(TimelineWindow window, size_t max_slices);

  void Observe(const Event& e);
  // The input ended: what is still open closes at its host's last event.
  void Finish();

  const std::vector<Slice>& slices() const { return slices_; }
  bool overflowed() const { return overflowed_; }
  bool started() const { return started_; }
  int64_t first_ts() const { return first_ts_; }  // of the first event seen
  // The window with offsets resolved (from the first event seen; as given before that).
  const TimelineWindow& window() const { return window_; }
  // The task slice of `tid` on `host` holding `t` (its end included: a task wakes another,
  // then switches out), null if none recorded. After Finish.
  const Slice* RanAt(uint16_t host, int32_t tid, int64_t t) const;
  // An interrupt slice of `host` holding `t` (on any CPU; the innermost first found), null if
  // none recorded: where a wake-up from interrupt context (a timer, a disk completion) came
  // from. After Finish.
  const Slice* InterruptAt(uint16_t host, int64_t t) const;

 private:
  struct OpenInterrupt {
    int64_t start;
    uint32_t name;
    Kind kind;
  };
  struct CpuState {
    int32_t tid = -1;  // -1: not known yet
    uint32_t name = 0;
    int64_t since = 0;
    InterruptNest<OpenInterrupt> interrupts;  // the engine's rule (CpuContextTracker)
  };

  CpuState& Cpu(uint16_t host, uint16_t cpu);
  void Close(uint16_t host, uint16_t cpu, Kind kind, int32_t tid, uint32_t name, int64_t start,
             int64_t end);
  void Enter(const Event& e, Kind kind, uint32_t name);
  void Exit(const Event& e, Kind kind);

  TimelineWindow window_;
  size_t max_slices_;
  bool started_ = false;
  int64_t first_ts_ = 0;
  bool overflowed_ = false;
  std::vector<std::vector<CpuState>> cpus_;  // [host][cpu]
  std::vector<int64_t> host_last_;
  std::vector<Slice> slices_;
  std::vector<uint32_t> by_task_;     // task slices' indices by (host, tid, start), for RanAt
  std::vector<uint32_t> interrupts_;  // interrupt slices' indices by (host, start)
  uint32_t idle_name_ = 0, hrtimer_name_ = 0;
  uint32_t softirq_names_[10] = {};
  uint32_t ipi_names_[4] = {};
};

}  // namespace waitpath
