#include "readers/bt_ref.h"

#include <gtest/gtest.h>

#include <vector>

namespace waitpath {
namespace {

std::vector<const int*> g_put;
void FakePut(const int* object) {
  g_put.push_back(object);
}
using IntRef = BtRef<int, FakePut>;

TEST(BtRefTest, PutsOnceWhenItGoesAway) {
  g_put.clear();
  int a = 0;
  { IntRef ref(&a); }
  EXPECT_EQ(g_put, std::vector<const int*>{&a});
  { IntRef empty; }
  EXPECT_EQ(g_put.size(), 1u) << "nothing to put";
}

TEST(BtRefTest, MoveTransfersTheReference) {
  g_put.clear();
  int a = 0, b = 0;
  {
    IntRef first(&a);
    IntRef second(std::move(first));
    EXPECT_FALSE(first);
    EXPECT_EQ(second.get(), &a);
    IntRef third(&b);
    third = std::move(second);  // b is put now, a when third goes
    EXPECT_EQ(g_put, std::vector<const int*>{&b});
  }
  EXPECT_EQ(g_put, (std::vector<const int*>{&b, &a}));
}

TEST(BtRefTest, OutPutsThePreviousReference) {
  g_put.clear();
  int a = 0, b = 0;
  IntRef ref(&a);
  int*& slot = ref.out();
  EXPECT_EQ(g_put, std::vector<const int*>{&a});
  slot = &b;  // what a C API out-parameter does
  EXPECT_EQ(ref.get(), &b);
  ref.reset();
  EXPECT_EQ(g_put, (std::vector<const int*>{&a, &b}));
}

}  // namespace
}  // namespace waitpath
