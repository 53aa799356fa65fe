#include "exporters/metrics_server.h"

#include <CivetServer.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <exception>
#include <string_view>
#include <vector>

#include "base/output.h"

namespace waitpath {

namespace {

bool ParsePort(std::string_view text, int* port) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *port);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size() && *port >= 0 &&
         *port <= 65535;
}

// A host name or an IPv4 address: letters, digits, '-' and '.', nothing civetweb would read as
// a list of ports or options (',' 's' 'r' suffixes).
bool PlainHost(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
  });
}

// "[v6]": hex digits, ':' and '.' (an IPv4 tail) inside brackets.
bool BracketedV6(std::string_view host) {
  if (host.size() < 4 || host.front() != '[' || host.back() != ']') return false;
  return std::all_of(host.begin() + 1, host.end() - 1, [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
  });
}

// Only GET /metrics is served: civetweb would hand /metricsfoo, /metrics/x and /METRICS to the
// /metrics handler as well.
int OnlyMetrics(mg_connection* connection) {
  const mg_request_info* request = mg_get_request_info(connection);
  if (request && request->local_uri && std::strcmp(request->local_uri, "/metrics") == 0) return 0;
  mg_send_http_error(connection, 404, "%s", "Not found: metrics are at /metrics\n");
  return 404;
}

const CivetCallbacks& Callbacks() {
  static const CivetCallbacks callbacks = [] {
    CivetCallbacks c;
    c.begin_request = OnlyMetrics;
    return c;
  }();
  return callbacks;
}

}  // namespace

bool ParseListenAddress(const std::string& text, std::string* address, std::string* error) {
  const size_t colon = text.rfind(':');
  std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
  const std::string port = colon == std::string::npos ? text : text.substr(colon + 1);
  int value = -1;
  if (!ParsePort(port, &value) || (!host.empty() && !PlainHost(host) && !BracketedV6(host))) {
    *error = fmt::format(
        "--metrics '{}': expected one ADDR:PORT such as 127.0.0.1:9464 ([ADDR]:PORT for IPv6)",
        text);
    return false;
  }
  if (host.empty()) host = "127.0.0.1";
  *address = host + ":" + port;
  return true;
}

std::unique_ptr<MetricsServer> MetricsServer::Start(
    const std::string& listen, std::shared_ptr<prometheus::Collectable> metrics,
    std::string* error) {
  std::string address;
  if (!ParseListenAddress(listen, &address, error)) return nullptr;
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  try {
    // Enough workers that a few idle or slow clients cannot block a scrape, and a timeout
    // that lets them go.
    server->exposer_ = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", address, "num_threads",
                                 std::to_string(kServerThreads), "request_timeout_ms",
                                 std::to_string(kRequestTimeoutMs)},
        &Callbacks());
  } catch (const std::exception& e) {
    // civetweb's message names the failing option; the address is what the user controls.
    *error = fmt::format(
        "--metrics {}: cannot listen there (in use, or not an address of this "
        "host): {}",
        address, e.what());
    return nullptr;
  }
  server->metrics_ = std::move(metrics);
  server->exposer_->RegisterCollectable(server->metrics_);
  const auto ports = server->exposer_->GetListeningPorts();
  const size_t colon = address.rfind(':');
  server->bound_ = address.substr(0, colon + 1) + std::to_string(ports.empty() ? 0 : ports.front());
  return server;
}

std::unique_ptr<MetricsServer> MetricsServer::StartAnnounced(
    const std::string& listen, std::shared_ptr<prometheus::Collectable> metrics) {
  std::string error;
  auto server = Start(listen, std::move(metrics), &error);
  if (server) {
    Say("waitpath: metrics on http://{}/metrics\n", server->bound());
  } else {
    Say("waitpath: {}\n", error);
  }
  return server;
}

}  // namespace waitpath
