// Writes what a RelaydViewer receives as CTF traces on disk, laid out as the relayd lays out
// its own output: ROOT/<trace path>/metadata and one file per stream, its packets
// concatenated. babeltrace2 (source.ctf.fs) reads the result as it reads the relayd's files.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "relayd/relayd_viewer.h"

namespace waitpath {

class CtfDirectoryWriter {
 public:
  explicit CtfDirectoryWriter(std::filesystem::path root) : root_(std::move(root)) {}

  // Metadata and packets are written; other events change nothing. Throws std::runtime_error
  // (one line, naming the file) when a file cannot be written, or when the relayd names a
  // trace path that would leave ROOT.
  void Write(const ViewerEvent& event);
  // Flushes every file (they are closed by the destructor).
  void Flush();

  uint64_t packets() const { return packets_; }
  uint64_t packet_bytes() const { return packet_bytes_; }
  uint64_t metadata_bytes() const { return metadata_bytes_; }

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::FILE* File(const std::string& trace_path, const std::string& name);
  void Append(std::FILE* f, const void* data, size_t size);

  std::filesystem::path root_;
  std::map<std::string, std::unique_ptr<std::FILE, Closer>> files_;  // by relative path
  uint64_t packets_ = 0;
  uint64_t packet_bytes_ = 0;
  uint64_t metadata_bytes_ = 0;
};

}  // namespace waitpath
