// Checks of flag values, run by the command-line parser on flags and on --config TOML values
// alike, so that every malformed value is a usage error (exit 2) naming the flag.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "readers/host_reader.h"

namespace waitpath {

// A duration with a unit (base/duration.h); `positive`: more than zero.
CLI::Validator DurationCheck(bool positive);
// A comma-separated list of states (incremental/leaf_state.h names), for --state.
CLI::Validator StateListCheck();
// --state STATE[,STATE...] on `cmd` (tail, live, demo), its help naming every state.
void AddStateOption(CLI::App* cmd, std::string* states);
// Exactly one ADDR:PORT (exporters/metrics_server.h).
CLI::Validator ListenAddressCheck();
// net://HOST[:PORT] (also net4://, net6://), the port within 1..65535.
CLI::Validator RelaydUrlCheck();
// --decoder babeltrace2|native|auto: which decoder reads recorded traces (readers/host_reader.h).
void AddDecoderOption(CLI::App* cmd, std::string* decoder);
// Its value as the reader takes it (checked by AddDecoderOption's validator).
TraceDecoderChoice DecoderChoice(const std::string& decoder);

// An integer within [low, high], checked before conversion (so "-1" is not read as a huge
// unsigned value).
CLI::Validator IntegerRange(int64_t low, int64_t high);

}  // namespace waitpath
