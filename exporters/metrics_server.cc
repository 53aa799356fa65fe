#include "exporters/metrics_server.h"

#include <CivetServer.h>
#include <fmt/format.h>
#include <netdb.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
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

// GET /metrics: the collectable's families in the text exposition format.
class MetricsServer::Handler : public CivetHandler {
 public:
  explicit Handler(std::shared_ptr<prometheus::Collectable> metrics)
      : metrics_(std::move(metrics)) {}

  bool handleGet(CivetServer*, mg_connection* connection) override {
    const std::string body = prometheus::TextSerializer().Serialize(metrics_->Collect());
    mg_printf(connection,
              "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
              "Content-Length: %zu\r\n\r\n",
              body.size());
    mg_write(connection, body.data(), body.size());
    return true;
  }

 private:
  std::shared_ptr<prometheus::Collectable> metrics_;
};

std::string ListenProblem(const std::string& address) {
  const size_t colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), address.c_str() + colon + 1, &hints, &found) != 0 || !found)
    return "unknown host";
  std::string problem;
  const int fd = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  const int yes = 1;
  if (fd < 0) {
    problem = std::strerror(errno);
  } else if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes) != 0 ||
             bind(fd, found->ai_addr, found->ai_addrlen) != 0) {
    problem = errno == EADDRINUSE      ? "address in use"
              : errno == EADDRNOTAVAIL ? "not an address of this host"
              : errno == EACCES        ? "permission denied (a port below 1024 needs privileges)"
                                       : std::string(std::strerror(errno));
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(found);
  return problem;
}

MetricsServer::~MetricsServer() = default;

std::unique_ptr<MetricsServer> MetricsServer::Start(
    const std::string& listen, std::shared_ptr<prometheus::Collectable> metrics,
    std::string* error) {
  std::string address;
  if (!ParseListenAddress(listen, &address, error)) return nullptr;
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->metrics_ = std::move(metrics);
  server->handler_ = std::make_unique<Handler>(server->metrics_);
  try {
    // Enough workers that a few idle or slow clients cannot block a scrape, and a timeout
    // that lets them go.
    server->server_ = std::make_unique<CivetServer>(
        std::vector<std::string>{"listening_ports", address, "num_threads",
                                 std::to_string(kServerThreads), "request_timeout_ms",
                                 std::to_string(kRequestTimeoutMs)},
        &Callbacks());
  } catch (const std::exception&) {
    // civetweb says only "null context when constructing CivetServer": the reason is found
    // again by binding the address.
    const std::string problem = ListenProblem(address);
    *error =
        fmt::format("--metrics {}: {}", address, problem.empty() ? "cannot listen there" : problem);
    return nullptr;
  }
  server->server_->addHandler("/metrics", server->handler_.get());
  const auto ports = server->server_->getListeningPorts();
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
