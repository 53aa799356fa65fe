// Which CPU each stream is (its packet contexts say), the original CPUs of a replayed host, and
// every CPU a host has shown, over all the graphs it was read through.
#pragma once

#include <cstdint>
#include <vector>

namespace waitpath {

class CpuDirectory {
 public:
  // `stream`'s packet context says `cpu` (a stream's packets may name different CPUs: LTTng
  // 2.14+'s per-channel buffers). True when no stream said `cpu` before (a CPU to count).
  bool SetStreamCpu(const void* stream, uint16_t cpu);
  // The CPU of `stream`, or `otherwise` when no packet context said.
  uint16_t CpuOf(const void* stream, uint16_t otherwise) const {
    for (const StreamCpu& s : streams_) {
      if (s.stream == stream) return s.cpu;
    }
    return otherwise;
  }
  // The graph's streams are gone (a reattached live graph has new ones); their CPUs stay known.
  void ForgetStreams();
  // One stream is gone (a live stream that ended): the CPUs it showed stay known.
  void ForgetStream(const void* stream);

  // A replayed host's event came from original CPU `cpu`.
  void NoteReplayedCpu(uint16_t cpu) {
    if (cpu >= replayed_.size()) replayed_.resize(cpu + 1u, false);
    if (!replayed_[cpu]) {
      replayed_[cpu] = true;
      ++replayed_count_;
    }
  }
  uint32_t replayed_count() const { return replayed_count_; }
  // The original CPUs seen, ascending.
  std::vector<uint16_t> ReplayedCpus() const;

  // Every CPU shown: streams of this graph and earlier ones, replayed CPUs; ascending, once each.
  std::vector<uint16_t> AllCpus() const;

 private:
  struct StreamCpu {
    const void* stream;
    uint16_t cpu;
  };
  std::vector<StreamCpu> streams_;  // this graph's
  std::vector<bool> shown_;         // by CPU: a packet context of any stream, any graph said it
  std::vector<bool> replayed_;
  uint32_t replayed_count_ = 0;
};

}  // namespace waitpath
