#include "model/string_table.h"

#include <gtest/gtest.h>

#include <string>
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

// The local cache of short strings: every length up to past its limit, strings that differ
// in one byte anywhere (including the middle, which the overlapping loads must cover), and
// many more strings than cache slots, so slots are overwritten.
TEST(StringTableTest, LocalInternerAgreesWithTheGlobalTable) {
  LocalInterner local;
  std::vector<std::string> strings;
  for (size_t len = 0; len <= 18; ++len) {
    const std::string base(len, 'a');
    strings.push_back(base);
    for (size_t i = 0; i < len; ++i) {
      std::string v = base;
      v[i] = 'b';
      strings.push_back(v);
    }
  }
  for (int i = 0; i < 2000; ++i) strings.push_back("task-" + std::to_string(i));
  for (int round = 0; round < 3; ++round) {
    for (const std::string& str : strings) {
      ASSERT_EQ(local.Intern(str), StringTable::Global().Intern(str))
          << '"' << str << "\" round " << round;
    }
  }
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
