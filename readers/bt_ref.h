// Owning references to babeltrace2 objects: one put (bt_*_put_ref) when the owner goes away.
#pragma once

#include <babeltrace2/babeltrace.h>

#include <utility>

namespace waitpath {

// Holds one reference to a `T` and gives it back with `Put` on destruction or reset. Move-only.
template <typename T, void (*Put)(const T*)>
class BtRef {
 public:
  BtRef() = default;
  explicit BtRef(T* object) : object_(object) {}
  BtRef(BtRef&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  BtRef& operator=(BtRef&& other) noexcept {
    if (this != &other) reset(std::exchange(other.object_, nullptr));
    return *this;
  }
  BtRef(const BtRef&) = delete;
  BtRef& operator=(const BtRef&) = delete;
  ~BtRef() { reset(); }

  T* get() const { return object_; }
  explicit operator bool() const { return object_ != nullptr; }
  // For the C API's out-parameters (`&ref.out()`): the current reference is put first.
  T*& out() {
    reset();
    return object_;
  }
  void reset(T* object = nullptr) {
    if (object_) Put(object_);
    object_ = object;
  }

 private:
  T* object_ = nullptr;
};

using GraphRef = BtRef<bt_graph, bt_graph_put_ref>;
using SinkClassRef = BtRef<bt_component_class_sink, bt_component_class_sink_put_ref>;
using PluginRef = BtRef<const bt_plugin, bt_plugin_put_ref>;
using MessageIteratorRef = BtRef<bt_message_iterator, bt_message_iterator_put_ref>;
using ValueRef = BtRef<bt_value, bt_value_put_ref>;

}  // namespace waitpath
