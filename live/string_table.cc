#include "live/string_table.h"

#include <cstring>

#include <stdexcept>

namespace waitpath {

StringTable& StringTable::Global() {
  static StringTable table;
  return table;
}

StringTable::StringTable() { Intern(""); }

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
  const Chunk* chunk = chunks_[(id >> kChunkBits) & (kMaxChunks - 1)].load(std::memory_order_acquire);
  if (!chunk) return {};
  return chunk->strings[id & (kChunkSize - 1)];
}

uint32_t LocalInterner::Intern(std::string_view s) {
  // Task names (at most 15 characters) repeat on every switch and wake-up: a direct-mapped
  // cache of short strings answers them with two word compares instead of a string hash.
  Short key{};
  const bool short_string = s.size() <= sizeof(key.bytes);
  Short* slot = nullptr;
  if (short_string) {
    std::memcpy(key.bytes, s.data(), s.size());
    key.len = static_cast<uint32_t>(s.size());
    uint64_t w[2];
    std::memcpy(w, key.bytes, sizeof(w));
    slot = &recent_[((w[0] ^ (w[1] * 0x9e3779b97f4a7c15ull) ^ key.len) * 0xff51afd7ed558ccdull) >> 56];
    if (slot->used && slot->len == key.len && std::memcmp(slot->bytes, key.bytes, sizeof(key.bytes)) == 0) return slot->id;
  }
  const uint32_t id = Slow(s);
  if (slot) {
    key.id = id;
    key.used = true;
    *slot = key;
  }
  return id;
}

uint32_t LocalInterner::Slow(std::string_view s) {
  auto it = cache_.find(s);
  if (it != cache_.end()) return it->second;
  const uint32_t id = StringTable::Global().Intern(s);
  cache_.emplace(std::string(s), id);
  return id;
}

}  // namespace waitpath
