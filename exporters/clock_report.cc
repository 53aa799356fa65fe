#include "exporters/clock_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace waitpath {

std::string ClockJson(const HostClock& c) {
  nlohmann::ordered_json j;
  j["type"] = "clock";
  j["host"] = c.host;
  j["reference"] = c.reference;
  j["slope"] = c.transform.slope();
  j["offset_ns"] = c.transform.offset();
  j["accuracy"] = c.accuracy;
  j["quality"] = SyncQualityName(c.quality);
  j["matches"] = c.matches;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string ClockText(const HostClock& c) {
  return fmt::format(
      "host {:<12} reference {:<12} slope {:.12f}  offset {:+.1f} ns  accuracy {:.0f} ns  "
      "{:<11} {} matches",
      c.host, c.reference, c.transform.slope(), c.transform.offset(), c.accuracy,
      SyncQualityName(c.quality), c.matches);
}

std::string FormatClockAccuracy(double ns) {
  if (ns >= 1e6) return fmt::format("+/-{:.1f} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("+/-{:.1f} us", ns / 1e3);
  return fmt::format("+/-{:.0f} ns", ns);
}

std::string ClockSummary(const HostClock& c) {
  if (!c.on_tree) {
    return fmt::format(
        "{}: clock {} to {} ({} packets matched{}; its times are its own clock's, "
        "shifted by the traces' clock offsets)",
        c.host, SyncQualityName(c.quality), c.reference, c.matches,
        c.quality == SyncQuality::kFail ? ", and no clock line fits them all" : "");
  }
  if (c.quality == SyncQuality::kFail) {
    return fmt::format(
        "{}: clock fail to {} ({} packets matched, and the later ones contradict the line "
        "found before them; its times still use that line, {} before)",
        c.host, c.reference, c.matches, FormatClockAccuracy(c.accuracy));
  }
  return fmt::format("{}: clock {} {} to {} ({} packets)", c.host, SyncQualityName(c.quality),
                     FormatClockAccuracy(c.accuracy), c.reference, c.matches);
}

}  // namespace waitpath
