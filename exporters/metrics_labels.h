// Label values for process names: as the names are, and bounded (the first N names seen keep
// their own value, later ones fold into `other`) so that a scrape's series count cannot grow
// with the number of distinct programs on the hosts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace waitpath {

// A name (a task's, an operation's) as a label value: as it is, since Prometheus takes any UTF-8
// in a label value (the text exposition escapes `\`, `"` and newlines): `GET /cart` stays
// `GET /cart`. Only what a terminal showing a scrape must not receive is written \xNN, as in
// waitpath's messages (base/untrusted_name.h: control bytes, bytes that are not UTF-8; a
// backslash doubled), cut after kMaxLabelBytes with "…"; an empty name is `unnamed` (the
// reports' `(no name)`, exporters/shown_name.h).
inline constexpr size_t kMaxLabelBytes = 64;
std::string LabelValue(std::string_view name);
// A cgroup path as a label value: as LabelValue, but a path longer than kMaxLabelBytes keeps
// its end (the unit or container name); `unknown` if empty.
std::string CgroupLabelValue(std::string_view path);

// The bounded label values of one label: process names (task comms) or cgroup paths.
class ProcessLabels {
 public:
  static constexpr std::string_view kOther = "other";
  enum class Kind : uint8_t { kProcess, kCgroup };

  explicit ProcessLabels(size_t max_names, Kind kind = Kind::kProcess)
      : max_names_(max_names), kind_(kind) {}

  // The slot of an interned task name or cgroup path (model/string_table.h). Slots are dense:
  // 0..N-1 for the first N distinct sanitized names, then other_slot() for the rest. Cached per
  // name id, so that steady-state lookups are one vector access.
  uint32_t Slot(uint32_t comm);
  const std::string& Name(uint32_t slot) const { return names_[slot]; }
  uint32_t other_slot() const { return static_cast<uint32_t>(max_names_); }
  size_t distinct() const { return names_.size(); }

 private:
  static constexpr uint32_t kUnset = UINT32_MAX;

  size_t max_names_;
  Kind kind_;
  std::vector<std::string> names_;  // by slot; `other` is appended when first needed
  std::unordered_map<std::string, uint32_t> by_name_;
  std::vector<uint32_t> by_comm_;  // interned name id -> slot
};

}  // namespace waitpath
