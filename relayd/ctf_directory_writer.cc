#include "relayd/ctf_directory_writer.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "base/untrusted_name.h"

namespace waitpath {
namespace {

// The relative path the relayd gave, checked: a path with ".." or an absolute one would
// write outside the output directory.
std::filesystem::path SafeRelative(const std::string& path) {
  std::filesystem::path p(path);
  std::filesystem::path out;
  for (const auto& part : p.relative_path()) {
    if (part == ".." || part.empty()) {
      throw std::runtime_error("the relayd named a trace path that leaves the output directory: '" +
                               PrintableName(path) + "'");
    }
    if (part != ".") out /= part;
  }
  return out;
}

}  // namespace

std::FILE* CtfDirectoryWriter::File(const std::string& trace_path, const std::string& name) {
  const std::string key = trace_path + '\0' + name;
  auto it = files_.find(key);
  if (it != files_.end()) return it->second.get();
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    throw std::runtime_error("the relayd named a stream file '" + PrintableName(name) +
                             "' that is not a file name");
  }
  const std::filesystem::path dir = root_ / SafeRelative(trace_path);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
  const std::filesystem::path file = dir / name;
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (f == nullptr) {
    throw std::runtime_error("cannot write " + file.string() + ": " + std::strerror(errno));
  }
  files_.emplace(key, f);
  return f;
}

void CtfDirectoryWriter::Append(std::FILE* f, const void* data, size_t size) {
  if (std::fwrite(data, 1, size, f) != size) {
    throw std::runtime_error("cannot write under " + root_.string() + ": " + std::strerror(errno));
  }
}

void CtfDirectoryWriter::Write(const ViewerEvent& event) {
  if (const auto* m = std::get_if<ViewerMetadata>(&event)) {
    Append(File(m->path, "metadata"), m->text.data(), m->text.size());
    metadata_bytes_ += m->text.size();
  } else if (const auto* p = std::get_if<ViewerPacket>(&event)) {
    Append(File(std::string(p->path), std::string(p->channel)), p->bytes.data(), p->bytes.size());
    ++packets_;
    packet_bytes_ += p->bytes.size();
  }
}

void CtfDirectoryWriter::Flush() {
  for (auto& [key, f] : files_) std::fflush(f.get());
}

}  // namespace waitpath
