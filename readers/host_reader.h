// Reads one host's traces in its own thread: a babeltrace2 graph whose per-stream output
// ports feed our own sink (readers/merging_sink.h), which merges the CPU streams by time
// (clamping regressions) and pushes decoded batches into the host's lock-free queue; a live
// graph that breaks off is rebuilt.
#pragma once

#include <concurrentqueue/concurrentqueue.h>
// Needs concurrentqueue.h first (it defines the MOODYCAMEL_ macros this header uses).
#include <concurrentqueue/lightweightsemaphore.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "model/batch.h"
#include "model/batch_builder.h"
#include "readers/live_reader.h"
#include "readers/packet_ring.h"
#include "readers/trace_discovery.h"
#include "relayd/relayd_link.h"

namespace waitpath {

struct HostInput;
struct Replay;

// Which decoder reads a host, recorded or live: babeltrace2, the native CTF 1.8 decoder
// (live/ctf/; live: with the native relayd viewer client), or the native one where it supports
// the metadata and babeltrace2 otherwise (one line on stderr says why).
enum class TraceDecoderChoice : uint8_t { kBabeltrace2, kNative, kAuto };

// "babeltrace2", "native", "auto" (false for anything else).
bool ParseDecoderChoice(const std::string& name, TraceDecoderChoice* out);

struct ReaderOptions {
  size_t batch_events = 4096;
  // Backpressure: the reader waits beyond this many queued batches (the pipeline may set less).
  size_t max_queued_batches = 64;
  bool verbose = false;  // babeltrace2 warnings and full error chains
  TraceDecoderChoice decoder = TraceDecoderChoice::kBabeltrace2;
  // Recorded traces are read by babeltrace2 in a child process (live/reader_process.h): a hang,
  // an abort or runaway memory there costs that host only. Default: on, unless the
  // environment says WAITPATH_READER=thread. Live input is always read in the thread.
  bool contain = ContainByDefault();
  // The child's limits: memory beyond what it shares with the parent, and how long it may
  // make no progress (WAITPATH_READER_MEMORY_MB, WAITPATH_READER_WATCHDOG_S).
  size_t child_memory_mb = EnvOr("WAITPATH_READER_MEMORY_MB", 1024);
  // Live, read natively: the recent packets kept per host for captures (0: none;
  // readers/packet_ring.h).
  size_t capture_ring_bytes = 0;
  // Live, read natively: a session is attached at its beginning (what the relayd kept of it),
  // not at its live position; a reattach after the relayd was lost goes on where it was.
  bool live_from_beginning = false;
  unsigned watchdog_s = static_cast<unsigned>(EnvOr("WAITPATH_READER_WATCHDOG_S", 30));

  static bool ContainByDefault();
  static size_t EnvOr(const char* name, size_t fallback);
};

class HostReader {
 public:
  // `ready` is signalled after every enqueue so one consumer can wait on all hosts.
  HostReader(uint16_t host_id, HostSpec spec, ReaderOptions options,
             moodycamel::LightweightSemaphore* ready);
  ~HostReader();
  HostReader(const HostReader&) = delete;
  HostReader& operator=(const HostReader&) = delete;

  void Start();
  void RequestStop() { stop_.store(true, std::memory_order_relaxed); }
  void Join();

  BatchQueue& queue() { return queue_; }
  // Waits up to `timeout_us` for this host's next batch (the consumer's thread; `ready` is
  // signalled too, for a consumer waiting on any host).
  void WaitForBatch(int64_t timeout_us) { arrived_.wait(timeout_us); }
  // Gives a consumed batch back for reuse (any thread).
  void Recycle(Batch* batch) {
    pool_.Give(batch);
    // The reader waits for its queue to be half empty (Push): no wake-up before.
    if (queue_.size_approx() <= options_.max_queued_batches / 2) space_.signal();
  }
  const HostSpec& spec() const { return spec_; }
  // Live with ReaderOptions::capture_ring_bytes: the packets read recently (any thread).
  PacketRing* ring() const { return ring_.get(); }
  uint16_t host_id() const { return host_id_; }

  // Live: times the relayd was lost, reattached, and reattach attempts that failed (any thread).
  RelaydLink::Counts relayd() const {
    std::lock_guard lock(relayd_mutex_);
    return relayd_;
  }
  // Live: the relayd answers again; a reader that lost it tries now, not at the end of its
  // backoff (any thread). Once per outage: a relayd that lists its sessions but fails every
  // attach (a protocol error) would otherwise be tried at every discovery, for ever, instead of
  // with the backoff (up to 5 s).
  void RetryNow() {
    if (!retried_now_.exchange(true, std::memory_order_relaxed))
      retry_now_.store(true, std::memory_order_relaxed);
  }

 private:
  struct Attempt {
    bool ended = false;    // the input ended (trace read, live session gone)
    bool refused = false;  // live: the relayd refuses (another viewer): retrying would not help
    std::string error;     // why it stopped otherwise
  };
  void Run();
  // Reads a recorded host with the native decoder (readers/native_reader.h), in this thread:
  // it checks every read itself, so it needs no child process. False when it cannot (its
  // metadata is beyond it) and babeltrace2 must read the host.
  bool RunNative();
  // Sets up what reading a recorded trace needs (loss holes, stream offsets, warnings).
  void PrepareRecorded(HostInput& input);
  // The child process's side: reads as Run() does, sending batches, warnings and string
  // look-ups over `fd`; the parent's: receives them into this host's queue and watches the
  // child (readers/reader_process.cc).
  void RunContained();
  struct ChildEnd {
    bool got_last = false;  // the child read to the end (or to its own error) and said so
    bool stopped = false;   // RequestStop()
    std::string why;        // how it ended otherwise
    uint64_t where = 0;     // HostInput::where when it ended
    ReaderCounters counters;
  };
  // One child process reading `reading_`; its batches go through `replay` (what a former
  // child delivered is dropped) into the queue, counted with `holes` more damaged.
  ChildEnd RunChild(void* shared_page, Replay& replay, uint32_t holes);
  Attempt RunGraph(HostInput& input, bool reattach);
  // One attempt of a live host read natively (readers/live_reader.h).
  LiveAttempt RunLiveNative(HostInput& input, bool reattach);
  void Push(Batch* batch);
  void PublishLink();

  const uint16_t host_id_;
  const HostSpec spec_;
  // What is read: spec_, or (a contained reader whose child died) a view without the stream
  // it died in. The reader thread's (and its child's).
  HostSpec reading_;
  const ReaderOptions options_;
  moodycamel::LightweightSemaphore* ready_;
  BatchQueue queue_;
  BatchPool pool_;
  // Signalled as batches come back: a reader ahead of its consumer (the native decoder is)
  // waits on it instead of waking every 200 us, which cost up to 0.7 s of system time per
  // analyze of 4.5 M events on this shared VM.
  moodycamel::LightweightSemaphore space_;
  // Signalled after each batch, for a consumer waiting on this host alone (WaitForBatch): with
  // `ready` only, every other host's batch woke it too (16 hosts: most of its wake-ups).
  moodycamel::LightweightSemaphore arrived_;
  moodycamel::ProducerToken token_;
  std::atomic<bool> stop_{false};
  RelaydLink link_;  // the reader thread's
  std::atomic<bool> retry_now_{false};
  std::atomic<bool> retried_now_{false};  // RetryNow() used in this outage
  mutable std::mutex relayd_mutex_;
  RelaydLink::Counts relayd_;  // link_'s counts, for other threads
  std::thread thread_;
  std::unique_ptr<PacketRing> ring_;
  // In a reader's child process: counts graph steps for the parent's watchdog.
  std::atomic<uint64_t>* step_counter_ = nullptr;
  std::atomic<uint64_t>* event_counter_ = nullptr;  // and events read
};

}  // namespace waitpath
