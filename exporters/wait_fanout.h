// Hands each resolved wait to several listeners (the report, the metrics).
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

 private:
  std::vector<WaitListener*> listeners_;
};

}  // namespace waitpath
