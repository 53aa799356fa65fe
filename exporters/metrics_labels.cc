#include "exporters/metrics_labels.h"

#include <algorithm>

#include "live/string_table.h"

namespace waitpath {

std::string SanitizeLabelValue(std::string_view name) {
  constexpr size_t kMax = 64;
  std::string out;
  out.reserve(std::min(name.size(), kMax));
  for (char c : name.substr(0, kMax)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == ':' || c == '-';
    out += ok ? c : '_';
  }
  return out.empty() ? "_" : out;
}

uint32_t ProcessLabels::Slot(uint32_t comm) {
  if (comm < by_comm_.size() && by_comm_[comm] != kUnset) return by_comm_[comm];
  std::string name = SanitizeLabelValue(StringTable::Global().Get(comm));
  uint32_t slot;
  if (auto it = by_name_.find(name); it != by_name_.end()) {
    slot = it->second;
  } else if (by_name_.size() < max_names_) {
    slot = static_cast<uint32_t>(by_name_.size());
    by_name_.emplace(name, slot);
    if (names_.size() <= slot) names_.resize(slot + 1);
    names_[slot] = std::move(name);
  } else {
    slot = other_slot();
  }
  if (slot == other_slot() && names_.size() <= slot) {
    names_.resize(slot + 1);
    names_[slot] = std::string(kOther);
  }
  if (by_comm_.size() <= comm) by_comm_.resize(comm + 1, kUnset);
  by_comm_[comm] = slot;
  return slot;
}

}  // namespace waitpath
