#include "base/duration.h"

#include <array>
#include <limits>

namespace waitpath {
namespace {

// Wide enough for (integer part < 10^20) x (3.6 * 10^12 ns per hour) without overflow.
__extension__ typedef __int128 Wide;

constexpr const char* kUnits = "(ns, us, ms, s, m, h)";
constexpr Wide kTooLong = Wide{10'000'000'000} * 10'000'000'000;  // 10^20, in any unit
constexpr Wide kFinest = Wide{10'000'000'000} * 1'000'000'000;    // 10^19

struct Unit {
  std::string_view name;
  int64_t ns;
};
constexpr std::array<Unit, 7> kUnitTable = {{{"ns", 1},
                                             {"us", 1'000},
                                             {"ms", 1'000'000},
                                             {"s", 1'000'000'000},
                                             {"m", 60'000'000'000},
                                             {"min", 60'000'000'000},
                                             {"h", 3'600'000'000'000}}};

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool ParseDuration(std::string_view text, int64_t* ns, std::string* why, DurationSign sign) {
  const std::string_view t = Trim(text);
  auto fail = [&](const std::string& reason) {
    if (why) *why = "'" + std::string(text) + "' " + reason;
    return false;
  };
  size_t i = 0;
  const bool negative = i < t.size() && t[i] == '-';
  if (negative) ++i;

  // The number, exactly: the integer part, and up to 19 fraction digits (finer than 1 ns for
  // every unit) as numerator / denominator.
  Wide whole = 0, fraction = 0, denominator = 1;
  bool digits = false, too_long = false;
  for (; i < t.size() && IsDigit(t[i]); ++i) {
    digits = true;
    whole = whole * 10 + (t[i] - '0');
    if (whole >= kTooLong) {
      too_long = true;
      whole = 0;
    }
  }
  if (i < t.size() && t[i] == '.') {
    for (++i; i < t.size() && IsDigit(t[i]); ++i) {
      digits = true;
      if (denominator < kFinest) {
        fraction = fraction * 10 + (t[i] - '0');
        denominator *= 10;
      }
    }
  }
  if (!digits) return fail("is not a duration (a number and a unit, e.g. 250us, 5ms, 30s)");

  const std::string_view unit = t.substr(i);
  if (unit.empty()) return fail(std::string("needs a unit ") + kUnits);
  int64_t scale = 0;
  for (const Unit& u : kUnitTable) {
    if (u.name == unit) scale = u.ns;
  }
  if (scale == 0) return fail(std::string("has an unknown unit ") + kUnits);

  // Rounded half away from zero, as the sign is applied after.
  const Wide value = whole * scale + (2 * fraction * scale + denominator) / (2 * denominator);
  if (too_long || value > std::numeric_limits<int64_t>::max()) {
    return fail("is too long (at most about 292 years)");
  }
  if (negative && value != 0 && sign == DurationSign::kNonNegative) return fail("is negative");
  *ns = static_cast<int64_t>(negative ? -value : value);
  return true;
}

bool ParseDurationFlag(std::string_view flag, std::string_view text, int64_t* ns,
                       std::string* error) {
  std::string why;
  if (ParseDuration(text, ns, &why)) return true;
  if (error) *error = std::string(flag) + ": " + why;
  return false;
}

}  // namespace waitpath
