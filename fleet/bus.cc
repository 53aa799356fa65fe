#include "fleet/bus.h"

namespace waitpath {

std::string SubjectToken(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out.empty() ? "_" : out;
}

}  // namespace waitpath
