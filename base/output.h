// Output that a closed pipe cannot crash (`waitpath … | head`, `2>&1 | tee` then Ctrl-C): a
// write to a closed pipe fails instead of killing the process or throwing, long-running
// commands notice and stop in order (daemons ended, directories removed), and the exit status
// says so (141, as if killed by SIGPIPE, which is what shells expect of `| head`).
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <utility>

namespace waitpath {

inline constexpr int kExitOutputClosed = 141;  // 128 + SIGPIPE

// From now on a write to a closed pipe fails with EPIPE instead of raising SIGPIPE.
void IgnoreSigpipe();

// A message to stderr; a failure to write it is ignored (stderr may be a closed pipe too).
template <typename... T>
void Say(fmt::format_string<T...> format, T&&... args) {
  const std::string text = fmt::format(format, std::forward<T>(args)...);
  (void)std::fwrite(text.data(), 1, text.size(), stderr);
}

// Whether standard output's reader has gone (a write to it failed). Flushes it first.
bool StdoutClosed();

}  // namespace waitpath
