// Converting a host's timestamps to the reference clock: t_ref = slope * t + offset, in the
// fast integer form of the paper (no floating point per event, monotonic, no overflow).
#pragma once

#include <cmath>
#include <cstdint>

namespace waitpath {

// GCC/Clang's 128-bit integer: one 64x64->128 multiply (__extension__ keeps -pedantic quiet).
__extension__ typedef __int128 Int128;

class ClockTransform {
 public:
  // Fixed-point fraction bits of the slope's deviation from 1. Drift is tens of ppm, so
  // 2^-48 resolution keeps the error below a nanosecond for days.
  static constexpr int kShift = 48;

  ClockTransform() = default;  // identity
  // The transform t_ref = slope * t + offset, anchored at host time `anchor` (conversions
  // are exact at the anchor and drift by at most |t - anchor| * 2^-48 ns from the real line).
  static ClockTransform FromLine(double slope, double offset, int64_t anchor);

  // t_ref for host time t: ref0 + d + floor(d * dev / 2^48), d = t - host0. A 64x64->128
  // multiply; monotonic because slope > 0 (dev > -2^48).
  int64_t ToReference(int64_t t) const {
    const int64_t d = t - host0_;
    const Int128 scaled = static_cast<Int128>(d) * dev_;
    return ref0_ + d + static_cast<int64_t>(scaled >> kShift);
  }

  double slope() const { return 1.0 + std::ldexp(static_cast<double>(dev_), -kShift); }
  // offset_ns in t_ref = slope * t + offset.
  // (Computed from small differences: slope * host0 itself would lose ~256 ns in a double.)
  double offset() const {
    return static_cast<double>(ref0_ - host0_) -
           std::ldexp(static_cast<double>(dev_), -kShift) * static_cast<double>(host0_);
  }
  int64_t host0() const { return host0_; }
  int64_t ref0() const { return ref0_; }
  int64_t dev() const { return dev_; }
  bool identity() const { return dev_ == 0 && ref0_ == host0_; }

  // This transform after `outer`: t -> outer(this(t)).
  ClockTransform Then(const ClockTransform& outer) const;
  // The inverse map (reference -> host), anchored at this transform's anchor image.
  ClockTransform Inverse() const;

 private:
  int64_t host0_ = 0;
  int64_t ref0_ = 0;
  int64_t dev_ = 0;  // round((slope - 1) * 2^48)
};

inline ClockTransform ClockTransform::FromLine(double slope, double offset, int64_t anchor) {
  ClockTransform t;
  t.host0_ = anchor;
  // slope * anchor + offset loses precision at 1.7e18; compute the image as anchor plus the
  // small correction, which is exact in double.
  const double correction = (slope - 1.0) * static_cast<double>(anchor) + offset;
  t.ref0_ = anchor + static_cast<int64_t>(std::llround(correction));
  t.dev_ = static_cast<int64_t>(std::llround(std::ldexp(slope - 1.0, kShift)));
  return t;
}

inline ClockTransform ClockTransform::Then(const ClockTransform& outer) const {
  const double s = slope() * outer.slope();
  ClockTransform t = FromLine(s, 0.0, host0_);
  t.ref0_ = outer.ToReference(ToReference(host0_));
  return t;
}

inline ClockTransform ClockTransform::Inverse() const {
  ClockTransform t = FromLine(1.0 / slope(), 0.0, ref0_);
  t.ref0_ = host0_;
  return t;
}

}  // namespace waitpath
