// wl-rpc: K request/reply exchanges over loopback TCP. The server process
// (wl-rpc-server) burns --work-ms of CPU per request; the client (wl-rpc-client)
// blocks in read() for each reply. Expected: the client's waits resolve, through
// the reply packets, to the server running.
//
// Across hosts (the VM lab, docs/lab.md): `wl-rpc --listen PORT` runs only the server, on
// 0.0.0.0:PORT, for one connection; `wl-rpc --connect IPV4:PORT` runs only the client.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl_common.h"

enum { kMsgSize = 64 };

static void read_full(int fd, char* buf, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, buf, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) wl_die("read on the rpc socket");
    buf += r;
    n -= (size_t)r;
  }
}

static void write_full(int fd, const char* buf, size_t n) {
  while (n > 0) {
    ssize_t r = write(fd, buf, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) wl_die("write on the rpc socket");
    buf += r;
    n -= (size_t)r;
  }
}

// One small segment per message: without TCP_NODELAY, Nagle and delayed ACKs would
// add 40 ms timer waits that have nothing to do with the server's work.
static void set_nodelay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) wl_die("TCP_NODELAY");
}

static void serve(int listener, long work_ms) {
  wl_set_name("wl-rpc-server");
  int conn = accept(listener, NULL, NULL);
  if (conn < 0) wl_die("accept");
  set_nodelay(conn);
  char buf[kMsgSize];
  for (;;) {
    ssize_t r = read(conn, buf, sizeof buf);
    if (r == 0) break;  // client closed: done
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) wl_die("server read");
    if (r < kMsgSize) read_full(conn, buf + r, kMsgSize - (size_t)r);
    wl_burn_cpu_ms((double)work_ms);
    write_full(conn, buf, sizeof buf);
  }
  close(conn);
}

// Takes "--NAME VALUE" out of argv (the integer parser knows only numbers); NULL if absent.
static const char* take_string_arg(int* argc, char** argv, const char* name) {
  for (int a = 1; a + 1 < *argc; ++a) {
    if (strncmp(argv[a], "--", 2) != 0 || strcmp(argv[a] + 2, name) != 0) continue;
    const char* v = argv[a + 1];
    for (int b = a; b + 2 <= *argc; ++b) argv[b] = argv[b + 2];
    *argc -= 2;
    return v;
  }
  return NULL;
}

static void client(int fd, long requests, long work_ms) {
  set_nodelay(fd);
  char buf[kMsgSize];
  long long t0 = wl_ns(CLOCK_MONOTONIC);
  for (long i = 0; i < requests; ++i) {
    memset(buf, (int)('a' + i % 26), sizeof buf);
    write_full(fd, buf, sizeof buf);
    read_full(fd, buf, sizeof buf);  // the wait under study
  }
  long long t1 = wl_ns(CLOCK_MONOTONIC);
  close(fd);
  printf("wl-rpc: %ld requests x %ld ms server work in %.1f ms\n", requests, work_ms,
         (double)(t1 - t0) / 1e6);
}

int main(int argc, char** argv) {
  const char* listen_port = take_string_arg(&argc, argv, "listen");
  const char* connect_to = take_string_arg(&argc, argv, "connect");
  long requests = 10, work_ms = 10;
  const struct wl_param params[] = {
      {"requests", &requests, "number of request/reply exchanges"},
      {"work-ms", &work_ms, "server CPU time per request, ms"},
  };
  wl_parse_args(argc, argv, params, WL_COUNT(params));

  if (listen_port != NULL) {  // server only, for a client on another host
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0) wl_die("socket");
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(listen_port))};
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind(listener, (struct sockaddr*)&addr, sizeof addr) != 0) wl_die("bind port %s", listen_port);
    if (listen(listener, 1) != 0) wl_die("listen");
    printf("wl-rpc: listening on port %s\n", listen_port);
    fflush(NULL);
    serve(listener, work_ms);
    return 0;
  }
  if (connect_to != NULL) {  // client only
    char host[64];
    const char* colon = strrchr(connect_to, ':');
    if (colon == NULL || (size_t)(colon - connect_to) >= sizeof host) wl_die("--connect wants IPV4:PORT");
    memcpy(host, connect_to, (size_t)(colon - connect_to));
    host[colon - connect_to] = '\0';
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) wl_die("--connect: bad address %s", host);
    wl_set_name("wl-rpc-client");
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) wl_die("socket");
    if (connect(fd, (struct sockaddr*)&addr, sizeof addr) != 0) wl_die("connect %s", connect_to);
    client(fd, requests, work_ms);
    return 0;
  }

  // Listen before forking so the client can connect without racing the server.
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) wl_die("socket");
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(listener, (struct sockaddr*)&addr, sizeof addr) != 0) wl_die("bind 127.0.0.1");
  if (listen(listener, 1) != 0) wl_die("listen");
  if (getsockname(listener, (struct sockaddr*)&addr, &len) != 0) wl_die("getsockname");

  fflush(NULL);
  pid_t server = fork();
  if (server < 0) wl_die("fork");
  if (server == 0) {
    serve(listener, work_ms);
    _exit(0);
  }
  close(listener);
  wl_set_name("wl-rpc-client");

  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) wl_die("socket");
  if (connect(fd, (struct sockaddr*)&addr, sizeof addr) != 0) wl_die("connect 127.0.0.1");
  client(fd, requests, work_ms);
  int status = 0;
  if (waitpid(server, &status, 0) != server) wl_die("waitpid server");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    errno = 0;
    wl_die("server failed (status %d)", status);
  }
  return 0;
}
