// The engine as the pipeline's sink (stream/pipeline.h), what else watches the pipeline beside
// it, and the offline run every command that analyses recorded traces shares: one host as read,
// several in one pass with the clock sync improving as it reads (or, asked for, after a
// clock-sync pass).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "exporters/cpu_activity.h"
#include "incremental/engine.h"
#include "stream/pipeline.h"

namespace waitpath {

// What watches the pipeline beside the engine, on its thread: the clocks as they change, each
// batch once the engine has its events, each host's end (the sinks' figures, a command's
// messages). Per batch, never per event.
class FeedObserver {
 public:
  virtual ~FeedObserver() = default;
  virtual void OnClocks(const std::vector<HostClock>& clocks) { (void)clocks; }
  virtual void OnBatchDone(const Batch& batch) { (void)batch; }
  virtual void OnHostEnded(uint16_t host, const Batch& last) {
    (void)host;
    (void)last;
  }
};

class EngineFeed : public PipelineSink {
 public:
  explicit EngineFeed(Engine& engine) : engine_(engine) {}

  // Told after the engine, in the order added.
  void AddObserver(FeedObserver* observer) { observers_.push_back(observer); }
  void RemoveObserver(FeedObserver* observer) {
    observers_.erase(std::remove(observers_.begin(), observers_.end(), observer), observers_.end());
  }
  // A timeline's per-CPU recorder, fed every event; null (the default) costs one test per event.
  void SetCpuActivity(CpuActivity* cpus) { cpus_ = cpus; }

  void OnClocks(const std::vector<HostClock>& clocks) override {
    // From now on times are in the reference clock: cross-host packets can be followed.
    engine_.SetSynchronized(true);
    for (FeedObserver* o : observers_) o->OnClocks(clocks);
  }
  void OnEvent(const Event& event, const Batch& from) override {
    if (cpus_) cpus_->Observe(event);
    engine_.Process(event, from);
  }
  void OnEvents(const Batch& batch) override {
    if (cpus_) {
      for (const Event& e : batch.events) cpus_->Observe(e);
    }
    engine_.Push(batch);
  }
  void OnBatchDone(const Batch& batch) override {
    for (FeedObserver* o : observers_) o->OnBatchDone(batch);
  }
  void OnHostEnded(uint16_t host, const Batch& last) override {
    for (FeedObserver* o : observers_) o->OnHostEnded(host, last);
  }

 private:
  Engine& engine_;
  CpuActivity* cpus_ = nullptr;
  std::vector<FeedObserver*> observers_;
};

// Recorded traces into `feed`: kIdentity for one host; for several, kPrePass when
// `options.policy` asks for it, else kOnePass. False (and `error`) on a bad reference. `stats`: the
// hosts' reading figures.
bool AnalyseTraces(const std::vector<HostSpec>& hosts, PipelineOptions options, EngineFeed& feed,
                   std::vector<HostStats>* stats, std::string* error);

}  // namespace waitpath
