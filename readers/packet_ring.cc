#include "readers/packet_ring.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include "base/untrusted_name.h"

namespace waitpath {
namespace {

namespace fs = std::filesystem;

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

bool WriteFile(const fs::path& path, const void* data, size_t size, std::string* error) {
  File f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f || std::fwrite(data, 1, size, f.get()) != size || std::fflush(f.get()) != 0) {
    *error = path.string() + ": cannot write: " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

void PacketRing::SetMetadata(const std::string& trace, const std::string& text) {
  std::lock_guard lock(mutex_);
  for (Trace& t : traces_) {
    if (t.path == trace) {
      t.metadata = text;
      return;
    }
  }
  traces_.push_back({trace, text});
}

PacketBytes PacketRing::Add(const std::string& trace, const std::string& channel,
                            PacketBytes&& packet) {
  std::lock_guard lock(mutex_);
  uint32_t index = 0;
  while (index < traces_.size() && traces_[index].path != trace) ++index;
  if (index == traces_.size()) traces_.push_back({trace, {}});
  counts_.bytes += packet.size();
  ++counts_.packets;
  packets_.push_back({index, channel, std::move(packet)});
  PacketBytes reuse;
  while (counts_.bytes > max_bytes_ && !packets_.empty()) {
    Packet& old = packets_.front();
    counts_.bytes -= old.bytes.size();
    --counts_.packets;
    ++counts_.dropped;
    reuse = std::move(old.bytes);
    packets_.pop_front();
  }
  return reuse;
}

std::vector<std::string> PacketRing::WriteTo(const std::string& dir, std::string* error) const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  std::error_code ec;
  fs::remove_all(dir, ec);  // what an earlier call wrote
  for (size_t i = 0; i < traces_.size(); ++i) {
    const Trace& t = traces_[i];
    // A trace without metadata, or without packets left, is not a trace to cut.
    bool any = false;
    for (const Packet& p : packets_) any = any || p.trace == i;
    if (t.metadata.empty() || !any) continue;
    const fs::path trace_dir = fs::path(dir) / ("trace-" + std::to_string(i));
    fs::create_directories(trace_dir, ec);
    if (ec) {
      *error = trace_dir.string() + ": cannot create: " + ec.message();
      return {};
    }
    if (!WriteFile(trace_dir / "metadata", t.metadata.data(), t.metadata.size(), error)) return {};
    // By file name: the relayd's channel name, encoded (it may be "../../x" or "/etc/x").
    std::map<std::string, std::unique_ptr<std::FILE, int (*)(std::FILE*)>> files;
    for (const Packet& p : packets_) {
      if (p.trace != i) continue;
      const std::string name = PathComponent(p.channel);
      auto it = files.find(name);
      if (it == files.end()) {
        const fs::path path = trace_dir / name;
        it = files.emplace(name, File(std::fopen(path.c_str(), "wb"), &std::fclose)).first;
      }
      if (!it->second ||
          std::fwrite(p.bytes.data(), 1, p.bytes.size(), it->second.get()) != p.bytes.size()) {
        *error =
            PrintableName((trace_dir / name).string()) + ": cannot write: " + std::strerror(errno);
        return {};
      }
    }
    for (auto& [name, f] : files) {
      if (std::fflush(f.get()) != 0) {
        *error =
            PrintableName((trace_dir / name).string()) + ": cannot write: " + std::strerror(errno);
        return {};
      }
    }
    out.push_back(trace_dir.string());
  }
  return out;
}

PacketRing::Counts PacketRing::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

}  // namespace waitpath
