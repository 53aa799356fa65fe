// Durations as people write them: a decimal number and a unit ("250us", "1.5s", "2m"), read
// exactly into integer nanoseconds. Every duration flag and the generator's scenario strings
// go through here, so they all accept the same text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace waitpath {

enum class DurationSign {
  kNonNegative,  // a duration: "-1s" is an error
  kSigned,       // an offset, e.g. a generated host's clock offset
};

// Parses `text`: an optional '-', a decimal number (no exponent), then ns, us, ms, s, m (or
// min) or h; surrounding spaces are ignored. The value is rounded to the nearest nanosecond.
// False, with `why` completing a sentence about the text ("'30' needs a unit (ns, us, ms, s,
// m, h)"), when the unit is missing or unknown, the number is malformed, the value is
// negative and `sign` does not allow it, or it does not fit in int64 nanoseconds.
bool ParseDuration(std::string_view text, int64_t* ns, std::string* why,
                   DurationSign sign = DurationSign::kNonNegative);

// A duration flag's value, non-negative. False with a one-line usage error naming the flag:
// "--retention: '30' needs a unit (ns, us, ms, s, m, h)".
bool ParseDurationFlag(std::string_view flag, std::string_view text, int64_t* ns,
                       std::string* error);

}  // namespace waitpath
