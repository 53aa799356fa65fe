// The engine as the pipeline's sink (stream/pipeline.h), and the offline run every command
// that analyses recorded traces shares: one host as read, several in one pass with the clock
// sync improving as it reads (or, asked for, after a clock-sync pass).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "exporters/cpu_activity.h"
#include "incremental/engine.h"
#include "stream/pipeline.h"

namespace waitpath {

class EngineFeed : public PipelineSink {
 public:
  explicit EngineFeed(Engine& engine) : engine_(engine) {}

  // Optional observers, on the pipeline's thread.
  std::function<void(const std::vector<HostClock>&)> on_clocks;
  std::function<void(const Batch&)> on_batch;
  std::function<void(uint16_t host, const Batch& last)> on_host_ended;

  void OnClocks(const std::vector<HostClock>& clocks) override {
    // From now on times are in the reference clock: cross-host packets can be followed.
    engine_.SetSynchronized(true);
    if (on_clocks) on_clocks(clocks);
  }
  // A timeline's per-CPU recorder, fed every event; null (the default) costs one test per event.
  void SetCpuActivity(CpuActivity* cpus) { cpus_ = cpus; }

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
    if (on_batch) on_batch(batch);
  }
  void OnHostEnded(uint16_t host, const Batch& last) override {
    if (on_host_ended) on_host_ended(host, last);
  }

 private:
  Engine& engine_;
  CpuActivity* cpus_ = nullptr;
};

// Recorded traces into `feed`: kIdentity for one host; for several, kPrePass when
// `options.policy` asks for it, else kOnePass. False (and `error`) on a bad reference. `stats`: the
// hosts' reading figures.
bool AnalyseTraces(const std::vector<HostSpec>& hosts, PipelineOptions options, EngineFeed& feed,
                   std::vector<HostStats>* stats, std::string* error);

}  // namespace waitpath
