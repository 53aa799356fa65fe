#include "readers/cpu_directory.h"

#include <algorithm>

namespace waitpath {

bool CpuDirectory::SetStreamCpu(const void* stream, uint16_t cpu) {
  auto it = std::find_if(streams_.begin(), streams_.end(),
                         [&](const StreamCpu& s) { return s.stream == stream; });
  if (it != streams_.end()) {
    it->cpu = cpu;
  } else {
    streams_.push_back({stream, cpu});
  }
  if (cpu >= shown_.size()) shown_.resize(cpu + size_t{1}, false);
  if (shown_[cpu]) return false;
  shown_[cpu] = true;
  return true;
}

void CpuDirectory::ForgetStreams() {
  streams_.clear();
}

void CpuDirectory::ForgetStream(const void* stream) {
  std::erase_if(streams_, [stream](const StreamCpu& s) { return s.stream == stream; });
}

std::vector<uint16_t> CpuDirectory::ReplayedCpus() const {
  std::vector<uint16_t> cpus;
  for (size_t cpu = 0; cpu < replayed_.size(); ++cpu) {
    if (replayed_[cpu]) cpus.push_back(static_cast<uint16_t>(cpu));
  }
  return cpus;
}

std::vector<uint16_t> CpuDirectory::AllCpus() const {
  std::vector<uint16_t> cpus;
  for (size_t cpu = 0; cpu < shown_.size(); ++cpu) {
    if (shown_[cpu]) cpus.push_back(static_cast<uint16_t>(cpu));
  }
  const std::vector<uint16_t> replayed = ReplayedCpus();
  cpus.insert(cpus.end(), replayed.begin(), replayed.end());
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

}  // namespace waitpath
