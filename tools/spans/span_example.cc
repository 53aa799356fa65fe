// An example of waitpath's application spans (docs/requests.md): an acceptor thread begins a
// request, does some work, queues it; a worker takes it over (handoff), queries a "database"
// (a nested span: a 1 ms sleep, i.e. `timer`), computes and ends it. Run it in an LTTng session
// with the kernel events and `waitpath_span:*` (configs/lttng/waitpath-session.sh --spans),
// then `waitpath analyze --json TRACE | grep '"type":"span"'`.
#include <time.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "waitpath/span.h"

namespace {

void Compute(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  volatile uint64_t x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + 1;
}

struct Queue {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::optional<waitpath::Span>> items;  // nullopt: stop
};

void Worker(Queue* q) {
  for (;;) {
    std::unique_lock lock(q->mutex);
    q->ready.wait(lock, [&] { return !q->items.empty(); });
    std::optional<waitpath::Span> request = std::move(q->items.front());
    q->items.pop_front();
    lock.unlock();
    if (!request) return;
    request->Handoff();
    {
      waitpath::Span query(nullptr, request->id() + 1, request->id(), "db query");
      timespec ts{0, 1'000'000};
      nanosleep(&ts, nullptr);
    }
    Compute(std::chrono::microseconds(300));
    request->End();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int requests = argc > 1 ? std::atoi(argv[1]) : 50;
  Queue q;
  std::thread worker(Worker, &q);
  uint8_t trace_id[16] = {0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
                          0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36};
  for (int i = 0; i < requests; ++i) {
    trace_id[15] = static_cast<uint8_t>(i);
    const uint64_t id = 0x1000 + 16 * static_cast<uint64_t>(i);
    waitpath::Span request(trace_id, id, 0, "GET /cart");
    Compute(std::chrono::microseconds(200));
    {
      std::lock_guard lock(q.mutex);
      q.items.emplace_back(std::move(request));
    }
    q.ready.notify_one();
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  {
    std::lock_guard lock(q.mutex);
    q.items.emplace_back(std::nullopt);
  }
  q.ready.notify_one();
  worker.join();
  std::printf("span-example: %d requests\n", requests);
  return 0;
}
