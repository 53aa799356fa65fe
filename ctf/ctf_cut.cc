#include "ctf/ctf_cut.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "ctf/trace_check.h"

namespace waitpath {

namespace fs = std::filesystem;

CtfCut CutTrace(const std::string& dir, int64_t from_ns, int64_t to_ns, const std::string& out) {
  CtfCut cut;
  const CheckedTrace trace = CheckTrace(dir, {}, /*make_view=*/false);
  if (!trace.error.empty()) {
    cut.error = trace.error;
    return cut;
  }
  if (!trace.packets_checked) {
    cut.error = dir + ": its packet layout is beyond waitpath's reader of packet contexts";
    return cut;
  }
  // The window's start must still be stored. A stream the relayd rotates (one instance over
  // several files) whose oldest packet begins after the window's start and is not its first
  // (packet_seq_num above 0) lost what the window needs: rotated away. (Only rotated streams:
  // elsewhere a sequence number above 0 need not mean a loss, LTTng numbers the empty packets
  // it does not send in live mode too.)
  struct Oldest {
    const StreamPackets* stream = nullptr;
    size_t files = 0;
  };
  std::map<std::pair<uint64_t, std::string>, Oldest> oldest;
  for (const StreamPackets& s : trace.streams) {
    if (s.begin_ns.empty()) continue;
    Oldest& o = oldest[{s.stream_id, s.instance ? std::to_string(*s.instance) : s.path}];
    ++o.files;
    if (!o.stream || s.begin_ns.front() < o.stream->begin_ns.front()) o.stream = &s;
  }
  for (const auto& [key, o] : oldest) {
    const StreamPackets& s = *o.stream;
    if (o.files > 1 && s.begin_ns.front() > from_ns && s.first_seq.value_or(0) > 0) {
      cut.error = s.path + ": the window's start is no longer stored (its oldest packet, " +
                  std::to_string(*s.first_seq) + " of the stream, begins " +
                  std::to_string(s.begin_ns.front() - from_ns) +
                  " ns after it: overwritten by the relayd's rotation)";
      cut.overwritten = true;
      return cut;
    }
  }
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) {
    cut.error = out + ": cannot create it: " + ec.message();
    return cut;
  }
  // The metadata as the tracer wrote it (packetized or text): its uuid is the packets'.
  fs::copy_file(fs::path(dir) / "metadata", fs::path(out) / "metadata",
                fs::copy_options::overwrite_existing, ec);
  if (ec) {
    cut.error = dir + "/metadata: cannot copy it: " + ec.message();
    return cut;
  }
  cut.bytes += fs::file_size(fs::path(out) / "metadata", ec);
  std::vector<char> buffer;
  for (const StreamPackets& s : trace.streams) {
    std::ifstream in(s.path, std::ios::binary);
    std::ofstream copy;
    for (size_t i = 0; i < s.offsets.size(); ++i) {
      if (s.end_ns[i] < from_ns || s.begin_ns[i] > to_ns) continue;
      if (!copy.is_open()) {
        copy.open(fs::path(out) / fs::path(s.path).filename(), std::ios::binary | std::ios::trunc);
        ++cut.streams;
      }
      buffer.resize(s.sizes[i]);
      in.seekg(static_cast<std::streamoff>(s.offsets[i]));
      if (!in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) ||
          !copy.write(buffer.data(), static_cast<std::streamsize>(buffer.size()))) {
        cut.error = s.path + ": cannot copy its packet at offset " + std::to_string(s.offsets[i]);
        return cut;
      }
      ++cut.packets;
      cut.bytes += buffer.size();
    }
    if (copy.is_open() && !copy.flush()) {
      cut.error = out + ": cannot write " + fs::path(s.path).filename().string();
      return cut;
    }
  }
  if (cut.streams == 0) cut.error = dir + ": no packet overlaps the window";
  return cut;
}

}  // namespace waitpath
