// A task's behaviour: the step language of scenario scripts, compiled to a flat op list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/gen/common.h"

namespace waitpath::gen {

enum class OpCode : uint8_t {
  kCompute,  // compute DUR
  kSleep,    // sleep DUR            (hrtimer wake-up)
  kDisk,     // disk DUR [BYTES] [read|write]   (block request, irq completion)
  kSend,     // send PEER BYTES      (TCP segments to a task on another host)
  kRecv,     // recv PEER            (blocks until a whole message from PEER arrived)
  kLock,     // lock MUTEX
  kUnlock,   // unlock MUTEX         (hands the mutex to the first waiter and wakes it)
  kFork,     // fork CHILD           (CHILD is a task declared with forked = true)
  kWait,     // wait CHILD           (blocks until CHILD exited)
  kRepeat,   // repeat N ... end
  kEnd,
  kExit,     // exit (implicit at the end of the script)
  kSpan,     // span NAME            (begins an application span, child of the one held)
  kEndSpan,  // end_span             (ends the innermost span the task holds)
  kHandoff,  // handoff TASK         (takes over TASK's innermost span)
};

struct Op {
  OpCode code = OpCode::kCompute;
  DurationRange duration;
  int64_t bytes_lo = 0;
  int64_t bytes_hi = 0;
  bool write = true;
  std::string target;  // peer task, mutex or child name
  int32_t ref = -1;    // target resolved by the simulator (task or mutex index)
  int64_t count = 0;   // repeat count
  int32_t match = -1;  // index of the matching repeat/end
};

class ScriptCompiler {
 public:
  // Throws std::runtime_error naming the task and the line on a malformed step.
  static std::vector<Op> Compile(const std::vector<std::string>& lines,
                                 const std::string& task_name);
};

}  // namespace waitpath::gen
