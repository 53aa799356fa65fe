// What one host's reading keeps from graph to graph: its time, CPUs, dialect and the batch
// being filled (a live reader rebuilds its graph when the relayd went away, and goes on).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ctf/trace_check.h"
#include "model/batch.h"
#include "model/batch_builder.h"
#include "readers/cpu_directory.h"
#include "readers/host_timeline.h"

namespace waitpath {

struct HostInput {
  HostInput(uint16_t host_id, size_t batch_events, BatchPool& pool, BatchBuilder::Deliver deliver)
      : host(host_id), batches(host_id, batch_events, pool, std::move(deliver)) {}

  // The counters as handed downstream.
  ReaderCounters Snapshot() const;
  // Hands the current batch over (also when empty).
  void Flush() { batches.Flush(Snapshot(), time.watermark()); }
  // The input broke off (relayd gone): what happens until it is back is lost on every CPU.
  void MarkGap();
  // Recorded input: the holes its damaged packets leave, as loss markers at their times.
  void SetHoles(std::vector<StreamLoss> holes);
  // Emits the loss markers of the holes at or before `ts` (all of them: INT64_MAX).
  void EmitHoles(int64_t ts);
  // A replayed event `e` (model/replay_format.h), read at `stream_ts` on the UST clock, about to
  // go into batch `b`: its original time and CPU (in `e`) replace the stream's; when it was
  // emitted is kept (the host's lag, `b`'s clock offset for captures) and a replayed loss is
  // counted. Both decoders' readers call this. Returns the event's time.
  int64_t OnReplayed(int64_t stream_ts, const Event& e, Batch& b);
  // Hands the last batch over: `error` says why the input stops early (empty: it ended).
  void Finish(std::string error) {
    batches.Flush(Snapshot(), time.watermark(), /*last=*/true, std::move(error));
  }

  const uint16_t host;
  ReaderCounters counters;  // those of reading (events, unknown, discarded, cpus, gaps)
  HostTimeline time;
  CpuDirectory cpus;
  uint32_t dialect = 0;  // DialectFlags learnt by the graphs' decoders
  uint32_t graphs = 0;   // graphs built so far
  // Recorded input: a stream that fails half-way is skipped from there (a loss on its CPU),
  // the other streams go on. (Live: the graph is rebuilt instead.)
  bool recorded = false;
  std::vector<StreamPackets> streams;            // where each stream's packets are, for messages
  std::function<void(const std::string&)> warn;  // a line about damage skipped
  std::vector<StreamLoss> holes;                 // not emitted yet, latest first
  // A contained reader's: where babeltrace2 decodes, (stream index + 1) << 32 | packet index
  // (0: no stream known), for the parent to skip after a crash there.
  std::atomic<uint64_t>* where = nullptr;
  // A contained reader's: a stream failed with `cause` (`where` says which packet); true when
  // the child ends here to be read again without that packet (else the rest of the stream is
  // skipped as a thread reader does).
  std::function<bool(const std::string& cause)> on_stream_error;
  BatchBuilder batches;
};

}  // namespace waitpath
