// wl-pipe: wl-pipe-prod burns --work-ms of CPU then writes a small message into a
// pipe, --count times; wl-pipe-cons blocks in read() on the other end.
// Expected: the consumer's waits resolve to the producer running (pipe_write
// wakes the reader from the producer's task context).
#include <sys/wait.h>
#include <unistd.h>

#include "wl_common.h"

enum { kMsgSize = 64 };

int main(int argc, char** argv) {
  long count = 10, work_ms = 10;
  const struct wl_param params[] = {
      {"count", &count, "number of messages"},
      {"work-ms", &work_ms, "producer CPU time before each message, ms"},
  };
  wl_parse_args(argc, argv, params, WL_COUNT(params));
  int fds[2];
  if (pipe(fds) != 0) wl_die("pipe");
  fflush(NULL);
  pid_t producer = fork();
  if (producer < 0) wl_die("fork");
  if (producer == 0) {
    wl_set_name("wl-pipe-prod");
    close(fds[0]);
    char msg[kMsgSize];
    for (long i = 0; i < count; ++i) {
      wl_burn_cpu_ms((double)work_ms);
      memset(msg, (int)('a' + i % 26), sizeof msg);
      // Writes of at most PIPE_BUF bytes are atomic: one write, one wake-up.
      if (write(fds[1], msg, sizeof msg) != (ssize_t)sizeof msg) wl_die("pipe write");
    }
    _exit(0);
  }
  // Named after the fork, so that the producer never runs under the consumer's name.
  wl_set_name("wl-pipe-cons");
  close(fds[1]);
  long long t0 = wl_ns(CLOCK_MONOTONIC);
  long bytes = 0;
  char buf[kMsgSize];
  for (;;) {
    ssize_t r = read(fds[0], buf, sizeof buf);  // the wait under study
    if (r == 0) break;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) wl_die("pipe read");
    bytes += r;
  }
  int status = 0;
  if (waitpid(producer, &status, 0) != producer || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0)
    wl_die("producer failed");
  if (bytes != count * kMsgSize) {
    errno = 0;
    wl_die("consumer got %ld bytes, expected %ld", bytes, count * (long)kMsgSize);
  }
  printf("wl-pipe: %ld messages x %ld ms producer work in %.1f ms\n", count, work_ms,
         (double)(wl_ns(CLOCK_MONOTONIC) - t0) / 1e6);
  return 0;
}
