#include "app/session_roster.h"

#include <algorithm>

#include "base/untrusted_name.h"

namespace waitpath {

SessionRoster::SessionRoster(bool all, std::vector<std::string> names,
                             std::function<bool(const std::string& host)> owns)
    : all_(all), names_(std::move(names)), owns_(std::move(owns)) {}

bool SessionRoster::Wants(const LiveSession& session) const {
  const bool wanted = all_ || std::find(names_.begin(), names_.end(), session.name) != names_.end();
  return wanted && (!owns_ || owns_(session.hostname));
}

std::optional<uint16_t> SessionRoster::Find(const std::string& url) const {
  auto it = by_url_.find(url);
  if (it == by_url_.end()) return std::nullopt;
  return it->second;
}

void SessionRoster::Add(const LiveSession& session, uint16_t id) {
  labels_.push_back(PrintableName(session.hostname) + " (session " + PrintableName(session.name) +
                    ")");
  ended_.push_back(false);
  reopenable_.push_back(false);
  gone_since_.emplace_back();
  relayd_id_.push_back(session.id);
  absent_.push_back(false);
  by_url_[session.url] = id;
}

std::vector<uint16_t> SessionRoster::Gone(const std::vector<LiveSession>& listed,
                                          Clock::time_point now) {
  std::vector<uint16_t> gone;
  for (const auto& [url, id] : by_url_) {
    const bool is_listed = std::any_of(listed.begin(), listed.end(),
                                       [&](const LiveSession& s) { return s.url == url; });
    if (!is_listed) absent_[id] = true;
    if (is_listed || ended_[id]) {
      gone_since_[id] = {};
    } else if (gone_since_[id] == Clock::time_point{}) {
      gone_since_[id] = now;
    } else if (now - gone_since_[id] > kGoneGrace) {
      gone.push_back(id);
    }
  }
  return gone;
}

void SessionRoster::Ended(uint16_t id, bool reopenable) {
  ended_[id] = true;
  reopenable_[id] = reopenable;
}

void SessionRoster::Reopened(uint16_t id, const LiveSession& session) {
  ended_[id] = false;
  reopenable_[id] = false;
  gone_since_[id] = {};
  relayd_id_[id] = session.id;
  absent_[id] = false;
}

}  // namespace waitpath
