// wl-contention: --threads CPU-bound threads (wl-contend-0, -1, ...) pinned to one
// CPU with sched_setaffinity, each burning --work-ms of CPU time. They start
// together at a barrier. Expected: each thread is `preempted` most of the time
// (with 4 threads, about 3/4 of its lifetime after the barrier).
#include <pthread.h>
#include <sched.h>

#include "wl_common.h"

enum { kLastCpu = 9999 };
static long g_threads = 4, g_work_ms = 30, g_cpu = kLastCpu;
static pthread_barrier_t g_start;

static void* contend(void* arg) {
  char name[16];
  snprintf(name, sizeof name, "wl-contend-%ld", (long)(size_t)arg);
  wl_set_name(name);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET((int)g_cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) wl_die("sched_setaffinity cpu %ld", g_cpu);
  pthread_barrier_wait(&g_start);
  wl_burn_cpu_ms((double)g_work_ms);
  return NULL;
}

int main(int argc, char** argv) {
  const struct wl_param params[] = {
      {"threads", &g_threads, "number of CPU-bound threads sharing one CPU"},
      {"work-ms", &g_work_ms, "CPU time burned by each thread, ms"},
      {"cpu", &g_cpu, "CPU to pin to; 9999 means the last CPU we may run on"},
  };
  wl_parse_args(argc, argv, params, WL_COUNT(params));
  wl_set_name("wl-contention");

  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) wl_die("sched_getaffinity");
  if (g_cpu == kLastCpu) {
    // The last CPU: on a small machine CPU 0 also takes most device interrupts.
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) g_cpu = c;
  }
  if (g_cpu >= CPU_SETSIZE || !CPU_ISSET((int)g_cpu, &allowed)) {
    errno = 0;
    wl_die("--cpu %ld is not a CPU this process may run on", g_cpu);
  }
  if (g_threads < 1 || g_threads > 64) {
    errno = 0;
    wl_die("--threads must be in 1..64");
  }
  pthread_barrier_init(&g_start, NULL, (unsigned)g_threads);
  pthread_t t[64];
  long long t0 = wl_ns(CLOCK_MONOTONIC);
  for (long i = 0; i < g_threads; ++i)
    if (pthread_create(&t[i], NULL, contend, (void*)(size_t)i) != 0) wl_die("pthread_create");
  for (long i = 0; i < g_threads; ++i) pthread_join(t[i], NULL);
  printf("wl-contention: %ld threads x %ld ms on cpu %ld in %.1f ms\n", g_threads, g_work_ms,
         g_cpu, (double)(wl_ns(CLOCK_MONOTONIC) - t0) / 1e6);
  return 0;
}
