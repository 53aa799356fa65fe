// Pages of a read-only file mapping that a sequential reader has gone past.
#pragma once

#include <sys/mman.h>

#include <cerrno>
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

// Maps the pages of `data` (a read-only file mapping of `size` bytes, page-aligned) before
// `upto` that a sequential reader is about to read, with 256 KiB more, in one system call
// (MADV_POPULATE_READ, Linux 5.14): the reader would otherwise take a page fault every 16 pages
// (the kernel's fault-around): `waitpath stats` took 4,800 page faults on a 175 MB trace, 1,900
// with this (docs/bench.md, "Live overheads").
// `*mapped`: how far it has mapped; where the kernel refuses the call, UINT64_MAX (it stops
// trying and the reader faults as before). Released pages (above) are not mapped again.
inline void MapPagesAhead(const void* data, uint64_t size, uint64_t upto, uint64_t* mapped) {
  static constexpr uint64_t kAheadBytes = 256 << 10;
  if (!data || upto <= *mapped || *mapped == UINT64_MAX) return;
  uint64_t to = ((upto + kAheadBytes - 1) & ~(kAheadBytes - 1)) + kAheadBytes;
  if (to > size) to = size;
  if (to <= *mapped) return;
  if (madvise(static_cast<char*>(const_cast<void*>(data)) + *mapped, to - *mapped,
              MADV_POPULATE_READ) != 0 &&
      errno == EINVAL) {
    *mapped = UINT64_MAX;
    return;
  }
  *mapped = to;
}

}  // namespace waitpath
