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

}  // namespace waitpath
