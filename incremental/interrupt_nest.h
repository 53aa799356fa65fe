// The interrupt contexts open on one CPU, and the one rule by which an exit closes them. The
// engine's per-CPU context (`CpuContextTracker`) and the timeline's per-CPU slices
// (`CpuActivity`) keep one each, so that both see the same contexts open at every event.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace waitpath {

// Hard irqs, softirqs, hrtimers and IPIs nest on a CPU (a softirq under a hard irq's exit, an
// hrtimer inside the local timer interrupt), so the open ones form a stack, innermost last.
// `Frame` is what is kept of each context; its member `kind` is compared with an exit's kind.
template <typename Frame>
class InterruptNest {
 public:
  void Enter(const Frame& frame) { frames_.push_back(frame); }

  // An exit of `kind` closes the innermost open context of that kind, and those inside it:
  // their exits were lost (a context returns only after those that interrupted it), and
  // popping the innermost whatever its kind would close the wrong context and leave the
  // exiting one open. An exit with no open context of its kind (its entry was before the trace
  // start or a loss) closes nothing. `on_close(frame)` is called for each context closed, innermost
  // first, once it is off the nest (innermost() is then the context around it, if any). Returns how
  // many were closed.
  template <typename Kind, typename OnClose>
  size_t Exit(Kind kind, OnClose&& on_close) {
    const auto it = std::find_if(frames_.rbegin(), frames_.rend(),
                                 [kind](const Frame& f) { return f.kind == kind; });
    if (it == frames_.rend()) return 0;
    const size_t keep = static_cast<size_t>(frames_.rend() - it) - 1;
    const size_t closed = frames_.size() - keep;
    while (frames_.size() > keep) {
      const Frame frame = std::move(frames_.back());
      frames_.pop_back();
      on_close(frame);
    }
    return closed;
  }

  // Every context is over without its exit (a switch, a loss): nothing is told.
  void Clear() { frames_.clear(); }

  bool empty() const { return frames_.empty(); }
  size_t size() const { return frames_.size(); }
  Frame& innermost() {
    assert(!frames_.empty());
    return frames_.back();
  }
  const Frame& innermost() const {
    assert(!frames_.empty());
    return frames_.back();
  }
  // The open contexts, outermost first.
  std::span<const Frame> open() const { return frames_; }

 private:
  std::vector<Frame> frames_;  // innermost last
};

}  // namespace waitpath
