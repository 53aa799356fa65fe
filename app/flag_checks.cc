#include "app/flag_checks.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "app/report_flags.h"
#include "base/duration.h"
#include "exporters/metrics_server.h"
#include "incremental/leaf_state.h"

namespace waitpath {

CLI::Validator DurationCheck(bool positive) {
  return CLI::Validator(
      [positive](std::string& value) -> std::string {
        int64_t ns = 0;
        std::string why;
        // `why` already quotes the value ("'5' needs a unit").
        if (!ParseDuration(value, &ns, &why, DurationSign::kNonNegative)) return why;
        if (positive && ns == 0) return "must be more than 0";
        return {};
      },
      positive ? "DURATION>0" : "DURATION");
}

CLI::Validator StateListCheck() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        uint32_t mask = 0;
        std::string error;
        if (ParseStateList(value, &mask, &error)) return {};
        // The parser names the flag itself; CLI11 adds it again.
        const std::string prefix = "--state: ";
        return error.rfind(prefix, 0) == 0 ? error.substr(prefix.size()) : error;
      },
      "STATE[,STATE...]");
}

void AddStateOption(CLI::App* cmd, std::string* states) {
  std::string names;
  for (int i = 0; i < kLeafCount; ++i)
    names += std::string(i ? ", " : "") + std::string(LeafName(static_cast<Leaf>(i)));
  cmd->add_option("--state", *states,
                  "Only waits whose headline state (its path's largest) is one of these, "
                  "comma-separated (e.g. disk,network): " +
                      names)
      ->check(StateListCheck());
}

CLI::Validator ListenAddressCheck() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        std::string address, error;
        if (ParseListenAddress(value, &address, &error)) return {};
        return "expected one ADDR:PORT such as 127.0.0.1:9464 ([ADDR]:PORT for IPv6), not '" +
               value + "'";
      },
      "ADDR:PORT");
}

CLI::Validator RelaydUrlCheck() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const std::string bad = "expected net://HOST[:PORT], not '" + value + "'";
        const size_t scheme_end = value.find("://");
        if (scheme_end == std::string::npos) return bad;
        const std::string scheme = value.substr(0, scheme_end);
        if (scheme != "net" && scheme != "net4" && scheme != "net6") return bad;
        const std::string rest = value.substr(scheme_end + 3);
        const size_t colon = rest.find(':');
        const std::string host = rest.substr(0, colon);
        // babeltrace2's live reader takes no bracketed IPv6 address: a name or IPv4 only.
        const bool plain = !host.empty() && std::all_of(host.begin(), host.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
        });
        if (!plain) return bad;
        if (colon == std::string::npos) return {};  // the default port
        const std::string port = rest.substr(colon + 1);
        int p = 0;
        const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
        if (port.empty() || ec != std::errc() || end != port.data() + port.size() || p < 1 ||
            p > 65535) {
          return "port '" + port + "' is not within 1..65535";
        }
        return {};
      },
      "net://HOST[:PORT]");
}

CLI::Validator IntegerRange(int64_t low, int64_t high) {
  return CLI::Validator(
      [low, high](std::string& value) -> std::string {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (value.empty() || ec != std::errc() || end != value.data() + value.size() || v < low ||
            v > high) {
          return "'" + value + "' is not an integer within " + std::to_string(low) + ".." +
                 std::to_string(high);
        }
        return {};
      },
      "INT in [" + std::to_string(low) + "-" + std::to_string(high) + "]");
}

void AddDecoderOption(CLI::App* cmd, std::string* decoder) {
  cmd->add_option("--decoder", *decoder,
                  "Decoder of traces and live sessions: native (waitpath's own CTF 1.8 decoder), "
                  "babeltrace2, or auto (native where it supports the metadata)")
      ->check(CLI::IsMember({"auto", "native", "babeltrace2"}))
      ->capture_default_str();
}

TraceDecoderChoice DecoderChoice(const std::string& decoder) {
  TraceDecoderChoice choice = TraceDecoderChoice::kAuto;
  ParseDecoderChoice(decoder, &choice);
  return choice;
}

}  // namespace waitpath
