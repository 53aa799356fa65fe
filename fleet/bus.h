// The bus between the shards of a fleet (docs/scale.md), as a shard uses it: subjects to publish
// to and subscribe to (edge records, clock samples: kept by the bus, so that a subscription made
// late still gets what was published to it a while before), and queries answered by whoever
// serves their subject. Over NATS JetStream in production (fleet/nats_bus.h); in memory in the
// shard's unit tests (fleet/memory_bus.h).
//
// Handlers run on the bus's threads: they only copy what they get into queues the engine
// thread drains (docs/architecture.md, "Threads and ownership").
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace waitpath {

struct BusCounters {
  std::atomic<uint64_t> published{0};
  // Not acknowledged: refused (the bus closed, the window full), an error ack, or an ack lost
  // with a node (then possibly stored all the same).
  std::atomic<uint64_t> publish_failed{0};
  std::atomic<uint64_t> received{0};
  std::atomic<uint64_t> duplicates{0};  // delivered again (a consumer's hand-over, a retry)
  std::atomic<uint64_t> disconnects{0};
  std::atomic<uint64_t> reconnects{0};
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> request_failures{0};  // no answer within the bound (or the bus down)
};

class Bus {
 public:
  // Subject, payload; for a query also the inbox its answer goes to.
  using Handler = std::function<void(std::string_view subject, std::string_view data)>;
  using QueryHandler = std::function<void(std::string_view reply_to, std::string_view data)>;

  virtual ~Bus() = default;

  // Asynchronous: false (and counted) when the bus cannot take it now.
  virtual bool Publish(const std::string& subject, const void* data, size_t size) = 0;
  // What is published to `subject` (`*` matches one token), from a while back on. False with
  // `error` when it cannot start now: the bus starts it once it can.
  virtual bool Subscribe(const std::string& subject, Handler handler, std::string* error) = 0;
  // On the engine thread, between batches: lets the bus catch up with what it owes.
  virtual void Poll() = 0;
  // Answer queries sent to `subject` (through Respond, from any thread).
  virtual bool Serve(const std::string& subject, QueryHandler handler, std::string* error) = 0;
  virtual bool Respond(std::string_view reply_to, const void* data, size_t size) = 0;
  // A query; false (counted) without an answer within `timeout_ms`. `meanwhile` runs every few
  // ms while it waits: a shard answers the others' queries then, so two shards asking each other
  // at once both get answers.
  virtual bool Request(const std::string& subject, const void* data, size_t size,
                       int64_t timeout_ms, std::string* answer,
                       const std::function<void()>& meanwhile = {}) = 0;
  // Not connected, and for longer than `grace` (or never connected yet): a connection moving to
  // another cluster node is back within milliseconds, a lost server is not.
  virtual bool DownLongerThan(std::chrono::milliseconds grace) const = 0;
  const BusCounters& counters() const { return counters_; }

 protected:
  BusCounters counters_;
};

// A subject token from a name: characters outside [A-Za-z0-9_-] become '_' (a '.' would split
// the token, '*' and '>' are wildcards).
std::string SubjectToken(std::string_view name);

}  // namespace waitpath
