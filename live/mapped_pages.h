// Pages of a read-only file mapping that a sequential reader has gone past.
#pragma once

#include <sys/mman.h>

#include <cstdint>

namespace waitpath {

// Releases the pages of `data` (a read-only file mapping, page-aligned as mmap returns it)
// between `*released` and `upto`, a megabyte at a time: they leave the process's resident
// memory, the page cache keeps them, and a page read again comes back from the file (it was
// never written). Without it, a reader of a long trace holds every page it has read until the
// file is unmapped. One system call per megabyte read.
inline void ReleaseMappedPagesBefore(const void* data, uint64_t upto, uint64_t* released) {
  static constexpr uint64_t kReleaseBytes = 1 << 20;
  upto &= ~(kReleaseBytes - 1);
  if (!data || upto <= *released) return;
  madvise(static_cast<char*>(const_cast<void*>(data)) + *released, upto - *released, MADV_DONTNEED);
  *released = upto;
}

}  // namespace waitpath
