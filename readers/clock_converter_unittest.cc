#include "readers/clock_converter.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

struct FakeClocks {
  int described = 0;
  int slow = 0;
  ClockConverter::ClockClass Describe(const void* clock) {
    ++described;
    const int id = *static_cast<const int*>(clock);
    // Clock 1: 1 GHz, offset 10 s + 5 cycles; clock 2: 1 GHz, offset 20 s; clock 3: 1 MHz.
    if (id == 1) return {10, 5, 1000000000ULL};
    if (id == 2) return {20, 0, 1000000000ULL};
    return {0, 0, 1000000ULL};
  }
  int64_t Convert(ClockConverter& converter, const int& clock, uint64_t cycles) {
    return converter.ToNs(
        &clock, cycles, [&](const void* c) { return Describe(c); },
        [&] {
          ++slow;
          return int64_t{-7};
        });
  }
};

TEST(ClockConverterTest, OneGigahertzIsOffsetPlusCycles) {
  ClockConverter converter;
  FakeClocks fake;
  const int one = 1;
  EXPECT_EQ(fake.Convert(converter, one, 0), 10000000005);
  EXPECT_EQ(fake.Convert(converter, one, 1000), 10000001005);
  EXPECT_EQ(fake.described, 1) << "the class is described once while it stays the same";
  EXPECT_EQ(fake.slow, 0);
}

TEST(ClockConverterTest, AnotherClassReplacesTheCachedOne) {
  ClockConverter converter;
  FakeClocks fake;
  const int one = 1, two = 2;
  EXPECT_EQ(fake.Convert(converter, one, 1), 10000000006);
  EXPECT_EQ(fake.Convert(converter, two, 1), 20000000001);
  EXPECT_EQ(fake.Convert(converter, one, 1), 10000000006);
  EXPECT_EQ(fake.described, 3);
}

TEST(ClockConverterTest, OtherFrequenciesTakeTheSlowPath) {
  ClockConverter converter;
  FakeClocks fake;
  const int mhz = 3, one = 1;
  EXPECT_EQ(fake.Convert(converter, mhz, 5), -7);
  EXPECT_EQ(fake.Convert(converter, mhz, 6), -7);
  EXPECT_EQ(fake.slow, 2);
  EXPECT_EQ(fake.described, 1);
  EXPECT_EQ(fake.Convert(converter, one, 0), 10000000005);
  EXPECT_EQ(fake.slow, 2);
}

}  // namespace
}  // namespace waitpath
