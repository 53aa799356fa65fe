#include "exporters/metrics_server.h"

#include <fmt/format.h>

#include <charconv>
#include <exception>

namespace waitpath {

bool ParseListenAddress(const std::string& text, std::string* address, std::string* error) {
  const size_t colon = text.rfind(':');
  std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
  const std::string port = colon == std::string::npos ? text : text.substr(colon + 1);
  int value = -1;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value < 0 ||
      value > 65535 || (host.find(':') != std::string::npos && host.front() != '[')) {
    *error = fmt::format("--metrics '{}': expected ADDR:PORT such as 127.0.0.1:9464", text);
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
    server->exposer_ = std::make_unique<prometheus::Exposer>(address, 2);
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
    fmt::print(stderr, "waitpath: metrics on http://{}/metrics\n", server->bound());
  } else {
    fmt::print(stderr, "waitpath: {}\n", error);
  }
  return server;
}

}  // namespace waitpath
