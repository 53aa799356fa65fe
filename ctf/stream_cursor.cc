#include "ctf/stream_cursor.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>

#include "ctf/mapped_pages.h"

namespace waitpath::ctf {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kPacketMagic = 0xC1FC1FC1;

std::string Hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// `size` bits (1..64) at bit `pos` of `p`: CTF's little-endian bit order (from the least
// significant bit of each byte) or big-endian (from the most significant). The caller has
// checked that the bytes are there.
inline uint64_t ReadBits(const uint8_t* base, uint64_t file_bytes, uint64_t pos, unsigned size,
                         bool big) {
  const uint8_t* p = base + (pos >> 3);
  const unsigned shift = static_cast<unsigned>(pos & 7);
  const uint64_t mask = size == 64 ? ~uint64_t{0} : (uint64_t{1} << size) - 1;
  // The usual case: one 8-byte load (bytes past the field but inside the file are harmless).
  if (!big && shift + size <= 64 && (pos >> 3) + 8 <= file_bytes) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return (w >> shift) & mask;
  }
  const unsigned nbytes = (shift + size + 7) / 8;
  if (!big) {
    uint64_t lo = 0;
    std::memcpy(&lo, p, std::min(nbytes, 8u));  // x86/ARM little-endian hosts
    uint64_t v = lo >> shift;
    if (nbytes > 8) v |= uint64_t{p[8]} << (64 - shift);
    return v & mask;
  }
  uint64_t acc = 0;
  for (unsigned i = 0; i < std::min(nbytes, 8u); ++i) acc = acc << 8 | p[i];
  if (nbytes <= 8) return (acc >> (nbytes * 8 - shift - size)) & mask;
  const unsigned extra = shift + size - 64;  // bits taken from the ninth byte
  return ((acc << extra) | (uint64_t{p[8]} >> (8 - extra))) & mask;
}

// ReadBits for a little-endian field, `mask` its `size` bits' mask (the op's, precomputed).
inline uint64_t ReadLe(const uint8_t* base, uint64_t file_bytes, uint64_t pos, unsigned size,
                       uint64_t mask) {
  const unsigned shift = static_cast<unsigned>(pos & 7);
  if (shift + size <= 64 && (pos >> 3) + 8 <= file_bytes) {
    uint64_t w;
    std::memcpy(&w, base + (pos >> 3), 8);
    return (w >> shift) & mask;
  }
  return ReadBits(base, file_bytes, pos, size, false);
}

// A little-endian integer at `p` (x86/ARM hosts are little-endian, as ReadBits assumes).
template <class T>
inline T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// A whole unsigned integer read (kU8 .. kU64) at `p`.
inline uint64_t LoadUnsigned(FieldRead::Kind kind, const uint8_t* p) {
  switch (kind) {
    case FieldRead::kU8:
      return p[0];
    case FieldRead::kU16:
      return Load<uint16_t>(p);
    case FieldRead::kU32:
      return Load<uint32_t>(p);
    default:
      return Load<uint64_t>(p);
  }
}

// The event header `program` as a FixedHeader when it is one: [Align] Fields(id, clock).
FixedHeader FixedHeaderOf(const DecodePlan& plan, int32_t program) {
  FixedHeader h;
  if (program < 0) return h;
  const std::vector<Op>& ops = plan.program(program);
  size_t i = 0;
  if (i < ops.size() && ops[i].code == Op::kAlign) h.align = ops[i++].arg;
  if (i + 1 != ops.size() || ops[i].code != Op::kFields) return h;
  const FieldRun& run = plan.field_run(ops[i].sub);
  if (run.reads.size() != 2 || !run.on_byte || run.bits % 8 != 0) return h;
  const FieldRead* id = nullptr;
  const FieldRead* clock = nullptr;
  for (const FieldRead& r : run.reads) {
    const bool whole = r.kind == FieldRead::kU8 || r.kind == FieldRead::kU16 ||
                       r.kind == FieldRead::kU32 || r.kind == FieldRead::kU64;
    if (!whole || r.op.code != Op::kInt || r.offset % 8 != 0) return h;
    if (r.op.flags == Op::kEventId) id = &r;
    if (r.op.flags == Op::kClock) clock = &r;
  }
  if (!id || !clock) return h;
  h.on = true;
  h.bits = run.bits;
  h.id = *id;
  h.clock = *clock;
  return h;
}

// The first NUL in [s, e), nullptr when none. Strings are mostly short (task names): a word at
// a time while 8 bytes are left (the lowest byte flagged by the zero-byte test is the first
// NUL; bytes flagged above it may be false), memchr for the tail.
inline const uint8_t* FindNul(const uint8_t* s, const uint8_t* e) {
  constexpr uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
  while (e - s >= 8) {
    uint64_t w;
    std::memcpy(&w, s, 8);
    const uint64_t zero = (w - kOnes) & ~w & kHighs;
    if (zero) return s + (std::countr_zero(zero) >> 3);
    s += 8;
  }
  return static_cast<const uint8_t*>(std::memchr(s, 0, static_cast<size_t>(e - s)));
}

}  // namespace

// ---- TraceDecoder ------------------------------------------------------------------------

bool TraceDecoder::Open(const std::string& dir, std::string* error) {
  dir_ = dir;
  if (!LoadMetadata(dir, &meta_, error) || !Compile(error)) return false;
  // Stream files: every regular, non-empty, non-hidden file but the metadata, by path (the
  // order of babeltrace2's ports, which decides ties of one CPU in the merge).
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name == "metadata" || name.empty() || name[0] == '.') continue;
    std::error_code ec2;
    if (!fs::is_regular_file(e.path(), ec2) || fs::file_size(e.path(), ec2) == 0) continue;
    files_.push_back(e.path().string());
  }
  if (ec) {
    *error = dir + ": cannot list: " + ec.message();
    return false;
  }
  std::sort(files_.begin(), files_.end());
  return true;
}

bool TraceDecoder::OpenText(const std::string& dir, const std::string& text, std::string* error) {
  dir_ = dir;
  if (!ParseMetadataText(text, &meta_, error)) {
    *error = dir + "/metadata: " + *error;
    return false;
  }
  return Compile(error);
}

bool TraceDecoder::Compile(std::string* error) {
  const std::string& dir = dir_;
  plan_ = std::make_unique<DecodePlan>(meta_);
  if (dump_) plan_->DumpEverything();
  using S = DecodePlan::Scope;
  packet_header_ = plan_->Compile(meta_.packet_header, S::kPacketHeader, true);
  magic_ = plan_->FindRole(packet_header_, Role::kPacketMagicNumber);
  stream_id_ = plan_->FindRole(packet_header_, Role::kDataStreamClassId);
  plan_->Finish(packet_header_);
  plan_->Fuse(packet_header_);
  if (meta_.streams.empty()) {
    *error = dir + "/metadata: no stream class";
    return false;
  }
  for (const StreamClass& sc : meta_.streams) {
    StreamPlan sp;
    sp.sc = &sc;
    sp.packet_context = plan_->Compile(sc.packet_context, S::kPacketContext, true);
    sp.ts_begin = plan_->FindRole(sp.packet_context, Role::kDefaultClockTimestamp);
    sp.ts_end = plan_->FindRole(sp.packet_context, Role::kPacketEndClockTimestamp);
    sp.discarded = plan_->FindRole(sp.packet_context, Role::kDiscardedEventCounter);
    sp.packet_size = plan_->FindRole(sp.packet_context, Role::kPacketTotalLength);
    sp.content_size = plan_->FindRole(sp.packet_context, Role::kPacketContentLength);
    sp.cpu_id = plan_->FindRole(sp.packet_context, Role::kCpuId);
    sp.event_header = plan_->Compile(sc.event_header, S::kEventHeader, true);
    sp.common_context = plan_->Compile(sc.event_context, S::kCommonContext, true);
    for (int32_t p : {sp.packet_context, sp.event_header, sp.common_context}) {
      plan_->Finish(p);
      plan_->Fuse(p);
    }
    sp.fixed_header = FixedHeaderOf(*plan_, sp.event_header);
    sp.events.resize(sc.events.size());
    // Event ids are small and dense (LTTng, perf): a table; a sparse id is looked up.
    if (!sc.events.empty() && sc.events.back().id < 65536) {
      sp.index_by_id.assign(static_cast<size_t>(sc.events.back().id) + 1, -1);
      for (size_t i = 0; i < sc.events.size(); ++i)
        sp.index_by_id[static_cast<size_t>(sc.events[i].id)] = static_cast<int32_t>(i);
    }
    streams_.push_back(std::move(sp));
  }
  if (!plan_->error().empty()) {
    *error = dir + "/metadata: " + plan_->error();
    return false;
  }
  has_clock_ = !plan_->clock().empty();
  if (has_clock_) {
    const Clock* clock = meta_.FindClock(plan_->clock());
    if (!clock) {
      *error = dir + "/metadata: unknown clock '" + plan_->clock() + "'";
      return false;
    }
    // Other frequencies are left to babeltrace2 (its rounding is not reproduced here).
    if (clock->freq != 1000000000) {
      *error = dir + "/metadata: clock '" + clock->name + "' of " + std::to_string(clock->freq) +
               " Hz (only 1 GHz clocks are decoded natively)";
      return false;
    }
    // The metadata is untrusted: an offset no int64 nanosecond count holds is refused.
    int64_t offset_ns = 0;
    if (__builtin_mul_overflow(clock->offset_s, int64_t{1000000000}, &offset_ns) ||
        __builtin_add_overflow(offset_ns, clock->offset, &base_ns_)) {
      *error = dir + "/metadata: clock '" + clock->name + "' has an offset of " +
               std::to_string(clock->offset_s) + " s and " + std::to_string(clock->offset) +
               " cycles, beyond what 64-bit nanoseconds hold";
      return false;
    }
  }
  return true;
}

int32_t StreamPlan::IndexOf(uint64_t id) const {
  if (id < index_by_id.size()) return index_by_id[static_cast<size_t>(id)];
  if (!index_by_id.empty()) return -1;
  const EventClass* ec = sc->Find(id);
  return ec ? static_cast<int32_t>(ec - sc->events.data()) : -1;
}

StreamPlan* TraceDecoder::FindStream(uint64_t id) {
  for (StreamPlan& s : streams_) {
    if (s.sc->id == id) return &s;
  }
  return nullptr;
}

EventPlan& TraceDecoder::Event(StreamPlan& stream, size_t index, uint32_t* dialect) {
  EventPlan& ep = stream.events[index];
  if (ep.compiled) return ep;
  ep.compiled = true;
  const EventClass& ec = stream.sc->events[index];
  using S = DecodePlan::Scope;
  ep.context = plan_->Compile(ec.context, S::kEventContext, every_field_);
  ep.payload = plan_->Compile(ec.fields, S::kPayload, every_field_);
  if (ec.name == kReplayEventName) {
    // The flat replay record: every member is read, by name.
    ep.replay_fields.resize(kReplayFieldCount);
    bool ok = true;
    for (int f = 0; f < kReplayFieldCount; ++f) {
      const FieldHandle h = plan_->Find(ep.payload, {kReplayFieldNames[static_cast<size_t>(f)]});
      // A missing optional member (an older format) reads as 0.
      if (!h.valid() && ReplayFieldIsOptional(f)) continue;
      if (!h.valid() || h.is_string() != ReplayFieldIsString(f) ||
          h.leaf == FieldHandle::kAddress) {
        ok = false;
      }
      ep.replay_fields[static_cast<size_t>(f)] = h;
    }
    ep.known = ep.replay = ok;
    if (ok) *dialect |= kDialectReplayed;
  } else {
    EventKind kind = EventKind::kCount;
    int32_t ipi_type = 0;
    ep.known = KindOfName(ec.name, &kind, &ipi_type);
    if (ep.known) {
      auto find = [&](FieldRoot root, FieldNames path) {
        return plan_->Find(root == FieldRoot::kPayload ? ep.payload : stream.common_context,
                           std::vector<std::string_view>(path));
      };
      *dialect |= ResolveClassFields<FieldHandle>(ec.name, kind, ipi_type, find, &ep.fields);
      ep.assembly = EventAssembly::Compile(ep.fields);
    }
  }
  if (!plan_->error().empty()) {
    ep.error = stream.sc->events[index].name + ": " + plan_->error();
    ep.known = false;
    plan_->ClearError();
    return ep;
  }
  for (int32_t p : {ep.context, ep.payload}) {
    plan_->Finish(p);
    plan_->Fuse(p);
  }
  return ep;
}

// ---- StreamCursor ------------------------------------------------------------------------

StreamCursor::StreamCursor(TraceDecoder& trace, std::string path, InMemory)
    : trace_(&trace), path_(std::move(path)), mapped_(false) {
  done_ = true;  // until fed
  values_.resize(static_cast<size_t>(trace_->plan().slots()));
}

void StreamCursor::Feed(std::span<const uint8_t> packets) {
  base_ += size_;
  data_ = packets.data();
  size_ = packets.size();
  offset_ = packet_end_ = 0;
  in_packet_ = packet_pending_ = false;
  done_ = size_ == 0;
}

void StreamCursor::Rebind(TraceDecoder& trace) {
  trace_ = &trace;
  stream_ = nullptr;
  event_ = nullptr;
  values_.resize(static_cast<size_t>(trace_->plan().slots()));
}

StreamCursor::StreamCursor(TraceDecoder& trace, std::string path)
    : trace_(&trace), path_(std::move(path)) {
  const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) {
    error_ = path_ + ": cannot open: " + std::strerror(errno);
    if (fd >= 0) close(fd);
    open_failed_ = true;
    return;
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ > 0) {
    void* m = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      error_ = path_ + ": cannot map: " + std::strerror(errno);
      open_failed_ = true;
      size_ = 0;
    } else {
      data_ = static_cast<const uint8_t*>(m);
      madvise(m, size_, MADV_SEQUENTIAL);
    }
  }
  close(fd);
  if (size_ == 0) done_ = true;
  values_.resize(static_cast<size_t>(trace_->plan().slots()));
}

StreamCursor::~StreamCursor() {
  if (data_ && mapped_) munmap(const_cast<uint8_t*>(data_), size_);
}

std::string_view StreamCursor::Text(const FieldHandle& h) const {
  const Value& v = values_[static_cast<size_t>(h.slot)];
  return {reinterpret_cast<const char*>(data_ + v.v), v.len};
}

bool StreamCursor::Fail(const std::string& what) {
  error_ = path_ + ": packet at offset " + Hex(base_ + offset_) + ": " + what;
  return false;
}

inline void StreamCursor::Special(const Op& op, uint64_t v) {
  if (op.flags & Op::kClock) {
    // babeltrace2's rule: an n-bit clock field sets the clock's low n bits, a value below the
    // current low bits meaning they wrapped once.
    if (op.size == 64) {
      clock_ = v;
    } else {
      const uint64_t mask = op.arg;
      if (v < (clock_ & mask)) clock_ += mask + 1;
      clock_ = (clock_ & ~mask) | (v & mask);
    }
  }
  if (op.flags & Op::kEventId) {
    event_id_ = v;
    have_event_id_ = true;
  }
}

bool StreamCursor::FailAt(uint64_t pos, const char* what) {
  pos_ = pos;
  return Fail(what);
}

template <bool kLog>
bool StreamCursor::Run(int32_t program) {
  if (program < 0) return true;
  const DecodePlan& plan = trace_->plan();
  // The hot loop keeps the position, the content's end and the slots in locals: nothing else
  // changes them while it runs (sub-programs are run with pos_ written back and read again).
  const uint8_t* const data = data_;
  const uint64_t file_bytes = size_;
  const uint64_t end = end_;
  const uint32_t epoch = epoch_;
  Value* const values = values_.data();
  uint64_t pos = pos_;
  auto sign = [](uint64_t v, const Op& op) {
    if (!(op.flags & Op::kSigned) || op.size == 64) return v;
    const uint64_t m = uint64_t{1} << (op.size - 1);
    return (v ^ m) - m;
  };
  const std::vector<Op>* ops = &plan.program(program);
  const Op* end_op = ops->data() + ops->size();
  for (const Op* at_op = ops->data(); at_op != end_op; ++at_op) {
    const Op& op = *at_op;
    switch (op.code) {
      case Op::kIntFast: {
        if (op.size > end - pos) return FailAt(pos, "an integer past the packet's content");
        const uint64_t v = ReadLe(data, file_bytes, pos, op.size, op.arg);
        pos += op.size;
        values[op.slot] = Value{sign(v, op), 0, epoch};
        if constexpr (kLog) Log(op.slot, values[op.slot].v, 0);
        break;
      }
      case Op::kAlign:
        pos = (pos + op.arg - 1) & ~(op.arg - 1);
        if (pos > end) return FailAt(pos, "alignment past the packet's content");
        break;
      case Op::kSkip:
        if (op.arg > end - pos) return FailAt(pos, "a field past the packet's content");
        pos += op.arg;
        break;
      case Op::kInt: {
        if (op.size > end - pos) return FailAt(pos, "an integer past the packet's content");
        uint64_t v = (op.flags & Op::kBig) ? ReadBits(data, file_bytes, pos, op.size, true)
                                           : ReadLe(data, file_bytes, pos, op.size, op.arg);
        pos += op.size;
        v = sign(v, op);
        if (op.slot >= 0) values[op.slot] = Value{v, 0, epoch};
        if constexpr (kLog) {
          if (op.slot >= 0) Log(op.slot, v, 0);
        }
        Special(op, v);
        break;
      }
      case Op::kFields: {
        const FieldRun& run = plan.field_run(op.sub);
        if (run.bits > end - pos || (run.on_byte && pos % 8 != 0)) {
          // Some field is past the content: one by one, for the error that one gives.
          pos_ = pos;
          if (!Run<kLog>(run.unfused)) return false;
          pos = pos_;
          break;
        }
        for (const FieldRead& r : run.reads) {
          const Op& f = r.op;
          const uint64_t at = pos + r.offset;
          const uint8_t* const p = data + at / 8;
          uint64_t v = 0;
          switch (r.kind) {
            case FieldRead::kU8:
              v = p[0];
              break;
            case FieldRead::kS8:
              v = static_cast<uint64_t>(int64_t{static_cast<int8_t>(p[0])});
              break;
            case FieldRead::kU16:
              v = Load<uint16_t>(p);
              break;
            case FieldRead::kS16:
              v = static_cast<uint64_t>(int64_t{static_cast<int16_t>(Load<uint16_t>(p))});
              break;
            case FieldRead::kU32:
              v = Load<uint32_t>(p);
              break;
            case FieldRead::kS32:
              v = static_cast<uint64_t>(int64_t{static_cast<int32_t>(Load<uint32_t>(p))});
              break;
            case FieldRead::kU64:
              v = Load<uint64_t>(p);
              break;
            case FieldRead::kBits:
              v = sign(ReadLe(data, file_bytes, at, f.size, f.arg), f);
              break;
            case FieldRead::kText: {
              const uint8_t* nul = FindNul(p, p + f.arg);
              const uint64_t len = nul ? static_cast<uint64_t>(nul - p) : f.arg;
              values[f.slot] = Value{at / 8, static_cast<uint32_t>(len), epoch};
              if constexpr (kLog) Log(f.slot, at / 8, static_cast<uint32_t>(len));
              continue;
            }
          }
          if (f.code == Op::kIntFast) {
            values[f.slot] = Value{v, 0, epoch};
          } else {  // kInt: a clock or an event id, maybe also wanted
            if (f.slot >= 0) values[f.slot] = Value{v, 0, epoch};
            Special(f, v);
          }
          if constexpr (kLog) {
            if (f.slot >= 0) Log(f.slot, v, 0);
          }
        }
        pos += run.bits;
        break;
      }
      case Op::kString: {
        if (pos % 8 != 0 || pos >= end) return FailAt(pos, "a string past the packet's content");
        const uint8_t* s = data + pos / 8;
        const uint8_t* nul = FindNul(s, data + end / 8);
        if (!nul) return FailAt(pos, "a string without its end in the packet");
        const uint64_t len = static_cast<uint64_t>(nul - s);
        if (op.slot >= 0) values[op.slot] = Value{pos / 8, static_cast<uint32_t>(len), epoch};
        if constexpr (kLog) {
          if (op.slot >= 0) Log(op.slot, pos / 8, static_cast<uint32_t>(len));
        }
        pos += (len + 1) * 8;
        break;
      }
      case Op::kText: {
        uint64_t n = op.arg;
        if (op.count >= 0) n = values[op.count].v;
        if (pos % 8 != 0 || n > (end - pos) / 8)
          return FailAt(pos, "a text array past the packet's content");
        if (op.slot >= 0) {
          const uint8_t* s = data + pos / 8;
          const uint8_t* nul = FindNul(s, s + n);
          const uint64_t len = nul ? static_cast<uint64_t>(nul - s) : n;
          values[op.slot] = Value{pos / 8, static_cast<uint32_t>(len), epoch};
          if constexpr (kLog) Log(op.slot, pos / 8, static_cast<uint32_t>(len));
        }
        pos += n * 8;
        break;
      }
      case Op::kVariant:
        if (at_op + 1 == end_op) {
          // Last in its program (LTTng's event headers: the tag, then the variant): its
          // option's ops are run in this loop, not by a recursive Run.
          const int32_t chosen = Option(op);
          if (chosen < 0) {
            pos_ = pos;
            return NoOption(op);
          }
          if constexpr (kLog)
            log_.push_back(Logged{Logged::kOption, -1, op.sub, static_cast<uint64_t>(chosen), 0});
          ops = &plan.program(chosen);
          at_op = ops->data() - 1;
          end_op = ops->data() + ops->size();
          break;
        }
        [[fallthrough]];
      case Op::kAddress:
      case Op::kSkipArray:
      case Op::kArray:
        // Rarer (and recursive): out of this loop, so that it keeps its registers.
        pos_ = pos;
        if (!RunComposite<kLog>(op)) return false;
        pos = pos_;
        break;
    }
  }
  pos_ = pos;
  return true;
}

bool StreamCursor::ReadFixedHeader(const FixedHeader& h) {
  const uint64_t pos = (pos_ + h.align - 1) & ~(h.align - 1);
  // Damage: the program says what, as it always did.
  if (pos > end_ || h.bits > end_ - pos || pos % 8 != 0) return Run<false>(stream_->event_header);
  const uint8_t* p = data_ + pos / 8;
  const uint64_t id = LoadUnsigned(h.id.kind, p + h.id.offset / 8);
  const uint64_t clock = LoadUnsigned(h.clock.kind, p + h.clock.offset / 8);
  if (h.id.op.slot >= 0) values_[static_cast<size_t>(h.id.op.slot)] = Value{id, 0, epoch_};
  if (h.clock.op.slot >= 0) values_[static_cast<size_t>(h.clock.op.slot)] = Value{clock, 0, epoch_};
  Special(h.id.op, id);
  Special(h.clock.op, clock);
  pos_ = pos + h.bits;
  return true;
}

int32_t StreamCursor::Option(const Op& op) const {
  const uint64_t tag = values_[static_cast<size_t>(op.count)].v;
  const VariantTable& table = trace_->plan().variant(op.sub);
  for (const VariantCase& c : table.cases) {
    const bool in = table.is_signed ? (static_cast<int64_t>(tag) >= static_cast<int64_t>(c.lo) &&
                                       static_cast<int64_t>(tag) <= static_cast<int64_t>(c.hi))
                                    : (tag >= c.lo && tag <= c.hi);
    if (in) return c.program;
  }
  return -1;
}

bool StreamCursor::NoOption(const Op& op) {
  return Fail("variant tag " + std::to_string(values_[static_cast<size_t>(op.count)].v) +
              " selects no option");
}

template <bool kLog>
bool StreamCursor::RunComposite(const Op& op) {
  switch (op.code) {
    case Op::kAddress: {
      uint64_t n = op.arg;
      if (op.count >= 0) n = values_[static_cast<size_t>(op.count)].v;
      if (n > (end_ - pos_) / op.size) return FailAt(pos_, "an array past the packet's content");
      uint64_t v = 0;
      for (uint64_t i = 0; i < n && i < 4; ++i)
        v = (v << 8) |
            (ReadBits(data_, size_, pos_ + i * op.size, op.size, op.flags & Op::kBig) & 0xff);
      values_[static_cast<size_t>(op.slot)] = Value{v & 0xffffffffu, 0, epoch_};
      pos_ += n * op.size;
      return true;
    }
    case Op::kSkipArray: {
      uint64_t n = op.arg;
      if (op.count >= 0) n = values_[static_cast<size_t>(op.count)].v;
      if (op.sub_bits != 0 && n > (end_ - pos_) / op.sub_bits)
        return FailAt(pos_, "an array past the packet's content");
      pos_ += n * op.sub_bits;
      return true;
    }
    case Op::kArray: {
      uint64_t n = op.arg;
      if (op.count >= 0) n = values_[static_cast<size_t>(op.count)].v;
      // Every element takes at least a bit, or the array is of empty structs: either way no
      // more elements than bits left (a garbled length fails here, not after a long loop).
      if (n > end_ - pos_ + 1) return FailAt(pos_, "an array longer than the packet's content");
      if constexpr (kLog) log_.push_back(Logged{Logged::kArray, -1, -1, n, 0});
      for (uint64_t i = 0; i < n; ++i) {
        if (!Run<kLog>(op.sub)) return false;
      }
      return true;
    }
    case Op::kVariant: {
      const int32_t chosen = Option(op);
      if (chosen < 0) return NoOption(op);
      if constexpr (kLog)
        log_.push_back(Logged{Logged::kOption, -1, op.sub, static_cast<uint64_t>(chosen), 0});
      return Run<kLog>(chosen);
    }
    default:
      return true;
  }
}

bool StreamCursor::BeginPacket() {
  ++epoch_;
  in_packet_ = false;
  pos_ = offset_ * 8;
  end_ = size_ * 8;  // until the context says
  log_.clear();
  if (!RunScope(trace_->packet_header(), DecodePlan::Scope::kPacketHeader)) return false;
  if (trace_->magic().valid() && Has(trace_->magic()) && Raw(trace_->magic()) != kPacketMagic)
    return Fail("bad magic " + Hex(Raw(trace_->magic())));
  uint64_t sid = trace_->meta().streams.front().id;
  if (trace_->stream_id().valid()) {
    sid = Raw(trace_->stream_id());
  } else if (trace_->meta().streams.size() != 1) {
    return Fail("no stream_id and several stream classes");
  }
  StreamPlan* sp = trace_->FindStream(sid);
  if (!sp) return Fail("stream class " + std::to_string(sid) + " not in the metadata");
  if (stream_ && sp != stream_) return Fail("stream class " + std::to_string(sid) + " changed");
  stream_ = sp;
  if (!RunScope(sp->packet_context, DecodePlan::Scope::kPacketContext)) return false;
  if (log_on_) packet_log_ = log_;
  const uint64_t left = (size_ - offset_) * 8;
  uint64_t packet_bits = sp->packet_size.valid() ? Raw(sp->packet_size) : left;
  uint64_t content_bits = sp->content_size.valid() ? Raw(sp->content_size) : packet_bits;
  if (!sp->packet_size.valid() && sp->content_size.valid()) packet_bits = content_bits;
  if (packet_bits == 0 || packet_bits % 8 != 0)
    return Fail("packet_size " + std::to_string(packet_bits) + " bits is not a whole packet");
  if (packet_bits > left)
    return Fail("packet_size " + std::to_string(packet_bits / 8) + " bytes but " +
                std::to_string(left / 8) + " left in the file");
  if (content_bits > packet_bits || content_bits < pos_ - offset_ * 8)
    return Fail("content_size " + std::to_string(content_bits) + " bits does not fit");
  packet_end_ = offset_ + packet_bits / 8;
  if (mapped_) MapPagesAhead(data_, size_, packet_end_, &populated_);
  end_ = offset_ * 8 + content_bits;
  // The snapshots babeltrace2 takes from the context.
  begin_clock_ = sp->ts_begin.valid() ? Raw(sp->ts_begin) : kNone;
  end_clock_ = sp->ts_end.valid() ? Raw(sp->ts_end) : kNone;
  discarded_ = sp->discarded.valid() ? Raw(sp->discarded) : kNone;
  packet_cpu_ = sp->cpu_id.valid() ? static_cast<int64_t>(Raw(sp->cpu_id)) : -1;
  in_packet_ = true;
  return true;
}

void StreamCursor::EndPacket() {
  // The clock moves to the packet's end (babeltrace2 does, but for LTTng's quirks of a zero or
  // early timestamp_end); only a next packet without timestamp_begin would see it.
  if (end_clock_ != kNone && !(begin_clock_ != 0 && end_clock_ == 0) && end_clock_ >= clock_)
    clock_ = end_clock_;
  prev_end_clock_ = end_clock_;
  prev_discarded_ = discarded_;
  in_packet_ = false;
  offset_ = packet_end_;
  // The mapped file's pages behind the cursor (ctf/mapped_pages.h).
  if (mapped_) ReleaseMappedPagesBefore(data_, offset_, &released_);
}

void StreamCursor::ContinueFrom(const StreamCursor& previous) {
  prev_end_clock_ = previous.prev_end_clock_;
  prev_discarded_ = previous.prev_discarded_;
  clock_ = previous.clock_;
}

bool StreamCursor::RunScope(int32_t program, DecodePlan::Scope scope) {
  if (!log_on_) return Run<false>(program);
  const auto s = static_cast<size_t>(scope);
  marks_[s] = log_.size();
  const bool ok = Run<true>(program);
  mark_ends_[s] = log_.size();
  return ok;
}

std::span<const StreamCursor::Logged> StreamCursor::logged(DecodePlan::Scope scope) const {
  const auto s = static_cast<size_t>(scope);
  const std::vector<Logged>& log = scope == DecodePlan::Scope::kPacketContext ? packet_log_ : log_;
  if (mark_ends_[s] <= marks_[s] || mark_ends_[s] > log.size()) return {};
  return {log.data() + marks_[s], mark_ends_[s] - marks_[s]};
}

StreamCursor::Item StreamCursor::Next() {
  if (open_failed_) {
    open_failed_ = false;
    done_ = true;
    return Item::kError;
  }
  for (;;) {
    if (done_) return Item::kEnd;
    if (packet_pending_) {
      packet_pending_ = false;
      return Item::kPacket;
    }
    if (!in_packet_) {
      if (offset_ >= size_) {
        done_ = true;
        return Item::kEnd;
      }
      if (!BeginPacket()) {
        // A packet whose own size cannot be trusted: the rest of the stream is lost with it.
        done_ = true;
        return Item::kError;
      }
      packet_pending_ = true;
      // babeltrace2 reports discarded events before the packet that counts them: the
      // stream's first packet only when its counter is not 0 (count then unknown).
      if (stream_->discarded.valid()) {
        const bool first = prev_discarded_ == kNone;
        const bool report = first ? discarded_ != 0 : discarded_ - prev_discarded_ != 0;
        if (report) {
          discarded_known_ = !first;
          discarded_count_ = first ? 0 : discarded_ - prev_discarded_;
          discarded_has_time_ = stream_->ts_begin.valid() && stream_->ts_end.valid();
          discarded_begin_ = first ? begin_clock_ : prev_end_clock_;
          return Item::kDiscarded;
        }
      }
      continue;
    }
    if (pos_ >= end_) {
      EndPacket();
      continue;
    }
    // An event: header, common context, its class's context and payload.
    ++epoch_;
    have_event_id_ = false;
    StreamPlan& sp = *stream_;
    using S = DecodePlan::Scope;
    if (log_on_) {
      log_.clear();
      for (S s : {S::kEventHeader, S::kCommonContext, S::kEventContext, S::kPayload})
        marks_[static_cast<size_t>(s)] = mark_ends_[static_cast<size_t>(s)] = 0;
    }
    // (Run is not called for a scope the stream or class lacks: most have no contexts.)
    bool ok = (sp.fixed_header.on && !log_on_
                   ? ReadFixedHeader(sp.fixed_header)
                   : sp.event_header < 0 || RunScope(sp.event_header, S::kEventHeader)) &&
              (sp.common_context < 0 || RunScope(sp.common_context, S::kCommonContext));
    if (ok) {
      uint64_t id = event_id_;
      if (!have_event_id_) {
        if (sp.sc->events.size() == 1)
          id = sp.sc->events.front().id;
        else
          ok = Fail("an event without an id");
      }
      if (ok) {
        const int32_t index = sp.IndexOf(id);
        if (index < 0) {
          ok = Fail("no event class with id " + std::to_string(id));
        } else {
          EventPlan& ep = sp.events[static_cast<size_t>(index)];
          if (!ep.compiled) trace_->Event(sp, static_cast<size_t>(index), &dialect_);
          // Slots grow as classes compile, by this cursor or another of the trace.
          if (values_.size() < static_cast<size_t>(trace_->plan().slots()))
            values_.resize(static_cast<size_t>(trace_->plan().slots()));
          event_ = &ep;
          ok = ep.error.empty() ? (ep.context < 0 || RunScope(ep.context, S::kEventContext)) &&
                                      (ep.payload < 0 || RunScope(ep.payload, S::kPayload))
                                : Fail(ep.error);
        }
      }
    }
    if (ok) return Item::kEvent;
    // Damage inside the packet: the rest of it is skipped, the next one is read.
    EndPacket();
    return Item::kError;
  }
}

}  // namespace waitpath::ctf
