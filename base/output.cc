#include "base/output.h"

#include <signal.h>

#include <iostream>

namespace waitpath {

void IgnoreSigpipe() {
  signal(SIGPIPE, SIG_IGN);
}

bool StdoutClosed() {
  std::cout.flush();
  std::fflush(stdout);
  return std::cout.fail() || std::ferror(stdout);
}

}  // namespace waitpath
