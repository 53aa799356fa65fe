// Fixed-size memory chunks for ChunkedQueue, carved from 2 MiB slabs that the kernel may back
// with transparent huge pages. A task history grows by one chunk every few segments; taking
// them from malloc cost a page fault per 4 KiB of new history and malloc's own bookkeeping
// (the engine alone on a growing history: 264 -> 183 ns/event with this pool). Chunks given
// back are reused by any history; slabs are kept for the life of the process, so its memory
// is its peak history (bounded by --max-history-mb).
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace waitpath {

// Bytes of chunks handed out by every pool and not given back: what the histories of the
// process hold, spare chunks and partly used ones included (the history's true size, which
// its byte cap bounds; one engine per process).
inline std::atomic<size_t>& ChunksInUseBytes() {
  static std::atomic<size_t> bytes{0};
  return bytes;
}

template <size_t kBytes>
class ChunkPool {
 public:
  static void* Allocate() {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.free.empty()) Grow(s);
    void* chunk = s.free.back();
    s.free.pop_back();
    ChunksInUseBytes().fetch_add(kBytes, std::memory_order_relaxed);
    return chunk;
  }

  static void Free(void* chunk) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.free.push_back(chunk);
    ChunksInUseBytes().fetch_sub(kBytes, std::memory_order_relaxed);
  }

 private:
  static constexpr size_t kSlab = size_t{2} << 20;
  static_assert(kBytes % alignof(std::max_align_t) == 0 && kBytes <= kSlab);

  struct State {
    std::mutex mutex;
    std::vector<void*> free;
  };
  static State& state() {
    static State* s = new State;  // never destroyed: histories may outlive static objects
    return *s;
  }
  static void Grow(State& s) {
    char* slab = static_cast<char*>(std::aligned_alloc(kSlab, kSlab));
    if (!slab) throw std::bad_alloc();
    madvise(slab, kSlab, MADV_HUGEPAGE);  // a hint: without THP these are ordinary pages
    for (size_t off = kSlab - kSlab % kBytes; off >= kBytes; off -= kBytes)
      s.free.push_back(slab + off - kBytes);
  }
};

}  // namespace waitpath
