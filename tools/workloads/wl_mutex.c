// wl-mutex: wl-mutex-holder takes a pthread mutex and sleeps --hold-ms while
// holding it; wl-mutex-waiter blocks in pthread_mutex_lock() meanwhile (a futex
// wait). Repeated --rounds times. Expected: the waiter's wait resolves to the
// holder (whose futex_wake at unlock wakes it, from task context) and, through
// the holder's own sleep, to `timer`.
#include <pthread.h>
#include <semaphore.h>

#include "wl_common.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;  // default type: no spinning
static sem_t g_held;  // holder -> waiter: the lock is taken, go block on it
static sem_t g_done;  // waiter -> holder: got and released it, next round
static long g_rounds = 3, g_hold_ms = 30;

static void* holder(void* arg) {
  (void)arg;
  wl_set_name("wl-mutex-holder");
  for (long i = 0; i < g_rounds; ++i) {
    pthread_mutex_lock(&g_lock);
    sem_post(&g_held);
    wl_sleep_ms((double)g_hold_ms);
    pthread_mutex_unlock(&g_lock);
    while (sem_wait(&g_done) != 0) {
    }
  }
  return NULL;
}

static void* waiter(void* arg) {
  (void)arg;
  wl_set_name("wl-mutex-waiter");
  for (long i = 0; i < g_rounds; ++i) {
    while (sem_wait(&g_held) != 0) {
    }
    pthread_mutex_lock(&g_lock);  // the wait under study: the holder is asleep
    pthread_mutex_unlock(&g_lock);
    sem_post(&g_done);
  }
  return NULL;
}

int main(int argc, char** argv) {
  const struct wl_param params[] = {
      {"rounds", &g_rounds, "number of lock/sleep/unlock rounds"},
      {"hold-ms", &g_hold_ms, "time the holder sleeps with the lock held, ms"},
  };
  wl_parse_args(argc, argv, params, WL_COUNT(params));
  wl_set_name("wl-mutex");
  if (sem_init(&g_held, 0, 0) != 0 || sem_init(&g_done, 0, 0) != 0) wl_die("sem_init");
  long long t0 = wl_ns(CLOCK_MONOTONIC);
  pthread_t h, w;
  if (pthread_create(&h, NULL, holder, NULL) != 0) wl_die("pthread_create holder");
  if (pthread_create(&w, NULL, waiter, NULL) != 0) wl_die("pthread_create waiter");
  pthread_join(h, NULL);
  pthread_join(w, NULL);
  printf("wl-mutex: %ld rounds x %ld ms held in %.1f ms\n", g_rounds, g_hold_ms,
         (double)(wl_ns(CLOCK_MONOTONIC) - t0) / 1e6);
  return 0;
}
