// A bus in memory (fleet/bus.h), for the shards' unit tests: the MemoryBus of each shard on one
// MemoryBroker see what the others publish, as shards on one NATS server do. What is published
// is kept, as the JetStream stream keeps it: a subscription made later gets it first. Handlers
// run on the publishing (or subscribing) thread; a query's answer is waited for on the asking
// thread, `meanwhile` running, as NatsBus does.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fleet/bus.h"

namespace waitpath {

class MemoryBroker {
 public:
  // A broker down: every bus on it has been disconnected for long (DownLongerThan), and queries
  // fail at once.
  void SetDown(bool down);
  bool down() const;

 private:
  friend class MemoryBus;
  struct Subscriber {
    std::string pattern;  // tokens separated by '.', `*` matching one token
    Bus::Handler handler;
  };
  struct Message {
    std::string subject, data;
  };

  static bool Matches(const std::string& pattern, const std::string& subject);

  mutable std::mutex mu_;
  std::condition_variable answered_;
  bool down_ = false;
  std::vector<Message> stream_;
  std::vector<Subscriber> subscribers_;
  std::map<std::string, Bus::QueryHandler> servers_;  // by subject
  std::map<std::string, std::string> answers_;        // by reply subject
  uint64_t next_inbox_ = 0;
};

class MemoryBus : public Bus {
 public:
  explicit MemoryBus(MemoryBroker& broker) : broker_(broker) {}

  bool Publish(const std::string& subject, const void* data, size_t size) override;
  bool Subscribe(const std::string& subject, Handler handler, std::string* error) override;
  void Poll() override {}
  bool Serve(const std::string& subject, QueryHandler handler, std::string* error) override;
  bool Respond(std::string_view reply_to, const void* data, size_t size) override;
  bool Request(const std::string& subject, const void* data, size_t size, int64_t timeout_ms,
               std::string* answer, const std::function<void()>& meanwhile = {}) override;
  bool DownLongerThan(std::chrono::milliseconds grace) const override;

 private:
  MemoryBroker& broker_;
};

}  // namespace waitpath
