// Per-CPU context of one host: the current task and the stack of interrupt contexts running
// over it, with what happened inside each (a packet received, a block request completed, a
// timer expired) so that a wake-up from that context can be given its cause.
#pragma once

#include <cassert>
#include <cstdint>
#include <string_view>
#include <vector>

#include "incremental/interrupt_nest.h"
#include "incremental/leaf_state.h"
#include "incremental/task_history.h"
#include "incremental/task_table.h"

namespace waitpath {

struct IrqFrame {
  enum class Kind : uint8_t { kHardIrq, kSoftIrq, kTimer, kIpi, kFromFlags };
  Kind kind;
  int32_t number;         // irq line, softirq vector or IpiType
  uint32_t name;          // interned irq name (hard irqs)
  bool packet = false;    // a packet was received inside
  bool disk = false;      // a block request completed inside
  bool timer = false;     // an hrtimer expired inside
  Utid sender = kNoTask;  // of the last packet received inside, when matched
  int64_t send_ts = 0;
  bool sender_known = false;
  bool to_server = false;  // that packet went from a client to a server's port
  // The packet's sender is on another shard that stalled before saying whether it sent it
  // (docs/scale.md, "Progress"): the wake-up is `unknown`.
  bool sender_lost = false;
};

struct CpuContext {
  Utid current = kNoTask;  // kNoTask: idle, or not known
  bool known = false;      // false until the first sched_switch, and after lost events
  // The current task is an interrupt thread (threaded IRQ handlers `irq/N-name`, threaded
  // NAPI `napi/…`, every IRQ under PREEMPT_RT): what it handles is recorded as in a frame,
  // and a wake-up it makes is that interrupt's, as if from interrupt context.
  bool in_irq_thread = false;
  IrqFrame irq_thread{};
  int64_t last_ts = 0;             // the CPU's previous event
  InterruptNest<IrqFrame> frames;  // interrupt contexts over the current task
};

// Keeps each CPU's context: which task runs, and the stack of interrupt contexts over it with
// what happened inside them. The engine tells it what events say and asks it who a wake-up or
// a packet sent from a CPU comes from; the task histories are the engine's.
class CpuContextTracker {
 public:
  // The CPU `id`, added if new: unknown until a switch or an event names its current task.
  // The methods below take a CPU added by this first (the engine calls it at each event), so
  // that they cost no bounds check.
  const CpuContext& cpu(uint16_t id) {
    if (id >= cpus_.size()) cpus_.resize(id + 1u);
    return cpus_[id];
  }
  size_t size() const { return cpus_.size(); }

  // `task` (kNoTask: idle) runs on the CPU from now on; `comm`, its name, tells whether it is
  // an interrupt thread.
  void SetCurrent(uint16_t cpu, Utid task, std::string_view comm);
  // The CPU's latest event was at `ts`.
  void Seen(uint16_t cpu, int64_t ts) { At(cpu).last_ts = ts; }
  // Events were lost on the CPU: its task and contexts are unknown until its next switch.
  void Lost(uint16_t cpu);

  // An interrupt context (irq, softirq, hrtimer, IPI) begins on the CPU. Returns the task it
  // interrupts: the current one if this is the outermost context, else kNoTask.
  Utid EnterInterrupt(uint16_t cpu, const IrqFrame& frame);
  // A context of `kind` ends: the innermost open one of that kind, with those inside it whose
  // exits were lost (an exit without its entry, after the trace start or a loss, closes
  // nothing; InterruptNest::Exit). A timer that ends ran in the context around it too. Returns
  // the task that resumes: the current one if this closed the last context, else kNoTask.
  Utid ExitInterrupt(uint16_t cpu, IrqFrame::Kind kind);
  // A switch runs in task context: contexts whose exit was not seen are over.
  void LeaveInterrupts(uint16_t cpu) { At(cpu).frames.Clear(); }
  bool InInterrupt(uint16_t cpu) const { return !At(cpu).frames.empty(); }

  // What happened in the CPU's innermost context, or in its interrupt thread (else nothing):
  // a block request completed; a packet was received, sent by `sender` at `send_ts` if that
  // is known (kNoTask if not), from a client to a server's port or not (`to_server`).
  void DiskCompleted(uint16_t cpu);
  void PacketReceived(uint16_t cpu, Utid sender, int64_t send_ts, bool to_server = false);
  void PacketReceivedUnknown(uint16_t cpu);

  // Where a wake-up made on the CPU now comes from: its innermost interrupt context, the
  // interrupt context the event's own flags (`ctx`, CtxFlags) say, its interrupt thread's
  // interrupt, its current task, or unknown (kUnknown: its state was lost or never seen).
  WaitLink Waker(uint16_t cpu, uint8_t ctx) const;
  // The task a packet sent on the CPU now comes from: kNoTask from interrupt context or when
  // the CPU's task is not known.
  Utid PacketSender(uint16_t cpu, uint8_t ctx) const;

 private:
  CpuContext& At(uint16_t id) {
    assert(id < cpus_.size());
    return cpus_[id];
  }
  const CpuContext& At(uint16_t id) const {
    assert(id < cpus_.size());
    return cpus_[id];
  }

  std::vector<CpuContext> cpus_;
};

// Whether a task name is an interrupt thread's, and the frame standing for its work: a
// hard irq named as the thread's irq (`irq/24-eth0-TxRx` -> `eth0-TxRx`), or NET_RX for a
// threaded NAPI poller (`napi/eth0-8193`). `name` receives the irq name part.
bool IrqThreadFrame(std::string_view comm, IrqFrame* frame, std::string_view* name);

// What a wake-up from inside `frame` means. `irq_name` is the frame's irq name (hard irqs).
Leaf ClassifyInterrupt(const IrqFrame& frame, std::string_view irq_name);

}  // namespace waitpath
