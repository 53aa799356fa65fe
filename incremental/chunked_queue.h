// A FIFO of trivially copyable values in fixed-size chunks (from a ChunkPool): append at the
// back, drop from the front, index in O(1). Unlike a vector it never copies what it holds when
// it grows, and the memory of dropped chunks is reused, so a long-running history touches no
// new pages in its steady state; unlike std::deque (512-byte nodes) a chunk holds many values.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "incremental/chunk_pool.h"

namespace waitpath {

template <typename T, size_t kChunk = 16>
class ChunkedQueue {
  static_assert(std::is_trivially_copyable_v<T>);
  static_assert((kChunk & (kChunk - 1)) == 0, "chunk size must be a power of two");

 public:
  bool empty() const { return first_ == end_; }
  size_t size() const { return end_ - first_; }
  T& operator[](size_t i) { return Slot(first_ + i); }
  const T& operator[](size_t i) const { return Slot(first_ + i); }
  T& back() { return Slot(end_ - 1); }
  const T& back() const { return Slot(end_ - 1); }

  void push_back(const T& value) { append() = value; }
  // Appends a value the caller fills in place (a large T built whole and then copied cost a
  // history a copy of each segment, docs/bench.md "Issue 15's CPU targets").
  T& append() {
    if (end_ == chunks_.size() * kChunk) {
      chunks_.push_back(spare_ ? std::move(spare_) : Chunk(static_cast<T*>(Pool::Allocate())));
    }
    return Slot(end_++);
  }

  // Drops the last value (its chunk stays, for the next append).
  void pop_back() { --end_; }

  // Drops the first value; its chunk is kept as the spare once all of it is dropped.
  void pop_front() {
    if (++first_ % kChunk != 0) return;
    spare_ = std::move(chunks_[first_ / kChunk - 1]);
    // Dropped chunks' (null) pointers are removed once they are half of the list.
    const size_t dead = first_ / kChunk;
    if (dead * 2 >= chunks_.size()) {
      chunks_.erase(chunks_.begin(), chunks_.begin() + static_cast<std::ptrdiff_t>(dead));
      first_ -= dead * kChunk;
      end_ -= dead * kChunk;
    }
  }

  // Bytes allocated (whole chunks, the spare included).
  size_t capacity_bytes() const {
    return (chunks_.size() - first_ / kChunk + (spare_ ? 1 : 0)) * kChunk * sizeof(T);
  }

 private:
  T& Slot(size_t j) { return chunks_[j / kChunk][j % kChunk]; }
  const T& Slot(size_t j) const { return chunks_[j / kChunk][j % kChunk]; }

  using Pool = ChunkPool<sizeof(T) * kChunk>;
  struct Release {
    void operator()(T* chunk) const { Pool::Free(chunk); }
  };
  using Chunk = std::unique_ptr<T[], Release>;

  // Small chunks (16 values): a short-lived task's history holds one of 256 bytes (16-byte
  // segments).
  std::vector<Chunk> chunks_;
  Chunk spare_;
  size_t first_ = 0;  // counted from chunks_[0][0]; chunks before first_ / kChunk are dropped
  size_t end_ = 0;    // counted from chunks_[0][0]
};

}  // namespace waitpath
