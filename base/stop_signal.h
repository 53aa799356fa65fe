// Ctrl-C and SIGTERM as a request to stop, not an ending: long-running commands poll one flag
// and stop in order (readers joined, children ended, output flushed) instead of dying
// mid-write. One flag per process.
#pragma once

#include <atomic>
#include <initializer_list>

namespace waitpath {

// From now on SIGINT, SIGTERM and the signals in `more` (e.g. SIGHUP) only raise
// StopRequested(). Interrupted system calls are restarted (SA_RESTART).
void InstallStopSignal(std::initializer_list<int> more = {});

// The process's stop request: raised by those signals; code may raise it too (a deadline, a
// failed child). Lock-free, hence safe to store from a signal handler.
std::atomic<bool>& StopRequested();

}  // namespace waitpath
