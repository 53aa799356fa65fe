#include "ctf/decode_plan.h"

#include <algorithm>

namespace waitpath::ctf {
namespace {

constexpr const char* kScopePrefix[] = {"trace.packet.header", "stream.packet.context",
                                        "stream.event.header", "stream.event.context",
                                        "event.context",       "event.fields"};

std::string_view Stripped(std::string_view name) {
  return !name.empty() && name.front() == '_' ? name.substr(1) : name;
}

// The largest power of two dividing n (n > 0), capped.
uint64_t LowBit(uint64_t n) {
  return n == 0 ? (uint64_t{1} << 32) : (n & (~n + 1));
}

}  // namespace

int32_t DecodePlan::NewProgram() {
  programs_.emplace_back();
  return static_cast<int32_t>(programs_.size() - 1);
}

int32_t DecodePlan::NewSlot(bool wanted) {
  wanted_.push_back(wanted);
  return slots_++;
}

int32_t DecodePlan::Compile(TypeId type, Scope scope, bool keep_all) {
  if (type < 0) return -1;
  const int32_t program = NewProgram();
  Context cx{scope, program, keep_all, {}, {}, {}, 0, 0};
  Emit(cx, type, program, kScopePrefix[static_cast<int>(scope)]);
  return program;
}

int32_t DecodePlan::Lookup(Scope scope, const std::vector<std::string>& path, bool by_members,
                           TypeId* type) {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->scope_kind != static_cast<uint8_t>(scope)) continue;
    if (by_members) {
      // CTF 2 locations name integers (a length, a selector).
      if ((it->leaf != FieldHandle::kSigned && it->leaf != FieldHandle::kUnsigned) ||
          it->members != path) {
        continue;
      }
    } else if (it->path != path) {
      continue;
    }
    *type = it->type;
    wanted_[static_cast<size_t>(it->slot)] = true;
    return it->slot;
  }
  return -1;
}

int32_t DecodePlan::Resolve(const Context& cx, const FieldLocation& loc, const std::string& key,
                            TypeId* type) {
  if (loc.path.empty()) return -1;
  using Origin = FieldLocation::Origin;
  // Origins after kRelative are the scopes, in order.
  auto scope_of = [](Origin o) { return static_cast<Scope>(static_cast<int>(o) - 1); };
  if (loc.syntax == FieldLocation::Syntax::kTsdl) {
    std::vector<std::string> path;
    for (const std::optional<std::string>& step : loc.path) path.push_back(step.value_or(""));
    if (loc.origin != Origin::kRelative) return Lookup(scope_of(loc.origin), path, false, type);
    // Relative: the innermost enclosing struct that declared its first name, then outwards.
    for (auto f = cx.frames.rbegin(); f != cx.frames.rend(); ++f) {
      for (const auto& [name, unused] : f->members) {
        if (name != path.front()) continue;
        std::vector<std::string> full = f->path;
        full.insert(full.end(), path.begin(), path.end());
        return Lookup(cx.scope, full, false, type);
      }
    }
    for (int s = 0; s <= static_cast<int>(Scope::kPayload); ++s) {
      const int32_t slot = Lookup(static_cast<Scope>(s), path, false, type);
      if (slot >= 0) return slot;
    }
    return -1;
  }
  // CTF 2: from the scope's root, or from the structure that holds the field, null steps up.
  const Scope scope = loc.origin == Origin::kRelative ? cx.scope : scope_of(loc.origin);
  std::vector<std::string> target;
  if (loc.origin == Origin::kRelative && !cx.frames.empty()) target = cx.frames.back().members_path;
  for (const std::optional<std::string>& step : loc.path) {
    if (step) {
      target.push_back(*step);
    } else if (target.empty()) {
      error_ = key + ": field location '" + loc.text + "' goes above its scope's root";
      return -1;
    } else {
      target.pop_back();
    }
  }
  const int32_t slot = Lookup(scope, target, true, type);
  if (slot < 0) return -1;
  // A sibling in the structure being compiled (LTTng 2.16's network events: each option of
  // `network_header` declares `transport_header_type` and, after it, the variant it selects):
  // the field decoded is the one just placed in this very structure, the latest entry with
  // that place, whatever other options declare.
  if (loc.origin == Origin::kRelative && loc.path.size() == 1 && loc.path.front() &&
      !cx.frames.empty()) {
    for (const auto& [name, unused] : cx.frames.back().members) {
      if (name == *loc.path.front()) return slot;
    }
  }
  // Several fields of one scope at that place (options of a variant, each with its own length
  // field): the value is whichever was decoded, which one slot cannot hold.
  int32_t root = -1;
  for (auto it = entries_.rbegin(); it != entries_.rend() && root < 0; ++it) {
    if (it->slot == slot) root = it->scope;
  }
  size_t matches = 0;
  for (const FieldEntry& e : entries_) {
    if (e.scope == root && (e.leaf == FieldHandle::kSigned || e.leaf == FieldHandle::kUnsigned) &&
        e.members == target) {
      ++matches;
    }
  }
  if (matches > 1) {
    error_ = key + ": field location '" + loc.text + "' names " + std::to_string(matches) +
             " possible fields (not decoded natively)";
    return -1;
  }
  return slot;
}

void DecodePlan::VariantCases(const Type& t, const Type& selector,
                              const std::vector<int32_t>& programs, VariantTable* table) {
  table->is_signed = selector.is_signed;
  if (t.ref.syntax == FieldLocation::Syntax::kTsdl) {
    // TSDL: the tag's enum labels name the options.
    for (size_t i = 0; i < t.members.size(); ++i) {
      const std::string& option = t.members[i].first;
      for (const EnumMapping& m : selector.mappings) {
        if (m.label == option || Stripped(m.label) == Stripped(option)) {
          table->cases.push_back(
              VariantCase{static_cast<uint64_t>(m.lo), static_cast<uint64_t>(m.hi), programs[i]});
        }
      }
    }
    return;
  }
  if (t.optional && t.selector_ranges.empty()) {
    // A boolean selector: enabled when not 0.
    table->is_signed = false;
    table->cases.push_back(VariantCase{1, ~uint64_t{0}, programs[0]});
    table->cases.push_back(VariantCase{0, 0, NewProgram()});
    return;
  }
  for (const SelectorRange& r : t.selector_ranges)
    table->cases.push_back(VariantCase{r.lo, r.hi, programs[r.option]});
  if (!t.optional) return;
  // Disabled: every other value reads nothing. The gaps between the ranges, in the selector's
  // order (signed values moved into unsigned order by flipping their sign bit).
  const uint64_t flip = selector.is_signed ? uint64_t{1} << 63 : 0;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const SelectorRange& r : t.selector_ranges) ranges.emplace_back(r.lo ^ flip, r.hi ^ flip);
  std::sort(ranges.begin(), ranges.end());
  const int32_t nothing = NewProgram();
  uint64_t next = 0;
  for (const auto& [lo, hi] : ranges) {
    if (lo > next) table->cases.push_back(VariantCase{next ^ flip, (lo - 1) ^ flip, nothing});
    if (hi == ~uint64_t{0}) return;
    next = std::max(next, hi + 1);
  }
  table->cases.push_back(VariantCase{next ^ flip, ~uint64_t{0} ^ flip, nothing});
}

void DecodePlan::Emit(Context& cx, TypeId type_id, int32_t program, const std::string& key) {
  if (!error_.empty()) return;
  if (++cx.depth > 64) {
    error_ = key + ": types nested too deep";
    return;
  }
  struct Leave {
    uint32_t& d;
    ~Leave() { --d; }
  } leave{cx.depth};
  const Type& t = meta_.type(type_id);
  auto out = [&]() -> std::vector<Op>& { return programs_[static_cast<size_t>(program)]; };
  auto align = [&](uint32_t bits) {
    if (bits > 1) {
      Op op;
      op.code = Op::kAlign;
      op.arg = bits;
      out().push_back(op);
    }
  };
  auto register_field = [&](int32_t slot, FieldHandle::Leaf leaf) {
    entries_.push_back(FieldEntry{cx.root, static_cast<uint8_t>(cx.scope), key, cx.path, cx.members,
                                  cx.in_array > 0, slot, type_id, leaf});
  };
  switch (t.kind) {
    case Type::kInt: {
      Op op;
      op.code = Op::kInt;
      op.size = static_cast<uint8_t>(t.size);
      op.arg = t.size >= 64 ? ~uint64_t{0} : (uint64_t{1} << t.size) - 1;
      const uint8_t order = t.byte_order ? t.byte_order : meta_.byte_order;
      op.flags = (t.is_signed ? Op::kSigned : 0) | (order == 2 ? Op::kBig : 0);
      std::string clock = t.clock;
      // babeltrace2 maps a packet's or an event's timestamp to the trace's only clock when the
      // metadata does not say, and never updates the clock from the packet's end (it is not an
      // event's time). Roles say which fields those are (TSDL: timestamp_begin, timestamp and
      // timestamp_end, by name).
      const bool header = cx.scope == Scope::kEventHeader || cx.scope == Scope::kPacketContext;
      if (clock.empty() && meta_.clocks.size() == 1 && header &&
          t.Has(Role::kDefaultClockTimestamp)) {
        clock = meta_.clocks[0].name;
      }
      if (cx.scope == Scope::kPacketContext && t.Has(Role::kPacketEndClockTimestamp)) clock.clear();
      if (!clock.empty()) {
        op.flags |= Op::kClock;
        if (clock_.empty()) clock_ = clock;
      }
      if (cx.scope == Scope::kEventHeader && t.Has(Role::kEventRecordClassId) && cx.in_array == 0)
        op.flags |= Op::kEventId;
      op.slot = NewSlot(cx.keep_all);
      register_field(op.slot, t.is_signed ? FieldHandle::kSigned : FieldHandle::kUnsigned);
      align(t.align);
      out().push_back(op);
      break;
    }
    case Type::kFloat: {
      align(t.align);
      Op op;
      if (dump_) {
        // Its bits, as an unsigned integer of its size and byte order (DumpEverything).
        op.code = Op::kInt;
        op.size = static_cast<uint8_t>(t.size);
        op.arg = t.size >= 64 ? ~uint64_t{0} : (uint64_t{1} << t.size) - 1;
        const uint8_t order = t.byte_order ? t.byte_order : meta_.byte_order;
        op.flags = order == 2 ? Op::kBig : 0;
        op.slot = NewSlot(cx.keep_all);
        register_field(op.slot, FieldHandle::kUnsigned);
      } else {
        op.code = Op::kSkip;
        op.arg = t.size;
      }
      out().push_back(op);
      break;
    }
    case Type::kString: {
      align(8);
      Op op;
      op.code = Op::kString;
      op.slot = NewSlot(cx.keep_all);
      register_field(op.slot, FieldHandle::kString);
      out().push_back(op);
      break;
    }
    case Type::kStruct: {
      align(t.align);
      cx.frames.push_back(Frame{cx.path, cx.members, {}});
      for (const auto& [member, member_type] : t.members) {
        cx.path.push_back(member);
        cx.members.push_back(member);
        Emit(cx, member_type, program, key + "." + member);
        cx.path.pop_back();
        cx.members.pop_back();
        cx.frames.back().members.emplace_back(member, member_type);
      }
      cx.frames.pop_back();
      break;
    }
    case Type::kVariant: {
      TypeId tag_type = -1;
      const int32_t tag = Resolve(cx, t.ref, key, &tag_type);
      if (!error_.empty()) return;
      if (t.ref.syntax == FieldLocation::Syntax::kCtf2) {
        if (tag < 0 || meta_.type(tag_type).kind != Type::kInt) {
          error_ = key + ": selector field location '" + t.ref.text +
                   "' is not an integer decoded before it";
          return;
        }
      } else if (tag < 0 || !meta_.type(tag_type).is_enum) {
        error_ = key + ": variant tag '" + t.ref.text + "' is not an enum declared before it";
        return;
      }
      std::vector<int32_t> options;
      for (const auto& [option, option_type] : t.members) {
        const int32_t sub = NewProgram();
        cx.path.push_back(option);
        Emit(cx, option_type, sub, key + "." + option);
        cx.path.pop_back();
        options.push_back(sub);
      }
      VariantTable table;
      table.options = options;
      VariantCases(t, meta_.type(tag_type), options, &table);
      variants_.push_back(std::move(table));
      Op op;
      op.code = Op::kVariant;
      op.count = tag;
      op.sub = static_cast<int32_t>(variants_.size() - 1);
      out().push_back(op);
      break;
    }
    case Type::kArray:
    case Type::kSequence: {
      Op op;
      if (t.kind == Type::kArray) {
        op.arg = t.length;
      } else {
        TypeId len_type = -1;
        op.count = Resolve(cx, t.ref, key, &len_type);
        if (!error_.empty()) return;
        if (op.count < 0 || meta_.type(len_type).kind != Type::kInt) {
          error_ = t.ref.syntax == FieldLocation::Syntax::kCtf2
                       ? key + ": length field location '" + t.ref.text +
                             "' is not an integer decoded before it"
                       : key + ": sequence length '" + t.ref.text +
                             "' is not an integer declared before it";
          return;
        }
      }
      const Type& e = meta_.type(t.element);
      if (e.kind == Type::kInt && e.text && e.size == 8 && e.align == 8) {
        // babeltrace2 reads an array of 8-bit characters as a string (up to its first NUL).
        align(8);
        op.code = Op::kText;
        op.slot = NewSlot(cx.keep_all);
        register_field(op.slot, FieldHandle::kString);
        out().push_back(op);
        break;
      }
      align(t.align);
      if (e.kind == Type::kInt && e.size % e.align == 0 && !dump_) {
        op.code = Op::kAddress;
        op.size = static_cast<uint8_t>(e.size);
        const uint8_t order = e.byte_order ? e.byte_order : meta_.byte_order;
        op.flags = (e.is_signed ? Op::kSigned : 0) | (order == 2 ? Op::kBig : 0);
        op.slot = NewSlot(false);
        register_field(op.slot, FieldHandle::kAddress);
        out().push_back(op);
        break;
      }
      op.code = Op::kArray;
      op.sub = NewProgram();
      ++cx.in_array;
      Emit(cx, t.element, op.sub, key);
      --cx.in_array;
      // Elements of other types: not Event fields (Find skips what is inside arrays).
      out().push_back(op);
      break;
    }
  }
}

FieldHandle DecodePlan::Find(int32_t program, std::initializer_list<std::string_view> path) {
  return Find(program, std::vector<std::string_view>(path));
}

FieldHandle DecodePlan::Find(int32_t program, const std::vector<std::string_view>& path) {
  if (program < 0) return {};
  for (const FieldEntry& e : entries_) {
    if (e.scope != program || e.in_array || e.path.size() != path.size()) continue;
    bool same = true;
    for (size_t i = 0; i < path.size() && same; ++i)
      same = SameFieldName(Stripped(e.path[i]), path[i]);
    if (!same) continue;
    wanted_[static_cast<size_t>(e.slot)] = true;
    return FieldHandle{e.slot, e.leaf};
  }
  return {};
}

FieldHandle DecodePlan::FindRole(int32_t program, Role role) {
  if (program < 0) return {};
  for (const FieldEntry& e : entries_) {
    if (e.scope != program || e.in_array) continue;
    if (e.leaf != FieldHandle::kSigned && e.leaf != FieldHandle::kUnsigned) continue;
    if (!meta_.type(e.type).Has(role)) continue;
    wanted_[static_cast<size_t>(e.slot)] = true;
    return FieldHandle{e.slot, e.leaf};
  }
  return {};
}

void DecodePlan::Finish(int32_t program) {
  if (program < 0) return;
  uint32_t align = 1;
  uint64_t bits = 0;
  Optimize(program, &align, &bits);
}

bool DecodePlan::Optimize(int32_t program, uint32_t* fixed_align, uint64_t* fixed_bits) {
  std::vector<Op> in = std::move(programs_[static_cast<size_t>(program)]);
  std::vector<Op> out;
  auto wanted = [&](int32_t slot) { return slot >= 0 && wanted_[static_cast<size_t>(slot)]; };
  auto skip = [&](uint64_t bits) {
    if (bits == 0) return;
    if (!out.empty() && out.back().code == Op::kSkip) {
      out.back().arg += bits;
      return;
    }
    Op op;
    op.code = Op::kSkip;
    op.arg = bits;
    out.push_back(op);
  };
  uint64_t known = 1;  // the position is a multiple of this many bits (from the program's start)
  for (Op op : in) {
    switch (op.code) {
      case Op::kAlign:
        if (op.arg <= known) continue;
        out.push_back(op);
        known = op.arg;
        continue;
      case Op::kSkip:
        skip(op.arg);
        known = std::min(known, LowBit(op.arg));
        continue;
      case Op::kInt:
        known = std::min<uint64_t>(known, LowBit(op.size));
        if (!wanted(op.slot) && !(op.flags & (Op::kClock | Op::kEventId))) {
          skip(op.size);
          continue;
        }
        if (op.slot >= 0 && !(op.flags & (Op::kBig | Op::kClock | Op::kEventId)))
          op.code = Op::kIntFast;
        out.push_back(op);
        continue;
      case Op::kString:
        if (!wanted(op.slot)) op.slot = -1;
        out.push_back(op);
        known = 8;
        continue;
      case Op::kText:
        if (!wanted(op.slot)) {
          op.slot = -1;
          if (op.count < 0) {
            skip(op.arg * 8);
            known = std::min<uint64_t>(known, LowBit(op.arg * 8));
            continue;
          }
        }
        out.push_back(op);
        known = 8;
        continue;
      case Op::kAddress:
        if (!wanted(op.slot)) {
          if (op.count < 0) {
            skip(op.arg * op.size);
            known = std::min(known, LowBit(op.arg * op.size));
            continue;
          }
          op.code = Op::kSkipArray;
          op.sub_bits = op.size;
          op.slot = -1;
        }
        out.push_back(op);
        known = std::min<uint64_t>(known, LowBit(op.size));
        continue;
      case Op::kVariant: {
        int32_t done = -1;  // an option's ranges are consecutive cases of its program
        for (const VariantCase& c : variants_[static_cast<size_t>(op.sub)].cases) {
          if (c.program == done) continue;
          done = c.program;
          uint32_t a = 1;
          uint64_t b = 0;
          Optimize(c.program, &a, &b);
        }
        out.push_back(op);
        known = 1;
        continue;
      }
      case Op::kArray: {
        uint32_t a = 1;
        uint64_t b = 0;
        if (Optimize(op.sub, &a, &b) && b % a == 0 && a <= known && !dump_) {
          // Elements of fixed size, nothing wanted from them: one skip.
          if (op.count < 0) {
            skip(op.arg * b);
            known = std::min(known, LowBit(op.arg * b));
            continue;
          }
          op.code = Op::kSkipArray;
          op.sub_bits = static_cast<uint32_t>(b);
        }
        out.push_back(op);
        known = 1;
        continue;
      }
      case Op::kIntFast:
        out.push_back(op);
        known = std::min<uint64_t>(known, LowBit(op.size));
        continue;
      case Op::kSkipArray:
        out.push_back(op);
        known = std::min<uint64_t>(known, LowBit(op.sub_bits));
        continue;
      case Op::kFields:  // made by Fuse, after this
        out.push_back(op);
        continue;
    }
  }
  programs_[static_cast<size_t>(program)] = out;
  // A fixed skip: [Align a] [Skip n].
  if (out.empty()) {
    *fixed_align = 1;
    *fixed_bits = 0;
    return true;
  }
  size_t i = 0;
  uint32_t a = 1;
  if (out[0].code == Op::kAlign) {
    a = static_cast<uint32_t>(out[0].arg);
    i = 1;
  }
  if (out.size() - i == 1 && out[i].code == Op::kSkip && out[i].arg < (uint64_t{1} << 31)) {
    *fixed_align = a;
    *fixed_bits = out[i].arg;
    return true;
  }
  if (out.size() == i) {
    *fixed_align = a;
    *fixed_bits = 0;
    return true;
  }
  return false;
}

void DecodePlan::Fuse(int32_t program) {
  if (program < 0) return;
  const std::vector<Op> in = programs_[static_cast<size_t>(program)];
  std::vector<Op> out;
  FieldRun run;
  size_t run_ops = 0;   // ops in `run`
  size_t run_from = 0;  // their first index in `in`
  auto flush = [&](size_t next) {
    if (run_ops >= 2 && !run.reads.empty()) {
      run.unfused = NewProgram();
      programs_[static_cast<size_t>(run.unfused)].assign(in.begin() + static_cast<long>(run_from),
                                                         in.begin() + static_cast<long>(next));
      runs_.push_back(std::move(run));
      Op op;
      op.code = Op::kFields;
      op.sub = static_cast<int32_t>(runs_.size() - 1);
      out.push_back(op);
    } else {
      out.insert(out.end(), in.begin() + static_cast<long>(run_from),
                 in.begin() + static_cast<long>(next));
    }
    run = FieldRun{};
    run_ops = 0;
    run_from = next;
  };
  constexpr uint64_t kMaxRunBits = uint64_t{1} << 30;
  for (size_t i = 0; i < in.size(); ++i) {
    const Op& op = in[i];
    uint64_t bits = 0;
    bool read = true;
    switch (op.code) {
      case Op::kIntFast:
        bits = op.size;
        break;
      case Op::kInt:
        read = !(op.flags & Op::kBig);
        bits = op.size;
        break;
      case Op::kSkip:
        bits = op.arg;
        break;
      case Op::kText:
        // Fixed length, on a byte when the run starts on one.
        read = op.count < 0 && op.slot >= 0 && run.bits % 8 == 0;
        bits = op.arg * 8;
        break;
      case Op::kVariant: {
        int32_t done = -1;
        for (const VariantCase& c : variants_[static_cast<size_t>(op.sub)].cases) {
          if (c.program != done) Fuse(c.program);
          done = c.program;
        }
        read = false;
        break;
      }
      case Op::kArray:
        Fuse(op.sub);
        read = false;
        break;
      default:
        read = false;
        break;
    }
    if (bits > kMaxRunBits) read = false;
    if (!read || run.bits + bits > kMaxRunBits) {
      flush(i);
      if (!read) {
        out.push_back(op);
        run_from = i + 1;
        continue;
      }
    }
    if (op.code != Op::kSkip) {
      FieldRead r{op.code == Op::kText ? FieldRead::kText : FieldRead::kBits,
                  static_cast<uint32_t>(run.bits), op};
      const bool is_signed = op.flags & Op::kSigned;
      if (op.code != Op::kText && run.bits % 8 == 0) {
        switch (op.size) {
          case 8:
            r.kind = is_signed ? FieldRead::kS8 : FieldRead::kU8;
            break;
          case 16:
            r.kind = is_signed ? FieldRead::kS16 : FieldRead::kU16;
            break;
          case 32:
            r.kind = is_signed ? FieldRead::kS32 : FieldRead::kU32;
            break;
          case 64:
            r.kind = FieldRead::kU64;
            break;
        }
      }
      if (r.kind != FieldRead::kBits) run.on_byte = true;
      run.reads.push_back(r);
    }
    run.bits += bits;
    ++run_ops;
  }
  flush(in.size());
  programs_[static_cast<size_t>(program)] = std::move(out);
}

}  // namespace waitpath::ctf
