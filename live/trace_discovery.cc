#include "live/trace_discovery.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <system_error>

#include "live/bt_util.h"

namespace fs = std::filesystem;

namespace waitpath {
namespace {

bool IsTraceDir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "metadata", ec);
}

// Asks src.ctf.fs for the decoded metadata text (handles packetized LTTng metadata).
bool ReadMetadataText(const std::string& dir, std::string* text, std::string* error) {
  ValueRef params(bt_value_map_create());
  bt_value_map_insert_string_entry(params.get(), "path", dir.c_str());
  QueryOutcome q = QuerySource("ctf", "fs", "metadata-info", params.get());
  if (q.setup_error) {
    *error = q.error;
    return false;
  }
  const bt_value* t = q.result ? bt_value_map_borrow_entry_value_const(q.result, "text") : nullptr;
  const bool ok = t && bt_value_is_string(t);
  if (ok) {
    *text = bt_value_string_get(t);
  } else {
    *error = dir + ": cannot read CTF metadata" + (q.error.empty() ? "" : ": " + q.error);
  }
  bt_value_put_ref(q.result);
  return ok;
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

}  // namespace

TraceEnv ParseTraceEnv(const std::string& text) {
  TraceEnv env;
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
  return env;
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

bool DiscoverHosts(const std::vector<std::string>& paths, std::vector<HostSpec>* hosts,
                   std::string* error) {
  std::vector<std::string> dirs;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      *error = p + ": no such file or directory";
      return false;
    }
    if (!fs::is_directory(p, ec)) {
      *error = p + ": not a directory (give a CTF trace directory)" +
               (IsPerfData(p) ? PerfHint(p) : std::string());
      return false;
    }
    std::vector<std::string> found;
    if (IsTraceDir(p)) {
      fs::path normal = fs::path(p).lexically_normal();
      if (normal.filename().empty()) normal = normal.parent_path();  // "trace/" is "trace"
      found.push_back(normal.string());
    } else {
      for (auto it = fs::recursive_directory_iterator(
               p, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_directory(ec) && IsTraceDir(it->path())) {
          found.push_back(it->path().lexically_normal().string());
          it.disable_recursion_pending();
        }
      }
      std::sort(found.begin(), found.end());
    }
    if (found.empty()) {
      *error = p + ": no CTF trace found (no 'metadata' file in it or below it)" +
               (IsPerfData(fs::path(p) / "perf.data") ? PerfHint(fs::path(p) / "perf.data")
                                                      : std::string());
      return false;
    }
    dirs.insert(dirs.end(), found.begin(), found.end());
  }

  for (const std::string& dir : dirs) {
    std::string text;
    if (!ReadMetadataText(dir, &text, error)) return false;
    TraceEnv env = ParseTraceEnv(text);
    std::string host = env.hostname.empty() ? fs::path(dir).filename().string() : env.hostname;
    auto it = std::find_if(hosts->begin(), hosts->end(),
                           [&](const HostSpec& h) { return h.hostname == host; });
    if (it == hosts->end()) {
      hosts->push_back(HostSpec{host, {}, {}, {}});
      it = hosts->end() - 1;
    }
    if (std::find(it->trace_dirs.begin(), it->trace_dirs.end(), dir) == it->trace_dirs.end()) {
      it->trace_dirs.push_back(dir);
      it->envs.push_back(env);
    }
  }
  return true;
}

std::vector<std::string> HostNames(const std::vector<HostSpec>& hosts) {
  std::vector<std::string> names;
  names.reserve(hosts.size());
  for (const HostSpec& h : hosts) names.push_back(h.hostname);
  return names;
}

}  // namespace waitpath
