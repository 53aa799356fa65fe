// Whether a live reader holds its relayd: the first failure loses it (reported once, one gap),
// reattach attempts back off and the failed ones are counted, the next graph that runs
// reattaches it (reported once, one reconnect).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace waitpath {

class RelaydLink {
 public:
  enum class Turn : uint8_t { kNone, kLost, kReattached };

  struct Counts {
    uint64_t losses = 0;      // times the relayd was lost
    uint64_t reconnects = 0;  // times it was reattached after a loss
    uint64_t failed = 0;      // reattach attempts that failed
    bool lost() const { return losses > reconnects; }
  };

  // A graph is running: its iterators are attached to the relayd.
  Turn OnRunning() {
    if (!lost_) return Turn::kNone;
    lost_ = false;
    ++counts_.reconnects;
    return Turn::kReattached;
  }
  // A graph could not be built or run, or broke off.
  Turn OnFailure() {
    if (lost_) {
      ++counts_.failed;
      backoff_ = std::min(backoff_ * 2, kMaxBackoff);
      return Turn::kNone;
    }
    lost_ = true;
    ++counts_.losses;
    backoff_ = kFirstBackoff;
    return Turn::kLost;
  }

  bool lost() const { return lost_; }
  // How long to wait before the next attempt: 250 ms after the loss, doubling to 5 s.
  std::chrono::milliseconds backoff() const { return backoff_; }
  const Counts& counts() const { return counts_; }

  // The turns between two readings of the counts, in order (losses and reconnects alternate,
  // a loss first), for whoever reports them.
  static std::vector<Turn> TurnsBetween(Counts before, const Counts& after) {
    std::vector<Turn> turns;
    while (before.losses < after.losses || before.reconnects < after.reconnects) {
      if (before.losses == before.reconnects) {
        ++before.losses;
        turns.push_back(Turn::kLost);
      } else {
        ++before.reconnects;
        turns.push_back(Turn::kReattached);
      }
    }
    return turns;
  }

 private:
  static constexpr std::chrono::milliseconds kFirstBackoff{250};
  static constexpr std::chrono::milliseconds kMaxBackoff{5000};

  bool lost_ = false;
  std::chrono::milliseconds backoff_ = kFirstBackoff;
  Counts counts_;
};

}  // namespace waitpath
