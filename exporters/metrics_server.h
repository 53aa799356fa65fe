// Serves a collectable (MetricsExporter::collectable(), or a prometheus::Registry) on
// http://ADDR:PORT/metrics (civetweb, in its own threads; the text exposition of
// prometheus-cpp's serializer) for as long as the object lives. Not prometheus-cpp's Exposer:
// it adds its own `exposer_*` families, whose summary reads `Nan` once a minute passes without
// a scrape, and its bind failure is civetweb's "null context when constructing CivetServer".
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>

class CivetServer;

namespace waitpath {

// civetweb gives each connection a worker thread until its request is read and answered, so
// slow clients (slowloris: a header line every second) hold workers, and a scrape waits behind
// every connection queued before it. Measured with 100 such clients (tests/metrics/
// slowloris.py): with 8 workers and a 10 s deadline a scraper got 0 answers of 4 in 23 s; see
// docs/live.md ("What a relayd, a trace and a metrics client can make waitpath do") for the
// figures now. civetweb counts request_timeout_ms from the request's start, not from the last
// byte. The limit stays: more slow clients than workers, queued faster than the workers are
// freed, still delay scrapes.
inline constexpr int kServerThreads = 64;
inline constexpr int kRequestTimeoutMs = 2000;

// Exactly one "ADDR:PORT", ":PORT" or "PORT" (bound on 127.0.0.1: exposing the metrics beyond the
// host is a choice to write out), "[::1]:PORT" for IPv6. Port 0 picks a free port. False with a
// one-line error when malformed.
bool ParseListenAddress(const std::string& text, std::string* address, std::string* error);

// Why `address` ("127.0.0.1:9464", "[::1]:0") cannot be listened on, as a person reads it
// ("address in use", "not an address of this host"...), found by binding it once; "" when it
// can be.
std::string ListenProblem(const std::string& address);

class MetricsServer {
 public:
  ~MetricsServer();
  // nullptr with a one-line error when the address is malformed or cannot be bound.
  static std::unique_ptr<MetricsServer> Start(const std::string& listen,
                                              std::shared_ptr<prometheus::Collectable> metrics,
                                              std::string* error);

  // Start() for a command: says on stderr where the metrics are, or (nullptr) why not.
  static std::unique_ptr<MetricsServer> StartAnnounced(
      const std::string& listen, std::shared_ptr<prometheus::Collectable> metrics);

  // "127.0.0.1:9464": the address actually bound (with the port chosen for port 0).
  const std::string& bound() const { return bound_; }

 private:
  class Handler;
  MetricsServer() = default;
  std::shared_ptr<prometheus::Collectable> metrics_;
  std::unique_ptr<Handler> handler_;
  std::unique_ptr<CivetServer> server_;  // stopped first: its threads use the handler
  std::string bound_;
};

}  // namespace waitpath
