// The full-screen view of `tail`, `live` and `demo` in a terminal (docs/analyze.md, "The
// terminal view"): redrawn in place about once a second, like top, from a TriageView and the
// streams' health. Plain ANSI (alternate screen, cursor home, clear to end of line): every
// terminal people use speaks it, and curses would add a dependency for four escapes.
// While it is up, messages to stderr are caught and shown in its last lines (they would tear
// the screen otherwise), and printed as lines again when it closes.
#pragma once

#include <termios.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "base/time_format.h"
#include "exporters/triage_view.h"

namespace waitpath {

// One host's stream, as the view shows it.
struct HostHealth {
  std::string name;
  double events_per_s = 0;
  double lag_s = -1;    // behind the wall clock (< 0: not known)
  uint64_t lost = 0;    // events the tracer discarded or the merger dropped as late
  std::string sync;     // "reference", "±12 us good", "waiting", "" (one host)
  std::string state;    // "", "ended", "lagging", "relayd lost for 1m12s", an error
  double outage_s = 0;  // wall time its relayd was lost, in all (an outage still going included)
  uint64_t gaps = 0;    // stretches of unknown size: input gaps, damaged packets
};

struct ScreenStatus {
  std::string source;   // "relayd net://127.0.0.1:5344", "3 traces"
  std::string filters;  // "min-wait 1ms, state disk", "" for none
  std::vector<HostHealth> hosts;
  TimeFormat time_format;
  bool final = false;  // the summary at the end: since the start rather than the last seconds
};

// A wall-clock age or outage, short: "4s", "1m12s", "2h03m".
std::string FormatAge(double seconds);

// The view as lines of at most `width` columns, at most `height` of them (the summary at
// the end is not cut to a height when `height` <= 0).
std::vector<std::string> RenderTriage(const TriageView& view, const ScreenStatus& status, int width,
                                      int height, const std::deque<std::string>& messages = {});

class TerminalScreen {
 public:
  // Whether standard output is a terminal that can take the view (not TERM=dumb).
  static bool Usable();

  // Switches to the alternate screen, hides the cursor, catches stderr when it is the same
  // terminal, and reads keys without waiting for Enter when stdin is a terminal.
  TerminalScreen();
  // Restores all of it and prints the caught messages to stderr.
  ~TerminalScreen();
  TerminalScreen(const TerminalScreen&) = delete;
  TerminalScreen& operator=(const TerminalScreen&) = delete;

  // Reads pending keys and caught messages; true once `q` was pressed. Call it often (every
  // 100 ms): a flood of messages beyond the pipe's buffer is dropped, not waited for.
  bool Poll();
  void Draw(const TriageView& view, const ScreenStatus& status);

  static void Size(int* width, int* height);

 private:
  void DrainMessages();

  bool keys_ = false;
  termios saved_{};
  int saved_stderr_ = -1;
  int messages_fd_ = -1;
  std::string partial_;
  std::deque<std::string> messages_;  // the last few, shown in the view
  std::vector<std::string> caught_;   // all of them (bounded), printed at the end
  bool quit_ = false;
};

}  // namespace waitpath
