// Process-wide string interning: comm and irq names become dense uint32 ids.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace waitpath {

// Ids are dense and stable; Get() is lock-free and safe from any thread for an id that was
// handed to it (through a queue) after Intern() returned it. Intern() takes a lock, so readers
// keep a LocalInterner in front of it.
class StringTable {
 public:
  static StringTable& Global();

  uint32_t Intern(std::string_view s);
  std::string_view Get(uint32_t id) const;

 private:
  static constexpr uint32_t kChunkBits = 12;
  static constexpr uint32_t kChunkSize = 1u << kChunkBits;
  static constexpr uint32_t kMaxChunks = 1u << 12;  // 16 M distinct strings
  struct Chunk {
    std::array<std::string, kChunkSize> strings;
  };
  StringTable();

  mutable std::mutex mutex_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::array<std::atomic<Chunk*>, kMaxChunks> chunks_{};
  std::vector<std::unique_ptr<Chunk>> owned_;
  uint32_t size_ = 0;
};

// In a reader's child process (readers/reader_process.cc) ids must be the parent's: new strings
// are interned there through `intern` (set once, right after the fork).
void SetRemoteInterner(std::function<uint32_t(std::string_view)> intern);

// A reader thread's lock-free front to the global table.
class LocalInterner {
 public:
  uint32_t Intern(std::string_view s);

 private:
  struct Short {
    uint64_t w0, w1;  // see Intern
    uint32_t len;
    uint32_t id;
    bool used;
  };
  uint32_t Slow(std::string_view s);

  std::array<Short, 256> recent_{};
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> cache_;
};

}  // namespace waitpath
