// Finds the live sessions a relay daemon serves, with the native viewer client
// (relayd/relayd_client.h): one connection per query, the whole query bounded in time and ended
// by a stop request. Each session comes with the URL babeltrace2's `sessions` query of
// src.ctf.lttng-live gives it (net://HOST[:PORT]/host/HOSTNAME/SESSION, the relayd part as the
// caller wrote it), which the readers attach to. Hostnames and session names are bytes the
// relayd chose: a session whose names cannot make such a URL, naming it and nothing else, is
// refused with the reason rather than listed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "relayd/relayd_client.h"

namespace waitpath {

struct LiveSession {
  std::string url;       // net://RELAYD/host/HOSTNAME/SESSION, to attach to
  std::string hostname;  // the traced host, bytes as the relayd sent them
  std::string name;      // the session, likewise
  uint64_t streams = 0;
  uint64_t clients = 0;
  // The relayd's id of the session. A relayd may list several sessions of one host and name (a
  // session created again while the old one drains): one entry, as babeltrace2 gives, with the
  // first id, the streams summed and the most clients.
  uint64_t id = 0;
  RelaydTraceFormat trace_format = RelaydTraceFormat::kUnknown;
  uint32_t relayd_minor = 0;  // the relayd's viewer protocol as it announced it: 2.<relayd_minor>
};

// A session the relayd lists that cannot be followed by URL.
struct RefusedSession {
  uint64_t id = 0;
  std::string hostname;  // as sent
  std::string name;
  std::string reason;  // "its session name contains '/'"
};
// One line: "relayd R lists session X of host Y: refused, because REASON" (names printable).
std::string DescribeRefusal(const std::string& relayd_url, const RefusedSession& refused);

struct SessionListing {
  std::vector<LiveSession> sessions;
  std::vector<RefusedSession> refused;  // once each per host, name and reason
  uint32_t relayd_minor = 0;            // the relayd's protocol, 2.<relayd_minor>
  uint32_t minor = 0;                   // the protocol spoken (the lower of the relayd's and 15)
};

struct SessionQueryOptions {
  std::chrono::milliseconds timeout{3000};  // the whole query: connect, handshake, list
  const std::atomic<bool>* stop = nullptr;  // when raised, the query ends within ~100 ms
  uint32_t max_sessions = 10000;            // more listed: an error naming the count
  uint32_t max_name_bytes = 4096;           // per hostname or session name
};

// Lists the sessions of the relayd at `relayd_url` (net://HOST[:PORT], net4:// and net6://
// too; port 5344 when not given). False with one line in `error` when it cannot: a bad URL, no
// relayd there, no whole answer in time, stopped, a reply over the bounds or malformed.
bool ListRelaydSessions(const std::string& relayd_url, const SessionQueryOptions& options,
                        SessionListing* listing, std::string* error);

// ListRelaydSessions with the default options and the process's stop request
// (base/stop_signal.h). Refused sessions are said on stderr, once each per process.
bool QuerySessions(const std::string& relayd_url, std::vector<LiveSession>* sessions,
                   std::string* error);

namespace detail {
// Why `name` (a hostname when `hostname`) cannot be a part of a session URL, or "" when it can.
std::string WhyNotInUrl(std::string_view name, bool hostname);
}  // namespace detail

}  // namespace waitpath
