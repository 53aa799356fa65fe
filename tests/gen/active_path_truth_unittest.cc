#include "tools/gen/active_path_truth.h"

#include <gtest/gtest.h>

namespace waitpath::gen {
namespace {

size_t L(Leaf l) {
  return static_cast<size_t>(l);
}

// Three tasks by hand: X waits for a packet sent by R, and R itself waited on W.
class HandMadeTimelines : public ::testing::Test {
 protected:
  void SetUp() override {
    tasks_.resize(3);
    timelines_.resize(3);
    // W (2): runs [0, 50), then is preempted [50, 60), then runs until 200.
    timelines_[2] = TaskTimeline(0, TaskState::kRunning);
    timelines_[2].Enter(50, TaskState::kPreempted);
    timelines_[2].Enter(60, TaskState::kRunning);
    timelines_[2].Finish(200);
    // R (1): blocked [0, 40) woken by W at 40, runs [40, 100) and sends at 90, then
    // blocked until the end, never woken.
    timelines_[1] = TaskTimeline(0, TaskState::kBlocked);
    timelines_[1].Wake(40, WakeCause::kTask, 2, 0);
    timelines_[1].Enter(45, TaskState::kRunning);
    timelines_[1].Enter(60, TaskState::kInterrupted);
    timelines_[1].Enter(65, TaskState::kRunning);
    timelines_[1].Enter(100, TaskState::kBlocked);
    timelines_[1].Finish(200);
    // X (0): runs [0, 10), blocked [10, 120) woken by a packet R sent at 90, runs to 150.
    timelines_[0] = TaskTimeline(0, TaskState::kRunning);
    timelines_[0].Enter(10, TaskState::kBlocked);
    timelines_[0].Wake(120, WakeCause::kPacket, 1, 90);
    timelines_[0].Enter(125, TaskState::kRunning);
    timelines_[0].Finish(150);
  }
  std::vector<TaskInfo> tasks_;
  std::vector<TaskTimeline> timelines_;
};

TEST_F(HandMadeTimelines, PacketWaitFollowsSenderThenNetwork) {
  PathBreakdown bd = ActivePathTruth(tasks_, timelines_).Compute(0, 0, 150);
  // [0,10) X running; [10,40) R blocked -> W running; [40,45) R preempted;
  // [45,60) R running; [60,65) R interrupted; [65,90) R running; [90,120) network;
  // [120,125) X preempted; [125,150) X running.
  EXPECT_EQ(bd.total[L(Leaf::kRunning)], 10 + 30 + 15 + 25 + 25);
  EXPECT_EQ(bd.total[L(Leaf::kPreempted)], 5 + 5);
  EXPECT_EQ(bd.total[L(Leaf::kInterrupted)], 5);
  EXPECT_EQ(bd.total[L(Leaf::kNetwork)], 30);
  Ns sum = 0;
  for (Ns v : bd.total) sum += v;
  EXPECT_EQ(sum, 150);
  EXPECT_EQ(bd.by_task.at(2)[L(Leaf::kRunning)], 30);
  EXPECT_EQ(bd.by_task.at(0)[L(Leaf::kNetwork)], 30);
}

TEST_F(HandMadeTimelines, NeverWokenIsBlocked) {
  PathBreakdown bd = ActivePathTruth(tasks_, timelines_).Compute(1, 100, 200);
  EXPECT_EQ(bd.total[L(Leaf::kBlocked)], 100);
}

TEST(ActivePathTruth, WakerNotBornYetFollowsForkLink) {
  std::vector<TaskInfo> tasks(3);
  tasks[2].parent = 1;  // child 2 forked by 1 at 30
  std::vector<TaskTimeline> tl(3);
  tl[1] = TaskTimeline(0, TaskState::kRunning);
  tl[1].Enter(30, TaskState::kBlocked);
  tl[1].Finish(100);
  tl[2] = TaskTimeline(30, TaskState::kPreempted);
  tl[2].Enter(32, TaskState::kRunning);
  tl[2].Finish(80);
  // X waits [0, 80) and is woken by the child at 80.
  tl[0] = TaskTimeline(0, TaskState::kBlocked);
  tl[0].Wake(80, WakeCause::kTask, 2, 0);
  tl[0].Finish(80);
  PathBreakdown bd = ActivePathTruth(tasks, tl).Compute(0, 0, 80);
  EXPECT_EQ(bd.by_task.at(1)[L(Leaf::kRunning)], 30);
  EXPECT_EQ(bd.by_task.at(2)[L(Leaf::kPreempted)], 2);
  EXPECT_EQ(bd.by_task.at(2)[L(Leaf::kRunning)], 48);
}

}  // namespace
}  // namespace waitpath::gen
