// How a host's clock maps to the reference: the `clock` JSON record (`waitpath sync --json`,
// `waitpath analyze --json` with several hosts) and the text line of `waitpath sync`.
#pragma once

#include <string>

#include "stream/clock_sync.h"

namespace waitpath {

std::string ClockJson(const HostClock& clock);
std::string ClockText(const HostClock& clock);
// A clock's accuracy for people, the one notation of every line and screen that shows one:
// "+/-171.5 us", "+/-2.5 ms", "+/-800 ns" (ASCII, as durations are written in flags and wait
// lines: a journal or a non-UTF-8 terminal shows it as it is).
std::string FormatClockAccuracy(double ns);
// "VM3: clock accurate +/-171.5 us to VM1 (46 packets)", for people.
std::string ClockSummary(const HostClock& clock);

}  // namespace waitpath
