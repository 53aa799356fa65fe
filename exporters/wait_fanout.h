// Hands each resolved wait and task-lifecycle step to several listeners (the accounting, the
// metrics' per-host counts).
#pragma once

#include <vector>

#include "incremental/engine.h"

namespace waitpath {

class WaitFanout : public WaitListener {
 public:
  explicit WaitFanout(std::vector<WaitListener*> listeners) : listeners_(std::move(listeners)) {}
  void OnWait(const ResolvedWait& wait) override {
    for (WaitListener* l : listeners_) l->OnWait(wait);
  }
  void OnTaskEnded(Utid u) override {
    for (WaitListener* l : listeners_) l->OnTaskEnded(u);
  }
  void OnTaskReleased(Utid u) override {
    for (WaitListener* l : listeners_) l->OnTaskReleased(u);
  }

 private:
  std::vector<WaitListener*> listeners_;
};

// Hands each resolved span to several listeners (the report, the request metrics).
class SpanFanout : public SpanListener {
 public:
  explicit SpanFanout(std::vector<SpanListener*> listeners) : listeners_(std::move(listeners)) {}
  void OnSpan(const ResolvedSpan& span) override {
    for (SpanListener* l : listeners_) l->OnSpan(span);
  }
  void OnIdle(Utid u, int64_t from, int64_t to, const StateVec& states) override {
    for (SpanListener* l : listeners_) l->OnIdle(u, from, to, states);
  }

 private:
  std::vector<SpanListener*> listeners_;
};

}  // namespace waitpath
