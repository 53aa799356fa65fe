#include "stream/clock_transform.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

namespace waitpath {
namespace {

// Exact image of t for slope (2^48 + dev) / 2^48, computed in 128-bit arithmetic a
// different way (one product of the full slope, floored), to check the fast form.
int64_t Exact(const ClockTransform& t, int64_t x) {
  const Int128 d = static_cast<Int128>(x) - t.host0();
  const Int128 num = d * ((static_cast<Int128>(1) << ClockTransform::kShift) + t.dev());
  Int128 q = num / (static_cast<Int128>(1) << ClockTransform::kShift);
  if (num < 0 && q * (static_cast<Int128>(1) << ClockTransform::kShift) != num) --q;  // floor
  return static_cast<int64_t>(t.ref0() + q);
}

TEST(ClockTransformTest, IdentityByDefault) {
  ClockTransform t;
  EXPECT_TRUE(t.identity());
  EXPECT_EQ(t.ToReference(1700000000123456789), 1700000000123456789);
}

TEST(ClockTransformTest, FastFormEqualsExact128BitArithmetic) {
  std::mt19937_64 rng(7);
  for (double ppm : {-120.0, -35.0, -0.5, 0.0, 0.25, 20.0, 40.0, 500.0}) {
    const int64_t anchor = 1700000000000000000 + static_cast<int64_t>(rng() % 1000000000000);
    const ClockTransform t = ClockTransform::FromLine(1.0 + ppm * 1e-6, 3.2e9, anchor);
    for (int i = 0; i < 20000; ++i) {
      // Up to ten days either side of the anchor, and near it.
      const int64_t span = (i % 2) ? 864000000000000 : 1000000;
      const int64_t x = anchor + static_cast<int64_t>(rng() % (2 * span)) - span;
      ASSERT_EQ(t.ToReference(x), Exact(t, x)) << ppm << " ppm at " << x;
    }
  }
}

TEST(ClockTransformTest, MonotonicAndCloseToTheLine) {
  const int64_t anchor = 1361214076525090092;
  const double slope = 1.0 + 55.011e-6, offset = -74882280681105.3;
  const ClockTransform t = ClockTransform::FromLine(slope, offset, anchor);
  int64_t prev = t.ToReference(anchor - 1000);
  for (int64_t x = anchor - 999; x < anchor + 100000; ++x) {
    const int64_t y = t.ToReference(x);
    ASSERT_GE(y, prev);
    prev = y;
  }
  // Against the line, relative to the anchor (a double holds 1.7e18 only to 256 ns).
  for (int64_t dx :
       {int64_t{0}, int64_t{1000000000}, int64_t{-3600000000000}, int64_t{86400000000000}}) {
    const double want =
        (slope - 1.0) * static_cast<double>(anchor) + offset + slope * static_cast<double>(dx);
    EXPECT_NEAR(static_cast<double>(t.ToReference(anchor + dx) - anchor), want, 2.0) << dx;
  }
  EXPECT_NEAR(t.slope(), slope, 1e-14);
  // The slope is kept to 2^-49; at t = 1.36e18 that moves the intercept by up to ~2.4 us
  // while the mapping itself stays exact around the anchor.
  EXPECT_NEAR(t.offset(), offset, std::ldexp(static_cast<double>(anchor), -49) + 1.0);
}

TEST(ClockTransformTest, InverseAndCompositionRoundTrip) {
  const int64_t anchor = 1700000003200000000;
  const ClockTransform t = ClockTransform::FromLine(1.0 - 35e-6, -3.1e9, anchor);
  const ClockTransform back = t.Inverse();
  for (int64_t dx = -5000000000; dx <= 5000000000; dx += 250000000) {
    EXPECT_LE(std::abs(back.ToReference(t.ToReference(anchor + dx)) - (anchor + dx)), 2) << dx;
  }
  const ClockTransform u = ClockTransform::FromLine(1.0 + 20e-6, 1.75e9, anchor);
  const ClockTransform both = t.Then(u);
  for (int64_t dx = -5000000000; dx <= 5000000000; dx += 250000000) {
    EXPECT_LE(std::abs(both.ToReference(anchor + dx) - u.ToReference(t.ToReference(anchor + dx))),
              2)
        << dx;
  }
}

}  // namespace
}  // namespace waitpath
