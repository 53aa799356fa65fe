// The one pipeline every command runs, offline and live:
//
//   sources ──► clock sync ──► merger ──► sink
//
//   sources     one reader thread per host (readers/host_reader.h), each with a bounded lock-free
//               queue of decoded batches; hosts can be added while running (live discovers
//               sessions on the relayd).
//   clock sync  every batch, as it arrives, hands its packets and its watermark to the clock
//               sync (stream/clock_sync.h), which estimates each host's clock transform to the
//               reference host's clock.
//   merger      one TimeMerger releases the events of every host in reference-clock order
//               (the ordering algorithm is in stream/time_merger.h).
//   sink        gets each event, then each batch once all its events are out, and the clocks
//               whenever the transforms change.
//
// Commands differ only in when the transforms are known (SyncPolicy):
//   kIdentity   one host, or only counting: no sync; a host's own clock is the reference (and
//               one host in its own clock needs no merging: its batches go to the sink whole).
//   kPrePass    offline, several hosts: every source is read to its end into the sync first
//               (keeping the decoded batches up to a budget), the transforms are fixed from
//               all of it (deterministic, the most accurate), then the merger runs over the
//               kept batches or over a second read of the traces.
//   kOnePass    offline, several hosts, one read: the live policy made deterministic. Batches
//               go to the sync and the merger together, read from the host furthest behind.
//               Nothing is released until every host is accurately synchronized, or the
//               held batches reach `keep_decoded_bytes`, or the input ended (a host that
//               never exchanges packets holds everything up to the budget, as kPrePass would
//               keep it). Then an event is released once every host still reading is
//               `hold_ns` past it (reference time), with the transforms of that moment, so
//               that each is mapped with the packets around it; over the budget the oldest
//               held events go at once. Every decision depends on the traces alone (stream
//               time and decoded sizes, never the wall clock or thread timing): the output
//               is the same from run to run.
//   kBootstrap  live: batches go to the sync and to the merger together; nothing is released
//               until every host that exchanged packets is synchronized (or `bootstrap_limit`
//               has passed since the first batch), then the transforms follow the sync as it
//               improves. A host quiet for `idle_after` is not waited for. The reference is
//               the first host in name order at the end of the bootstrap.
//
// Threads: the readers decode in their own threads; everything else (sync, merger, sink) runs
// on the thread that calls Run/ReadAll/Pump, which owns it (docs/architecture.md).
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "readers/host_reader.h"
#include "stream/clock_sync.h"
#include "stream/host_stats.h"
#include "stream/time_merger.h"

namespace waitpath {

enum class SyncPolicy : uint8_t { kIdentity, kPrePass, kOnePass, kBootstrap };

class PipelineSink {
 public:
  virtual ~PipelineSink() = default;
  // The hosts' transforms to the reference changed (never under kIdentity): once before the
  // first event under kPrePass; at the end of the bootstrap and once more with the final
  // transforms after the last event under kOnePass; at the end of the bootstrap and after
  // each improvement live.
  virtual void OnClocks(const std::vector<HostClock>& clocks) { (void)clocks; }
  // One event, its ts in the reference clock, with the batch it came from (its packets and
  // counters; the batch's own timestamps stay in the host's clock).
  virtual void OnEvent(const Event& event, const Batch& from) = 0;
  // A whole batch whose events need no merging (one host in its own clock): the same as
  // OnEvent on each, which a sink may do in one loop.
  virtual void OnEvents(const Batch& batch) {
    for (const Event& e : batch.events) OnEvent(e, batch);
  }
  // A batch all of whose events have gone to OnEvent.
  virtual void OnBatchDone(const Batch& batch) { (void)batch; }
  // A host's last batch arrived (before its events are merged): the input ended, or why not
  // in `last.error`.
  virtual void OnHostEnded(uint16_t host, const Batch& last) {
    (void)host;
    (void)last;
  }
};

inline constexpr size_t kDefaultKeepDecodedMb = 512;

struct PipelineOptions {
  SyncPolicy policy = SyncPolicy::kIdentity;
  ReaderOptions reader;
  // The readers' queues together hold at most this many batches (at least 16 per host, at
  // most reader.max_queued_batches): one consumer cannot use more look-ahead, and per-host
  // queues would multiply memory by the host count. Live sources, added one by one, each get
  // reader.max_queued_batches.
  size_t total_queued_batches = 256;
  std::string reference;  // the reference clock's host name; empty: the first host
  // Sync: before a host pair is synchronized, an unmatched packet waits for its peer up to a
  // long window (clocks may be seconds apart); after, a short one. False: always the long one.
  bool two_phase = true;
  // kPrePass: the decoded batches are kept up to this many bytes and merged from memory; a
  // larger input is decoded a second time instead. kOnePass: the batches held before their
  // events are released stay under this many bytes (counted from the events and packets
  // they hold, not their capacity, so that the count is the same from run to run).
  size_t keep_decoded_bytes = kDefaultKeepDecodedMb << 20;
  // kOnePass: how far behind every reading host's watermark (reference time) an event is
  // released, so that it is mapped with the packets exchanged in the half second after it
  // as well as those before. It was the sync's short matching window (2 s, so that every
  // packet sent before the event had been matched or expired): on 4 and 16 hosts the held
  // events were then most of the memory (356 and 386 MB peak against 278 and 304), and
  // touching that much fresh memory an eighth of the CPU (docs/sync.md, "Hold").
  int64_t hold_ns = 500'000'000;
  // kBootstrap: see TimeMerger::SetMaxLag (0: no limit), and the policy above.
  int64_t max_lag_ns = 0;
  std::chrono::milliseconds idle_after{2000};
  std::chrono::milliseconds bootstrap_limit{3000};
};

// Decoded batches kept by a read pass, up to a byte budget, per host in order.
struct KeptBatches {
  size_t budget_bytes = 0;
  size_t bytes = 0;
  bool over_budget = false;  // everything kept was dropped: the input did not fit
  std::vector<std::deque<std::unique_ptr<Batch>>> hosts;

  // Takes the batch if it still fits; past the budget, drops everything kept.
  bool Keep(std::unique_ptr<Batch>& batch);
  std::unique_ptr<Batch> Pop(size_t host);
};

class Pipeline {
 public:
  // `sink` may be null for ReadAll alone.
  Pipeline(PipelineOptions options, PipelineSink* sink);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // A host. Offline (kIdentity, kPrePass) its reader starts with Run/ReadAll, live at once.
  uint16_t AddSource(HostSpec spec);
  // Live: a source whose input ended reads again with a new reader (its session was recreated
  // on the relayd under the same URL): the same host, its history and figures kept. The time
  // between the two is a loss on each of its CPUs, marked before the new reader's first event.
  // False when the source has not ended.
  bool ReopenSource(uint16_t host);
  size_t source_count() const { return specs_.size(); }
  // Live: the source's reader (its relayd link, a stop request). Valid once started.
  HostReader& source(size_t host) { return *readers_[host]; }

  // Offline: every source to its end, through the sync policy and the merger, into the sink.
  // False (and `error`) when the reference host is not among the sources.
  bool Run(std::string* error);
  // Reads every source to its end, counting each batch into stats() and (unless kIdentity)
  // feeding the clock sync, taking from the host furthest behind so that hosts advance
  // together; the decoded batches go into `keep` while they fit, else back to their readers.
  // `waitpath sync`, `waitpath stats` and kPrePass's first pass.
  bool ReadAll(std::string* error, KeptBatches* keep = nullptr);

  // Live (kBootstrap): takes what the readers have, merges what can be released, and waits
  // up to `timeout_us` when nothing came.
  void Pump(int64_t timeout_us);
  // Live: stops every reader and releases everything read, waiting for nobody.
  void Drain();

  const std::vector<HostStats>& stats() const { return stats_; }
  // The clock sync (after ReadAll; live, all along). Null before, and after Run has used it.
  ClockSync* sync() { return sync_.get(); }
  const TimeMerger& merger() const { return merger_; }

 private:
  void StartSources();
  void RestartSources();
  bool MakeSync(std::string* error);
  // Takes the host's next batch if its reader has one.
  Batch* TryTake(size_t host);
  // Blocks until the host's next batch (every reader ends with a `last` batch).
  std::unique_ptr<Batch> Take(size_t host);
  // Counts a batch that came from a reader, feeds it to the sync, notes its host's end.
  void Arrive(Batch& batch, bool sync);
  void SetTransforms(const std::vector<HostClock>& clocks);
  // Merges what can be released into the sink; fully merged batches go back to their readers.
  void Release();
  // kOnePass: the single read, see the policy above.
  void RunOnePass();
  bool OnePassBootstrapDone() const;
  void ReleaseOnePass();
  void ApplyTransformsIfChanged();
  // kBootstrap: whether the sync is good enough (or waited for long enough) to release.
  bool BootstrapDone(std::chrono::steady_clock::time_point now);
  void Recycle(std::unique_ptr<Batch> batch);
  void MarkReopenGap(Batch& batch);

  PipelineOptions options_;
  PipelineSink* sink_;
  moodycamel::LightweightSemaphore ready_;  // signalled by every reader after each batch
  std::vector<HostSpec> specs_;
  std::vector<std::unique_ptr<HostReader>> readers_;
  std::vector<HostStats> stats_;
  std::vector<bool> ended_;         // the host's last batch arrived
  std::vector<int64_t> watermark_;  // per host, of the last batch that arrived (host clock)
  std::unique_ptr<ClockSync> sync_;
  TimeMerger merger_{0};

  // kOnePass.
  size_t held_bytes_ = 0;  // batches pushed to the merger and not yet consumed

  // kBootstrap.
  bool bootstrapping_ = true;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point first_batch_{};
  std::vector<std::chrono::steady_clock::time_point> last_arrival_;
  std::vector<bool> reopened_;  // the source's new reader has not delivered a batch yet
  uint64_t sync_version_ = ~uint64_t{0};
  size_t transforms_set_ = 0;

  // Test knob (WAITPATH_TEST_SLOW_HOST=name:ms): that host's batches arrive this much later
  // each, as if its relayd or disk were slow, to check that the output does not change.
  std::string slow_host_;
  int slow_ms_ = 0;
};

}  // namespace waitpath
