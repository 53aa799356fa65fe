// wl-forkchain: wl-fork-master forks wl-fork-child1, which burns a little CPU and
// forks wl-fork-child2, which burns --work-ms; each parent blocks in waitpid().
// Expected: the master's wait resolves through child1 (woken by its exit) to
// child2 running, via the fork links and the exit wake-ups.
#include <sys/wait.h>
#include <unistd.h>

#include "wl_common.h"

static void wait_child(pid_t pid, const char* what) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) wl_die("waitpid %s", what);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    errno = 0;
    wl_die("%s failed (status %d)", what, status);
  }
}

int main(int argc, char** argv) {
  long work_ms = 100, child1_ms = 5;
  const struct wl_param params[] = {
      {"work-ms", &work_ms, "CPU time burned by child2, ms"},
      {"child1-ms", &child1_ms, "CPU time burned by child1 before it forks child2, ms"},
  };
  wl_parse_args(argc, argv, params, WL_COUNT(params));
  fflush(NULL);
  pid_t child1 = fork();
  if (child1 < 0) wl_die("fork child1");
  if (child1 == 0) {
    wl_set_name("wl-fork-child1");
    wl_burn_cpu_ms((double)child1_ms);
    pid_t child2 = fork();
    if (child2 < 0) wl_die("fork child2");
    if (child2 == 0) {
      wl_set_name("wl-fork-child2");
      wl_burn_cpu_ms((double)work_ms);
      _exit(0);
    }
    wait_child(child2, "child2");
    _exit(0);
  }
  // Named after the fork, so that child1 never runs under the master's name.
  wl_set_name("wl-fork-master");
  long long t0 = wl_ns(CLOCK_MONOTONIC);
  wait_child(child1, "child1");  // the wait under study
  printf("wl-forkchain: child1 %ld ms + child2 %ld ms, master waited %.1f ms\n", child1_ms,
         work_ms, (double)(wl_ns(CLOCK_MONOTONIC) - t0) / 1e6);
  return 0;
}
