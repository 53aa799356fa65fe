#include "live/string_table.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace waitpath {
namespace {

TEST(StringTableTest, InternIsStableAndDense) {
  LocalInterner a, b;
  const uint32_t x = a.Intern("kworker/0:1");
  EXPECT_EQ(a.Intern("kworker/0:1"), x);
  EXPECT_EQ(b.Intern("kworker/0:1"), x);
  EXPECT_NE(a.Intern("sshd"), x);
  EXPECT_EQ(StringTable::Global().Get(x), "kworker/0:1");
  EXPECT_EQ(StringTable::Global().Get(0), "");
}

TEST(StringTableTest, ConcurrentInterningAgrees) {
  std::vector<std::vector<uint32_t>> ids(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &ids] {
      LocalInterner local;
      for (int i = 0; i < 5000; ++i) ids[t].push_back(local.Intern("task-" + std::to_string(i)));
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 1; t < 4; ++t) EXPECT_EQ(ids[t], ids[0]);
  EXPECT_EQ(StringTable::Global().Get(ids[0][4321]), "task-4321");
}

}  // namespace
}  // namespace waitpath
