#include "relayd/session_discovery.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <utility>

#include "base/output.h"
#include "base/stop_signal.h"
#include "base/untrusted_name.h"

namespace waitpath {
namespace {

constexpr uint16_t kDefaultLivePort = 5344;

struct RelaydAddress {
  std::string host;
  uint16_t port = kDefaultLivePort;
};

// net://HOST[:PORT]; net4:// and net6:// as babeltrace2 takes them (HOST is resolved as the
// system does for all three). No path: a session URL is not a relayd URL.
bool ParseRelaydUrl(const std::string& url, RelaydAddress* out) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return false;
  const std::string_view scheme(url.data(), scheme_end);
  if (scheme != "net" && scheme != "net4" && scheme != "net6") return false;
  std::string_view rest = std::string_view(url).substr(scheme_end + 3);
  if (rest.find('/') != std::string_view::npos) return false;
  RelaydAddress a;
  if (const size_t colon = rest.find(':'); colon != std::string_view::npos) {
    const std::string_view port = rest.substr(colon + 1);
    unsigned p = 0;
    const char* end = port.data() + port.size();
    const auto [ptr, ec] = std::from_chars(port.data(), end, p);
    if (port.empty() || ec != std::errc() || ptr != end || p == 0 || p > 65535) return false;
    a.port = static_cast<uint16_t>(p);
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return false;
  a.host = std::string(rest);
  *out = std::move(a);
  return true;
}

// The listing being built: sessions merged by host and name as babeltrace2 merges them,
// refusals once each.
class ListingBuilder {
 public:
  ListingBuilder(const std::string& relayd_url, SessionListing* out)
      : relayd_url_(relayd_url), out_(out) {}

  void Add(RelaydSessionInfo&& s) {
    std::string why = detail::WhyNotInUrl(s.hostname, true);
    if (why.empty()) why = detail::WhyNotInUrl(s.name, false);
    if (!why.empty()) {
      if (refused_.emplace(s.hostname, s.name, why).second) {
        out_->refused.push_back({.id = s.id,
                                 .hostname = std::move(s.hostname),
                                 .name = std::move(s.name),
                                 .reason = std::move(why)});
      }
      return;
    }
    auto [it, added] = index_.try_emplace({s.hostname, s.name}, out_->sessions.size());
    if (!added) {
      LiveSession& l = out_->sessions[it->second];
      l.streams += s.streams;
      l.clients = std::max<uint64_t>(l.clients, s.clients);
      // Sessions of one host and name in two formats: no one format describes the entry.
      if (l.trace_format != s.trace_format) l.trace_format = RelaydTraceFormat::kUnknown;
      return;
    }
    // babeltrace2 appends "/host/", the hostname, '/' and the name to the URL it was given.
    LiveSession l;
    l.url = relayd_url_ + "/host/" + s.hostname + "/" + s.name;
    l.hostname = std::move(s.hostname);
    l.name = std::move(s.name);
    l.streams = s.streams;
    l.clients = s.clients;
    l.id = s.id;
    l.trace_format = s.trace_format;
    l.relayd_minor = out_->relayd_minor;
    out_->sessions.push_back(std::move(l));
  }

 private:
  const std::string& relayd_url_;
  SessionListing* out_;
  std::map<std::pair<std::string, std::string>, size_t> index_;  // host and name → session
  std::set<std::tuple<std::string, std::string, std::string>> refused_;
};

// Each refusal on stderr once per process (discovery lists every second).
void SayRefusalsOnce(const std::string& relayd_url, const std::vector<RefusedSession>& refused) {
  constexpr size_t kMaxRemembered = 10000;  // past that, new refusals are not said
  static std::mutex mutex;
  static std::set<std::string> said;
  const std::lock_guard<std::mutex> lock(mutex);
  for (const RefusedSession& r : refused) {
    std::string line = DescribeRefusal(relayd_url, r);
    if (said.size() >= kMaxRemembered || !said.insert(line).second) continue;
    Say("waitpath: {}\n", line);
  }
}

}  // namespace

std::string detail::WhyNotInUrl(std::string_view name, bool hostname) {
  const std::string what = hostname ? "its hostname" : "its session name";
  if (name.empty()) return what + " is empty";
  if (name == "." || name == "..") return what + " is '" + std::string(name) + "'";
  if (name.find('/') != std::string_view::npos) return what + " contains '/'";
  if (name.find('\0') != std::string_view::npos) return what + " contains a NUL byte";
  // babeltrace2's URL parser takes '\' as an escape: the '/' after a hostname ending in one
  // would be read as a part of the hostname.
  if (hostname && name.back() == '\\') {
    return what + " ends with '\\' (babeltrace2 would read the '/' after it as part of it)";
  }
  return "";
}

std::string DescribeRefusal(const std::string& relayd_url, const RefusedSession& refused) {
  return "relayd " + PrintableName(relayd_url) + " lists session '" + PrintableName(refused.name) +
         "' of host '" + PrintableName(refused.hostname) + "': refused, because " + refused.reason;
}

bool ListRelaydSessions(const std::string& relayd_url, const SessionQueryOptions& options,
                        SessionListing* listing, std::string* error) {
  RelaydAddress where;
  if (!ParseRelaydUrl(relayd_url, &where)) {
    *error = "bad relayd URL '" + PrintableName(relayd_url) + "' (expected net://HOST[:PORT])";
    return false;
  }
  RelaydLimits limits;
  limits.io_timeout = options.timeout;
  limits.total_timeout = options.timeout;
  limits.stop = options.stop;
  limits.max_sessions = options.max_sessions;
  limits.max_name_bytes = options.max_name_bytes;
  SessionListing out;
  try {
    RelaydClient client(where.host, where.port, limits);
    out.relayd_minor = client.relayd_minor();
    out.minor = client.minor_version();
    ListingBuilder builder(relayd_url, &out);
    for (RelaydSessionInfo& s : client.ListSessions()) builder.Add(std::move(s));
  } catch (const RelaydError& e) {
    *error = "cannot list the sessions of relayd " + PrintableName(relayd_url) + ": " + e.what();
    return false;
  }
  *listing = std::move(out);
  return true;
}

bool QuerySessions(const std::string& relayd_url, std::vector<LiveSession>* sessions,
                   std::string* error) {
  SessionQueryOptions options;
  options.stop = &StopRequested();
  SessionListing listing;
  if (!ListRelaydSessions(relayd_url, options, &listing, error)) return false;
  SayRefusalsOnce(relayd_url, listing.refused);
  *sessions = std::move(listing.sessions);
  return true;
}

}  // namespace waitpath
