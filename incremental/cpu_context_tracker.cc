#include "incremental/cpu_context_tracker.h"

#include <array>
#include <string_view>

#include "live/event.h"

namespace waitpath {
namespace {

// Linux softirq vectors (include/linux/interrupt.h).
enum Softirq { kHi = 0, kTimerSoftirq = 1, kNetTx = 2, kNetRx = 3, kBlock = 4, kIrqPoll = 5, kTasklet = 6,
               kSched = 7, kHrtimerSoftirq = 8, kRcu = 9 };

bool NameHas(std::string_view name, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) {
    if (name.find(p) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

bool IrqThreadFrame(std::string_view comm, IrqFrame* frame, std::string_view* name) {
  *frame = IrqFrame{};
  *name = {};
  if (comm.starts_with("napi/")) {
    frame->type = IrqFrame::Type::kSoftIrq;
    frame->number = kNetRx;
    return true;
  }
  if (!comm.starts_with("irq/")) return false;
  frame->type = IrqFrame::Type::kHardIrq;
  const size_t dash = comm.find('-');
  *name = dash == std::string_view::npos ? std::string_view() : comm.substr(dash + 1);
  return true;
}

Leaf ClassifyInterrupt(const IrqFrame& f, std::string_view irq_name) {
  // What happened inside the context decides first.
  if (f.packet) return Leaf::kNetwork;
  if (f.disk) return Leaf::kDisk;
  if (f.timer) return Leaf::kTimer;
  switch (f.type) {
    case IrqFrame::Type::kTimer:
      return Leaf::kTimer;
    case IrqFrame::Type::kSoftIrq:
      switch (f.number) {
        case kTimerSoftirq:
        case kHrtimerSoftirq: return Leaf::kTimer;
        case kNetTx:
        case kNetRx: return Leaf::kNetwork;
        case kBlock:
        case kIrqPoll: return Leaf::kDisk;
        default: return Leaf::kIrq;
      }
    case IrqFrame::Type::kIpi:
      return f.number == kIpiLocalTimer ? Leaf::kTimer : Leaf::kIpi;
    case IrqFrame::Type::kHardIrq:
      // Device names as drivers register them (/proc/interrupts).
      if (NameHas(irq_name, {"nvme", "ahci", "ata", "sd", "mmc", "blk", "-req", "scsi", "megasas", "mpt"})) {
        return Leaf::kDisk;
      }
      if (NameHas(irq_name, {"eth", "enp", "eno", "ens", "wlan", "wlp", "-input", "-output", "mlx", "ixgbe",
                             "i40e", "e1000", "virtio0", "-rx", "-tx", "TxRx"})) {
        return Leaf::kNetwork;
      }
      if (NameHas(irq_name, {"i8042", "keyboard", "kbd", "mouse", "hid", "input", "touch"})) {
        return Leaf::kUserInput;
      }
      if (NameHas(irq_name, {"timer", "hpet", "rtc"})) return Leaf::kTimer;
      return Leaf::kIrq;
    case IrqFrame::Type::kFromFlags:
      return Leaf::kIrq;
  }
  return Leaf::kIrq;
}

}  // namespace waitpath
