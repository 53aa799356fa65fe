#include "readers/host_reader.h"

#include <babeltrace2/babeltrace.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>

#include "readers/bt_ref.h"
#include "readers/bt_util.h"
#include "readers/host_input.h"
#include "readers/live_reader.h"
#include "readers/merging_sink.h"
#include "readers/native_reader.h"

namespace waitpath {

HostReader::HostReader(uint16_t host_id, HostSpec spec, ReaderOptions options,
                       moodycamel::LightweightSemaphore* ready)
    : host_id_(host_id),
      spec_(std::move(spec)),
      reading_(spec_),
      options_(options),
      ready_(ready),
      pool_(options.max_queued_batches),
      token_(queue_) {
  if (!spec_.live_url.empty() && options_.capture_ring_bytes > 0)
    ring_ = std::make_unique<PacketRing>(options_.capture_ring_bytes);
}

HostReader::~HostReader() {
  RequestStop();
  Join();
  Batch* b = nullptr;
  while (queue_.try_dequeue(b)) delete b;
}

void HostReader::Start() {
  thread_ = std::thread([this] { Run(); });
}

void HostReader::Join() {
  if (thread_.joinable()) thread_.join();
}

void HostReader::Push(Batch* batch) {
  // Backpressure keeps memory bounded when the consumer is slower than the reader. A full
  // queue is refilled once half of it was taken, not a batch at a time: one wake-up per half
  // a queue instead of one per batch consumed (16 hosts on 2 cores: each wake-up a context
  // switch, most of one pass's system time).
  if (queue_.size_approx() >= options_.max_queued_batches) {
    while (queue_.size_approx() > options_.max_queued_batches / 2 &&
           !stop_.load(std::memory_order_relaxed)) {
      space_.wait(2000);  // us: half the queue came back, or look again (a stop, a kept batch)
    }
  }
  queue_.enqueue(token_, batch);
  arrived_.signal();
  ready_->signal();
}

void HostReader::PublishLink() {
  std::lock_guard lock(relayd_mutex_);
  relayd_ = link_.counts();
}

// Builds and runs one graph until it ends, fails or is stopped. `input` is what a reattached
// graph goes on from (counters, the host's clock, the batch being filled).
HostReader::Attempt HostReader::RunGraph(HostInput& input, bool reattach) {
  const bt_logging_level level =
      options_.verbose ? BT_LOGGING_LEVEL_WARNING : BT_LOGGING_LEVEL_NONE;
  Attempt result;
  // Set-up and tear-down hold the lock. What is below goes in reverse order of declaration:
  // the sink (our message iterators) before the graph, then the sink class and the plugin.
  std::unique_lock lock(BabeltraceSetupMutex());
  PluginRef plugin;
  SinkClassRef sink_class;
  GraphRef graph;
  std::unique_ptr<MergingSink> sink;
  const bool live = !spec_.live_url.empty();
  const bt_component_class_source* src_class =
      FindSourceClass("ctf", live ? "lttng-live" : "fs", &plugin.out(), &result.error);
  if (src_class) graph.reset(bt_graph_create(0));
  std::vector<const bt_port_output*> outputs;
  // Recorded traces: what the pre-flight check left to read (a damaged one's cleaned view).
  const std::vector<std::string> inputs = live ? std::vector<std::string>{spec_.live_url}
                                          : reading_.read_dirs.empty() ? reading_.trace_dirs
                                                                       : reading_.read_dirs;
  for (size_t i = 0; graph && result.error.empty() && i < inputs.size(); ++i) {
    ValueRef params(MakeInputsParams({inputs[i]}));
    if (live) {
      // A session that is gone ends the reader; after a reattach it may take a moment to
      // be served again.
      bt_value_map_insert_string_entry(params.get(), "session-not-found-action",
                                       reattach ? "continue" : "end");
    }
    const bt_component_source* src = nullptr;
    const std::string name = "src" + std::to_string(i);
    if (bt_graph_add_source_component(graph.get(), src_class, name.c_str(), params.get(), level,
                                      &src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
      result.error = inputs[i] + (live ? ": cannot attach: " : ": cannot open trace: ") +
                     TakeBabeltraceError(options_.verbose);
      break;
    }
    for (uint64_t p = 0; p < bt_component_source_get_output_port_count(src); ++p) {
      outputs.push_back(bt_component_source_borrow_output_port_by_index_const(src, p));
    }
  }
  if (graph && result.error.empty()) {
    sink = std::make_unique<MergingSink>(input, outputs.size());
    sink_class = MergingSink::CreateClass();
    const bt_component_sink* sink_comp = nullptr;
    if (bt_graph_add_sink_component_with_initialize_method_data(
            graph.get(), sink_class.get(), "waitpath", nullptr, sink.get(), level, &sink_comp) !=
        BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
      result.error = "cannot create the reading graph: " + TakeBabeltraceError(options_.verbose);
    }
    for (size_t i = 0; result.error.empty() && i < outputs.size(); ++i) {
      if (bt_graph_connect_ports(graph.get(), outputs[i],
                                 bt_component_sink_borrow_input_port_by_index_const(sink_comp, i),
                                 nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
        result.error = "cannot connect trace streams: " + TakeBabeltraceError(options_.verbose);
      }
    }
  }
  lock.unlock();

  while (result.error.empty() && !stop_.load(std::memory_order_relaxed)) {
    const bt_graph_run_once_status status = bt_graph_run_once(graph.get());
    if (step_counter_) {
      step_counter_->fetch_add(1, std::memory_order_relaxed);
      event_counter_->store(input.counters.events, std::memory_order_relaxed);
    }
    if (live &&
        (status == BT_GRAPH_RUN_ONCE_STATUS_OK || status == BT_GRAPH_RUN_ONCE_STATUS_AGAIN) &&
        link_.OnRunning() == RelaydLink::Turn::kReattached) {
      // The graph is configured: its live iterators are connected.
      retry_now_.store(false, std::memory_order_relaxed);
      retried_now_.store(false, std::memory_order_relaxed);
      PublishLink();
    }
    if (status == BT_GRAPH_RUN_ONCE_STATUS_OK) continue;
    if (status == BT_GRAPH_RUN_ONCE_STATUS_END) {
      result.ended = true;
      break;
    }
    if (status == BT_GRAPH_RUN_ONCE_STATUS_AGAIN) {
      // Live: nothing new yet. babeltrace2 2.0's live iterator wants us to come back later.
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    result.error = "read stopped after " + std::to_string(input.counters.events) +
                   " events: " + TakeBabeltraceError(options_.verbose);
  }
  // Not a lost relayd: it answers, and refuses a second viewer of the session. Retrying would
  // not change that (one clear line instead of a reattach loop).
  if (live && result.error.find("already a viewer attached") != std::string::npos) {
    result.refused = true;
    result.error =
        "another viewer is attached to this session (the relayd serves one per session): not "
        "following it";
  }

  lock.lock();
  return result;
}

void HostReader::PrepareRecorded(HostInput& input) {
  input.recorded = true;
  input.streams = reading_.streams;
  input.SetHoles(reading_.losses);
  input.warn = [this](const std::string& line) {
    fprintf(stderr, "waitpath: host %s: warning: %s\n", spec_.hostname.c_str(), line.c_str());
  };
}

bool ParseDecoderChoice(const std::string& name, TraceDecoderChoice* out) {
  if (name == "babeltrace2") {
    *out = TraceDecoderChoice::kBabeltrace2;
  } else if (name == "native") {
    *out = TraceDecoderChoice::kNative;
  } else if (name == "auto") {
    *out = TraceDecoderChoice::kAuto;
  } else {
    return false;
  }
  return true;
}

namespace {

// babeltrace2 reads CTF 2 (LTTng 2.15+'s default) from 2.1 on; Debian 12 ships 2.0, which
// also speaks viewer protocol 2.4 only, to which a relayd hides CTF 2 sessions.
bool Babeltrace2ReadsCtf2() {
  return bt_version_get_major() > 2 || (bt_version_get_major() == 2 && bt_version_get_minor() >= 1);
}

std::string Babeltrace2Version() {
  return std::to_string(bt_version_get_major()) + "." + std::to_string(bt_version_get_minor());
}

// Why this babeltrace2 cannot read the host's traces, or "".
std::string Babeltrace2CannotRead(const HostSpec& spec) {
  if (Babeltrace2ReadsCtf2()) return "";
  for (size_t i = 0; i < spec.envs.size() && i < spec.trace_dirs.size(); ++i) {
    if (spec.envs[i].ctf2) {
      return spec.trace_dirs[i] + " is CTF 2 (LTTng 2.15 and later record it by default), which " +
             "babeltrace2 " + Babeltrace2Version() +
             " cannot read (2.1 or later can): read it with --decoder native (the default)";
    }
  }
  return "";
}

}  // namespace

bool HostReader::RunNative() {
  HostInput input(host_id_, options_.batch_events, pool_, [this](Batch* b) { Push(b); });
  PrepareRecorded(input);
  std::string why;
  bool ended = false;
  {
    NativeReader reader(input);
    const std::vector<std::string>& dirs =
        reading_.read_dirs.empty() ? reading_.trace_dirs : reading_.read_dirs;
    if (!reader.Open(dirs, &why)) {
      if (options_.decoder == TraceDecoderChoice::kAuto && Babeltrace2CannotRead(spec_).empty()) {
        fprintf(stderr, "waitpath: host %s: read with babeltrace2: %s\n", spec_.hostname.c_str(),
                why.c_str());
        return false;
      }
    } else {
      ended = reader.Run(stop_);
    }
  }
  input.Finish(!why.empty() ? "the native decoder cannot read it: " + why : ended ? "" : "stopped");
  return true;
}

LiveAttempt HostReader::RunLiveNative(HostInput& input, bool reattach) {
  LiveReadOptions options;
  options.reattach = reattach;
  options.from_beginning = options_.live_from_beginning && !reattach;
  options.may_fall_back = options_.decoder == TraceDecoderChoice::kAuto;
  options.ring = ring_.get();
  options.on_attached = [this] {
    if (link_.OnRunning() == RelaydLink::Turn::kReattached) {
      retry_now_.store(false, std::memory_order_relaxed);
      retried_now_.store(false, std::memory_order_relaxed);
      PublishLink();
    }
  };
  return ReadLiveSession(input, spec_.live_url, options, stop_);
}

void HostReader::Run() {
  if (spec_.live_url.empty() && options_.decoder == TraceDecoderChoice::kBabeltrace2) {
    if (const std::string why = Babeltrace2CannotRead(spec_); !why.empty()) {
      HostInput input(host_id_, options_.batch_events, pool_, [this](Batch* b) { Push(b); });
      input.Finish(why);
      return;
    }
  }
  if (spec_.live_url.empty() && options_.decoder != TraceDecoderChoice::kBabeltrace2 &&
      RunNative()) {
    return;
  }
  if (spec_.live_url.empty() && options_.contain) {
    RunContained();
    return;
  }
  HostInput input(host_id_, options_.batch_events, pool_, [this](Batch* b) { Push(b); });
  if (spec_.live_url.empty()) PrepareRecorded(input);
  bool native = !spec_.live_url.empty() && options_.decoder != TraceDecoderChoice::kBabeltrace2;
  // One attempt of a live host: natively (a babeltrace2 graph when its metadata is beyond the
  // native decoder and the choice is auto), or a babeltrace2 graph.
  auto read = [&](bool reattach) {
    if (!native) return RunGraph(input, reattach);
    const LiveAttempt a = RunLiveNative(input, reattach);
    if (!a.unsupported) return Attempt{a.ended, a.refused, a.error};
    // Falling back would wait on a session the relayd hides, and look like one that ended.
    if (a.ctf2 && !Babeltrace2ReadsCtf2()) {
      return Attempt{false, true,
                     "the native decoder cannot read its CTF 2 metadata (" + a.error +
                         "), nor can babeltrace2 " + Babeltrace2Version() +
                         " (CTF 2 needs 2.1 or later)"};
    }
    fprintf(stderr, "waitpath: host %s: read with babeltrace2: %s\n", spec_.hostname.c_str(),
            a.error.c_str());
    native = false;
    return RunGraph(input, reattach);
  };
  Attempt attempt = read(/*reattach=*/false);
  // Live: a relayd that goes away is reattached with backoff by connecting again (a new
  // graph for babeltrace2, whose 2.0 live iterator cannot recover in place); the gap is data
  // loss, marked once, when the relayd is lost.
  while (!spec_.live_url.empty() && !attempt.ended && !stop_.load(std::memory_order_relaxed)) {
    if (attempt.refused) break;
    if (link_.OnFailure() == RelaydLink::Turn::kLost && input.graphs > 0) input.MarkGap();
    PublishLink();
    for (auto waited = std::chrono::milliseconds(0);
         waited < link_.backoff() && !stop_.load(std::memory_order_relaxed) &&
         !retry_now_.exchange(false, std::memory_order_relaxed);
         waited += std::chrono::milliseconds(50)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (stop_.load(std::memory_order_relaxed)) break;
    attempt = read(/*reattach=*/true);
  }

  // Hand over what was read, with the reason it stops here (none when the input ended).
  input.Finish(attempt.ended ? "" : attempt.error.empty() ? "stopped" : attempt.error);
}

}  // namespace waitpath
