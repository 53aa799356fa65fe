// Checks a timeline against the Trace Event Format that chrome://tracing and ui.perfetto.dev
// read (the "Trace Event Format" document of the Chromium project: JSON object form, phases
// X, M, s and f), plus what a viewer needs to draw it as meant: complete events on one track
// nest (no partial overlap), and every flow has one start and one end.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace waitpath::testing {

// Adds a gtest failure for every departure from the format; returns the number found.
inline int CheckTraceEventFormat(const nlohmann::json& trace) {
  int bad = 0;
  auto fail = [&](const std::string& why, const nlohmann::json& e) {
    if (++bad <= 20) ADD_FAILURE() << why << ": " << e.dump();
  };
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    fail("not a JSON object with a traceEvents array", nlohmann::json());
    return bad;
  }
  if (trace.contains("displayTimeUnit") && trace["displayTimeUnit"] != "ns" &&
      trace["displayTimeUnit"] != "ms")
    fail("displayTimeUnit is ns or ms", trace["displayTimeUnit"]);
  if (trace.contains("otherData") && !trace["otherData"].is_object())
    fail("otherData is an object", trace["otherData"]);
  const std::set<std::string> metadata = {"process_name", "thread_name", "process_sort_index",
                                          "thread_sort_index"};
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> tracks;
  std::map<std::string, std::pair<int, int>> flows;  // id -> (starts, ends)
  for (const auto& e : trace["traceEvents"]) {
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string()) {
      fail("an event is an object with a string ph", e);
      continue;
    }
    const std::string ph = e["ph"];
    if (!e.contains("pid") || !e["pid"].is_number_integer() || !e.contains("tid") ||
        !e["tid"].is_number_integer())
      fail("pid and tid are integers", e);
    if (!e.contains("name") || !e["name"].is_string()) fail("name is a string", e);
    if (e.contains("cat") && !e["cat"].is_string()) fail("cat is a string", e);
    if (e.contains("args") && !e["args"].is_object()) fail("args is an object", e);
    if (ph == "M") {
      if (!metadata.count(e.value("name", ""))) fail("unknown metadata event", e);
      const nlohmann::json& a = e["args"];
      if (e["name"] == "process_name" || e["name"] == "thread_name") {
        if (!a.contains("name") || !a["name"].is_string()) fail("metadata args.name", e);
      } else if (!a.contains("sort_index") || !a["sort_index"].is_number_integer()) {
        fail("metadata args.sort_index", e);
      }
      continue;
    }
    if (!e.contains("ts") || !e["ts"].is_number()) {
      fail("ts is a number (microseconds)", e);
      continue;
    }
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) {
        fail("a complete event has dur >= 0", e);
        continue;
      }
      tracks[{e["pid"], e["tid"]}].push_back(
          {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
    } else if (ph == "s" || ph == "f") {
      if (!e.contains("id") || !(e["id"].is_number_integer() || e["id"].is_string())) {
        fail("a flow event has an id", e);
        continue;
      }
      if (ph == "f" && e.contains("bp") && e["bp"] != "e") fail("bp is e", e);
      auto& f = flows[e["id"].dump() + "/" + e.value("cat", "") + "/" + e.value("name", "")];
      (ph == "s" ? f.first : f.second)++;
    } else {
      fail("a phase waitpath does not write", e);
    }
  }
  for (const auto& [id, f] : flows) {
    if (f.first != 1 || f.second != 1)
      fail("flow " + id + " has one start and one end", nlohmann::json());
  }
  // Slices of one track nest: sorted by start (longer first), each one ends within every
  // slice still open at its start. 1 ns of rounding slack (times are printed to the ns).
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<double> open;
    for (const auto& [start, end] : slices) {
      while (!open.empty() && open.back() <= start + 1e-3) open.pop_back();
      if (!open.empty() && end > open.back() + 1e-3) {
        fail("slices overlap without nesting on track " + std::to_string(track.first) + "/" +
                 std::to_string(track.second) + " at " + std::to_string(start),
             nlohmann::json());
      }
      open.push_back(end);
    }
  }
  return bad;
}

}  // namespace waitpath::testing
