// The bytes of one received trace packet. A vector whose resize leaves new bytes unset: a
// packet buffer is always filled from the socket right after it is sized, and zeroing it first
// (std::vector's resize) was a few percent of a live process's CPU (docs/bench.md).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace waitpath {

template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-initialised: left as it is
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    std::construct_at(p, std::forward<Args>(args)...);
  }
};

using PacketBytes = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

}  // namespace waitpath
