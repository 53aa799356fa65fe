// The simulation's own record of one task's states over time, with the cause of every
// wake-up: the input of the ground-truth computation (never read back from the trace).
#pragma once

#include <cstdint>
#include <vector>

#include "tools/gen/common.h"

namespace waitpath::gen {

enum class TaskState : uint8_t { kRunning, kInterrupted, kPreempted, kBlocked };

enum class WakeCause : uint8_t { kNone, kTask, kPacket, kTimer, kDisk, kIrq, kIpi };

struct Segment {
  Ns begin = 0;
  TaskState state = TaskState::kBlocked;
  WakeCause cause = WakeCause::kNone;  // for blocked segments that ended with a wake-up
  int32_t waker = -1;                  // task (kTask) or packet sender (kPacket)
  Ns sent = 0;                         // kPacket: true send time of the waking packet
};

class TaskTimeline {
 public:
  TaskTimeline() = default;
  TaskTimeline(Ns start, TaskState initial) : start_(start), end_(start) {
    segments_.push_back({start, initial});
  }

  void Enter(Ns t, TaskState state) {
    if (segments_.back().begin == t) {
      // A zero-length segment carries no time; keep only the newest state.
      segments_.back() = {t, state};
      return;
    }
    segments_.push_back({t, state});
  }
  // Ends the current (blocked) segment with a wake-up and makes the task runnable.
  void Wake(Ns t, WakeCause cause, int32_t waker, Ns sent) {
    Segment& blocked = segments_.back();
    blocked.cause = cause;
    blocked.waker = waker;
    blocked.sent = sent;
    if (blocked.begin == t) {
      segments_.back().state = TaskState::kPreempted;
      return;
    }
    segments_.push_back({t, TaskState::kPreempted});
  }
  void Finish(Ns end) { end_ = end; }

  Ns start() const { return start_; }
  Ns end() const { return end_; }
  const std::vector<Segment>& segments() const { return segments_; }
  TaskState current() const { return segments_.back().state; }
  // End of segment i: the next one's beginning, or the end of the task's life.
  Ns SegmentEnd(size_t i) const { return i + 1 < segments_.size() ? segments_[i + 1].begin : end_; }

 private:
  Ns start_ = 0;
  Ns end_ = 0;
  std::vector<Segment> segments_;
};

}  // namespace waitpath::gen
