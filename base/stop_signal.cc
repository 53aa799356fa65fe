#include "base/stop_signal.h"

#include <signal.h>

namespace waitpath {
namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void OnStopSignal(int) {
  g_stop.store(true, std::memory_order_relaxed);
}

}  // namespace

void InstallStopSignal(std::initializer_list<int> more) {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  for (int sig : more) sigaction(sig, &action, nullptr);
}

std::atomic<bool>& StopRequested() {
  return g_stop;
}

}  // namespace waitpath
