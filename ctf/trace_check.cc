#include "ctf/trace_check.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <utility>

#include "base/untrusted_name.h"
#include "ctf/ctf2_metadata.h"
#include "ctf/ctf_metadata.h"
#include "ctf/mapped_pages.h"
#include "ctf/tsdl_lexer.h"

namespace fs = std::filesystem;

namespace waitpath {
namespace {

__extension__ typedef __int128 Wide;

std::string Hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// ---- Metadata: packets ------------------------------------------------------------------

constexpr uint32_t kMetadataMagic = 0x75D11D57;
constexpr size_t kMetadataHeaderBytes = 37;  // magic, uuid[16], checksum, content, packet, 5 u8

uint32_t Load32(const unsigned char* p, bool big) {
  return big ? (uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3])
             : (uint32_t{p[3]} << 24 | uint32_t{p[2]} << 16 | uint32_t{p[1]} << 8 | p[0]);
}

bool ReadFile(const std::string& path, uint64_t max, std::string* out, std::string* error) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) {
    *error = path + ": cannot read: " + ec.message();
    return false;
  }
  if (size > max) {
    *error = path + ": " + std::to_string(size) + " bytes, more than the " + std::to_string(max) +
             " a metadata file may have";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  out->assign(size, '\0');
  if (!in.read(out->data(), static_cast<std::streamsize>(size))) {
    *error = path + ": cannot read";
    return false;
  }
  return true;
}

bool DecodePackets(const std::string& path, const std::string& raw, std::string* text,
                   std::string* error) {
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  const bool big = Load32(p, true) == kMetadataMagic;
  size_t off = 0;
  while (off < raw.size()) {
    const std::string where = path + ": metadata packet at offset " + Hex(off);
    if (raw.size() - off < kMetadataHeaderBytes) {
      *error = where + ": truncated header (" + std::to_string(raw.size() - off) + " of " +
               std::to_string(kMetadataHeaderBytes) + " bytes)";
      return false;
    }
    if (Load32(p + off, big) != kMetadataMagic) {
      *error = where + ": bad magic " + Hex(Load32(p + off, big)) + " (expected " +
               Hex(kMetadataMagic) + ")";
      return false;
    }
    const uint32_t content_bits = Load32(p + off + 24, big);
    const uint32_t packet_bits = Load32(p + off + 28, big);
    const uint64_t left = raw.size() - off;
    if (packet_bits % 8 != 0 || packet_bits / 8 < kMetadataHeaderBytes) {
      *error =
          where + ": packet_size " + std::to_string(packet_bits) + " bits is not a whole packet";
      return false;
    }
    if (packet_bits / 8 > left) {
      *error = where + ": packet_size " + std::to_string(packet_bits / 8) + " bytes but only " +
               std::to_string(left) + " left in the file (truncated)";
      return false;
    }
    if (content_bits % 8 != 0 || content_bits > packet_bits ||
        content_bits / 8 < kMetadataHeaderBytes) {
      *error = where + ": content_size " + std::to_string(content_bits) +
               " bits does not fit packet_size " + std::to_string(packet_bits);
      return false;
    }
    if (p[off + 32] != 0 || p[off + 33] != 0 || p[off + 34] != 0) {
      *error = where + ": compressed, encrypted or checksummed metadata is not supported";
      return false;
    }
    text->append(raw, off + kMetadataHeaderBytes, content_bits / 8 - kMetadataHeaderBytes);
    off += packet_bits / 8;
  }
  return true;
}

// ---- Metadata: the model ---------------------------------------------------------------

// The text must end after a complete top-level declaration: a cut inside one (a truncated
// metadata file) leaves an open brace, or words after the last ';'. Judged here on the tokens,
// before the front-end parses them, so that a cut is refused as a cut, naming its line: the
// front-end alone would take an unbalanced '}' for syntax it does not know and leave the trace to
// babeltrace2, which spins on truncated metadata.
std::optional<ctf::TsdlError> CheckComplete(const std::vector<TsdlToken>& tokens) {
  using Kind = ctf::TsdlError::Kind;
  int depth = 0;
  for (const TsdlToken& t : tokens) {
    if (t.kind != TsdlToken::kPunct) continue;
    if (t.text == "{" || t.text == "(" || t.text == "[") ++depth;
    if (t.text == "}" || t.text == ")" || t.text == "]") {
      if (--depth < 0)
        return ctf::TsdlError{Kind::kInvalid, "unbalanced '" + t.text + "'", t.offset};
    }
  }
  if (depth != 0) {
    return ctf::TsdlError{Kind::kInvalid, "ends inside a declaration (truncated?)",
                          tokens.back().offset};
  }
  if (tokens.size() >= 2) {
    const TsdlToken& last = tokens[tokens.size() - 2];
    if (!(last.kind == TsdlToken::kPunct && last.text == ";"))
      return ctf::TsdlError{Kind::kInvalid, "ends after '" + last.text + "' (truncated?)",
                            last.offset};
  }
  return std::nullopt;
}

enum class Verdict : uint8_t {
  kRead,     // the model is built
  kRefused,  // `error` says why, in one line
  kBeyond,   // TSDL the front-end does not know, not known to be harmful: babeltrace2 decides
};

// The trace's metadata text as the one metadata model (ctf/ctf_metadata.h), by the
// front-end of its format, held to `limits`. A TSDL refusal names the file, the line and the
// offset in the text.
Verdict ReadModel(const std::string& path, const std::string& text, const TsdlLimits& limits,
                  ctf::Metadata* m, std::string* error) {
  if (ctf::IsCtf2Text(text)) {
    // CTF 2 (LTTng 2.15+'s default): the JSON front-end has bounds of its own, and what it
    // refuses is refused here.
    if (ctf::ParseCtf2(text, m, error)) return Verdict::kRead;
    *error = path + ": " + *error;
    return Verdict::kRefused;
  }
  std::optional<ctf::TsdlError> refused;
  try {
    refused = CheckComplete(TokenizeTsdl(text));
  } catch (const TsdlLexError& e) {
    refused = ctf::TsdlError{ctf::TsdlError::Kind::kInvalid, e.message, e.offset};
  }
  if (!refused) {
    ctf::TsdlBounds bounds;
    bounds.max_array_length = limits.max_array_length;
    bounds.max_depth = limits.max_depth;
    ctf::TsdlError e;
    if (ctf::ParseTsdl(text, bounds, m, &e)) return Verdict::kRead;
    if (e.kind == ctf::TsdlError::Kind::kUnsupported) return Verdict::kBeyond;
    refused = std::move(e);
  }
  const size_t at = std::min(refused->offset, text.size());
  *error =
      path + ": line " +
      std::to_string(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n') + 1) +
      " (text offset " + Hex(at) + "): " + PrintableMessage(refused->message);
  return Verdict::kRefused;
}

// What neither front-end sees declaration by declaration: aliases compose types, so a type can
// nest deeper than any declaration (each alias a structure of the one before: 100,000 lines,
// 100,000 levels) or hold more fields than the text has (two of the one before at each level:
// 2^60 integers in 60 lines). Every reader walks a type whole: babeltrace2 copies an alias's
// type at each use, the native decoder compiles every field, the packet layout below recurses.
constexpr uint32_t kMaxTypeDepth = 64;         // the native decoder's own bound
constexpr uint64_t kMaxTypeFields = 1u << 20;  // CTF 2's front-end's bound on field classes

// Every type the trace's scopes use, aliases followed, within kMaxTypeDepth and kMaxTypeFields;
// false and `error` naming the scope otherwise. Iterative (the depth it checks is unbounded),
// each type visited once.
bool ValidateTypes(const ctf::Metadata& m, std::string* error) {
  struct Expansion {
    uint32_t depth = 0;   // 0: not yet known
    uint64_t fields = 0;  // saturated past kMaxTypeFields
  };
  std::vector<Expansion> memo(m.types.size());
  std::vector<uint8_t> open(m.types.size());  // on the walk's stack: a type within itself
  auto children = [&](const ctf::Type& t, std::vector<ctf::TypeId>* out) {
    out->clear();
    for (const auto& [name, member] : t.members) out->push_back(member);
    if (t.element >= 0) out->push_back(t.element);
  };
  auto expand = [&](ctf::TypeId root, const std::string& scope) {
    if (root < 0) return true;
    std::vector<std::pair<ctf::TypeId, bool>> stack{{root, false}};  // type, children done
    std::vector<ctf::TypeId> kids;
    while (!stack.empty()) {
      const auto [id, done] = stack.back();
      stack.pop_back();
      const auto i = static_cast<size_t>(id);
      if (memo[i].depth != 0) continue;
      children(m.type(id), &kids);
      if (!done) {
        open[i] = 1;
        stack.emplace_back(id, true);
        for (const ctf::TypeId k : kids) {
          if (open[static_cast<size_t>(k)]) {
            *error = scope + ": a type contains itself";
            return false;
          }
          if (memo[static_cast<size_t>(k)].depth == 0) stack.emplace_back(k, false);
        }
        continue;
      }
      Expansion e{1, 1};
      for (const ctf::TypeId k : kids) {
        const Expansion& c = memo[static_cast<size_t>(k)];
        e.depth = std::max(e.depth, std::min(c.depth, kMaxTypeDepth) + 1);
        e.fields = std::min(e.fields + c.fields, kMaxTypeFields + 1);
      }
      memo[i] = e;
      open[i] = 0;
    }
    const Expansion& e = memo[static_cast<size_t>(root)];
    if (e.depth > kMaxTypeDepth) {
      *error = scope + ": types nested deeper than " + std::to_string(kMaxTypeDepth) +
               " (aliases followed)";
      return false;
    }
    if (e.fields > kMaxTypeFields) {
      *error =
          scope + ": more than " + std::to_string(kMaxTypeFields) + " fields (aliases followed)";
      return false;
    }
    return true;
  };
  if (!expand(m.packet_header, "the packet header")) return false;
  for (const ctf::StreamClass& sc : m.streams) {
    const std::string stream = "stream class " + std::to_string(sc.id) + "'s ";
    if (!expand(sc.packet_context, stream + "packet context") ||
        !expand(sc.event_header, stream + "event header") ||
        !expand(sc.event_context, stream + "event context"))
      return false;
    for (const ctf::EventClass& ev : sc.events) {
      const std::string event =
          "event '" + PrintableMessage(ev.name) + "' (id " + std::to_string(ev.id) + ")'s ";
      if (!expand(ev.context, event + "context") || !expand(ev.fields, event + "fields"))
        return false;
    }
  }
  return true;
}

// ---- Packets ----------------------------------------------------------------------------

// Where a packet header or context field is, for the integers this checker reads.
struct Field {
  uint64_t bit = 0;  // from the start of the packet
  uint32_t size = 0;
  bool big = false;
};

struct Layout {
  std::map<std::string, Field> fields;  // top-level integers, by name
  std::optional<uint64_t> uuid_bit;     // uuid[16] of bytes
  uint64_t end_bit = 0;
};

// Lays the structure `id` of the model out from `bit`: its top-level integers named by their
// roles, as the TSDL names LTTng gives them (CTF 2 names fields as it likes; roles say what they
// are), the others by their own names. False when a member is of variable size (a string, a
// variant, a sequence) or larger than any file: the packets are then not checked.
bool LayOut(const ctf::Metadata& m, ctf::TypeId id, uint64_t bit, Layout* out) {
  using ctf::Role;
  static constexpr std::pair<Role, const char*> kNames[] = {
      {Role::kPacketMagicNumber, "magic"},
      {Role::kDataStreamClassId, "stream_id"},
      {Role::kDataStreamId, "stream_instance_id"},
      {Role::kPacketTotalLength, "packet_size"},
      {Role::kPacketContentLength, "content_size"},
      {Role::kDefaultClockTimestamp, "timestamp_begin"},
      {Role::kPacketEndClockTimestamp, "timestamp_end"},
      {Role::kDiscardedEventCounter, "events_discarded"},
      {Role::kPacketSequenceNumber, "packet_seq_num"},
      {Role::kCpuId, "cpu_id"},
  };
  constexpr uint64_t kMaxBits = uint64_t{1} << 62;
  auto align_to = [](uint64_t b, uint32_t a) {
    a = std::max<uint32_t>(a, 1);
    return (b + a - 1) / a * a;
  };
  // Moves `at` past a fixed-size type (aligned first); false when it is of variable size. Its
  // recursion and work are bounded by ValidateTypes, which ran first.
  std::function<bool(const ctf::Type&, uint64_t&)> place = [&](const ctf::Type& t,
                                                               uint64_t& at) -> bool {
    at = align_to(at, t.align);
    switch (t.kind) {
      case ctf::Type::kInt:
      case ctf::Type::kFloat:
        at += t.size;
        return true;
      case ctf::Type::kStruct:
        for (const auto& [name, member] : t.members) {
          if (!place(m.type(member), at)) return false;
        }
        return true;
      case ctf::Type::kArray: {
        if (t.length == 0) return true;
        // Each element starts aligned as the first did, so all are laid out alike.
        const ctf::Type& e = m.type(t.element);
        const uint64_t first = at;
        if (!place(e, at)) return false;
        const uint64_t stride = align_to(at - first, e.align);
        if (stride != 0 && (t.length - 1) > (kMaxBits - at) / stride) return false;
        at += (t.length - 1) * stride;
        return at <= kMaxBits;
      }
      default:
        return false;  // strings, variants, sequences
    }
  };
  const ctf::Type& s = m.type(id);
  if (s.kind != ctf::Type::kStruct) return false;
  bit = align_to(bit, s.align);
  for (const auto& [name, member] : s.members) {
    const ctf::Type& t = m.type(member);
    const uint64_t at = align_to(bit, t.align);
    if (t.kind == ctf::Type::kInt) {
      const bool big = (t.byte_order ? t.byte_order : m.byte_order) == 2;
      for (const auto& [role, as] : kNames) {
        if (t.Has(role)) out->fields[as] = Field{at, t.size, big};
      }
      if (t.roles == 0) out->fields.emplace(name, Field{at, t.size, big});
    }
    if (t.kind == ctf::Type::kArray && t.Has(Role::kMetadataStreamUuid) && t.length == 16 &&
        m.type(t.element).kind == ctf::Type::kInt && m.type(t.element).size == 8 && at % 8 == 0)
      out->uuid_bit = at;
    if (!place(t, bit) || bit > kMaxBits) return false;
  }
  out->end_bit = bit;
  return true;
}

// The clock of packet times: the first stream class's default clock (CTF 2), else the first
// clock declared (TSDL: LTTng and perf declare one).
ctf::Clock PacketClock(const ctf::Metadata& m) {
  if (!m.streams.empty()) {
    if (const ctf::Clock* c = m.FindClock(m.streams.front().default_clock)) return *c;
  }
  return m.clocks.empty() ? ctf::Clock{} : m.clocks.front();
}

struct Packet {
  uint64_t offset = 0, size = 0;  // bytes
  uint64_t ts_begin = 0, ts_end = 0;
  bool has_ts = false;
  std::optional<uint64_t> cpu;
};

class FileScan {
 public:
  FileScan(const unsigned char* data, uint64_t size, const ctf::Clock& clock, const Layout& header,
           const std::map<uint64_t, Layout>& contexts, const std::string& uuid_bytes)
      : d_(data),
        n_(size),
        clock_(clock),
        header_(header),
        contexts_(contexts),
        uuid_(uuid_bytes) {}

  // Checks the packet at `off`; empty when sound, else what is wrong.
  std::string Check(uint64_t off, Packet* p) {
    *p = Packet{};
    p->offset = off;
    const uint64_t left = n_ - off;
    if (left * 8 < header_.end_bit) return "truncated packet header";
    if (auto m = Get(header_, "magic", off); m && *m != 0xC1FC1FC1)
      return "bad magic " + Hex(*m) + " (expected 0xc1fc1fc1)";
    if (header_.uuid_bit && uuid_.size() == 16 &&
        memcmp(d_ + off + *header_.uuid_bit / 8, uuid_.data(), 16) != 0)
      return "uuid is not the trace's";
    const uint64_t sid = Get(header_, "stream_id", off).value_or(0);
    auto ctx = contexts_.find(sid);
    if (ctx == contexts_.end()) return "unknown stream_id " + std::to_string(sid);
    if (first_stream_ && *first_stream_ != sid)
      return "stream_id " + std::to_string(sid) + " in a stream of id " +
             std::to_string(*first_stream_);
    const Layout& c = ctx->second;
    if (left * 8 < c.end_bit) return "truncated packet context";
    const std::optional<uint64_t> packet_size = Get(c, "packet_size", off);
    const std::optional<uint64_t> content_size = Get(c, "content_size", off);
    const uint64_t psize = packet_size.value_or(content_size.value_or(left * 8));
    const uint64_t csize = content_size.value_or(psize);
    if (psize % 8 != 0 || psize == 0) return "packet_size " + std::to_string(psize) + " bits";
    if (psize / 8 > left)
      return "packet_size " + std::to_string(psize / 8) + " bytes but " + std::to_string(left) +
             " left in the file";
    if (csize > psize)
      return "content_size " + std::to_string(csize) + " > packet_size " + std::to_string(psize);
    if (csize < c.end_bit)
      return "content_size " + std::to_string(csize) + " bits, less than the packet's header";
    p->size = psize / 8;
    const auto tb = Get(c, "timestamp_begin", off);
    const auto te = Get(c, "timestamp_end", off);
    if (tb && te) {
      if (*tb > *te)
        return "timestamp_begin " + std::to_string(*tb) + " > timestamp_end " + std::to_string(*te);
      if (!ToNs(*te)) return "timestamp_end " + std::to_string(*te) + " beyond 2^63 ns";
      p->ts_begin = *tb;
      p->ts_end = *te;
      p->has_ts = true;
      if (last_begin_ && *tb<*last_begin_&& * last_begin_ - *tb> kMaxBackwards)
        return "timestamp_begin " + std::to_string(*tb) + " goes back before the previous packet";
    }
    if (auto d = Get(c, "events_discarded", off)) {
      if (last_discarded_ && *d < *last_discarded_)
        return "events_discarded " + std::to_string(*d) + " went down from " +
               std::to_string(*last_discarded_);
    }
    if (auto s = Get(c, "packet_seq_num", off)) {
      if (last_seq_ && *s <= *last_seq_)
        return "packet_seq_num " + std::to_string(*s) + " after " + std::to_string(*last_seq_);
    }
    // A stream's packets may name different CPUs: valid CTF, and what LTTng 2.14+ writes with
    // per-channel user-space buffers (every CPU's events in one stream). Each packet's cpu_id
    // decides its events' CPU (readers/cpu_directory.h).
    p->cpu = Get(c, "cpu_id", off);
    if (p->cpu && *p->cpu > 65535) return "cpu_id " + std::to_string(*p->cpu);
    return "";
  }

  // The packet checked sound is taken: what follows is compared with it.
  void Accept(uint64_t off, const Packet& p) {
    const bool first = !first_stream_;
    if (first) {
      first_stream_ = Get(header_, "stream_id", off).value_or(0);
      instance_ = Get(header_, "stream_instance_id", off);
    }
    const Layout& c = contexts_.at(*first_stream_);
    if (first) first_seq_ = Get(c, "packet_seq_num", off);
    if (p.has_ts) last_begin_ = p.ts_begin;
    if (auto d = Get(c, "events_discarded", off)) last_discarded_ = d;
    if (auto s = Get(c, "packet_seq_num", off)) last_seq_ = s;
    if (p.cpu && !cpu_) cpu_ = p.cpu;
  }

  // The clock's ns for `cycles`, if within int64.
  std::optional<int64_t> ToNs(uint64_t cycles) const {
    const ctf::Clock& c = clock_;
    const Wide freq = c.freq;
    const Wide total = static_cast<Wide>(c.offset_s) * 1000000000 +
                       (static_cast<Wide>(c.offset) + cycles) * 1000000000 / freq;
    if (total > INT64_MAX || total < INT64_MIN) return std::nullopt;
    return static_cast<int64_t>(total);
  }

  // The cpu_id of the packet at `off` when its header and context are in the file, sound or not:
  // a stream damaged from its first packet on still says its CPU.
  std::optional<uint64_t> CpuAt(uint64_t off) const {
    const uint64_t left = n_ - off;
    if (left * 8 < header_.end_bit) return std::nullopt;
    auto ctx = contexts_.find(Get(header_, "stream_id", off).value_or(0));
    if (ctx == contexts_.end() || left * 8 < ctx->second.end_bit) return std::nullopt;
    const std::optional<uint64_t> cpu = Get(ctx->second, "cpu_id", off);
    return cpu && *cpu <= 65535 ? cpu : std::nullopt;
  }
  std::optional<uint64_t> cpu() const { return cpu_; }
  std::optional<uint64_t> stream_id() const { return first_stream_; }
  std::optional<uint64_t> instance() const { return instance_; }
  std::optional<uint64_t> first_seq() const { return first_seq_; }

 private:
  // Packets of one stream may overlap a little (LTTng 2.1's regressions) but not by hours.
  static constexpr uint64_t kMaxBackwards = uint64_t{3600} * 1000000000;

  std::optional<uint64_t> Get(const Layout& l, const char* name, uint64_t off) const {
    auto it = l.fields.find(name);
    if (it == l.fields.end()) return std::nullopt;
    const Field& f = it->second;
    if (f.bit % 8 != 0 || f.size % 8 != 0) return std::nullopt;
    const unsigned char* p = d_ + off + f.bit / 8;
    uint64_t v = 0;
    const uint32_t bytes = f.size / 8;
    for (uint32_t i = 0; i < bytes; ++i) {
      v |= uint64_t{f.big ? p[bytes - 1 - i] : p[i]} << (8 * i);
    }
    return v;
  }

  const unsigned char* d_;
  uint64_t n_;
  const ctf::Clock clock_;
  const Layout& header_;
  const std::map<uint64_t, Layout>& contexts_;
  std::string uuid_;
  std::optional<uint64_t> first_stream_, last_begin_, last_discarded_, last_seq_, cpu_;
  std::optional<uint64_t> instance_;
  std::optional<uint64_t> first_seq_;
};

std::string UuidBytes(const std::string& text) {
  std::string hex;
  for (char c : text)
    if (std::isxdigit(static_cast<unsigned char>(c))) hex += c;
  if (hex.size() != 32) return "";
  std::string out;
  for (size_t i = 0; i < 32; i += 2)
    out += static_cast<char>(std::strtoul(hex.substr(i, 2).c_str(), nullptr, 16));
  return out;
}

// The CPU a stream file is for when no packet says: LTTng and perf name them NAME_CPU.
uint16_t CpuFromName(const std::string& name) {
  const size_t us = name.find_last_of('_');
  if (us == std::string::npos) return 0;
  return static_cast<uint16_t>(std::strtoul(name.c_str() + us + 1, nullptr, 10));
}

struct Mapped {
  explicit Mapped(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      size = static_cast<uint64_t>(st.st_size);
      void* m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (m != MAP_FAILED) data = static_cast<const unsigned char*>(m);
    }
    ok = st.st_size == 0 || data;
    close(fd);
  }
  ~Mapped() {
    if (data) munmap(const_cast<unsigned char*>(data), size);
  }
  // The pages the scan has gone past (ctf/mapped_pages.h).
  void Release(uint64_t upto) { ReleaseMappedPagesBefore(data, upto, &released); }
  const unsigned char* data = nullptr;
  uint64_t size = 0;
  uint64_t released = 0;
  bool ok = false;
};

std::mutex views_mutex;
std::vector<std::string>& Views() {
  // Never destroyed: it must outlive views_cleanup, which empties it at exit.
  static auto* views = new std::vector<std::string>;
  return *views;
}
struct ViewsCleanup {
  ~ViewsCleanup() { RemoveViews(); }
} views_cleanup;

std::string MakeView(std::string* error) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/waitpath-view-XXXXXX";
  if (!mkdtemp(templ.data())) {
    *error = "cannot create a scratch directory in " + templ + ": " + strerror(errno);
    return "";
  }
  std::lock_guard lock(views_mutex);
  Views().push_back(templ);
  return templ;
}

}  // namespace

std::string MakeCutView(const std::string& read_dir, const std::string& read_path,
                        uint64_t cut_begin, uint64_t cut_end, std::string* error) {
  const std::string view = MakeView(error);
  if (view.empty()) return "";
  std::error_code ec;
  const std::string cut = fs::path(read_path).filename().string();
  for (const auto& entry : fs::directory_iterator(read_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "index") continue;
    const fs::path dst = fs::path(view) / name;
    if (name != cut) {
      // Links to what the read directory holds (its own links resolved: no chains).
      std::error_code lec;
      fs::path target = fs::absolute(entry.path());
      if (fs::is_symlink(entry.path(), lec)) target = fs::read_symlink(entry.path(), lec);
      fs::create_symlink(target, dst, ec);
      if (ec) break;
      continue;
    }
    std::error_code sec;
    const uint64_t size = fs::file_size(entry.path(), sec);
    if (sec || (cut_begin == 0 && cut_end >= size)) continue;  // nothing left: left out
    std::ifstream in(entry.path(), std::ios::binary);
    std::ofstream out(dst, std::ios::binary);
    std::vector<char> buf(1 << 16);
    auto copy = [&](uint64_t from, uint64_t to) {
      in.clear();
      in.seekg(static_cast<std::streamoff>(from));
      for (uint64_t left = to - from; left > 0 && in;) {
        in.read(buf.data(), static_cast<std::streamsize>(std::min<uint64_t>(left, buf.size())));
        out.write(buf.data(), in.gcount());
        if (in.gcount() == 0) break;
        left -= static_cast<uint64_t>(in.gcount());
      }
    };
    copy(0, std::min(cut_begin, size));
    if (cut_end < size) copy(cut_end, size);
    if (!out) ec = std::make_error_code(std::errc::io_error);
  }
  if (ec) {
    *error = "cannot make a view of " + read_dir + " in " + view + ": " + ec.message();
    return "";
  }
  return view;
}

void RemoveViews() {
  std::lock_guard lock(views_mutex);
  for (const std::string& v : Views()) {
    std::error_code ec;
    fs::remove_all(v, ec);
  }
  Views().clear();
}

bool ReadMetadataText(const std::string& dir, uint64_t max_bytes, std::string* text,
                      std::string* error) {
  const std::string meta_path = (fs::path(dir) / "metadata").string();
  std::string raw;
  if (!ReadFile(meta_path, max_bytes, &raw, error)) return false;
  return MetadataText(meta_path, std::move(raw), text, error);
}

bool MetadataText(const std::string& name, std::string raw, std::string* text, std::string* error) {
  const auto* mp = reinterpret_cast<const unsigned char*>(raw.data());
  if (raw.size() >= 4 &&
      (Load32(mp, false) == kMetadataMagic || Load32(mp, true) == kMetadataMagic)) {
    return DecodePackets(name, raw, text, error);
  }
  *text = std::move(raw);
  return true;
}

CheckedTrace CheckTrace(const std::string& dir, const TsdlLimits& limits, bool make_view) {
  CheckedTrace r;
  r.dir = r.read_dir = dir;
  const std::string meta_path = (fs::path(dir) / "metadata").string();
  if (!ReadMetadataText(dir, limits.max_metadata_bytes, &r.metadata, &r.error)) return r;
  // Refused (r.error says why), or beyond the front-end: then the packets are not checked and
  // babeltrace2 reads the trace as it is (contained).
  ctf::Metadata m;
  if (ReadModel(meta_path, r.metadata, limits, &m, &r.error) != Verdict::kRead) return r;
  if (!ValidateTypes(m, &r.error)) {
    r.error = meta_path + ": " + r.error;
    return r;
  }
  r.uuid = m.uuid;
  // Packet layouts from the model: the header, then each stream class's context.
  Layout header;
  std::map<uint64_t, Layout> contexts;
  if (m.packet_header >= 0 && !LayOut(m, m.packet_header, 0, &header)) return r;
  for (const ctf::StreamClass& sc : m.streams) {
    Layout c;
    if (sc.packet_context >= 0 && !LayOut(m, sc.packet_context, header.end_bit, &c)) return r;
    if (sc.packet_context < 0) c.end_bit = header.end_bit;
    contexts[sc.id] = c;
  }
  const ctf::Clock clock = PacketClock(m);
  if (contexts.empty()) contexts[0].end_bit = header.end_bit;
  r.packets_checked = true;
  const std::string uuid = UuidBytes(r.uuid);

  // Every stream file: its good packets, and the holes.
  struct Kept {
    std::string name;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // offset, size
    std::vector<std::pair<int64_t, int64_t>> times;     // begin, end ns (per range)
    bool damaged = false;
    uint16_t cpu = 0;
    uint64_t stream_id = 0;
    std::optional<uint64_t> instance;
    std::optional<uint64_t> first_seq;
  };
  std::vector<Kept> files;
  std::error_code ec;
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "metadata" || name.empty() || name[0] == '.' || !entry.is_regular_file(ec))
      continue;
    paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  bool any_damage = false;
  for (const fs::path& path : paths) {
    Kept kept;
    kept.name = path.filename().string();
    Mapped m(path.string());
    if (!m.ok) {
      r.warnings.push_back(path.string() + ": cannot read: skipped");
      kept.damaged = any_damage = true;
      files.push_back(kept);
      continue;
    }
    FileScan scan(m.data, m.size, clock, header, contexts, uuid);
    uint64_t off = 0;
    std::optional<int64_t> last_end;  // ns, of the last good packet
    bool in_hole = false;
    std::optional<int64_t> hole_since;
    std::optional<uint64_t> hole_cpu;  // the damaged packet's cpu_id, if it could be read
    std::string hole_why;
    uint64_t hole_at = 0;
    auto close_hole = [&](std::optional<int64_t> resume_ns) {
      StreamLoss loss;
      loss.since_ns = hole_since.value_or(INT64_MIN);
      loss.at_ns = hole_since ? *hole_since : resume_ns.value_or(INT64_MIN);
      // The stream's CPU; a stream damaged from its start, its first packet's (the file name's
      // last number is the tracefile index of a relayd's `chan_CPU_N`, not a CPU).
      const std::optional<uint64_t> cpu = scan.cpu() ? scan.cpu() : hole_cpu;
      loss.cpu = cpu ? static_cast<uint16_t>(*cpu) : CpuFromName(kept.name);
      r.losses.push_back(loss);
      in_hole = false;
    };
    while (off < m.size) {
      Packet p;
      const std::string why = scan.Check(off, &p);
      ++r.packets;
      if (why.empty()) {
        if (in_hole) {
          close_hole(p.has_ts ? scan.ToNs(p.ts_begin) : std::nullopt);
          r.warnings.back() += ", resumes at " + Hex(off);
        }
        scan.Accept(off, p);
        kept.ranges.emplace_back(off, p.size);
        if (p.has_ts) last_end = scan.ToNs(p.ts_end);
        kept.times.emplace_back(p.has_ts ? scan.ToNs(p.ts_begin).value_or(INT64_MIN) : INT64_MIN,
                                p.has_ts ? scan.ToNs(p.ts_end).value_or(INT64_MAX) : INT64_MAX);
        off += p.size;
        m.Release(off);
        continue;
      }
      // Damaged: skip it when what it says of its size leads to a sound packet, else look for
      // the next packet header (its magic, then all of its checks).
      kept.damaged = any_damage = true;
      if (!in_hole) {
        in_hole = true;
        hole_since = last_end;
        hole_why = why;
        hole_at = off;
        if (!hole_cpu) hole_cpu = scan.CpuAt(off);
        r.warnings.push_back(path.string() + ": packet at offset " + Hex(off) + ": " + why +
                             ": skipped (a loss on this CPU)");
      }
      uint64_t next = m.size;
      Packet q;
      if (p.size > 0 && off + p.size < m.size && scan.Check(off + p.size, &q).empty()) {
        next = off + p.size;
      } else if (header.fields.count("magic") && header.fields.at("magic").bit == 0) {
        static const unsigned char le[4] = {0xC1, 0x1F, 0xFC, 0xC1};
        static const unsigned char be[4] = {0xC1, 0xFC, 0x1F, 0xC1};
        const unsigned char* needle = header.fields.at("magic").big ? be : le;
        for (uint64_t at = off + 1; at + 4 <= m.size;) {
          const void* hit = memmem(m.data + at, m.size - at, needle, 4);
          if (!hit) break;
          at = static_cast<uint64_t>(static_cast<const unsigned char*>(hit) - m.data);
          if (scan.Check(at, &q).empty()) {
            next = at;
            break;
          }
          ++at;
        }
      }
      if (next >= m.size) {
        r.warnings.back() = path.string() + ": packet at offset " + Hex(hole_at) + ": " + hole_why +
                            ": the rest of the stream (" + std::to_string(m.size - hole_at) +
                            " bytes) skipped (a loss on this CPU)";
        close_hole(std::nullopt);
        break;
      }
      off = next;
    }
    if (in_hole) close_hole(std::nullopt);
    kept.cpu = scan.cpu() ? static_cast<uint16_t>(*scan.cpu()) : CpuFromName(kept.name);
    kept.stream_id = scan.stream_id().value_or(0);
    kept.instance = scan.instance();
    kept.first_seq = scan.first_seq();
    files.push_back(kept);
  }
  for (const Kept& k : files) {
    if (k.ranges.empty()) continue;
    StreamPackets s;
    s.path = (fs::path(dir) / k.name).string();
    s.read_path = s.path;
    s.cpu = k.cpu;
    s.stream_id = k.stream_id;
    s.instance = k.instance;
    s.first_seq = k.first_seq;
    uint64_t copied = 0;  // a damaged stream's copy holds its sound packets end to end
    for (size_t i = 0; i < k.ranges.size(); ++i) {
      const auto [offset, size] = k.ranges[i];
      s.offsets.push_back(offset);
      s.read_offsets.push_back(k.damaged ? copied : offset);
      s.sizes.push_back(size);
      s.begin_ns.push_back(k.times[i].first);
      s.end_ns.push_back(k.times[i].second);
      copied += size;
    }
    r.streams.push_back(std::move(s));
  }
  if (!any_damage || !make_view) return r;

  // A view: the metadata and sound streams linked, damaged streams copied without their bad
  // packets (no index/: babeltrace2 indexes the copies itself).
  std::string error;
  const std::string view = MakeView(&error);
  if (view.empty()) {
    r.error = dir + ": damaged, and " + error;
    return r;
  }
  fs::create_symlink(fs::absolute(meta_path), fs::path(view) / "metadata", ec);
  for (const Kept& k : files) {
    const fs::path src = fs::absolute(fs::path(dir) / k.name);
    const fs::path dst = fs::path(view) / k.name;
    if (!k.damaged) {
      fs::create_symlink(src, dst, ec);
      continue;
    }
    if (k.ranges.empty()) continue;  // nothing sound: the stream is left out
    std::ifstream in(src, std::ios::binary);
    std::ofstream out(dst, std::ios::binary);
    std::vector<char> buf;
    for (const auto& [o, n] : k.ranges) {
      buf.resize(n);
      in.seekg(static_cast<std::streamoff>(o));
      in.read(buf.data(), static_cast<std::streamsize>(n));
      out.write(buf.data(), static_cast<std::streamsize>(n));
    }
    if (!out) {
      r.error = dir + ": damaged, and cannot write its cleaned copy " + dst.string();
      return r;
    }
  }
  if (ec) {
    r.error = dir + ": damaged, and cannot link its cleaned view in " + view + ": " + ec.message();
    return r;
  }
  r.read_dir = view;
  for (StreamPackets& s : r.streams)
    s.read_path = (fs::path(view) / fs::path(s.path).filename()).string();
  return r;
}

}  // namespace waitpath
