#include "stream/pipeline.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <thread>

#include "model/event_views.h"
#include "model/loss_marker.h"

namespace waitpath {

bool KeptBatches::Keep(std::unique_ptr<Batch>& batch) {
  if (over_budget) return false;
  const size_t size = sizeof(Batch) + batch->events.capacity() * sizeof(Event) +
                      batch->packets.capacity() * sizeof(PacketKey) + batch->error.capacity();
  if (bytes + size > budget_bytes) {
    hosts.clear();
    bytes = 0;
    over_budget = true;
    return false;
  }
  if (batch->host >= hosts.size()) hosts.resize(batch->host + 1u);
  bytes += size;
  hosts[batch->host].push_back(std::move(batch));
  return true;
}

std::unique_ptr<Batch> KeptBatches::Pop(size_t host) {
  if (host >= hosts.size() || hosts[host].empty()) return nullptr;
  std::unique_ptr<Batch> batch = std::move(hosts[host].front());
  hosts[host].pop_front();
  return batch;
}

Pipeline::Pipeline(PipelineOptions options, PipelineSink* sink)
    : options_(std::move(options)), sink_(sink) {
  merger_.SetMaxLag(options_.max_lag_ns);
  if (options_.policy == SyncPolicy::kBootstrap) {
    // Live: the reference is the first host to appear.
    sync_ = std::make_unique<ClockSync>(std::vector<std::string>{}, 0, options_.two_phase);
  }
  if (const char* slow = std::getenv("WAITPATH_TEST_SLOW_HOST")) {
    const std::string spec(slow);
    const size_t colon = spec.rfind(':');
    if (colon != std::string::npos) {
      slow_host_ = spec.substr(0, colon);
      slow_ms_ = std::atoi(spec.c_str() + colon + 1);
    }
  }
}

Pipeline::~Pipeline() {
  for (auto& r : readers_) r->RequestStop();
  readers_.clear();  // joins
}

uint16_t Pipeline::AddSource(HostSpec spec) {
  const auto host = static_cast<uint16_t>(specs_.size());
  stats_.emplace_back().host = spec.hostname;
  ended_.push_back(false);
  watermark_.push_back(std::numeric_limits<int64_t>::min());
  last_arrival_.push_back(std::chrono::steady_clock::now());
  reopened_.push_back(false);
  merger_.AddHost();
  if (sync_) sync_->AddHost(spec.hostname);
  specs_.push_back(std::move(spec));
  if (options_.policy == SyncPolicy::kBootstrap) {
    readers_.push_back(std::make_unique<HostReader>(host, specs_.back(), options_.reader, &ready_));
    readers_.back()->Start();
  }
  return host;
}

bool Pipeline::ReopenSource(uint16_t host) {
  if (options_.policy != SyncPolicy::kBootstrap || host >= specs_.size() || !ended_[host])
    return false;
  readers_[host]->RequestStop();
  readers_[host]->Join();
  // Its batches still in the merger are recycled into the new reader's pool (any reader's
  // batches fit any other's).
  readers_[host] = std::make_unique<HostReader>(host, specs_[host], options_.reader, &ready_);
  ended_[host] = false;
  stats_[host].Resume();
  merger_.Reopen(host);
  reopened_[host] = true;
  last_arrival_[host] = std::chrono::steady_clock::now();
  readers_[host]->Start();
  return true;
}

void Pipeline::StartSources() {
  if (readers_.size() == specs_.size()) return;
  ReaderOptions reader = options_.reader;
  reader.max_queued_batches = std::clamp<size_t>(
      options_.total_queued_batches / std::max<size_t>(1, specs_.size()),
      std::min<size_t>(16, reader.max_queued_batches), reader.max_queued_batches);
  for (size_t h = readers_.size(); h < specs_.size(); ++h) {
    readers_.push_back(
        std::make_unique<HostReader>(static_cast<uint16_t>(h), specs_[h], reader, &ready_));
    readers_.back()->Start();
  }
}

// A second read of the same traces: new readers, and the figures counted afresh.
void Pipeline::RestartSources() {
  for (auto& r : readers_) r->RequestStop();
  readers_.clear();
  for (size_t h = 0; h < specs_.size(); ++h) {
    stats_[h] = HostStats{};
    stats_[h].host = specs_[h].hostname;
    ended_[h] = false;
    watermark_[h] = std::numeric_limits<int64_t>::min();
  }
  StartSources();
}

bool Pipeline::MakeSync(std::string* error) {
  if (options_.policy == SyncPolicy::kIdentity || sync_) return true;
  std::vector<std::string> names;
  for (const HostSpec& s : specs_) names.push_back(s.hostname);
  size_t ref = 0;  // default: the first host
  if (!options_.reference.empty()) {
    ref = static_cast<size_t>(std::find(names.begin(), names.end(), options_.reference) -
                              names.begin());
    if (ref == names.size()) {
      *error = "--reference " + options_.reference + ": no such host in the traces";
      return false;
    }
  }
  sync_ = std::make_unique<ClockSync>(std::move(names), ref, options_.two_phase);
  return true;
}

Batch* Pipeline::TryTake(size_t host) {
  Batch* b = nullptr;
  if (!readers_[host]->queue().try_dequeue(b)) return nullptr;
  if (slow_ms_ > 0 && specs_[host].hostname == slow_host_)
    std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms_));
  return b;
}

std::unique_ptr<Batch> Pipeline::Take(size_t host) {
  for (;;) {
    if (Batch* b = TryTake(host)) return std::unique_ptr<Batch>(b);
    readers_[host]->WaitForBatch(20000);  // microseconds; also re-checks periodically
  }
}

void Pipeline::Arrive(Batch& batch, bool sync) {
  const uint16_t h = batch.host;
  stats_[h].Add(batch);
  // From here on a batch's counters are its host's, across the readers a recreated session
  // gave it (HostStats::Resume): cumulative figures that only grow, whatever reader sent it.
  batch.counters = stats_[h].reader;
  watermark_[h] = std::max(watermark_[h], batch.watermark);
  if (sync && sync_) {
    for (const Event& e : batch.events) {
      if ((e.kind == EventKind::kPacketOut || e.kind == EventKind::kPacketIn) &&
          AsPacket(e).key() >= 0) {
        sync_->OnPacket(h, e.ts, e.kind == EventKind::kPacketOut,
                        batch.packets[static_cast<size_t>(AsPacket(e).key())]);
      }
    }
    sync_->OnWatermark(h, batch.watermark);
  }
  if (batch.last) {
    ended_[h] = true;
    if (sink_) sink_->OnHostEnded(h, batch);
  }
}

// What happened on the host between its old reader's end and the new reader's first event is
// unknown: a loss on every CPU it had, from its last watermark on.
void Pipeline::MarkReopenGap(Batch& batch) {
  const uint16_t h = batch.host;
  if (batch.events.empty()) return;
  reopened_[h] = false;
  std::vector<Event> markers;
  const int64_t at = batch.events.front().ts;
  const int64_t since = watermark_[h] == std::numeric_limits<int64_t>::min() ? at : watermark_[h];
  for (const auto& [cpu, count] : stats_[h].events_by_cpu) {
    markers.push_back(LossMarker(h, cpu, at, since, -1));
  }
  batch.events.insert(batch.events.begin(), markers.begin(), markers.end());
}

// To its reader's pool; freed when the reader is gone.
void Pipeline::Recycle(std::unique_ptr<Batch> batch) {
  if (batch->host < readers_.size()) readers_[batch->host]->Recycle(batch.release());
}

bool Pipeline::ReadAll(std::string* error, KeptBatches* keep) {
  if (!MakeSync(error)) return false;
  StartSources();
  for (;;) {
    size_t next = specs_.size();
    for (size_t h = 0; h < specs_.size(); ++h) {
      if (!ended_[h] && (next == specs_.size() || watermark_[h] < watermark_[next])) next = h;
    }
    if (next == specs_.size()) return true;
    std::unique_ptr<Batch> batch = Take(next);
    Arrive(*batch, /*sync=*/true);
    if (!keep || !keep->Keep(batch)) Recycle(std::move(batch));
  }
}

void Pipeline::SetTransforms(const std::vector<HostClock>& clocks) {
  for (size_t h = 0; h < clocks.size() && h < merger_.host_count(); ++h)
    merger_.SetTransform(static_cast<uint16_t>(h), clocks[h].transform);
}

void Pipeline::Release() {
  Event e;
  const Batch* from = nullptr;
  while (merger_.Next(&e, &from)) sink_->OnEvent(e, *from);
  for (auto& done : merger_.TakeConsumed()) {
    sink_->OnBatchDone(*done);
    Recycle(std::move(done));
  }
}

bool Pipeline::Run(std::string* error) {
  if (options_.policy == SyncPolicy::kBootstrap) {
    // Recorded traces through the live policy (tests): until every source ended.
    while (std::find(ended_.begin(), ended_.end(), false) != ended_.end()) Pump(20000);
    Drain();
    return true;
  }
  if (options_.policy == SyncPolicy::kOnePass) {
    if (!MakeSync(error)) return false;
    RunOnePass();
    return true;
  }
  KeptBatches kept;
  bool from_kept = false;
  if (options_.policy == SyncPolicy::kPrePass) {
    kept.budget_bytes = options_.keep_decoded_bytes;
    if (!ReadAll(error, &kept)) return false;
    const std::vector<HostClock> clocks = sync_->Clocks();
    sync_.reset();  // its packet tables and kept matches are not needed any more
    SetTransforms(clocks);
    sink_->OnClocks(clocks);
    from_kept = !kept.over_budget;
    if (from_kept) {
      // All read: the readers' threads, pools and queues can go, and kept batches are freed
      // as they are merged (Recycle has no reader to give them to).
      readers_.clear();
    } else {
      RestartSources();
    }
  } else {
    StartSources();
    if (specs_.size() == 1) {
      for (;;) {
        std::unique_ptr<Batch> batch = Take(0);
        Arrive(*batch, /*sync=*/false);
        sink_->OnEvents(*batch);
        sink_->OnBatchDone(*batch);
        if (batch->last) return true;
        Recycle(std::move(batch));
      }
    }
  }
  for (;;) {
    Release();
    if (merger_.done() || merger_.needed() < 0) return true;
    const auto host = static_cast<size_t>(merger_.needed());
    std::unique_ptr<Batch> batch = from_kept ? kept.Pop(host) : Take(host);
    if (!batch) return true;
    if (!from_kept) Arrive(*batch, /*sync=*/false);
    merger_.Push(std::move(batch));
  }
}

namespace {

// What a held batch counts against the budget: from its sizes, not its capacity, which
// depends on which pooled batch the reader happened to reuse.
size_t HeldSize(const Batch& b) {
  return sizeof(Batch) + b.events.size() * sizeof(Event) + b.packets.size() * sizeof(PacketKey);
}

constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();
constexpr int64_t kEndOfTime = std::numeric_limits<int64_t>::max();

}  // namespace

bool Pipeline::OnePassBootstrapDone() const {
  if (held_bytes_ > options_.keep_decoded_bytes) return true;
  // Not before every host is accurate: an event mapped now is never mapped again, and a
  // host that exchanges packets late in its trace (or never) would otherwise get its first
  // events in its own clock. Until then memory is what --sync-passes 2 would keep.
  for (const HostClock& c : sync_->Clocks()) {
    if (c.quality != SyncQuality::kAccurate) return false;
  }
  return true;
}

void Pipeline::ApplyTransformsIfChanged() {
  if (sync_->version() == sync_version_) return;
  SetTransforms(sync_->Clocks());
  sync_version_ = sync_->version();
}

void Pipeline::ReleaseOnePass() {
  // Released: what every host still reading is hold_ns past (a host that has shown nothing
  // yet holds everything back).
  int64_t limit = kEndOfTime;
  for (size_t h = 0; h < specs_.size(); ++h) {
    if (ended_[h]) continue;
    if (watermark_[h] == kNoTime) {
      limit = kNoTime;
      break;
    }
    const int64_t reference =
        merger_.transform(static_cast<uint16_t>(h)).ToReference(watermark_[h]);
    limit = std::min(
        limit, reference > kNoTime + options_.hold_ns ? reference - options_.hold_ns : kNoTime);
  }
  Event e;
  const Batch* from = nullptr;
  for (;;) {
    // Over the budget, the oldest held events go whatever the limit.
    const bool over = held_bytes_ > options_.keep_decoded_bytes;
    merger_.SetReleaseLimit(over ? kEndOfTime : limit);
    if (!merger_.Next(&e, &from)) break;
    sink_->OnEvent(e, *from);
    if (over) {
      for (auto& done : merger_.TakeConsumed()) {
        held_bytes_ -= HeldSize(*done);
        sink_->OnBatchDone(*done);
        Recycle(std::move(done));
      }
    }
  }
  for (auto& done : merger_.TakeConsumed()) {
    held_bytes_ -= HeldSize(*done);
    sink_->OnBatchDone(*done);
    Recycle(std::move(done));
  }
}

void Pipeline::RunOnePass() {
  StartSources();
  bool bootstrapping = true;
  for (;;) {
    // The host furthest behind: in its own clock until the transforms are known (as the
    // sync pass reads), then in the reference clock, so that the hosts advance together in
    // the order the merger releases.
    size_t next = specs_.size();
    int64_t next_key = 0;
    for (size_t h = 0; h < specs_.size(); ++h) {
      if (ended_[h]) continue;
      const int64_t key =
          bootstrapping || watermark_[h] == kNoTime
              ? watermark_[h]
              : merger_.transform(static_cast<uint16_t>(h)).ToReference(watermark_[h]);
      if (next == specs_.size() || key < next_key) {
        next = h;
        next_key = key;
      }
    }
    if (next == specs_.size()) break;
    std::unique_ptr<Batch> batch = Take(next);
    Arrive(*batch, /*sync=*/true);
    held_bytes_ += HeldSize(*batch);
    merger_.Push(std::move(batch));
    if (bootstrapping) {
      if (!OnePassBootstrapDone()) continue;
      bootstrapping = false;
      ApplyTransformsIfChanged();
      sink_->OnClocks(sync_->Clocks());
    } else {
      ApplyTransformsIfChanged();
    }
    ReleaseOnePass();
  }
  // Every host ended: the final transforms for what is still held, and everything goes.
  ApplyTransformsIfChanged();
  sink_->OnClocks(sync_->Clocks());
  merger_.SetReleaseLimit(kEndOfTime);
  ReleaseOnePass();
}

bool Pipeline::BootstrapDone(std::chrono::steady_clock::time_point now) {
  if (!bootstrapping_) return true;
  if (first_batch_ == std::chrono::steady_clock::time_point{} && !stopping_) return false;
  const std::vector<HostClock>& clocks = sync_->Clocks();
  bool linked = clocks.size() >= 2;
  for (const HostClock& c : clocks) {
    linked =
        linked && (c.quality == SyncQuality::kAccurate || c.quality == SyncQuality::kApproximate);
  }
  const bool waited = first_batch_ != std::chrono::steady_clock::time_point{} &&
                      now - first_batch_ > options_.bootstrap_limit;
  // One host has nobody to synchronize with: nothing to wait for.
  if (!linked && !waited && !stopping_ && clocks.size() >= 2) return false;
  bootstrapping_ = false;
  // The reference: the first host in name order among those here now, whatever order the
  // relayd listed them in (a host that appears later never becomes it).
  size_t reference = 0;
  for (size_t h = 1; h < specs_.size(); ++h) {
    if (specs_[h].hostname < specs_[reference].hostname) reference = h;
  }
  sync_->SetReference(reference);
  return true;
}

void Pipeline::Pump(int64_t timeout_us) {
  bool any = false;
  const auto now = std::chrono::steady_clock::now();
  for (size_t h = 0; h < readers_.size(); ++h) {
    const auto host = static_cast<uint16_t>(h);
    while (Batch* b = TryTake(h)) {
      any = true;
      if (reopened_[h]) MarkReopenGap(*b);
      last_arrival_[h] = now;
      merger_.SetIdle(host, stopping_);
      if (first_batch_ == std::chrono::steady_clock::time_point{}) first_batch_ = now;
      Arrive(*b, /*sync=*/true);
      merger_.Push(std::unique_ptr<Batch>(b));
    }
    // A quiet host is not waited for (a stalled host must not stall all).
    if (!ended_[h] && !stopping_ && now - last_arrival_[h] > options_.idle_after)
      merger_.SetIdle(host, true);
  }
  if (BootstrapDone(now)) {
    if (sync_->version() != sync_version_ || merger_.host_count() != transforms_set_) {
      const std::vector<HostClock>& clocks = sync_->Clocks();
      SetTransforms(clocks);
      sink_->OnClocks(clocks);
      sync_version_ = sync_->version();
      transforms_set_ = merger_.host_count();
    }
    Release();
  }
  if (!any && timeout_us > 0) ready_.wait(timeout_us);
}

void Pipeline::Drain() {
  stopping_ = true;
  for (auto& r : readers_) r->RequestStop();
  for (auto& r : readers_) r->Join();
  // Everything has arrived: nobody is worth waiting for any more.
  for (size_t h = 0; h < merger_.host_count(); ++h) merger_.SetIdle(static_cast<uint16_t>(h), true);
  Pump(0);
}

}  // namespace waitpath
