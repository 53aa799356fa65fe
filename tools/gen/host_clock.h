// One host's clock: maps true simulation time to the host's "monotonic" CTF clock and
// gives the exact transform back to the reference host's clock for the truth file.
#pragma once

#include <cmath>
#include <cstdint>

#include "tools/gen/common.h"

namespace waitpath::gen {

class HostClock {
 public:
  HostClock(int64_t epoch_ns, Ns offset, double drift_ppm)
      : epoch_ns_(epoch_ns), offset_(offset), drift_(drift_ppm * 1e-6) {}

  // ns since the Unix epoch as this host's tracer stamps it:
  // epoch + offset + t * (1 + drift), rounded to an integer.
  int64_t HostNs(Ns t) const {
    return epoch_ns_ + offset_ + t +
           static_cast<int64_t>(std::llround(static_cast<double>(t) * drift_));
  }
  // The reference host (offset 0, drift 0) stamps true time plus the epoch.
  int64_t ReferenceNs(Ns t) const { return epoch_ns_ + t; }

  // t_reference = slope * t_host + offset_ns (both in ns since the epoch).
  double Slope() const { return 1.0 / (1.0 + drift_); }
  // epoch - (epoch + offset) / (1 + drift), rearranged to avoid cancelling two ~1.7e18
  // values in floating point.
  double OffsetNs() const {
    long double d = drift_;
    return static_cast<double>(
        (static_cast<long double>(epoch_ns_) * d - static_cast<long double>(offset_)) / (1.0L + d));
  }
  Ns offset() const { return offset_; }
  double drift_ppm() const { return drift_ * 1e6; }

  // The CTF clock class offset (whole seconds) and the cycle value of a time: LTTng puts
  // the boot time in the offset and the monotonic clock in the cycles.
  int64_t ClockOffsetSeconds() const {
    // One hour below the trace start keeps every cycle value positive and realistic.
    return (epoch_ns_ + offset_) / kSec - 3600;
  }
  uint64_t Cycles(Ns t) const {
    return static_cast<uint64_t>(HostNs(t) - ClockOffsetSeconds() * kSec);
  }

 private:
  int64_t epoch_ns_;
  Ns offset_;
  double drift_;
};

}  // namespace waitpath::gen
