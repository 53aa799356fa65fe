// Chooses the upstream port whose next message goes first: the earliest head; on equal times
// the lower tie key (its CPU: SetTie), then the lower port; a port whose head is not known yet
// holds the merge back.
//
// Why the CPU and not the port alone: events of two CPUs often share a timestamp (a guest's
// coarse clock: 28 to 90 per lab session of 2,300 to 5,300 events), and the order they merge in
// decides what the engine sees (a wake-up before or after a switch). Recorded, the ports are in
// file-name order; live, in the order the relayd announces the streams, which is its hash
// table's (lttng-relayd's send_viewer_streams), not the CPUs'. Ties by port made `live` and
// `analyze` of one session disagree now and then; ties by CPU make them the same.
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace waitpath {

class PortMerger {
 public:
  // What asking a port for its head (next message to merge) gave.
  enum class Refill : uint8_t {
    kHead,   // known, at the given time
    kEnded,  // the port has nothing more: it leaves the merge
    kAgain,  // not yet (live): the merge waits for it
    kError,
  };

  // A port that takes part; its head must be asked for (RefillMissing) before anything merges.
  void AddPort(uint32_t port) { missing_.push_back(port); }
  // The port's tie key from its next head on (its CPU; 0 until set).
  void SetTie(uint32_t port, uint32_t tie) {
    if (port >= ties_.size()) ties_.resize(port + size_t{1}, 0);
    ties_[port] = tie;
  }
  void Clear() {
    heap_.clear();
    missing_.clear();
  }

  // Asks every port whose head is missing: `refill(port, &ts)` returns a Refill (and ts for a
  // head). False on an error.
  template <typename RefillFn>
  bool RefillMissing(RefillFn&& refill) {
    for (size_t i = 0; i < missing_.size();) {
      int64_t ts = 0;
      switch (refill(missing_[i], &ts)) {
        case Refill::kHead:
          Push(missing_[i], ts);
          [[fallthrough]];
        case Refill::kEnded:
          missing_.erase(missing_.begin() + static_cast<long>(i));
          break;
        case Refill::kAgain:
          ++i;
          break;
        case Refill::kError:
          return false;
      }
    }
    return true;
  }

  // Some port's head is not known yet: nothing can be merged.
  bool blocked() const { return !missing_.empty(); }
  // A head is known that can go next (when not blocked).
  bool has_head() const { return !heap_.empty(); }
  // Every port has ended.
  bool done() const { return heap_.empty() && missing_.empty(); }

  // Takes the port with the earliest head (has_head() must hold); its head is consumed and the
  // port must be put back with Requeue before anything else is asked of the merger. (It stays
  // at the heap's top meanwhile: a new head then sifts down once, where popping and pushing
  // would each walk the heap.)
  uint32_t PopEarliest() { return heap_.front().port; }

  // The popped port's next head. False on an error.
  bool Requeue(uint32_t port, Refill refill, int64_t ts) {
    switch (refill) {
      case Refill::kHead:
        heap_.front() = Head{ts, Tie(port), port};
        SiftDown();
        return true;
      case Refill::kEnded:
        RemoveTop();
        return true;
      case Refill::kAgain:
        RemoveTop();
        missing_.push_back(port);
        return true;
      case Refill::kError:
        RemoveTop();
        return false;
    }
    return false;
  }

 private:
  struct Head {
    int64_t ts;
    uint32_t tie;
    uint32_t port;
    auto operator<=>(const Head&) const = default;
  };
  uint32_t Tie(uint32_t port) const { return port < ties_.size() ? ties_[port] : 0; }
  void Push(uint32_t port, int64_t ts) {
    heap_.push_back(Head{ts, Tie(port), port});
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  }
  void RemoveTop() {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    heap_.pop_back();
  }
  // Restores the min-heap after the top was replaced. Heads are distinct (each names its port),
  // so the order ports come out in is the same whatever the heap's shape.
  void SiftDown() {
    const size_t n = heap_.size();
    const Head moved = heap_[0];
    size_t i = 0;
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child + 1] < heap_[child]) ++child;
      if (!(heap_[child] < moved)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = moved;
  }

  std::vector<Head> heap_;         // min-heap of heads
  std::vector<uint32_t> missing_;  // ports whose head must be asked for
  std::vector<uint32_t> ties_;     // by port
};

}  // namespace waitpath
