#include "incremental/task_table.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

TEST(TaskTableTest, GetOrCreateIsDensePerHostAndTid) {
  TaskTable tasks;
  bool created = false;
  const Utid a = tasks.GetOrCreate(0, 100, 5, &created);
  EXPECT_TRUE(created);
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(tasks.GetOrCreate(0, 100, 9, &created), a);
  EXPECT_FALSE(created);
  const Utid b = tasks.GetOrCreate(1, 100, 7, &created);  // same tid, other host
  EXPECT_TRUE(created);
  EXPECT_EQ(b, 1u);
  EXPECT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[a].host, 0);
  EXPECT_EQ(tasks[b].host, 1);
  EXPECT_EQ(tasks[a].tid, 100);
  EXPECT_EQ(tasks[a].first_ts, 5);  // first mention, not the later one
  EXPECT_EQ(tasks[a].pid, -1);
  EXPECT_EQ(tasks[a].parent, kNoTask);
  EXPECT_EQ(tasks[a].birth, kNever);
  EXPECT_EQ(tasks[a].exit_ts, kNever);
  EXPECT_EQ(tasks[a].end_ts, kNever);
  EXPECT_FALSE(tasks[a].ran);
}

TEST(TaskTableTest, FindDoesNotCreate) {
  TaskTable tasks;
  EXPECT_EQ(tasks.Find(0, 42), kNoTask);
  EXPECT_EQ(tasks.size(), 0u);
  const Utid u = tasks.GetOrCreate(0, 42, 1);
  EXPECT_EQ(tasks.Find(0, 42), u);
  EXPECT_EQ(tasks.Find(1, 42), kNoTask);
}

TEST(TaskTableTest, CreateFreshShadowsAnOlderTaskWithTheSameTid) {
  TaskTable tasks;
  const Utid old_task = tasks.GetOrCreate(0, 7, 1);
  const Utid fresh = tasks.CreateFresh(0, 7, 50);
  EXPECT_NE(fresh, old_task);
  EXPECT_EQ(tasks.Find(0, 7), fresh);
  EXPECT_EQ(tasks[fresh].first_ts, 50);
  // The old task stays addressable by its Utid.
  EXPECT_EQ(tasks[old_task].tid, 7);
  EXPECT_EQ(tasks[old_task].first_ts, 1);
}

TEST(TaskTableTest, RetireForgetsTheMappingOnlyForThatTask) {
  TaskTable tasks;
  const Utid old_task = tasks.GetOrCreate(0, 7, 1);
  const Utid fresh = tasks.CreateFresh(0, 7, 50);
  tasks.Retire(old_task);  // a stale task does not unmap its successor
  EXPECT_EQ(tasks.Find(0, 7), fresh);
  tasks.Retire(fresh);
  EXPECT_EQ(tasks.Find(0, 7), kNoTask);
  EXPECT_EQ(tasks.size(), 2u);
  // The tid is reused: a new task.
  bool created = false;
  const Utid again = tasks.GetOrCreate(0, 7, 90, &created);
  EXPECT_TRUE(created);
  EXPECT_EQ(again, 2u);
}

// A shard asked about a time it has gone past (the tid reused since, a looped replay's next
// round): the task that had the tid then, while its slot is not reused.
TEST(TaskTableTest, FindAtFindsTheTaskThatHadTheTidThen) {
  TaskTable tasks;
  EXPECT_EQ(tasks.FindAt(0, 7, 5), kNoTask);
  const Utid first = tasks.GetOrCreate(0, 7, 10);
  tasks.Retire(first);  // it ended
  const Utid second = tasks.GetOrCreate(0, 7, 50);
  const Utid third = tasks.CreateFresh(0, 7, 90);
  tasks.GetOrCreate(0, 8, 20);  // another tid: not in the chain
  EXPECT_EQ(tasks.FindAt(0, 7, 95), third);
  EXPECT_EQ(tasks.FindAt(0, 7, 90), third);
  EXPECT_EQ(tasks.FindAt(0, 7, 89), second);
  EXPECT_EQ(tasks.FindAt(0, 7, 50), second);
  EXPECT_EQ(tasks.FindAt(0, 7, 12), first);
  EXPECT_EQ(tasks.FindAt(0, 7, 9), kNoTask);   // before any
  EXPECT_EQ(tasks.FindAt(1, 7, 95), kNoTask);  // another host
  // The first's slot released and reused by another tid: the chain stops before it.
  tasks.Release(first);
  const Utid reused = tasks.GetOrCreate(0, 9, 100);
  EXPECT_EQ(reused, first);
  EXPECT_EQ(tasks.FindAt(0, 7, 12), kNoTask);
  EXPECT_EQ(tasks.FindAt(0, 9, 100), reused);
  // The latest released: nothing of that tid is found any more through it.
  tasks.Release(third);
  EXPECT_EQ(tasks.FindAt(0, 7, 95), kNoTask);
}

}  // namespace
}  // namespace waitpath
