// The live input of `live` and `tail` on a relayd: the sessions followed (app/session_roster.h),
// each a source of the live pipeline (stream/pipeline.h, kBootstrap: clocks synchronized from
// the packets as they arrive, events merged in reference time, so that a wait ended by another
// host's packet follows the sender there, as offline; docs/sync.md) feeding the analysis. It
// finds sessions on the relayd, says what happens to them (app/source_notices.h), cuts the
// captures the engine is past, and gives the terminal view its host rows.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "app/analysis.h"
#include "app/host_health.h"
#include "app/live_command.h"
#include "app/session_roster.h"
#include "app/source_notices.h"
#include "fleet/shard_peers.h"
#include "stream/pipeline.h"

namespace waitpath {

class LiveSessions : private FeedObserver {
 public:
  // `shard`, when not null: only the sessions of the hosts it owns (--own).
  LiveSessions(const LiveOptions& options, Analysis& analysis, ShardPeers* shard);
  ~LiveSessions() override;

  // Lists the relayd's sessions: attaches to the wanted ones not followed yet, follows again
  // those created anew, lets go of those gone.
  void Discover();
  // Feeds whatever the readers have read to the analysis; waits up to `timeout_us` for more.
  void Pump(int64_t timeout_us);
  // Stops every reader and analyses what they read; cuts the pending captures.
  void StopAll();

  // Without --capture-traces: the traces of `host` from the packets its readers keep
  // (--capture-ring-mb), written under `scratch` for the capture to cut.
  std::vector<std::string> RingTraces(const std::string& host, const std::string& scratch);
  // Each followed host's stream as the terminal view shows it (rates since the last call).
  std::vector<HostHealth> Health();

 private:
  static PipelineOptions PipelineFor(const LiveOptions& options);
  void Reopen(uint16_t id, const LiveSession& session);
  void Report();
  void Capture(bool all);

  // The pipeline's observer.
  void OnClocks(const std::vector<HostClock>& clocks) override;
  void OnBatchDone(const Batch& batch) override;
  void OnHostEnded(uint16_t h, const Batch& last) override;

  const LiveOptions& options_;
  Analysis& analysis_;
  SessionRoster roster_;
  SourceNotices notices_;
  HostHealthModel health_;
  bool stopping_ = false;
  std::string last_error_;  // of the last listing, said once
  Pipeline pipeline_;       // last: its readers stop before the rest goes
};

}  // namespace waitpath
