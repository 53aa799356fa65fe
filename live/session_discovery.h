// Finds the live sessions a relay daemon serves (src.ctf.lttng-live's `sessions` query).
#pragma once

#include <string>
#include <vector>

namespace waitpath {

struct LiveSession {
  std::string url;       // net://RELAYD/host/HOSTNAME/SESSION, to attach to
  std::string hostname;  // the traced host
  std::string name;      // the session
  uint64_t streams = 0;
  uint64_t clients = 0;
};

// Returns false with a one-line `error` when the relayd cannot be queried (not there, bad URL).
bool QuerySessions(const std::string& relayd_url, std::vector<LiveSession>* sessions,
                   std::string* error);

}  // namespace waitpath
