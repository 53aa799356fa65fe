// wl-diskwrite: --count synchronous overwrites (pwrite of --size-kb, then
// fdatasync) of a file in --dir (default /var/tmp, a real disk, not tmpfs).
// The file's blocks are written and synced first, under another name
// (wl-disk-prep), so that each measured fdatasync only writes data and a cache
// flush, without a journal commit. Expected: wl-diskwrite's waits are `disk`.
#include <fcntl.h>
#include <unistd.h>

#include "wl_common.h"

int main(int argc, char** argv) {
  long count = 10, size_kb = 16;
  const char* dir = "/var/tmp";
  // --dir is the only string option; take it out before the integer parser runs.
  char* args[64];
  int n = 0;
  for (int a = 0; a < argc && n < 63; ++a) {
    if (strcmp(argv[a], "--dir") == 0 && a + 1 < argc) {
      dir = argv[++a];
      continue;
    }
    args[n++] = argv[a];
  }
  args[n] = NULL;
  const struct wl_param params[] = {
      {"count", &count, "number of write + fdatasync pairs (also: --dir PATH, default /var/tmp)"},
      {"size-kb", &size_kb, "bytes per write, KiB"},
  };
  wl_parse_args(n, args, params, WL_COUNT(params));
  if (size_kb < 1 || size_kb > 1024) {
    errno = 0;
    wl_die("--size-kb must be in 1..1024");
  }

  wl_set_name("wl-disk-prep");
  char path[4096];
  snprintf(path, sizeof path, "%s/wl-diskwrite.%ld.tmp", dir, (long)getpid());
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) wl_die("cannot create %s", path);
  size_t chunk = (size_t)size_kb * 1024;
  char* buf = malloc(chunk);
  if (buf == NULL) wl_die("malloc");
  memset(buf, 'p', chunk);
  for (long i = 0; i < count; ++i)
    if (pwrite(fd, buf, chunk, (off_t)(i * (long)chunk)) != (ssize_t)chunk) wl_die("pwrite");
  if (fsync(fd) != 0) wl_die("fsync %s", path);

  wl_set_name("wl-diskwrite");
  long long t0 = wl_ns(CLOCK_MONOTONIC);
  for (long i = 0; i < count; ++i) {
    memset(buf, (int)('a' + i % 26), chunk);
    if (pwrite(fd, buf, chunk, (off_t)(i * (long)chunk)) != (ssize_t)chunk) wl_die("pwrite");
    if (fdatasync(fd) != 0) wl_die("fdatasync %s", path);  // the wait under study
  }
  long long t1 = wl_ns(CLOCK_MONOTONIC);
  close(fd);
  unlink(path);
  free(buf);
  printf("wl-diskwrite: %ld x (%ld KiB + fdatasync) in %s in %.1f ms\n", count, size_kb, dir,
         (double)(t1 - t0) / 1e6);
  return 0;
}
