// An example of waitpath's application spans (docs/requests.md): an acceptor thread begins a
// request, does some work, queues it; a worker takes it over (handoff), queries a "database"
// (a nested span: a 1 ms sleep, i.e. `timer`), computes and ends it. Run it in an LTTng session
// with the kernel events and `waitpath_span:*` (configs/lttng/waitpath-session.sh --spans),
// then `waitpath analyze --json TRACE | grep '"type":"span"'`.
//
// usage: waitpath-span-example [REQUESTS] [--jaeger] (--help: this usage, nothing run)
// --jaeger: the same spans as jaeger_ust:start_span/end_span events (jaeger-go-lttng-instr's
// layout: no parent, no handoff).
#include <time.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "jaeger_tp.h"
#include "waitpath/span.h"

namespace {

bool jaeger = false;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A span of either provider.
struct Request {
  uint64_t hi = 0, lo = 0, id = 0;
  int64_t start = 0;
};

Request Begin(const uint8_t trace_id[16], uint64_t id, uint64_t parent, const char* name) {
  Request r{trace_id ? waitpath_span_be64(trace_id) : 0,
            trace_id ? waitpath_span_be64(trace_id + 8) : 0, id, NowNs()};
  if (jaeger) {
    lttng_ust_tracepoint(jaeger_ust, start_span, r.hi, r.lo, id, name, r.start);
  } else {
    waitpath_span_begin(trace_id, id, parent, name);
  }
  return r;
}

void Handoff(const Request& r) {
  if (!jaeger) waitpath_span_handoff(r.id);  // Jaeger's events have none
}

void End(const Request& r) {
  if (jaeger) {
    lttng_ust_tracepoint(jaeger_ust, end_span, r.hi, r.lo, r.id, NowNs() - r.start);
  } else {
    waitpath_span_end(r.id);
  }
}

void Compute(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  volatile uint64_t x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + 1;
}

struct Queue {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::optional<Request>> items;  // nullopt: stop
};

void Worker(Queue* q) {
  for (;;) {
    std::unique_lock lock(q->mutex);
    q->ready.wait(lock, [&] { return !q->items.empty(); });
    const std::optional<Request> request = q->items.front();
    q->items.pop_front();
    lock.unlock();
    if (!request) return;
    Handoff(*request);
    timespec ts{0, 1'000'000};
    if (jaeger) {
      const Request query = Begin(nullptr, request->id + 1, request->id, "db query");
      nanosleep(&ts, nullptr);
      End(query);
    } else {
      // The C++ helper: a span for a scope.
      waitpath::Span query(nullptr, request->id + 1, request->id, "db query");
      nanosleep(&ts, nullptr);
    }
    Compute(std::chrono::microseconds(300));
    End(*request);
  }
}

constexpr char kUsage[] =
    "usage: waitpath-span-example [REQUESTS] [--jaeger]\n"
    "Emits REQUESTS (default 50) example requests as application spans (waitpath_span:*, or\n"
    "jaeger_ust:* with --jaeger) for an LTTng session to record; see docs/requests.md.\n";

}  // namespace

int main(int argc, char** argv) {
  int requests = 50;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    char* end = nullptr;
    const long n = std::strtol(arg.c_str(), &end, 10);
    if (arg == "--jaeger") {
      jaeger = true;
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (!arg.empty() && *end == '\0' && n > 0 && n <= 1'000'000) {
      requests = static_cast<int>(n);
    } else {
      // Anything else (a mistyped flag) would have run the example with 0 requests.
      std::fprintf(stderr, "waitpath-span-example: unknown argument '%s'\n%s", arg.c_str(), kUsage);
      return 2;
    }
  }
  Queue q;
  std::thread worker(Worker, &q);
  uint8_t trace_id[16] = {0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
                          0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36};
  for (int i = 0; i < requests; ++i) {
    trace_id[15] = static_cast<uint8_t>(i);
    const uint64_t id = 0x1000 + 16 * static_cast<uint64_t>(i);
    const Request request = Begin(trace_id, id, 0, "GET /cart");
    Compute(std::chrono::microseconds(200));
    {
      std::lock_guard lock(q.mutex);
      q.items.emplace_back(request);
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
