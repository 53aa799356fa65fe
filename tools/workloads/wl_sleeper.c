// wl-sleeper: --count nanosleep() calls of --sleep-ms each, with no other work.
// Expected: nearly all of wl-sleeper's time is `timer` (woken from hrtimer expiry
// in hard-irq context).
#include "wl_common.h"

int main(int argc, char** argv) {
  long count = 5, sleep_ms = 20;
  const struct wl_param params[] = {
      {"count", &count, "number of sleeps"},
      {"sleep-ms", &sleep_ms, "duration of each sleep, ms"},
  };
  wl_parse_args(argc, argv, params, WL_COUNT(params));
  wl_set_name("wl-sleeper");
  long long t0 = wl_ns(CLOCK_MONOTONIC);
  for (long i = 0; i < count; ++i) wl_sleep_ms((double)sleep_ms);
  printf("wl-sleeper: %ld x %ld ms in %.1f ms\n", count, sleep_ms,
         (double)(wl_ns(CLOCK_MONOTONIC) - t0) / 1e6);
  return 0;
}
