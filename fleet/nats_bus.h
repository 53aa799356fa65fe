// The bus between the shards of a fleet (fleet/bus.h, docs/scale.md) over a NATS connection (the
// C client, libnats) with JetStream. Edge records and clock samples go through one JetStream
// stream, so a shard that subscribes late (a restarted shard, an address learned while running)
// reads what was published within the stream's age limit; cumulative-vector queries are core NATS
// request/reply, answered by the shard that owns the sender.
//
// Callbacks run on the client's threads: they only copy what they get into queues that the
// engine thread drains (docs/architecture.md, "Threads and ownership"). The connection
// reconnects by itself, forever; while it is down, publishes are buffered, queries time out,
// and nothing blocks. A cluster node lost (its consumers, a stream leader) loses no message:
// publishes are sent again until acknowledged, subscriptions resume where they were
// (docs/scale.md, "Bounds and failures").
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include "fleet/bus.h"

struct __natsConnection;
struct __jsCtx;
struct __natsSubscription;
struct __natsMsg;
struct jsPubAckErr;

namespace waitpath {

struct BusOptions {
  std::string urls;                     // nats://HOST:PORT[,nats://HOST:PORT...]
  std::string stream = "WAITPATH";      // the JetStream stream of waitpath.edge/sync
  int64_t max_age_ns = 60'000'000'000;  // what the stream keeps
  // A subscription starts this far back: a restarted shard reads live data again (at the
  // relayd's live position), so it needs what was published since about then, not the
  // stream's whole age (whose older records could only be stale matches).
  int64_t catch_up_ns = 10'000'000'000;
  int replicas = 1;  // 3 on a three-node cluster: a node may go
  int64_t connect_timeout_ms = 2000;
};

class NatsBus : public Bus {
 public:
  // Connects (retrying in the background when no server answers yet: the shard starts anyway)
  // and creates the stream when the servers allow. nullptr with a one-line error when the
  // URL or options are bad.
  static std::unique_ptr<NatsBus> Connect(const BusOptions& options, std::string* error);
  ~NatsBus() override;

  // JetStream publish, asynchronous: false (and counted) when the bus cannot take it now;
  // while reconnecting it is buffered and sent on reconnection; a publish the stream does not
  // acknowledge is sent again by the bus's thread (every 0.5 s, 20 times at most, then counted
  // in publish_failed). Sent again, it is stored after publishes that came later.
  bool Publish(const std::string& subject, const void* data, size_t size) override;
  // A JetStream subscription: a push consumer from `catch_up_ns` ago; when it is lost (its
  // cluster node died, a message it sent did not arrive) the bus's thread makes a new one that
  // starts right after the last message delivered. False with `error` when it cannot start
  // now: the bus's thread starts it once the bus is there.
  bool Subscribe(const std::string& subject, Handler handler, std::string* error) override;
  // The bus's own thread, every 50 ms, creates the stream, starts the subscriptions that could
  // not start while the bus was down, makes again those whose consumer was lost, and sends
  // again the publishes not acknowledged (a failed JetStream API call waits a second before
  // the next): none of it waits for the engine thread, which may be waiting for what it
  // brings. Poll only wakes it now.
  void Poll() override;
  // Core NATS: answer queries sent to `subject` (through Respond, from any thread).
  bool Serve(const std::string& subject, QueryHandler handler, std::string* error) override;
  bool Respond(std::string_view reply_to, const void* data, size_t size) override;
  // A query; false (counted) without an answer within `timeout_ms`. `meanwhile` runs every
  // few ms while it waits: a shard answers the others' queries then, so two shards asking
  // each other at once both get answers.
  bool Request(const std::string& subject, const void* data, size_t size, int64_t timeout_ms,
               std::string* answer, const std::function<void()>& meanwhile = {}) override;
  // Waits until every asynchronous publish is acknowledged (or `timeout_ms` passed).
  void Flush(int64_t timeout_ms);

  // No callback runs after this returns (call it before what the handlers use goes away).
  void Close();

  bool connected() const;
  // Not connected, and for longer than `grace` (or never connected yet): a connection moving to
  // another cluster node is back within milliseconds, a lost server is not.
  bool DownLongerThan(std::chrono::milliseconds grace) const override;

 private:
  NatsBus() = default;
  struct Subscription;
  bool EnsureStream(std::string* error);
  bool Activate(Subscription& sub, std::string* error);
  void Drop(Subscription& sub);
  static void OnPublishFailed(__jsCtx*, ::jsPubAckErr* pae, void* arg);
  void Resend();
  size_t retrying() const;
  static void OnMessage(__natsConnection*, __natsSubscription*, __natsMsg* msg, void* arg);
  static void OnQuery(__natsConnection*, __natsSubscription*, __natsMsg* msg, void* arg);
  static void OnDisconnected(__natsConnection*, void* arg);
  static void OnReconnected(__natsConnection*, void* arg);

  // One JetStream consumer of a subscription, as the client's callback sees it: its messages
  // must come with consumer sequences 1, 2, 3... (no acks: a message the consumer sent that
  // did not arrive is never sent again).
  struct Consumer {
    Subscription* owner;
    uint64_t next_delivery = 1;     // the consumer sequence expected next (callback thread)
    std::atomic<bool> lost{false};  // a gap seen, or replaced: what it delivers is ignored
  };

  struct Subscription {
    NatsBus* bus;
    std::string subject;
    Handler handler;
    QueryHandler query;
    __natsSubscription* sub = nullptr;
    bool answer = false;                // this connection's inbox
    std::atomic<uint64_t> next_seq{0};  // stream sequence after the last message delivered
    // The current consumer is the last; earlier ones are kept because the client may still be
    // running their callback (one per consumer lost: a few).
    std::vector<std::unique_ptr<Consumer>> consumers;
  };

  // From the client's threads: the consumer behind `sub` is lost (missed heartbeats, a gap).
  void MarkLost(__natsSubscription* sub);
  // From the client's threads: false when a message with this id was delivered already.
  bool FirstDelivery(const char* id);

  bool StartInbox();
  void Keep();
  void Maintain();

  BusOptions options_;
  std::mutex answers_mu_;
  std::condition_variable answered_;
  std::map<uint64_t, std::optional<std::string>> answers_;  // requests waiting, by number
  uint64_t next_request_ = 0;
  std::string inbox_;  // this connection's reply subjects: inbox_.N
  __natsConnection* conn_ = nullptr;
  __jsCtx* js_ = nullptr;
  std::atomic<bool> stream_ready_{false};
  std::atomic<bool> check_stream_{false};  // set on reconnection, done by Maintain
  // When the connection was lost (steady clock, ns); 0 while connected or before the first.
  std::atomic<int64_t> down_since_ns_{0};
  struct Retry {
    __natsMsg* msg;
    std::chrono::steady_clock::time_point due;
  };
  mutable std::mutex retry_mu_;
  std::deque<Retry> retries_;  // publishes to send again (OnPublishFailed)
  std::mutex lost_mu_;
  std::vector<__natsSubscription*> lost_;
  std::vector<__natsSubscription*> draining_;
  std::mutex ids_mu_;
  std::unordered_set<std::string> delivered_ids_;   // message ids, the last kMaxPending
  std::deque<std::string> delivered_order_;         // lost consumers' (Drop), freed once closed //
                                                    // consumers lost, made again by Maintain
  std::chrono::steady_clock::time_point retry_at_;  // Maintain's next JetStream API calls
  // subs_ and what JetStream API calls change in them: the engine thread (Subscribe, Serve) and
  // the bus's thread (Maintain). Callbacks only read what never changes (subject, handler).
  std::mutex subs_mu_;
  std::thread keeper_;  // Keep
  std::mutex keeper_mu_;
  std::condition_variable keeper_cv_;
  bool stop_ = false;
  bool closed_ = false;
  std::string id_prefix_;       // message ids: unique to this connection, then a count
  uint64_t published_ids_ = 0;  // (Publish runs on one thread)
  std::vector<std::unique_ptr<Subscription>> subs_;
};

}  // namespace waitpath
