// The invariants every task and wait record of waitpath's JSON Lines keeps, checked by the
// end-to-end tests (tests/tools/check_records.py checks the same from scripts).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace waitpath::testing {

inline const char* const kLeaves[] = {"running",    "interrupted", "preempted", "timer",
                                      "disk",       "network",     "irq",       "ipi",
                                      "user_input", "blocked",     "unknown"};

// The sum of a states object; every state must be non-negative.
inline int64_t Sum(const nlohmann::json& states) {
  int64_t s = 0;
  for (const auto& [k, v] : states.items()) {
    EXPECT_GE(v.get<int64_t>(), 0) << k;
    s += v.get<int64_t>();
  }
  return s;
}

// Every task record: all 11 keys, breakdown and by_task each summing to the lifetime, no
// negative state, no empty by_task entry.
inline void ExpectTaskInvariants(const nlohmann::json& r, bool full_by_task) {
  SCOPED_TRACE(r.dump().substr(0, 400));
  const int64_t life = r["end_ns"].get<int64_t>() - r["start_ns"].get<int64_t>();
  ASSERT_GT(life, 0);
  for (const char* leaf : kLeaves) ASSERT_TRUE(r["breakdown_ns"].contains(leaf)) << leaf;
  EXPECT_EQ(Sum(r["breakdown_ns"]), life);
  int64_t by_task = 0;
  for (const auto& b : r["by_task"]) {
    EXPECT_EQ(Sum(b["states"]), b["ns"].get<int64_t>());
    EXPECT_GT(b["ns"].get<int64_t>(), 0);
    by_task += b["ns"].get<int64_t>();
  }
  if (full_by_task) {
    EXPECT_EQ(by_task, life);
  } else {
    EXPECT_LE(by_task, life);
  }
}

// Wait records: breakdown sums to the wait with no negative state; the path covers it
// exactly, in order, and agrees with the breakdown state by state.
inline void ExpectWaitInvariants(const nlohmann::json& w) {
  SCOPED_TRACE(w.dump().substr(0, 400));
  const int64_t start = w["start_ns"], end = w["end_ns"];
  EXPECT_EQ(Sum(w["breakdown_ns"]), end - start);
  int64_t at = start;
  std::map<std::string, int64_t> per_state;
  for (const auto& p : w["path"]) {
    EXPECT_EQ(p["start_ns"].get<int64_t>(), at);
    EXPECT_LT(p["start_ns"].get<int64_t>(), p["end_ns"].get<int64_t>());
    per_state[p["state"]] += p["end_ns"].get<int64_t>() - p["start_ns"].get<int64_t>();
    at = p["end_ns"];
  }
  EXPECT_EQ(at, end);
  for (const auto& [state, ns] : per_state)
    EXPECT_EQ(ns, w["breakdown_ns"][state].get<int64_t>()) << state;
}

}  // namespace waitpath::testing
