#include "readers/event_decoder.h"

#include <initializer_list>
#include <string_view>

#include "model/event_views.h"
#include "model/replay_format.h"

namespace waitpath {
namespace {

using Names = std::initializer_list<std::string_view>;

bool IsStruct(const bt_field_class* fc) {
  return bt_field_class_get_type(fc) == BT_FIELD_CLASS_TYPE_STRUCTURE;
}
bool IsVariant(const bt_field_class* fc) {
  return bt_field_class_type_is(bt_field_class_get_type(fc), BT_FIELD_CLASS_TYPE_VARIANT);
}

std::string_view NameOf(const char* name) {
  return name ? name : "";
}

// Finds member or option `name` of `fc`; fills `step` and returns its class.
const bt_field_class* Child(const bt_field_class* fc, std::string_view name, FieldStep* step) {
  if (IsStruct(fc)) {
    const uint64_t n = bt_field_class_structure_get_member_count(fc);
    for (uint64_t i = 0; i < n; ++i) {
      const bt_field_class_structure_member* m =
          bt_field_class_structure_borrow_member_by_index_const(fc, i);
      if (SameFieldName(NameOf(bt_field_class_structure_member_get_name(m)), name)) {
        *step = {static_cast<uint16_t>(i), false};
        return bt_field_class_structure_member_borrow_field_class_const(m);
      }
    }
  } else if (IsVariant(fc)) {
    const uint64_t n = bt_field_class_variant_get_option_count(fc);
    for (uint64_t i = 0; i < n; ++i) {
      const bt_field_class_variant_option* o =
          bt_field_class_variant_borrow_option_by_index_const(fc, i);
      if (SameFieldName(NameOf(bt_field_class_variant_option_get_name(o)), name)) {
        *step = {static_cast<uint16_t>(i), true};
        return bt_field_class_variant_option_borrow_field_class_const(o);
      }
    }
  }
  return nullptr;
}

// Resolves a path of member/option names below `root_fc`; invalid FieldRef if absent.
FieldRef ResolvePath(const bt_field_class* root_fc, FieldRef::Root root, Names path) {
  FieldRef ref;
  if (!root_fc || path.size() > ref.steps.size()) return ref;
  const bt_field_class* fc = root_fc;
  uint8_t depth = 0;
  for (std::string_view name : path) {
    fc = Child(fc, name, &ref.steps[depth]);
    if (!fc) return FieldRef{};
    ++depth;
  }
  const bt_field_class_type type = bt_field_class_get_type(fc);
  if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
    ref.leaf = FieldRef::Leaf::kSigned;
  } else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
    ref.leaf = FieldRef::Leaf::kUnsigned;
  } else if (type == BT_FIELD_CLASS_TYPE_STRING) {
    ref.leaf = FieldRef::Leaf::kString;
  } else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_ARRAY)) {
    ref.leaf = FieldRef::Leaf::kAddress;
  } else {
    return FieldRef{};
  }
  ref.root = root;
  ref.depth = depth;
  return ref;
}

const bt_field* Walk(const bt_event* event, const FieldRef& ref) {
  const bt_field* f = nullptr;
  switch (ref.root) {
    case FieldRef::Root::kPayload:
      f = bt_event_borrow_payload_field_const(event);
      break;
    case FieldRef::Root::kCommonContext:
      f = bt_event_borrow_common_context_field_const(event);
      break;
    case FieldRef::Root::kSpecificContext:
      f = bt_event_borrow_specific_context_field_const(event);
      break;
    case FieldRef::Root::kNone:
      return nullptr;
  }
  for (uint8_t i = 0; f && i < ref.depth; ++i) {
    const FieldStep& s = ref.steps[i];
    if (s.variant) {
      if (bt_field_variant_get_selected_option_index(f) != s.index) return nullptr;
      f = bt_field_variant_borrow_selected_option_field_const(f);
    } else {
      f = bt_field_structure_borrow_member_field_by_index_const(f, s.index);
    }
  }
  return f;
}

int64_t ReadInt(const bt_event* event, const FieldRef& ref, int64_t fallback) {
  const bt_field* f = Walk(event, ref);
  if (!f) return fallback;
  switch (ref.leaf) {
    case FieldRef::Leaf::kSigned:
      return bt_field_integer_signed_get_value(f);
    case FieldRef::Leaf::kUnsigned:
      return static_cast<int64_t>(bt_field_integer_unsigned_get_value(f));
    default:
      return fallback;
  }
}

// IPv4 addresses are 4-byte arrays in LTTng >= 2.9 (network order, first byte most
// significant); some writers use a plain 32-bit integer.
uint32_t ReadAddress(const bt_event* event, const FieldRef& ref) {
  const bt_field* f = Walk(event, ref);
  if (!f) return 0;
  if (ref.leaf != FieldRef::Leaf::kAddress) return static_cast<uint32_t>(ReadInt(event, ref, 0));
  const uint64_t n = bt_field_array_get_length(f);
  uint32_t v = 0;
  for (uint64_t i = 0; i < n && i < 4; ++i) {
    const bt_field* e = bt_field_array_borrow_element_field_by_index_const(f, i);
    v = (v << 8) | static_cast<uint32_t>(bt_field_integer_unsigned_get_value(e) & 0xff);
  }
  return v;
}

// False when a member is missing or of another type: such a class is not ours (or from a
// future format) and is skipped like any unknown class.
bool ResolveReplayLayout(const bt_field_class* payload, ReplayLayout* layout) {
  if (!payload || !IsStruct(payload)) return false;
  for (int f = 0; f < kReplayFieldCount; ++f) {
    FieldStep step{};
    const bt_field_class* fc = Child(payload, kReplayFieldNames[f], &step);
    if (!fc && ReplayFieldIsOptional(f)) {
      layout->index[f] = ReplayLayout::kAbsent;
      continue;
    }
    if (!fc) return false;
    const bt_field_class_type type = bt_field_class_get_type(fc);
    const bool want_string = ReplayFieldIsString(f);
    if (want_string != (type == BT_FIELD_CLASS_TYPE_STRING)) return false;
    if (!want_string && !bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_INTEGER)) return false;
    layout->index[f] = step.index;
    layout->is_signed[f] = bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER);
  }
  return true;
}

}  // namespace

void EventDecoder::NoteStreamClass(const bt_stream_class* stream_class) {
  for (const bt_stream_class* seen : seen_stream_classes_) {
    if (seen == stream_class) return;
  }
  seen_stream_classes_.push_back(stream_class);
  const uint64_t n = bt_stream_class_get_event_class_count(stream_class);
  for (uint64_t i = 0; i < n; ++i) {
    const char* name =
        bt_event_class_get_name(bt_stream_class_borrow_event_class_by_index_const(stream_class, i));
    if (name) dialect_ |= DialectOfName(name);
  }
}

const EventDecoder::ClassInfo& EventDecoder::Resolve(const bt_event_class* event_class) {
  NoteStreamClass(bt_event_class_borrow_stream_class_const(event_class));
  ClassInfo& info = classes_[event_class];
  const char* cname = bt_event_class_get_name(event_class);
  const std::string_view name(cname ? cname : "");

  if (name == kReplayEventName) {
    info.known = info.replay = ResolveReplayLayout(
        bt_event_class_borrow_payload_field_class_const(event_class), &info.replay_layout);
    if (info.known) dialect_ |= kDialectReplayed;
    return info;
  }
  EventKind kind = EventKind::kCount;
  int32_t ipi_type = 0;
  info.known = KindOfName(name, &kind, &ipi_type);
  if (!info.known) return info;

  const bt_field_class* payload = bt_event_class_borrow_payload_field_class_const(event_class);
  const bt_field_class* common = bt_stream_class_borrow_event_common_context_field_class_const(
      bt_event_class_borrow_stream_class_const(event_class));
  auto find = [&](FieldRoot root, FieldNames path) {
    return root == FieldRoot::kPayload ? ResolvePath(payload, FieldRef::Root::kPayload, path)
                                       : ResolvePath(common, FieldRef::Root::kCommonContext, path);
  };
  dialect_ |= ResolveClassFields<FieldRef>(name, kind, ipi_type, find, &info);
  return info;
}

// Reads an event's fields for BuildEvent (model/event_schema.h).
class EventDecoder::FieldReader {
 public:
  FieldReader(const bt_event* event, LocalInterner& strings) : event_(event), strings_(strings) {}
  int64_t Int(const FieldRef& ref, int64_t fallback) const {
    return ReadInt(event_, ref, fallback);
  }
  int32_t Str(const FieldRef& ref) const {
    const bt_field* f = Walk(event_, ref);
    if (!f) return -1;
    return static_cast<int32_t>(strings_.Intern(bt_field_string_get_value(f)));
  }
  bool Has(const FieldRef& ref) const { return Walk(event_, ref) != nullptr; }
  uint32_t Address(const FieldRef& ref) const { return ReadAddress(event_, ref); }

 private:
  const bt_event* event_;
  LocalInterner& strings_;
};

bool EventDecoder::Decode(const bt_event* event, Event& out, std::vector<PacketKey>& packets,
                          std::vector<SpanIds>* spans) {
  const bt_event_class* ec = bt_event_borrow_class_const(event);
  if (ec != last_class_) {
    auto it = classes_.find(ec);
    last_info_ = it != classes_.end() ? &it->second : &Resolve(ec);
    last_class_ = ec;
  }
  const ClassInfo& info = *last_info_;
  if (!info.known) return false;
  if (info.replay) return DecodeReplayed(event, info.replay_layout, out, packets, spans);

  FieldReader read(event, strings_);
  BuildEvent(info, read, dialect_, out, packets, spans);
  return true;
}

// A replayed event already is an Event: copy it over, interning its names and re-creating its
// packet key in this batch's table.
bool EventDecoder::DecodeReplayed(const bt_event* event, const ReplayLayout& layout, Event& out,
                                  std::vector<PacketKey>& packets, std::vector<SpanIds>* spans) {
  const bt_field* payload = bt_event_borrow_payload_field_const(event);
  auto member = [&](ReplayField f) {
    return bt_field_structure_borrow_member_field_by_index_const(
        payload, layout.index[static_cast<size_t>(f)]);
  };
  auto get = [&](ReplayField f) -> int64_t {
    if (layout.index[static_cast<size_t>(f)] == ReplayLayout::kAbsent) return 0;
    const bt_field* m = member(f);
    return layout.is_signed[static_cast<size_t>(f)]
               ? bt_field_integer_signed_get_value(m)
               : static_cast<int64_t>(bt_field_integer_unsigned_get_value(m));
  };
  auto str = [&](ReplayField f) {
    return static_cast<int32_t>(strings_.Intern(bt_field_string_get_value(member(f))));
  };
  return BuildReplayedEvent(get, str, out, packets, &dialect_, spans);
}

}  // namespace waitpath
