#include "app/timeline_flags.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <fstream>

#include "base/duration.h"

namespace waitpath {
namespace {

// A bound: digits alone are nanoseconds since the epoch (as JSON records give times); a
// duration ("1.5s") counts from the first event.
bool ParseBound(std::string_view flag, const std::string& text, int64_t* ns, bool* offset,
                std::string* error) {
  const char* end = text.data() + text.size();
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc() && ptr == end && value >= 0) {
    *ns = value;
    *offset = false;
    return true;
  }
  std::string why;
  if (!ParseDuration(text, ns, &why)) {
    *error = fmt::format(
        "{}: '{}' is neither nanoseconds since the epoch nor a duration from the first event "
        "(e.g. 1.5s): {}",
        flag, text, why);
    return false;
  }
  *offset = true;
  return true;
}

}  // namespace

bool ParseTimelineFlags(const TimelineFlags& flags, int64_t min_wait_ns, TimelineOptions* options,
                        std::string* error) {
  if (flags.file.empty() && (!flags.from.empty() || !flags.to.empty())) {
    *error = "--from and --to bound a timeline: give --timeline FILE too";
    return false;
  }
  TimelineWindow& w = options->window;
  if (!flags.from.empty() && !ParseBound("--from", flags.from, &w.from, &w.from_is_offset, error))
    return false;
  if (!flags.to.empty() && !ParseBound("--to", flags.to, &w.to, &w.to_is_offset, error))
    return false;
  if (!flags.from.empty() && !flags.to.empty() && w.from_is_offset == w.to_is_offset &&
      w.to <= w.from) {
    *error = fmt::format("--to {} is not after --from {}", flags.to, flags.from);
    return false;
  }
  options->min_wait_ns = min_wait_ns >= 0 ? min_wait_ns : 1'000'000;
  options->max_bytes = flags.max_mb << 20;
  return true;
}

bool WriteTimelineFile(TimelineWriter& writer, const std::string& file, std::string* error) {
  // Written next to its place and renamed: a timeline refused as too large, or cut by a full
  // disk, leaves no file a viewer would half open.
  const std::string part = file + ".part";
  {
    std::ofstream out(part);
    if (!out) {
      *error = fmt::format("--timeline {}: cannot create it", file);
      return false;
    }
    if (!writer.Write(out, error)) {
      out.close();
      std::filesystem::remove(part);
      return false;
    }
    if (!out.flush()) {
      std::filesystem::remove(part);
      *error = fmt::format("--timeline {}: cannot write it", file);
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(part, file, ec);
  if (ec) {
    *error = fmt::format("--timeline {}: {}", file, ec.message());
    return false;
  }
  return true;
}

}  // namespace waitpath
