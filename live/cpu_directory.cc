#include "live/cpu_directory.h"

#include <algorithm>

namespace waitpath {

bool CpuDirectory::SetStreamCpu(const void* stream, uint16_t cpu) {
  auto it = std::find_if(streams_.begin(), streams_.end(),
                         [&](const StreamCpu& s) { return s.stream == stream; });
  if (it != streams_.end()) {
    it->cpu = cpu;
    return false;
  }
  const bool new_cpu = std::none_of(streams_.begin(), streams_.end(),
                                    [&](const StreamCpu& s) { return s.cpu == cpu; });
  streams_.push_back({stream, cpu});
  return new_cpu;
}

void CpuDirectory::ForgetStreams() {
  for (const StreamCpu& s : streams_) earlier_.push_back(s.cpu);
  streams_.clear();
}

std::vector<uint16_t> CpuDirectory::ReplayedCpus() const {
  std::vector<uint16_t> cpus;
  for (size_t cpu = 0; cpu < replayed_.size(); ++cpu) {
    if (replayed_[cpu]) cpus.push_back(static_cast<uint16_t>(cpu));
  }
  return cpus;
}

std::vector<uint16_t> CpuDirectory::AllCpus() const {
  std::vector<uint16_t> cpus = earlier_;
  for (const StreamCpu& s : streams_) cpus.push_back(s.cpu);
  const std::vector<uint16_t> replayed = ReplayedCpus();
  cpus.insert(cpus.end(), replayed.begin(), replayed.end());
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

}  // namespace waitpath
