// Serves a collectable (MetricsExporter::collectable(), or a prometheus::Registry) on
// http://ADDR:PORT/metrics (prometheus-cpp's civetweb Exposer, in its own threads) for as long as
// the object lives.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>

namespace waitpath {

// Server workers, and how long a client may take over a request: a few idle or slow clients
// must not block a scrape.
inline constexpr int kServerThreads = 8;
inline constexpr int kRequestTimeoutMs = 10000;

// Exactly one "ADDR:PORT", ":PORT" or "PORT" (bound on 127.0.0.1: exposing the metrics beyond the
// host is a choice to write out), "[::1]:PORT" for IPv6. Port 0 picks a free port. False with a
// one-line error when malformed.
bool ParseListenAddress(const std::string& text, std::string* address, std::string* error);

class MetricsServer {
 public:
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
  MetricsServer() = default;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<prometheus::Collectable> metrics_;  // the Exposer keeps only a weak_ptr
  std::string bound_;
};

}  // namespace waitpath
