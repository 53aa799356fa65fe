// One upstream port of the merging sink: its message iterator and the messages it handed over
// that are not consumed yet (babeltrace2 gives them in arrays); the first is the port's head.
#pragma once

#include <babeltrace2/babeltrace.h>

#include <cstdint>
#include <utility>

#include "readers/bt_ref.h"

namespace waitpath {

class PortCursor {
 public:
  enum class Pull : uint8_t { kMessage, kEnded, kAgain, kError };
  // What the head is; it takes part in the merge at head_ts.
  enum class Head : uint8_t { kEvent, kInactivity, kDiscarded };

  // Takes the reference to `iterator`. `index` is the port's (and its default CPU's) number.
  PortCursor(uint16_t index, bt_message_iterator* iterator) : index_(index), iterator_(iterator) {}
  PortCursor(PortCursor&& other) noexcept
      : head(other.head),
        head_ts(other.head_ts),
        stream(other.stream),
        cpu(other.cpu),
        has_clock(other.has_clock),
        packets(other.packets),
        events(other.events),
        index_(other.index_),
        iterator_(std::move(other.iterator_)),
        messages_(other.messages_),
        count_(std::exchange(other.count_, 0)),
        pos_(std::exchange(other.pos_, 0)) {}
  PortCursor(const PortCursor&) = delete;
  PortCursor& operator=(const PortCursor&) = delete;
  PortCursor& operator=(PortCursor&&) = delete;
  // Puts the messages not consumed (before the iterator goes).
  ~PortCursor() {
    for (uint64_t i = pos_; i < count_; ++i) bt_message_put_ref(messages_[i]);
  }

  uint16_t index() const { return index_; }

  // The first message not consumed yet, asking upstream for more when there is none.
  Pull Front(const bt_message** message) {
    if (pos_ == count_) {
      pos_ = count_ = 0;
      switch (bt_message_iterator_next(iterator_.get(), &messages_, &count_)) {
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
          break;
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
          return Pull::kEnded;
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
          return Pull::kAgain;
        default:
          return Pull::kError;
      }
    }
    *message = messages_[pos_];
    return Pull::kMessage;
  }
  // The first message after Front() returned kMessage.
  const bt_message* front() const { return messages_[pos_]; }
  // Done with the first message: its reference is put.
  void Pop() { bt_message_put_ref(messages_[pos_++]); }

  Head head = Head::kEvent;
  int64_t head_ts = 0;
  // The last stream seen on this port (one stream per port for src.ctf.fs) and what it says.
  const bt_stream* stream = nullptr;
  uint16_t cpu = 0;
  bool has_clock = true;
  uint64_t packets = 0;  // packet beginnings seen
  uint64_t events = 0;   // events merged

 private:
  uint16_t index_;
  MessageIteratorRef iterator_;
  bt_message_array_const messages_ = nullptr;
  uint64_t count_ = 0, pos_ = 0;
};

}  // namespace waitpath
