// Helpers shared by the recorded workloads: naming, CPU burning, argument parsing.
// Header-only so that each workload stays a single small translation unit.
#ifndef WAITPATH_TOOLS_WORKLOADS_WL_COMMON_H
#define WAITPATH_TOOLS_WORKLOADS_WL_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

// One clear line and a non-zero exit: these programs run under a recording script.
static inline void wl_die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("workload: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  if (errno != 0) fprintf(stderr, ": %s", strerror(errno));
  fputc('\n', stderr);
  exit(1);
}

// The analysis finds tasks by `comm` (sched_switch prev_comm/next_comm), so every
// thread renames itself as soon as it starts. The kernel keeps 15 characters.
static inline void wl_set_name(const char* name) {
  if (strlen(name) > 15) {
    errno = 0;
    wl_die("thread name '%s' is longer than the kernel's 15 characters", name);
  }
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) wl_die("prctl(PR_SET_NAME, %s)", name);
}

static inline long long wl_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// Burns `ms` of this thread's *CPU time* (not wall time), so the amount of work is
// the same whether or not the thread gets preempted: the expected breakdown then
// depends on the workload, not on the load of the machine.
static inline void wl_burn_cpu_ms(double ms) {
  const long long end = wl_ns(CLOCK_THREAD_CPUTIME_ID) + (long long)(ms * 1e6);
  volatile unsigned long long x = 1;
  do {
    // A few microseconds of arithmetic between clock reads keeps syscalls rare.
    for (int i = 0; i < 2000; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  } while (wl_ns(CLOCK_THREAD_CPUTIME_ID) < end);
}

static inline void wl_sleep_ms(double ms) {
  struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = 0};
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
  while (nanosleep(&ts, &ts) != 0) {
    if (errno != EINTR) wl_die("nanosleep");
  }
}

// Parses "--key value" pairs into integer parameters declared by the workload.
// Unknown keys and bad numbers are errors: a silently ignored typo would record a
// fixture that does not match its expect file.
struct wl_param {
  const char* key;  // without the leading "--"
  long* value;
  const char* help;
};

static inline void wl_usage(const char* prog, const struct wl_param* params, int n) {
  fprintf(stderr, "usage: %s", prog);
  for (int i = 0; i < n; ++i) fprintf(stderr, " [--%s N]", params[i].key);
  fputc('\n', stderr);
  for (int i = 0; i < n; ++i)
    fprintf(stderr, "  --%-12s %s (default %ld)\n", params[i].key, params[i].help,
            *params[i].value);
}

static inline void wl_parse_args(int argc, char** argv, const struct wl_param* params, int n) {
  for (int a = 1; a < argc; a += 2) {
    if (strcmp(argv[a], "-h") == 0 || strcmp(argv[a], "--help") == 0) {
      wl_usage(argv[0], params, n);
      exit(0);
    }
    int found = -1;
    for (int i = 0; i < n; ++i)
      if (strncmp(argv[a], "--", 2) == 0 && strcmp(argv[a] + 2, params[i].key) == 0) found = i;
    if (found < 0 || a + 1 >= argc) {
      wl_usage(argv[0], params, n);
      errno = 0;
      wl_die("bad argument '%s'", argv[a]);
    }
    char* end = NULL;
    errno = 0;
    long v = strtol(argv[a + 1], &end, 10);
    if (errno != 0 || *end != '\0' || v < 0) {
      errno = 0;
      wl_die("--%s wants a non-negative integer, got '%s'", params[found].key, argv[a + 1]);
    }
    *params[found].value = v;
  }
}

#define WL_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

#endif  // WAITPATH_TOOLS_WORKLOADS_WL_COMMON_H
