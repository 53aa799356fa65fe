#include "exporters/metrics_labels.h"

#include <algorithm>

#include "model/string_table.h"

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

std::string SanitizeCgroupLabelValue(std::string_view path) {
  constexpr size_t kMax = 64;
  if (path.empty()) return "unknown";
  if (path.size() > kMax) path = path.substr(path.size() - kMax);
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == ':' || c == '-' || c == '/' || c == '@';
    out += ok ? c : '_';
  }
  return out;
}

uint32_t ProcessLabels::Slot(uint32_t comm) {
  if (comm < by_comm_.size() && by_comm_[comm] != kUnset) return by_comm_[comm];
  const std::string_view text = StringTable::Global().Get(comm);
  std::string name =
      kind_ == Kind::kCgroup ? SanitizeCgroupLabelValue(text)
      // A task the trace never named: "unnamed", not the sanitizer's "_" for an empty value.
      : text.empty() ? std::string("unnamed")
                     : SanitizeLabelValue(text);
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
