// Per-CPU context of one host: the current task and the stack of interrupt contexts running
// over it, with what happened inside each (a packet received, a block request completed, a
// timer expired) so that a wake-up from that context can be given its cause.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "incremental/leaf_state.h"
#include "incremental/task_table.h"

namespace waitpath {

struct IrqFrame {
  enum class Type : uint8_t { kHardIrq, kSoftIrq, kTimer, kIpi, kFromFlags };
  Type type;
  int32_t number;       // irq line, softirq vector or IpiType
  uint32_t name;        // interned irq name (hard irqs)
  bool packet = false;  // a packet was received inside
  bool disk = false;    // a block request completed inside
  bool timer = false;   // an hrtimer expired inside
  Utid sender = kNoTask;  // of the last packet received inside, when matched
  int64_t send_ts = 0;
  bool sender_known = false;
};

struct CpuContext {
  Utid current = kNoTask;  // kNoTask: idle, or not known
  bool known = false;      // false until the first sched_switch, and after lost events
  // The current task is an interrupt thread (threaded IRQ handlers `irq/N-name`, threaded
  // NAPI `napi/…`, every IRQ under PREEMPT_RT): what it handles is recorded as in a frame,
  // and a wake-up it makes is that interrupt's, as if from interrupt context.
  bool in_irq_thread = false;
  IrqFrame irq_thread{};
  int64_t last_ts = 0;     // the CPU's previous event
  std::vector<IrqFrame> frames;
};

class CpuContextTracker {
 public:
  CpuContext& cpu(uint16_t id) {
    if (id >= cpus_.size()) cpus_.resize(id + 1u);
    return cpus_[id];
  }
  size_t size() const { return cpus_.size(); }

 private:
  std::vector<CpuContext> cpus_;
};

// Whether a task name is an interrupt thread's, and the frame standing for its work: a
// hard irq named as the thread's irq (`irq/24-eth0-TxRx` -> `eth0-TxRx`), or NET_RX for a
// threaded NAPI poller (`napi/eth0-8193`). `name` receives the irq name part.
bool IrqThreadFrame(std::string_view comm, IrqFrame* frame, std::string_view* name);

// What a wake-up from inside `frame` means. `irq_name` is the frame's irq name (hard irqs).
Leaf ClassifyInterrupt(const IrqFrame& frame, std::string_view irq_name);

}  // namespace waitpath
