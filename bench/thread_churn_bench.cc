// Memory over many short-lived threads: feeds the engine and the accounting (with the JSON
// report written to /dev/null) a generated stream of thread lifetimes, as a build server or a
// CGI host makes them: a parent forks a child, the child runs, sleeps until the parent wakes
// it, runs, exits, and is freed; tids wrap at 32768 as the kernel's do. Prints, every 10 % of
// the lifetimes, the process's resident memory and the engine's task slots and history.
//
// Usage: waitpath_thread_churn_bench [--lifetimes N] [--per-second N] [--retention-ms MS]
//                                    [--max-history-mb N] [--watch-one]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "exporters/analysis_report.h"
#include "exporters/watched_accounting.h"
#include "incremental/engine.h"
#include "model/dialect.h"
#include "model/event_builders.h"
#include "model/string_table.h"

namespace {

using waitpath::EventKind;
using waitpath::ForkEvent;
using waitpath::ProcessEndEvent;
using waitpath::SwitchEvent;
using waitpath::WakeEvent;

// prev_state of a switch-out: runnable, asleep (TASK_INTERRUPTIBLE), dead (EXIT_ZOMBIE).
constexpr int64_t kRunnable = 0;
constexpr int64_t kSleeping = 1;
constexpr int64_t kDead = 0x20;

long RssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

int Usage() {
  std::fprintf(
      stderr,
      "usage: waitpath_thread_churn_bench [--lifetimes N] [--per-second N] [--retention-ms MS]\n"
      "                                   [--max-history-mb N] [--watch-one]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t lifetimes = 1'000'000, per_second = 10'000, retention_ms = 30'000, max_history_mb = 256;
  bool watch_one = false;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? std::atoll(argv[++i]) : -1; };
    if (!std::strcmp(argv[i], "--lifetimes")) {
      lifetimes = next();
    } else if (!std::strcmp(argv[i], "--per-second")) {
      per_second = next();
    } else if (!std::strcmp(argv[i], "--retention-ms")) {
      retention_ms = next();
    } else if (!std::strcmp(argv[i], "--max-history-mb")) {
      max_history_mb = next();
    } else if (!std::strcmp(argv[i], "--watch-one")) {
      watch_one = true;
    } else {
      return Usage();
    }
  }
  if (lifetimes <= 0 || per_second <= 0 || retention_ms <= 0 || max_history_mb <= 0) return Usage();

  waitpath::EngineOptions options;
  options.retention_ns = retention_ms * 1'000'000;
  options.max_history_bytes = static_cast<size_t>(max_history_mb) << 20;
  waitpath::Engine engine(options);
  waitpath::WatchSet watch;
  if (watch_one) {
    waitpath::WatchSelector s;
    std::string error;
    waitpath::ParseWatch("tid=100", &s, &error);
    watch.Add(std::move(s));
  }
  std::ofstream devnull("/dev/null");
  waitpath::WatchedAccounting accounting(engine, std::move(watch), {"churn"});
  waitpath::AnalysisOptions report_options;
  report_options.json = true;
  waitpath::AnalysisReport report(accounting, report_options, devnull);
  engine.SetListener(&accounting);

  const int32_t parent_comm = static_cast<int32_t>(waitpath::StringTable::Global().Intern("make"));
  const int32_t child_comm = static_cast<int32_t>(waitpath::StringTable::Global().Intern("cc1"));
  constexpr int32_t kParent = 100;
  const int64_t step = 1'000'000'000 / per_second;  // one lifetime per step
  int64_t t = 1'700'000'000'000'000'000;
  waitpath::Batch batch;
  batch.host = 0;
  batch.counters.dialect = waitpath::kDialectHasWaking | waitpath::kDialectHasSwitch;
  batch.events = {SwitchEvent(t, 0, 0, kParent, kRunnable, -1, parent_comm)};
  engine.Push(batch);
  int32_t next_tid = 300;
  std::printf("{\"lifetimes\": %lld, \"per_second\": %lld, \"retention_ms\": %lld, \"samples\": [",
              static_cast<long long>(lifetimes), static_cast<long long>(per_second),
              static_cast<long long>(retention_ms));
  const int64_t every = std::max<int64_t>(1, lifetimes / 10);
  for (int64_t i = 0; i < lifetimes; ++i) {
    const int32_t c = next_tid;
    next_tid = next_tid >= 32767 ? 300 : next_tid + 1;
    const int64_t s = step / 8;  // the child's phases, all within its step
    batch.events = {
        ForkEvent(t + 1, 0, kParent, c, c, child_comm),
        WakeEvent(EventKind::kSchedWakeupNew, t + 2, 0, c, 1, child_comm),
        SwitchEvent(t + s, 1, 0, c, kRunnable, -1, child_comm),
        SwitchEvent(t + 2 * s, 1, c, 0, kSleeping, child_comm),
        WakeEvent(EventKind::kSchedWaking, t + 3 * s, 0, c, 1, child_comm),  // the parent wakes it
        SwitchEvent(t + 4 * s, 1, 0, c, kRunnable, -1, child_comm),
        ProcessEndEvent(EventKind::kProcessExit, t + 5 * s, 1, c),
        SwitchEvent(t + 5 * s + 1, 1, c, 0, kDead, child_comm),
        ProcessEndEvent(EventKind::kProcessFree, t + 6 * s, 0, c),
    };
    engine.Push(batch);
    t += step;
    if ((i + 1) % every == 0) {
      std::printf(
          "%s\n  {\"lifetimes\": %lld, \"rss_kb\": %ld, \"task_slots\": %zu, \"tasks_in_use\": "
          "%zu, "
          "\"history_bytes\": %zu, \"tasks_released\": %llu}",
          i + 1 == every ? "" : ",", static_cast<long long>(i + 1), RssKb(), engine.tasks().size(),
          engine.tasks().in_use(), engine.history_bytes(),
          static_cast<unsigned long long>(engine.counters().tasks_released));
      std::fflush(stdout);
    }
  }
  accounting.Finish();
  std::printf("\n], \"tasks_reported\": %llu}\n",
              static_cast<unsigned long long>(report.tasks_reported()));
  return 0;
}
