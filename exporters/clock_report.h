// How a host's clock maps to the reference: the `clock` JSON record (`waitpath sync --json`,
// `waitpath analyze --json` with several hosts) and the text line of `waitpath sync`.
#pragma once

#include <string>

#include "stream/clock_sync.h"

namespace waitpath {

std::string ClockJson(const HostClock& clock);
std::string ClockText(const HostClock& clock);
// "VM3: clock accurate ±171.5 µs to VM1 (46 packets)", for people.
std::string ClockSummary(const HostClock& clock);

}  // namespace waitpath
