// Names that come from a trace or a relayd — host, session, channel, trace path, stream name,
// task name — are bytes someone else chose: NUL, '/', "..", an absolute path, 100 KB, invalid
// UTF-8, terminal escapes. waitpath runs as root, so none of them reaches a file path, a terminal
// or a log line as sent; each goes through one of these (docs/live.md, "What a relayd, a trace
// and a metrics client can make waitpath do").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace waitpath {

// One file name standing for `name`, never a path: bytes other than [A-Za-z0-9_+,=@-] and '.'
// after the first byte are written %XX (so "", ".", "..", "/x" and ".hidden" cannot occur;
// "waitpath_0_0" or "db" stay as they are). Distinct names give distinct results: a name whose
// encoding would pass kMaxPathComponent bytes keeps its start and ends in '~' and a hash of
// the whole name.
inline constexpr size_t kMaxPathComponent = 200;
std::string PathComponent(std::string_view name);

// Whether `name` is its own PathComponent (a name a relayd or tracer writes as a directory or
// file name as it is, which waitpath may then look for under a directory it was given).
bool IsPlainName(std::string_view name);

// `name` for a terminal or a log line: valid UTF-8 kept, control bytes, DEL and bytes that are
// not UTF-8 written \xNN (a backslash as \\), at most `max_bytes` of the result before "…".
std::string PrintableName(std::string_view name, size_t max_bytes = 256);
// A message quoting untrusted input (a damaged trace's text, a relayd's error): PrintableName's
// escapes, at most 4 KiB, so that it stays one line of valid UTF-8.
inline std::string PrintableMessage(std::string_view text) {
  return PrintableName(text, 4096);
}

}  // namespace waitpath
