// wl-idle-fill: keeps one CPU from ever running its idle task, at the lowest
// priority there is (SCHED_IDLE), until killed or --max-ms has passed.
//
// Why: on the recording machine (kernel 6.18 PVM/Firecracker guest, perf 6.1),
// perf record drops every sample taken while CPU 1 runs its idle task, including
// interrupts that arrive in idle (hrtimer expiries, disk completions) and the
// switch out of idle, although perf stat counts them and ftrace records them.
// With this filler running, such interrupts arrive in wl-idle-fill's context and
// are recorded. A SCHED_IDLE task is preempted at once by any normal task waking
// on its CPU and the scheduler treats its CPU as idle when placing wake-ups, so
// the workloads behave as on an idle CPU. See docs/workloads.md.
#include <sched.h>

#include "wl_common.h"

int main(int argc, char** argv) {
  long cpu = 1, max_ms = 30000;
  const struct wl_param params[] = {
      {"cpu", &cpu, "CPU to keep busy"},
      {"max-ms", &max_ms, "exit after this long even if nobody kills us, ms"},
  };
  wl_parse_args(argc, argv, params, WL_COUNT(params));
  wl_set_name("wl-idle-fill");
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET((int)cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) wl_die("sched_setaffinity cpu %ld", cpu);
  struct sched_param sp = {.sched_priority = 0};
  if (sched_setscheduler(0, SCHED_IDLE, &sp) != 0) wl_die("sched_setscheduler SCHED_IDLE");
  const long long end = wl_ns(CLOCK_MONOTONIC) + max_ms * 1000000LL;
  volatile unsigned long long x = 1;
  while (wl_ns(CLOCK_MONOTONIC) < end) {
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005ULL + 1;
  }
  return 0;
}
