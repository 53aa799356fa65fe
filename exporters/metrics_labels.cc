#include "exporters/metrics_labels.h"

#include <algorithm>

#include "base/untrusted_name.h"
#include "model/string_table.h"

namespace waitpath {

// A task the trace never named is "unnamed" (the view's "(no name)" without the brackets and
// the space, which a PromQL matcher would have to quote and escape).
std::string LabelValue(std::string_view name) {
  return name.empty() ? std::string("unnamed") : PrintableName(name, kMaxLabelBytes);
}

std::string CgroupLabelValue(std::string_view path) {
  if (path.empty()) return "unknown";
  if (path.size() > kMaxLabelBytes) path = path.substr(path.size() - kMaxLabelBytes);
  return PrintableName(path, 4 * kMaxLabelBytes);
}

uint32_t ProcessLabels::Slot(uint32_t comm) {
  if (comm < by_comm_.size() && by_comm_[comm] != kUnset) return by_comm_[comm];
  const std::string_view text = StringTable::Global().Get(comm);
  std::string name = kind_ == Kind::kCgroup ? CgroupLabelValue(text) : LabelValue(text);
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
