// The leaves of an active path, and a vector of time per leaf.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace waitpath {

enum class Leaf : uint8_t {
  kRunning,
  kInterrupted,
  kPreempted,
  kTimer,
  kDisk,
  kNetwork,
  kIrq,
  kIpi,
  kUserInput,
  kBlocked,
  kUnknown,
  kCount
};
inline constexpr int kLeafCount = static_cast<int>(Leaf::kCount);

constexpr std::string_view LeafName(Leaf leaf) {
  constexpr std::array<std::string_view, kLeafCount> kNames = {
      "running", "interrupted", "preempted",  "timer",   "disk",   "network",
      "irq",     "ipi",         "user_input", "blocked", "unknown"};
  return kNames[static_cast<size_t>(leaf)];
}

// Nanoseconds per leaf state. Cumulative vectors F_X(t) and interval deltas use the same type.
struct StateVec {
  std::array<int64_t, kLeafCount> ns{};

  int64_t& operator[](Leaf leaf) { return ns[static_cast<size_t>(leaf)]; }
  int64_t operator[](Leaf leaf) const { return ns[static_cast<size_t>(leaf)]; }
  StateVec& operator+=(const StateVec& o) {
    for (int i = 0; i < kLeafCount; ++i) ns[i] += o.ns[i];
    return *this;
  }
  StateVec& operator-=(const StateVec& o) {
    for (int i = 0; i < kLeafCount; ++i) ns[i] -= o.ns[i];
    return *this;
  }
  friend StateVec operator+(StateVec a, const StateVec& b) { return a += b; }
  friend StateVec operator-(StateVec a, const StateVec& b) { return a -= b; }
  int64_t total() const {
    int64_t t = 0;
    for (int64_t v : ns) t += v;
    return t;
  }
  static StateVec Of(Leaf leaf, int64_t ns) {
    StateVec v;
    v[leaf] = ns;
    return v;
  }
};

}  // namespace waitpath
