#include "model/string_table.h"

#include <cstring>
#include <stdexcept>

namespace waitpath {

StringTable& StringTable::Global() {
  static StringTable table;
  return table;
}

StringTable::StringTable() {
  Intern("");
}

uint32_t StringTable::Intern(std::string_view s) {
  std::lock_guard lock(mutex_);
  auto it = ids_.find(std::string(s));
  if (it != ids_.end()) return it->second;
  const uint32_t id = size_;
  const uint32_t chunk = id >> kChunkBits;
  if (chunk >= kMaxChunks) throw std::length_error("string table full");
  if (!chunks_[chunk].load(std::memory_order_relaxed)) {
    owned_.push_back(std::make_unique<Chunk>());
    chunks_[chunk].store(owned_.back().get(), std::memory_order_release);
  }
  chunks_[chunk].load(std::memory_order_relaxed)->strings[id & (kChunkSize - 1)] = std::string(s);
  ids_.emplace(std::string(s), id);
  ++size_;
  return id;
}

std::string_view StringTable::Get(uint32_t id) const {
  const Chunk* chunk =
      chunks_[(id >> kChunkBits) & (kMaxChunks - 1)].load(std::memory_order_acquire);
  if (!chunk) return {};
  return chunk->strings[id & (kChunkSize - 1)];
}

uint32_t LocalInterner::Intern(std::string_view s) {
  // Task names (at most 15 characters) repeat on every switch and wake-up: a direct-mapped
  // cache of short strings answers them with a few word compares instead of a string hash.
  // Two loads that together cover the string (overlapping when shorter than 16) identify it
  // with its length; they read the string in place (a copy to the stack and a reload stalled
  // on store forwarding, which profiling showed).
  const size_t n = s.size();
  if (n > 16) return Slow(s);
  const char* p = s.data();
  uint64_t w0 = 0, w1 = 0;
  if (n >= 8) {
    std::memcpy(&w0, p, 8);
    std::memcpy(&w1, p + n - 8, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    w0 = a;
    w1 = b;
  } else if (n > 0) {
    w0 = static_cast<uint8_t>(p[0]) | static_cast<uint64_t>(static_cast<uint8_t>(p[n / 2])) << 8 |
         static_cast<uint64_t>(static_cast<uint8_t>(p[n - 1])) << 16;
  }
  Short& slot = recent_[((w0 ^ (w1 * 0x9e3779b97f4a7c15ull) ^ n) * 0xff51afd7ed558ccdull) >> 56];
  if (slot.used && slot.w0 == w0 && slot.w1 == w1 && slot.len == n) return slot.id;
  const uint32_t id = Slow(s);
  slot = Short{w0, w1, static_cast<uint32_t>(n), id, true};
  return id;
}

namespace {
std::function<uint32_t(std::string_view)>& RemoteInterner() {
  static std::function<uint32_t(std::string_view)> remote;
  return remote;
}
}  // namespace

void SetRemoteInterner(std::function<uint32_t(std::string_view)> intern) {
  RemoteInterner() = std::move(intern);
}

uint32_t LocalInterner::Slow(std::string_view s) {
  auto it = cache_.find(s);
  if (it != cache_.end()) return it->second;
  const uint32_t id = RemoteInterner() ? RemoteInterner()(s) : StringTable::Global().Intern(s);
  cache_.emplace(std::string(s), id);
  return id;
}

}  // namespace waitpath
