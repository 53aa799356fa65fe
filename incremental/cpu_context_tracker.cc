#include "incremental/cpu_context_tracker.h"

#include <array>
#include <string_view>

#include "model/event.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

// Linux softirq vectors (include/linux/interrupt.h).
enum Softirq {
  kHi = 0,
  kTimerSoftirq = 1,
  kNetTx = 2,
  kNetRx = 3,
  kBlock = 4,
  kIrqPoll = 5,
  kTasklet = 6,
  kSched = 7,
  kHrtimerSoftirq = 8,
  kRcu = 9
};

bool NameHas(std::string_view name, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) {
    if (name.find(p) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

void CpuContextTracker::SetCurrent(uint16_t id, Utid task, std::string_view comm) {
  CpuContext& c = At(id);
  c.current = task;
  c.known = true;
  c.in_irq_thread = false;
  std::string_view name;
  if (task == kNoTask || !IrqThreadFrame(comm, &c.irq_thread, &name)) return;
  c.in_irq_thread = true;
  c.irq_thread.name = name.empty() ? 0 : StringTable::Global().Intern(name);
}

void CpuContextTracker::Lost(uint16_t id) {
  CpuContext& c = At(id);
  c.current = kNoTask;
  c.known = false;
  c.in_irq_thread = false;
  c.frames.Clear();
}

Utid CpuContextTracker::EnterInterrupt(uint16_t id, const IrqFrame& frame) {
  CpuContext& c = At(id);
  c.frames.Enter(frame);
  return c.frames.size() == 1 ? c.current : kNoTask;
}

Utid CpuContextTracker::ExitInterrupt(uint16_t id, IrqFrame::Kind kind) {
  CpuContext& c = At(id);
  const size_t closed = c.frames.Exit(kind, [&c](const IrqFrame& f) {
    // The enclosing context (e.g. the local timer interrupt) ran that timer.
    if (f.kind == IrqFrame::Kind::kTimer && !c.frames.empty()) c.frames.innermost().timer = true;
  });
  return closed > 0 && c.frames.empty() ? c.current : kNoTask;
}

namespace {
// The frame that stands for what the CPU handles now: its innermost interrupt context, else
// its interrupt thread's, else none.
IrqFrame* Handling(CpuContext& c) {
  if (!c.frames.empty()) return &c.frames.innermost();
  return c.in_irq_thread ? &c.irq_thread : nullptr;
}

// A wake-up from inside `f`: network followed to the packet's sender when it is known.
WaitLink FromInterrupt(const IrqFrame& f) {
  const Leaf leaf =
      ClassifyInterrupt(f, f.name ? StringTable::Global().Get(f.name) : std::string_view());
  if (leaf == Leaf::kNetwork && f.sender_lost) return WaitLink{WaitLink::Type::kUnknown};
  if (leaf == Leaf::kNetwork && f.sender_known) {
    return WaitLink{WaitLink::Type::kPacket, leaf, f.sender, f.send_ts, f.to_server};
  }
  return WaitLink{WaitLink::Type::kLeaf, leaf, kNoTask, 0, leaf == Leaf::kNetwork && f.to_server};
}
}  // namespace

void CpuContextTracker::DiskCompleted(uint16_t id) {
  if (IrqFrame* f = Handling(At(id))) f->disk = true;
}

void CpuContextTracker::PacketReceived(uint16_t id, Utid sender, int64_t send_ts, bool to_server) {
  IrqFrame* f = Handling(At(id));
  if (!f) return;
  f->packet = true;
  f->to_server = to_server;
  f->sender_lost = false;
  f->sender_known = sender != kNoTask;
  if (f->sender_known) {
    f->sender = sender;
    f->send_ts = send_ts;
  }
}

void CpuContextTracker::PacketReceivedUnknown(uint16_t id) {
  IrqFrame* f = Handling(At(id));
  if (!f) return;
  f->packet = true;
  f->to_server = false;
  f->sender_known = false;
  f->sender_lost = true;
}

WaitLink CpuContextTracker::Waker(uint16_t id, uint8_t ctx) const {
  const CpuContext& c = At(id);
  if (!c.frames.empty()) return FromInterrupt(c.frames.innermost());
  // perf marks interrupt context in every event even when entry events are missing.
  if (InterruptByFlags(ctx)) return WaitLink{WaitLink::Type::kLeaf, Leaf::kIrq};
  // An interrupt thread's wake-up is the interrupt's (the packet it received...), not the
  // thread's own work.
  if (c.in_irq_thread && c.current != kNoTask) return FromInterrupt(c.irq_thread);
  if (!c.known) return WaitLink{WaitLink::Type::kUnknown};
  // The idle task only wakes others from interrupts whose events were not traced.
  if (c.current == kNoTask) return WaitLink{WaitLink::Type::kLeaf, Leaf::kIrq};
  return WaitLink{WaitLink::Type::kTask, Leaf::kBlocked, c.current};
}

Utid CpuContextTracker::PacketSender(uint16_t id, uint8_t ctx) const {
  const CpuContext& c = At(id);
  // perf's softirq bit means "serving a softirq" (an ACK sent by the stack), not merely
  // bottom halves disabled (0x80 on recent kernels), so it also rules out a task sender.
  const bool task_context = c.frames.empty() && !InterruptByFlags(ctx);
  return task_context && c.known ? c.current : kNoTask;
}

bool IrqThreadFrame(std::string_view comm, IrqFrame* frame, std::string_view* name) {
  *frame = IrqFrame{};
  *name = {};
  if (comm.starts_with("napi/")) {
    frame->kind = IrqFrame::Kind::kSoftIrq;
    frame->number = kNetRx;
    return true;
  }
  if (!comm.starts_with("irq/")) return false;
  frame->kind = IrqFrame::Kind::kHardIrq;
  const size_t dash = comm.find('-');
  *name = dash == std::string_view::npos ? std::string_view() : comm.substr(dash + 1);
  return true;
}

Leaf ClassifyInterrupt(const IrqFrame& f, std::string_view irq_name) {
  // What happened inside the context decides first.
  if (f.packet) return Leaf::kNetwork;
  if (f.disk) return Leaf::kDisk;
  if (f.timer) return Leaf::kTimer;
  switch (f.kind) {
    case IrqFrame::Kind::kTimer:
      return Leaf::kTimer;
    case IrqFrame::Kind::kSoftIrq:
      switch (f.number) {
        case kTimerSoftirq:
        case kHrtimerSoftirq:
          return Leaf::kTimer;
        case kNetTx:
        case kNetRx:
          return Leaf::kNetwork;
        case kBlock:
        case kIrqPoll:
          return Leaf::kDisk;
        default:
          return Leaf::kIrq;
      }
    case IrqFrame::Kind::kIpi:
      return f.number == kIpiLocalTimer ? Leaf::kTimer : Leaf::kIpi;
    case IrqFrame::Kind::kHardIrq:
      // Device names as drivers register them (/proc/interrupts).
      if (NameHas(irq_name,
                  {"nvme", "ahci", "ata", "sd", "mmc", "blk", "-req", "scsi", "megasas", "mpt"})) {
        return Leaf::kDisk;
      }
      if (NameHas(irq_name, {"eth", "enp", "eno", "ens", "wlan", "wlp", "-input", "-output", "mlx",
                             "ixgbe", "i40e", "e1000", "virtio0", "-rx", "-tx", "TxRx"})) {
        return Leaf::kNetwork;
      }
      if (NameHas(irq_name, {"i8042", "keyboard", "kbd", "mouse", "hid", "input", "touch"})) {
        return Leaf::kUserInput;
      }
      if (NameHas(irq_name, {"timer", "hpet", "rtc"})) return Leaf::kTimer;
      return Leaf::kIrq;
    case IrqFrame::Kind::kFromFlags:
      return Leaf::kIrq;
  }
  return Leaf::kIrq;
}

}  // namespace waitpath
