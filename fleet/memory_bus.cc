#include "fleet/memory_bus.h"

#include <thread>

namespace waitpath {

void MemoryBroker::SetDown(bool down) {
  std::lock_guard<std::mutex> lock(mu_);
  down_ = down;
}

bool MemoryBroker::down() const {
  std::lock_guard<std::mutex> lock(mu_);
  return down_;
}

bool MemoryBroker::Matches(const std::string& pattern, const std::string& subject) {
  size_t p = 0, s = 0;
  for (;;) {
    const size_t p_end = std::min(pattern.find('.', p), pattern.size());
    const size_t s_end = std::min(subject.find('.', s), subject.size());
    const std::string_view token(pattern.data() + p, p_end - p);
    if (token != "*" && token != std::string_view(subject.data() + s, s_end - s)) return false;
    const bool pattern_done = p_end == pattern.size(), subject_done = s_end == subject.size();
    if (pattern_done || subject_done) return pattern_done && subject_done;
    p = p_end + 1;
    s = s_end + 1;
  }
}

bool MemoryBus::Publish(const std::string& subject, const void* data, size_t size) {
  const std::string bytes(static_cast<const char*>(data), size);
  std::vector<Handler> to;
  {
    std::lock_guard<std::mutex> lock(broker_.mu_);
    broker_.stream_.push_back({subject, bytes});
    for (const MemoryBroker::Subscriber& s : broker_.subscribers_) {
      if (MemoryBroker::Matches(s.pattern, subject)) to.push_back(s.handler);
    }
  }
  ++counters_.published;
  // Outside the lock: a handler may publish in turn.
  for (const Handler& handler : to) handler(subject, bytes);
  return true;
}

bool MemoryBus::Subscribe(const std::string& subject, Handler handler, std::string* error) {
  (void)error;
  std::vector<MemoryBroker::Message> kept;
  {
    std::lock_guard<std::mutex> lock(broker_.mu_);
    broker_.subscribers_.push_back({subject, handler});
    for (const MemoryBroker::Message& m : broker_.stream_) {
      if (MemoryBroker::Matches(subject, m.subject)) kept.push_back(m);
    }
  }
  for (const MemoryBroker::Message& m : kept) handler(m.subject, m.data);
  return true;
}

bool MemoryBus::Serve(const std::string& subject, QueryHandler handler, std::string* error) {
  (void)error;
  std::lock_guard<std::mutex> lock(broker_.mu_);
  broker_.servers_[subject] = std::move(handler);
  return true;
}

bool MemoryBus::Respond(std::string_view reply_to, const void* data, size_t size) {
  std::lock_guard<std::mutex> lock(broker_.mu_);
  broker_.answers_[std::string(reply_to)] = std::string(static_cast<const char*>(data), size);
  broker_.answered_.notify_all();
  return true;
}

bool MemoryBus::Request(const std::string& subject, const void* data, size_t size,
                        int64_t timeout_ms, std::string* answer,
                        const std::function<void()>& meanwhile) {
  ++counters_.requests;
  QueryHandler server;
  std::string inbox;
  {
    std::lock_guard<std::mutex> lock(broker_.mu_);
    auto it = broker_.servers_.find(subject);
    // As NATS: nobody serving the subject (or the bus down) fails at once ("no responders").
    if (broker_.down_ || it == broker_.servers_.end()) {
      ++counters_.request_failures;
      return false;
    }
    server = it->second;
    inbox = "_INBOX." + std::to_string(broker_.next_inbox_++);
  }
  server(inbox, std::string_view(static_cast<const char*>(data), size));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::unique_lock<std::mutex> lock(broker_.mu_);
  for (;;) {
    if (auto it = broker_.answers_.find(inbox); it != broker_.answers_.end()) {
      *answer = std::move(it->second);
      broker_.answers_.erase(it);
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ++counters_.request_failures;
      return false;
    }
    if (meanwhile) {
      lock.unlock();
      meanwhile();
      lock.lock();
    }
    broker_.answered_.wait_for(lock, std::chrono::milliseconds(1));
  }
}

bool MemoryBus::DownLongerThan(std::chrono::milliseconds grace) const {
  (void)grace;
  return broker_.down();
}

}  // namespace waitpath
