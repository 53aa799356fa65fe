// Shared vocabulary of the generator: time units, leaf states, duration parsing.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/duration.h"

namespace waitpath::gen {

// Simulation ("true") time in integer nanoseconds since the start of the simulation.
using Ns = int64_t;

constexpr Ns kUs = 1000;
constexpr Ns kMs = 1000 * kUs;
constexpr Ns kSec = 1000 * kMs;

// The 11 leaf states (docs/analyze.md, "Leaf states"), in the order of the truth file.
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
};
constexpr size_t kLeafCount = 11;

constexpr std::array<std::string_view, kLeafCount> kLeafNames = {
    "running", "interrupted", "preempted",  "timer",   "disk",   "network",
    "irq",     "ipi",         "user_input", "blocked", "unknown"};

using LeafVector = std::array<Ns, kLeafCount>;

// A scenario's duration string, "250us", "3ms", "2s" (base/duration.h): a unit is needed,
// plain TOML integers are the way to give nanoseconds. Throws std::invalid_argument.
Ns DurationOrThrow(std::string_view text, DurationSign sign = DurationSign::kNonNegative);

// A duration drawn uniformly from [lo, hi]; "1ms..3ms" or a single value.
struct DurationRange {
  Ns lo = 0;
  Ns hi = 0;
};
DurationRange ParseDurationRange(std::string_view text);

}  // namespace waitpath::gen
