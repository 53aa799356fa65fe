#include "live/trace_discovery.h"

#include <algorithm>
#include <filesystem>
#include <regex>
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

TraceEnv ParseTraceEnv(const std::string& text) {
  TraceEnv env;
  const size_t start = text.find("env {");
  if (start == std::string::npos) return env;
  const size_t end = text.find("};", start);
  const std::string block =
      text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  auto str = [&](const char* key) {
    std::smatch m;
    std::regex re(std::string("\\b") + key + "\\s*=\\s*\"([^\"]*)\"");
    return std::regex_search(block, m, re) ? m[1].str() : std::string();
  };
  auto num = [&](const char* key) {
    std::smatch m;
    std::regex re(std::string("\\b") + key + "\\s*=\\s*(-?[0-9]+)");
    return std::regex_search(block, m, re) ? std::stoi(m[1].str()) : -1;
  };
  env.hostname = str("hostname");
  if (env.hostname.empty()) env.hostname = str("host");
  env.domain = str("domain");
  env.tracer_name = str("tracer_name");
  env.tracer_major = num("tracer_major");
  env.tracer_minor = num("tracer_minor");
  return env;
}

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
      *error = p + ": not a directory (give a CTF trace directory)";
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
      *error = p + ": no CTF trace found (no 'metadata' file in it or below it)";
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
