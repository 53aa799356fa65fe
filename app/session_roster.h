// The relayd sessions `live` follows, each a source of its pipeline (by the source's id): which
// listed sessions to attach, which to let go once the relayd no longer lists them, which to
// follow again when they are created anew. Bookkeeping only: the caller lists the sessions
// (relayd/session_discovery.h) and starts and stops the readers (app/live_sessions.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "relayd/session_discovery.h"

namespace waitpath {

class SessionRoster {
 public:
  using Clock = std::chrono::steady_clock;
  // How long a session gone from the relayd keeps its reader, for its last data.
  static constexpr std::chrono::seconds kGoneGrace{5};

  // The sessions wanted: every one (`all`), or those named; for a shard, only those of the
  // hosts it `owns`.
  SessionRoster(bool all, std::vector<std::string> names,
                std::function<bool(const std::string& host)> owns = {});

  bool Wants(const LiveSession& session) const;
  // The source following this URL, if any.
  std::optional<uint16_t> Find(const std::string& url) const;
  // `session` is followed by source `id` (ids come in order: 0, 1, 2...).
  void Add(const LiveSession& session, uint16_t id);
  size_t size() const { return labels_.size(); }
  // "host (session name)", printable, for messages.
  const std::string& label(uint16_t id) const { return labels_[id]; }

  // At each listing: the sources whose session the relayd has not listed for longer than the
  // grace period while their reader still waits (babeltrace2 2.0's live iterator can wait
  // forever on a session that ended before it attached): to let go.
  std::vector<uint16_t> Gone(const std::vector<LiveSession>& listed, Clock::time_point now);

  // The source's input ended: as a session ends (`reopenable`), or on an error.
  void Ended(uint16_t id, bool reopenable);
  bool ended(uint16_t id) const { return ended_[id]; }
  // `session` is listed under the URL of source `id`, whose reader ended as a session ends:
  // whether it is a new session of that name, to follow as the same host. It is when the
  // relayd gives it another id (the host's session was destroyed and created again;
  // configs/lttng/waitpath-session.sh always names it `waitpath`), or when the URL was missing
  // from a listing since, or a listing failed (a restarted relayd numbers its sessions
  // again). The relayd lists only sessions still connected to their tracer (lttng-relayd's
  // viewer_list_sessions skips closed ones). A reader that ended on an error (refused by the
  // relayd, a protocol error), or the same session still listed under the same id (a reader
  // that could not read it), is not followed again this way: it would reattach every second.
  bool Reopenable(uint16_t id, const LiveSession& session) const {
    return ended_[id] && reopenable_[id] && (session.id != relayd_id_[id] || absent_[id]);
  }
  // The listing failed: whatever it lists next may be new sessions under old ids.
  void Unreachable() { absent_.assign(absent_.size(), true); }
  // Source `id` reads `session` again.
  void Reopened(uint16_t id, const LiveSession& session);

 private:
  bool all_;
  std::vector<std::string> names_;
  std::function<bool(const std::string&)> owns_;
  std::map<std::string, uint16_t> by_url_;
  // Per source.
  std::vector<std::string> labels_;
  std::vector<bool> ended_;
  std::vector<bool> reopenable_;               // ended as a session ends, not on an error
  std::vector<Clock::time_point> gone_since_;  // not listed since; {}: listed, or ended
  std::vector<uint64_t> relayd_id_;            // the relayd's id of the session followed
  std::vector<bool> absent_;                   // missing from a listing since followed
};

}  // namespace waitpath
