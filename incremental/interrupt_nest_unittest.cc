#include "incremental/interrupt_nest.h"

#include <gtest/gtest.h>

#include <vector>

namespace waitpath {
namespace {

enum class Kind { kIrq, kSoftirq, kTimer };

struct Frame {
  Kind kind;
  int id;
};

class InterruptNestTest : public ::testing::Test {
 protected:
  // Exits `kind`, returning the ids of the frames it closed, in the order they were told.
  std::vector<int> Exit(Kind kind) {
    std::vector<int> closed;
    const size_t n = nest.Exit(kind, [&closed](const Frame& f) { closed.push_back(f.id); });
    EXPECT_EQ(n, closed.size());
    return closed;
  }

  InterruptNest<Frame> nest;
};

TEST_F(InterruptNestTest, ExitsCloseWhatTheirEntriesOpened) {
  nest.Enter({Kind::kIrq, 1});
  nest.Enter({Kind::kTimer, 2});
  EXPECT_EQ(nest.size(), 2u);
  EXPECT_EQ(nest.innermost().id, 2);
  EXPECT_EQ(Exit(Kind::kTimer), std::vector<int>{2});
  EXPECT_EQ(nest.innermost().id, 1);
  nest.Enter({Kind::kSoftirq, 3});
  EXPECT_EQ(Exit(Kind::kSoftirq), std::vector<int>{3});
  EXPECT_EQ(Exit(Kind::kIrq), std::vector<int>{1});
  EXPECT_TRUE(nest.empty());
}

// The exits of the timer and the softirq inside the irq were lost: the irq's exit closes
// them, innermost first, and the one around it stays open.
TEST_F(InterruptNestTest, AnExitUnwindsToTheInnermostContextOfItsKind) {
  nest.Enter({Kind::kSoftirq, 1});
  nest.Enter({Kind::kIrq, 2});
  nest.Enter({Kind::kSoftirq, 3});
  nest.Enter({Kind::kTimer, 4});
  std::vector<int> around;  // innermost() as each is told: the context around it
  nest.Exit(Kind::kIrq, [&](const Frame&) { around.push_back(nest.innermost().id); });
  EXPECT_EQ(around, (std::vector<int>{3, 2, 1}));
  ASSERT_EQ(nest.size(), 1u);
  EXPECT_EQ(nest.innermost().id, 1);
  // Of two open softirqs the innermost closes.
  nest.Enter({Kind::kSoftirq, 5});
  EXPECT_EQ(Exit(Kind::kSoftirq), std::vector<int>{5});
  EXPECT_EQ(nest.innermost().id, 1);
}

// Its entry was before the trace start or a loss: what is open stays open.
TEST_F(InterruptNestTest, AnExitWithoutItsEntryClosesNothing) {
  EXPECT_TRUE(Exit(Kind::kIrq).empty());
  nest.Enter({Kind::kIrq, 1});
  nest.Enter({Kind::kTimer, 2});
  EXPECT_TRUE(Exit(Kind::kSoftirq).empty());
  ASSERT_EQ(nest.open().size(), 2u);
  EXPECT_EQ(nest.open()[0].id, 1);  // outermost first
  EXPECT_EQ(nest.open()[1].id, 2);
  nest.Clear();
  EXPECT_TRUE(nest.empty());
  EXPECT_TRUE(Exit(Kind::kIrq).empty());
}

}  // namespace
}  // namespace waitpath
