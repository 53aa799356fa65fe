#include "readers/trace_discovery.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <system_error>

#include "base/untrusted_name.h"
#include "ctf/ctf2_metadata.h"
#include "ctf/ctf_metadata.h"

namespace fs = std::filesystem;

namespace waitpath {
namespace {

bool IsTraceDir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "metadata", ec);
}

}  // namespace

namespace {

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The value text after `key =` in an env block (the key as a whole word), or nullopt. A plain
// scan: the block is trace input, of any size (a regex over it could exhaust the stack).
std::optional<std::string_view> EnvValue(std::string_view block, std::string_view key) {
  for (size_t at = block.find(key); at != std::string_view::npos; at = block.find(key, at + 1)) {
    if (at > 0 && IsWordChar(block[at - 1])) continue;
    size_t i = at + key.size();
    if (i < block.size() && IsWordChar(block[i])) continue;
    while (i < block.size() && std::isspace(static_cast<unsigned char>(block[i]))) ++i;
    if (i >= block.size() || block[i] != '=') continue;
    ++i;
    while (i < block.size() && std::isspace(static_cast<unsigned char>(block[i]))) ++i;
    return block.substr(i);
  }
  return std::nullopt;
}

std::string EnvString(std::string_view block, std::string_view key) {
  const auto value = EnvValue(block, key);
  if (!value || value->empty() || value->front() != '"') return {};
  const size_t close = value->find('"', 1);
  if (close == std::string_view::npos) return {};
  // A host name is a label in messages and metrics: keep it to a sane length.
  return std::string(value->substr(1, std::min<size_t>(close - 1, kMaxEnvString)));
}

// -1 when absent or not an int (out of range included).
int EnvInt(std::string_view block, std::string_view key) {
  const auto value = EnvValue(block, key);
  if (!value) return -1;
  int out = -1;
  const char* begin = value->data();
  const auto [end, ec] = std::from_chars(begin, begin + value->size(), out);
  if (ec != std::errc() || end == begin) return -1;
  return out;
}

// How deep below a given directory traces are looked for: a relayd's output holds a host's
// per-user UST trace at HOST/SESSION/ust/uid/UID/64-bit; deeper is not a layout of LTTng's, and
// `analyze /` must not walk the whole file system.
constexpr int kMaxTraceDepth = 6;

// What names one recording: LTTng's session name and creation time.
std::string Recording(const std::string& session, const std::string& created) {
  return session.empty() && created.empty() ? std::string() : session + "@" + created;
}

}  // namespace

TraceEnv ParseTraceEnv(const std::string& text) {
  TraceEnv env;
  if (ctf::IsCtf2Text(text)) {
    // CTF 2: the trace class's environment, from the one metadata model.
    ctf::Metadata m;
    std::string error;
    if (!ctf::ParseMetadataText(text, &m, &error)) return env;
    auto str = [&](const char* key) {
      auto it = m.env.find(key);
      return it == m.env.end() ? std::string() : it->second.substr(0, kMaxEnvString);
    };
    auto num = [&](const char* key) {
      int out = -1;
      const std::string v = str(key);
      std::from_chars(v.data(), v.data() + v.size(), out);
      return out;
    };
    env.ctf2 = true;
    env.hostname = str("hostname");
    if (env.hostname.empty()) env.hostname = str("host");
    env.domain = str("domain");
    env.tracer_name = str("tracer_name");
    env.tracer_major = num("tracer_major");
    env.tracer_minor = num("tracer_minor");
    env.recording = Recording(str("trace_name"), str("trace_creation_datetime"));
    return env;
  }
  const size_t start = text.find("env {");
  if (start == std::string::npos) return env;
  const size_t end = text.find("};", start);
  const std::string_view block = std::string_view(text).substr(
      start, end == std::string::npos ? std::string::npos : end - start);
  env.hostname = EnvString(block, "hostname");
  if (env.hostname.empty()) env.hostname = EnvString(block, "host");
  env.domain = EnvString(block, "domain");
  env.tracer_name = EnvString(block, "tracer_name");
  env.tracer_major = EnvInt(block, "tracer_major");
  env.tracer_minor = EnvInt(block, "tracer_minor");
  env.recording =
      Recording(EnvString(block, "trace_name"), EnvString(block, "trace_creation_datetime"));
  return env;
}

std::string TraceEnv::FormatLine() const {
  std::string line = ctf2 ? "CTF 2" : "CTF 1.8";
  if (!tracer_name.empty()) {
    line += ", " + tracer_name;
    if (tracer_major >= 0) line += " " + std::to_string(tracer_major);
    if (tracer_major >= 0 && tracer_minor >= 0) line += "." + std::to_string(tracer_minor);
  }
  return line;
}

namespace {

// perf's own format (perf.data starts with "PERFILE2") is not CTF: say how to convert it.
bool IsPerfData(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[8] = {};
  return in.read(magic, sizeof magic) && std::string_view(magic, sizeof magic) == "PERFILE2";
}

std::string PerfHint(const fs::path& file) {
  return "; it is a perf.data file: convert it first with `perf data convert --to-ctf DIR -i " +
         file.string() + "` and give DIR";
}

}  // namespace

Discovery DiscoverHosts(const std::vector<std::string>& paths, std::vector<HostSpec>* hosts,
                        std::string* error, const DiscoverOptions& options) {
  Discovery result;
  auto warn = [&](const std::string& line) {
    if (options.warn) {
      options.warn(line);
    } else {
      fprintf(stderr, "waitpath: warning: %s\n", line.c_str());
    }
  };
  struct Found {
    std::string dir;
    std::string arg_name;  // the command-line path it was found under, as a host name
  };
  std::vector<Found> dirs;
  std::vector<std::string> arg_names;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      result.unread.push_back(p + ": no such file or directory");
      continue;
    }
    if (!fs::is_directory(p, ec)) {
      result.unread.push_back(p + ": not a directory (give a CTF trace directory)" +
                              (IsPerfData(p) ? PerfHint(p) : std::string()));
      continue;
    }
    fs::path normal = fs::path(p).lexically_normal();
    if (normal.filename().empty()) normal = normal.parent_path();  // "trace/" is "trace"
    // --host-from dir: the directory's name, or its whole path when two have the same name.
    std::string arg_name = fs::absolute(normal).lexically_normal().filename().string();
    if (std::find(arg_names.begin(), arg_names.end(), arg_name) != arg_names.end())
      arg_name = normal.string();
    arg_names.push_back(arg_name);
    std::vector<std::string> found;
    if (IsTraceDir(p)) {
      found.push_back(normal.string());
    } else {
      for (auto it = fs::recursive_directory_iterator(
               p, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_directory(ec) && IsTraceDir(it->path())) {
          found.push_back(it->path().lexically_normal().string());
          it.disable_recursion_pending();
        } else if (it.depth() + 1 >= kMaxTraceDepth) {
          it.disable_recursion_pending();
        }
      }
      std::sort(found.begin(), found.end());
    }
    if (found.empty()) {
      result.unread.push_back(
          p + ": no CTF trace found (no 'metadata' file in it or up to 6 levels below it)" +
          (IsPerfData(fs::path(p) / "perf.data") ? PerfHint(fs::path(p) / "perf.data")
                                                 : std::string()));
      continue;
    }
    for (std::string& f : found) dirs.push_back(Found{std::move(f), arg_name});
  }

  struct Seen {
    std::string uuid, dir;
  };
  std::vector<Seen> seen;
  for (const Found& f : dirs) {
    const std::string& dir = f.dir;
    // Checked before babeltrace2 sees it: a trace it would hang or abort on is refused here.
    CheckedTrace checked = CheckTrace(dir);
    if (!checked.error.empty()) {
      result.unread.push_back(checked.error);
      continue;
    }
    for (const std::string& w : checked.warnings) warn(w);
    auto copy = std::find_if(seen.begin(), seen.end(), [&](const Seen& s) {
      return !checked.uuid.empty() && s.uuid == checked.uuid && s.dir != dir;
    });
    if (copy != seen.end()) {
      warn(dir + ": a copy of " + copy->dir + " (same trace uuid " + checked.uuid +
           "): skipped, its events would count twice");
      continue;
    }
    seen.push_back(Seen{checked.uuid, dir});
    TraceEnv env = ParseTraceEnv(checked.metadata);
    std::string host = options.host_from_dir  ? f.arg_name
                       : env.hostname.empty() ? fs::path(dir).filename().string()
                                              : env.hostname;
    auto it = std::find_if(hosts->begin(), hosts->end(),
                           [&](const HostSpec& h) { return h.hostname == host; });
    if (it == hosts->end()) {
      hosts->push_back(HostSpec{host, {}, {}, {}, {}, {}, {}});
      it = hosts->end() - 1;
    }
    if (std::find(it->trace_dirs.begin(), it->trace_dirs.end(), dir) != it->trace_dirs.end())
      continue;
    if (!options.host_from_dir) {
      // Two recordings of one domain under one hostname: one machine traced twice, or two
      // machines with the same name, which would be merged into one host. (The per-user UST
      // traces of one session are one recording.)
      for (size_t i = 0; i < it->trace_dirs.size(); ++i) {
        const TraceEnv& other = it->envs[i];
        if (env.domain.empty() || other.domain != env.domain ||
            (!env.recording.empty() && other.recording == env.recording))
          continue;
        if (!options.merge_recordings) {
          *error = "host " + PrintableName(host) + ": " + it->trace_dirs[i] + " and " + dir +
                   " are two " + PrintableName(env.domain) +
                   " recordings of this hostname: not merged into one host (give one of them, "
                   "--host-from dir to read each as its own host, or --merge-recordings)";
          hosts->clear();
          result.refused = true;
          return result;
        }
        warn("host " + host + ": " + it->trace_dirs[i] + " and " + dir + " are two " + env.domain +
             " recordings of this hostname: read as one host (--merge-recordings)");
        break;
      }
    }
    it->trace_dirs.push_back(dir);
    it->envs.push_back(env);
    it->read_dirs.push_back(checked.read_dir);
    it->losses.insert(it->losses.end(), checked.losses.begin(), checked.losses.end());
    for (StreamPackets& s : checked.streams) it->streams.push_back(std::move(s));
  }
  if (hosts->empty()) {
    // Nothing to read: what was not is the error (every line of it).
    *error = "no trace left to read";
    if (!result.unread.empty()) {
      *error = result.unread[0];
      for (size_t i = 1; i < result.unread.size(); ++i) *error += "; " + result.unread[i];
    }
    result.unread.clear();
    return result;
  }
  result.found = true;
  return result;
}

std::vector<std::string> HostNames(const std::vector<HostSpec>& hosts) {
  std::vector<std::string> names;
  names.reserve(hosts.size());
  for (const HostSpec& h : hosts) names.push_back(h.hostname);
  return names;
}

}  // namespace waitpath
