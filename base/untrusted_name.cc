#include "base/untrusted_name.h"

#include <cstdint>

namespace waitpath {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

bool PlainByte(unsigned char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '+' || c == ',' || c == '=' || c == '@' || (c == '.' && !first);
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// The length of the valid UTF-8 sequence at `s[i]`, or 0 (overlong forms, surrogates and code
// points past U+10FFFF are not valid).
size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  // C1 controls (U+0080..U+009F) act as escape sequences on some terminals.
  if (n == 2 && cp < 0xA0) return 0;
  return n;
}

}  // namespace

std::string PathComponent(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (PlainByte(c, i == 0)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  if (out.empty()) return "%";
  if (out.size() <= kMaxPathComponent) return out;
  // 1 + 16 for the hash; never cut inside a %XX.
  size_t keep = kMaxPathComponent - 17;
  if (out[keep - 1] == '%') keep -= 1;
  if (keep >= 2 && out[keep - 2] == '%') keep -= 2;
  out.resize(keep);
  out += '~';
  const uint64_t h = Fnv1a(name);
  for (int shift = 60; shift >= 0; shift -= 4) out += kHex[(h >> shift) & 0xF];
  return out;
}

bool IsPlainName(std::string_view name) {
  if (name.empty() || name.size() > kMaxPathComponent) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!PlainByte(static_cast<unsigned char>(name[i]), i == 0)) return false;
  }
  return true;
}

std::string PrintableName(std::string_view name, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(name.size(), max_bytes) + 4);
  for (size_t i = 0; i < name.size();) {
    if (out.size() >= max_bytes) {
      out += "…";
      break;
    }
    const auto c = static_cast<unsigned char>(name[i]);
    const size_t n = Utf8Length(name, i);
    if (c == '\\') {
      out += "\\\\";
    } else if (n == 0 || c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out.append(name.substr(i, n));
      i += n;
      continue;
    }
    ++i;
  }
  return out;
}

}  // namespace waitpath
