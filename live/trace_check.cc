#include "live/trace_check.h"

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
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include "live/ctf/ctf_metadata.h"
#include "live/mapped_pages.h"
#include "live/tsdl_lexer.h"

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

// ---- Metadata: TSDL ---------------------------------------------------------------------

using Token = TsdlToken;

struct TsdlError {
  std::string message;
  size_t offset;
  bool hazard;  // true: unsafe for babeltrace2 (refuse); false: only beyond this parser
};

struct Type;
using TypeP = std::shared_ptr<const Type>;
struct Type {
  enum Kind : uint8_t { kInt, kFloat, kString, kStruct, kVariant, kArray, kSequence } kind = kInt;
  uint32_t size = 0;   // bits (integers, floats)
  uint32_t align = 8;  // bits
  bool is_signed = false;
  int byte_order = 0;                                 // 0: the trace's, 1: little, 2: big
  std::vector<std::pair<std::string, TypeP>> fields;  // struct, variant
  TypeP element;                                      // array, sequence
  uint64_t length = 0;                                // array
};

class Parser {
 public:
  Parser(std::vector<Token> tokens, const TsdlLimits& limits)
      : t_(std::move(tokens)), limits_(limits) {}

  struct StreamClass {
    TypeP context;
  };

  void Run() {
    while (Peek().kind != Token::kEnd) TopLevel();
  }

  TypeP packet_header;
  std::map<uint64_t, StreamClass> streams;
  std::string uuid;
  int byte_order = 1;  // little unless the trace says
  struct Clock {
    uint64_t freq = 1000000000;
    int64_t offset_s = 0;
    int64_t offset = 0;
  };
  std::map<std::string, Clock> clocks;

 private:
  const Token& Peek(size_t ahead = 0) const { return t_[std::min(p_ + ahead, t_.size() - 1)]; }
  const Token& Take() {
    const Token& t = Peek();
    if (p_ < t_.size() - 1) ++p_;
    return t;
  }
  bool Is(const char* punct, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return (t.kind == Token::kPunct || t.kind == Token::kIdent) && t.text == punct;
  }
  [[noreturn]] void Fail(const std::string& what, bool hazard = false) const {
    throw TsdlError{what, Peek().offset, hazard};
  }
  void Expect(const char* punct) {
    if (Peek().kind == Token::kEnd)
      Fail(std::string("ends where '") + punct + "' is expected", true);
    if (!Is(punct)) Fail(std::string("expected '") + punct + "', found '" + Peek().text + "'");
    Take();
  }

  // Values of `key = value;`: tokens up to ';', joined.
  std::string Value() {
    std::string v;
    while (!Is(";")) {
      if (Peek().kind == Token::kEnd) Fail("ends inside an attribute", true);
      if (Is("{") || Is("}")) Fail("unexpected '" + Peek().text + "' in an attribute");
      v += Take().text;
    }
    Take();
    return v;
  }

  void TopLevel() {
    const Token& t = Peek();
    if (t.kind != Token::kIdent) Fail("unexpected '" + t.text + "' at top level");
    if (t.text == "typealias") return TypeAlias();
    if (t.text == "typedef") return TypeDef();
    if (t.text == "trace" || t.text == "env" || t.text == "clock" || t.text == "stream" ||
        t.text == "event" || t.text == "callsite") {
      const std::string block = Take().text;
      Expect("{");
      Block(block);
      Expect("}");
      Expect(";");
      return;
    }
    if (t.text == "struct" || t.text == "variant" || t.text == "enum" || t.text == "integer" ||
        t.text == "floating_point" || t.text == "string") {
      TypeSpec(0);
      Expect(";");
      return;
    }
    Fail("unexpected '" + t.text + "' at top level");
  }

  void TypeAlias() {
    Take();
    TypeP type = TypeSpec(0);
    // The abstract declarator may carry array dimensions; rare, not supported in layouts.
    Expect(":=");
    std::string name;
    while (Peek().kind == Token::kIdent) name += (name.empty() ? "" : " ") + Take().text;
    if (name.empty()) Fail("typealias without a name");
    aliases_[name] = type;
    Expect(";");
  }

  void TypeDef() {
    Take();
    TypeP type = TypeSpec(0);
    std::vector<std::string> words;
    while (Peek().kind == Token::kIdent) words.push_back(Take().text);
    if (words.empty()) Fail("typedef without a name");
    type = Dimensions(type, 0);
    aliases_[words.back()] = type;
    Expect(";");
  }

  // A typealias or typedef where a block's or a struct's members may stand: read, true.
  bool TypeDeclaration() {
    if (Is("typealias")) {
      TypeAlias();
      return true;
    }
    if (Is("typedef")) {
      TypeDef();
      return true;
    }
    return false;
  }

  // The body of trace/env/clock/stream/event blocks.
  void Block(const std::string& block) {
    std::optional<uint64_t> stream_id;
    TypeP context;
    Parser::Clock clock;
    std::string clock_name;
    while (!Is("}")) {
      if (Peek().kind == Token::kEnd) Fail("ends inside a '" + block + "' block", true);
      if (TypeDeclaration()) continue;
      std::string key;
      while (Peek().kind == Token::kIdent || Is(".")) key += Take().text;
      if (key.empty()) Fail("unexpected '" + Peek().text + "' in a '" + block + "' block");
      if (Is(":=")) {
        Take();
        TypeP type = TypeSpec(0);
        Expect(";");
        if (block == "trace" && key == "packet.header") packet_header = type;
        if (block == "stream" && key == "packet.context") context = type;
        continue;
      }
      Expect("=");
      const std::string value = Value();
      if (block == "trace" && key == "uuid") uuid = value;
      if (block == "trace" && key == "byte_order")
        byte_order = value == "be" || value == "network" ? 2 : 1;
      if (block == "stream" && key == "id") stream_id = std::strtoull(value.c_str(), nullptr, 0);
      if (block == "clock") {
        if (key == "name") clock_name = value;
        if (key == "freq") clock.freq = std::strtoull(value.c_str(), nullptr, 0);
        if (key == "offset_s") clock.offset_s = std::strtoll(value.c_str(), nullptr, 0);
        if (key == "offset") clock.offset = std::strtoll(value.c_str(), nullptr, 0);
      }
    }
    if (block == "stream") {
      const uint64_t id = stream_id.value_or(0);
      if (streams.count(id)) Fail("stream id " + std::to_string(id) + " declared twice", true);
      streams[id].context = context;
    }
    if (block == "clock") {
      if (clock.freq == 0) Fail("clock '" + clock_name + "' with frequency 0", true);
      clocks[clock_name] = clock;
    }
  }

  TypeP Named(const std::string& key) const {
    auto it = aliases_.find(key);
    return it == aliases_.end() ? nullptr : it->second;
  }

  void Depth(uint32_t depth) const {
    if (depth > limits_.max_depth)
      Fail("types nested deeper than " + std::to_string(limits_.max_depth), true);
  }

  static uint32_t Align(const std::string& v) {
    return static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 0));
  }

  // `depth` is the nesting inside the current declaration; nesting_ counts every type being
  // parsed (a typealias inside a struct starts a declaration of its own), so that no text
  // recurses without bound.
  TypeP TypeSpec(uint32_t depth) {
    Depth(depth);
    Depth(nesting_ / 2);
    ++nesting_;
    struct Leave {
      uint32_t& n;
      ~Leave() { --n; }
    } leave{nesting_};
    const Token& t = Peek();
    if (t.kind != Token::kIdent) Fail("expected a type, found '" + t.text + "'");
    if (t.text == "integer" || t.text == "floating_point") {
      const bool integer = Take().text == "integer";
      auto type = std::make_shared<Type>();
      type->kind = integer ? Type::kInt : Type::kFloat;
      bool explicit_align = false;
      uint32_t exp = 0, mant = 0;
      Expect("{");
      while (!Is("}")) {
        if (Peek().kind == Token::kEnd) Fail("ends inside a type", true);
        std::string key;
        while (Peek().kind == Token::kIdent) key += Take().text;
        Expect("=");
        const std::string v = Value();
        if (key == "size") {
          const uint64_t size = std::strtoull(v.c_str(), nullptr, 0);
          if (size == 0 || size > 64) Fail("integer of " + v + " bits (1 to 64)", true);
          type->size = static_cast<uint32_t>(size);
        } else if (key == "align") {
          type->align = Align(v);
          explicit_align = true;
        } else if (key == "signed") {
          type->is_signed = v == "true" || v == "1";
        } else if (key == "byte_order") {
          type->byte_order = v == "le" ? 1 : v == "be" || v == "network" ? 2 : 0;
        } else if (key == "exp_dig") {
          exp = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 0));
        } else if (key == "mant_dig") {
          mant = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 0));
        }
      }
      Take();
      if (!integer) {
        type->size = exp + mant;
        if (type->size != 32 && type->size != 64)
          Fail("floating point of " + std::to_string(type->size) + " bits", true);
      }
      if (integer && type->size == 0) Fail("integer without a size", true);
      if (!explicit_align) type->align = type->size % 8 == 0 ? 8 : 1;
      if (type->align == 0 || (type->align & (type->align - 1)) != 0 || type->align > 1u << 20)
        Fail("alignment of " + std::to_string(type->align) + " bits", true);
      return type;
    }
    if (t.text == "string") {
      Take();
      if (Is("{")) {
        Take();
        while (!Is("}")) {
          if (Peek().kind == Token::kEnd) Fail("ends inside a type", true);
          Take();
        }
        Take();
      }
      auto type = std::make_shared<Type>();
      type->kind = Type::kString;
      return type;
    }
    if (t.text == "enum") {
      Take();
      std::string name;
      if (Peek().kind == Token::kIdent) name = Take().text;
      TypeP container;
      if (Is(":")) {
        Take();
        if (Is("integer")) {
          container = TypeSpec(depth + 1);
        } else {
          std::string cname;
          while (Peek().kind == Token::kIdent) cname += (cname.empty() ? "" : " ") + Take().text;
          container = Named(cname);
          if (!container) Fail("unknown enum container type '" + cname + "'");
        }
      } else if (!Is("{")) {
        TypeP known = Named("enum " + name);
        if (!known) Fail("unknown enum '" + name + "'");
        return known;
      } else {
        container = Named("int");
        if (!container) Fail("enum without a container type and no 'int' alias");
      }
      if (container->kind != Type::kInt) Fail("enum container is not an integer", true);
      Expect("{");
      while (!Is("}")) {
        if (Peek().kind == Token::kEnd) Fail("ends inside an enum", true);
        Take();
      }
      Take();
      if (!name.empty()) aliases_["enum " + name] = container;
      return container;
    }
    if (t.text == "struct" || t.text == "variant") {
      const bool is_struct = Take().text == "struct";
      const std::string kw = is_struct ? "struct " : "variant ";
      std::string name;
      if (Peek().kind == Token::kIdent) name = Take().text;
      bool tagged = false;
      if (!is_struct && Is("<")) {
        tagged = true;
        while (!Is(">")) {
          if (Peek().kind == Token::kEnd) Fail("ends inside a variant tag", true);
          Take();
        }
        Take();
      }
      (void)tagged;
      if (!Is("{")) {
        TypeP known = Named(kw + name);
        if (!known) Fail("unknown " + kw + "'" + name + "'");
        if (is_struct && Is("align")) return StructAlign(known);
        return known;
      }
      Take();
      auto type = std::make_shared<Type>();
      type->kind = is_struct ? Type::kStruct : Type::kVariant;
      std::set<std::string> names;
      uint32_t align = 1;
      while (!Is("}")) {
        if (Peek().kind == Token::kEnd) Fail("ends inside a " + kw + "body", true);
        if (TypeDeclaration()) continue;
        TypeP ftype = TypeSpec(depth + 1);
        for (;;) {
          // A declarator: the words after the type name are its name (the type name took its
          // own words already, see TypeName).
          if (Peek().kind != Token::kIdent)
            Fail("expected a member name, found '" + Peek().text + "'");
          const std::string fname = Take().text;
          TypeP full = Dimensions(ftype, depth + 1);
          if (!names.insert(fname).second)
            Fail("duplicate member '" + fname + "' in " + kw + (name.empty() ? "" : name), true);
          type->fields.emplace_back(fname, full);
          align = std::max(align, AlignOf(*full));
          if (!Is(",")) break;
          Take();
        }
        Expect(";");
      }
      Take();
      type->align = align;
      TypeP result = type;
      if (is_struct && Is("align")) result = StructAlign(result);
      if (!name.empty()) aliases_[kw + name] = result;
      return result;
    }
    return TypeName();
  }

  TypeP StructAlign(TypeP type) {
    Take();
    Expect("(");
    const Token& n = Take();
    if (n.kind != Token::kNumber) Fail("align() needs a number");
    Expect(")");
    auto copy = std::make_shared<Type>(*type);
    const uint64_t a = n.value;
    if (a == 0 || (a & (a - 1)) != 0 || a > 1u << 20) Fail("struct alignment of " + n.text, true);
    copy->align = std::max<uint32_t>(copy->align, static_cast<uint32_t>(a));
    return copy;
  }

  // A type named by an alias: the longest run of words that names one, leaving at least one
  // word for the declarator when one follows.
  TypeP TypeName() {
    std::vector<std::string> words;
    for (size_t k = 0; Peek(k).kind == Token::kIdent; ++k) words.push_back(Peek(k).text);
    for (size_t n = words.size(); n >= 1; --n) {
      std::string key;
      for (size_t k = 0; k < n; ++k) key += (k ? " " : "") + words[k];
      if (TypeP type = Named(key)) {
        p_ += n;
        return type;
      }
    }
    Fail("unknown type '" + (words.empty() ? Peek().text : words[0]) + "'");
  }

  TypeP Dimensions(TypeP type, uint32_t depth) {
    std::vector<std::pair<bool, uint64_t>> dims;  // static?, length
    while (Is("[")) {
      Take();
      if (Peek().kind == Token::kNumber && Is("]", 1)) {
        const Token& n = Take();
        if (n.value > limits_.max_array_length)
          Fail("array length " + n.text + " (at most " + std::to_string(limits_.max_array_length) +
                   ")",
               true);
        dims.emplace_back(true, n.value);
      } else {
        while (!Is("]")) {
          if (Peek().kind == Token::kEnd) Fail("ends inside an array length", true);
          Take();
        }
        dims.emplace_back(false, 0);
      }
      Expect("]");
    }
    // int a[2][3]: an array of 2 arrays of 3.
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      Depth(depth + static_cast<uint32_t>(dims.size()));
      auto array = std::make_shared<Type>();
      array->kind = it->first ? Type::kArray : Type::kSequence;
      array->length = it->second;
      array->element = type;
      array->align = AlignOf(*type);
      type = array;
    }
    return type;
  }

  static uint32_t AlignOf(const Type& t) { return std::max<uint32_t>(t.align, 1); }

  std::vector<Token> t_;
  size_t p_ = 0;
  const TsdlLimits& limits_;
  std::map<std::string, TypeP> aliases_;
  uint32_t nesting_ = 0;
};

// The text must end after a complete top-level declaration: a cut inside one (a truncated
// metadata file) leaves an open brace, or words after the last ';'.
std::optional<TsdlError> CheckComplete(const std::vector<Token>& tokens) {
  int depth = 0;
  for (const Token& t : tokens) {
    if (t.kind != Token::kPunct) continue;
    if (t.text == "{" || t.text == "(" || t.text == "[") ++depth;
    if (t.text == "}" || t.text == ")" || t.text == "]") {
      if (--depth < 0) return TsdlError{"unbalanced '" + t.text + "'", t.offset, true};
    }
  }
  if (depth != 0)
    return TsdlError{"ends inside a declaration (truncated?)", tokens.back().offset, true};
  if (tokens.size() >= 2) {
    const Token& last = tokens[tokens.size() - 2];
    if (!(last.kind == Token::kPunct && last.text == ";"))
      return TsdlError{"ends after '" + last.text + "' (truncated?)", last.offset, true};
  }
  return std::nullopt;
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
  uint32_t align = 8;
};

// Lays a struct of fixed-size members out from `bit`; false when one is of variable size.
bool LayOut(const Type& s, uint64_t bit, int trace_order, Layout* out) {
  if (s.kind != Type::kStruct) return false;
  auto align_to = [](uint64_t b, uint32_t a) { return (b + a - 1) / a * a; };
  bit = align_to(bit, std::max<uint32_t>(s.align, 1));
  std::function<bool(const Type&, uint64_t&, const std::string*)> place =
      [&](const Type& t, uint64_t& at, const std::string* name) -> bool {
    at = align_to(at, std::max<uint32_t>(t.align, 1));
    switch (t.kind) {
      case Type::kInt:
      case Type::kFloat:
        if (name && t.kind == Type::kInt) {
          const int order = t.byte_order ? t.byte_order : trace_order;
          out->fields[*name] = Field{at, t.size, order == 2};
        }
        at += t.size;
        return true;
      case Type::kArray: {
        if (name && *name == "uuid" && t.length == 16 && t.element->kind == Type::kInt &&
            t.element->size == 8 && at % 8 == 0)
          out->uuid_bit = at;
        for (uint64_t i = 0; i < t.length; ++i)
          if (!place(*t.element, at, nullptr)) return false;
        return true;
      }
      case Type::kStruct:
        for (const auto& [n, f] : t.fields)
          if (!place(*f, at, nullptr)) return false;
        return true;
      default:
        return false;  // strings, variants, sequences
    }
  };
  for (const auto& [n, f] : s.fields)
    if (!place(*f, bit, &n)) return false;
  out->end_bit = bit;
  out->align = std::max<uint32_t>(s.align, 1);
  return true;
}

// The same from the metadata model (live/ctf/ctf_metadata.h): the integers are named by their
// roles, as the TSDL names LTTng gives them (CTF 2 names fields as it likes; roles say what
// they are).
bool LayOutModel(const ctf::Metadata& m, ctf::TypeId id, uint64_t bit, Layout* out) {
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
  const ctf::Type& s = m.type(id);
  if (s.kind != ctf::Type::kStruct) return false;
  auto align_to = [](uint64_t b, uint32_t a) { return (b + a - 1) / a * a; };
  bit = align_to(bit, std::max<uint32_t>(s.align, 1));
  for (const auto& [name, member] : s.members) {
    const ctf::Type& t = m.type(member);
    bit = align_to(bit, std::max<uint32_t>(t.align, 1));
    switch (t.kind) {
      case ctf::Type::kInt: {
        const int order = t.byte_order ? t.byte_order : m.byte_order;
        for (const auto& [role, as] : kNames) {
          if (t.Has(role)) out->fields[as] = Field{bit, t.size, order == 2};
        }
        if (t.roles == 0) out->fields.emplace(name, Field{bit, t.size, order == 2});
        bit += t.size;
        break;
      }
      case ctf::Type::kFloat:
        bit += t.size;
        break;
      case ctf::Type::kArray: {
        const ctf::Type& e = m.type(t.element);
        if (e.kind != ctf::Type::kInt || e.size % 8 != 0 || t.length > (1u << 16)) return false;
        if (t.Has(Role::kMetadataStreamUuid) && t.length == 16 && e.size == 8 && bit % 8 == 0)
          out->uuid_bit = bit;
        bit += t.length * e.size;
        break;
      }
      default:
        return false;  // a header or context of variable size: not laid out, not checked
    }
  }
  out->end_bit = bit;
  out->align = std::max<uint32_t>(s.align, 1);
  return true;
}

struct Packet {
  uint64_t offset = 0, size = 0;  // bytes
  uint64_t ts_begin = 0, ts_end = 0;
  bool has_ts = false;
  std::optional<uint64_t> cpu;
};

class FileScan {
 public:
  FileScan(const unsigned char* data, uint64_t size, const Parser::Clock& clock,
           const Layout& header, const std::map<uint64_t, Layout>& contexts,
           const std::string& uuid_bytes)
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
    // decides its events' CPU (live/cpu_directory.h).
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
    const Parser::Clock& c = clock_;
    const Wide freq = c.freq;
    const Wide total = static_cast<Wide>(c.offset_s) * 1000000000 +
                       (static_cast<Wide>(c.offset) + cycles) * 1000000000 / freq;
    if (total > INT64_MAX || total < INT64_MIN) return std::nullopt;
    return static_cast<int64_t>(total);
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
  const Parser::Clock clock_;
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
  // The pages the scan has gone past (live/mapped_pages.h).
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

namespace {

bool ParseMetadata(const std::string& path, const std::string& text, const TsdlLimits& limits,
                   Parser** out, std::unique_ptr<Parser>* holder, std::string* error,
                   std::string* note) {
  auto line_of = [&](size_t offset) {
    return std::to_string(
        std::count(text.begin(), text.begin() + std::min(offset, text.size()), '\n') + 1);
  };
  try {
    std::vector<Token> tokens;
    try {
      tokens = TokenizeTsdl(text);
    } catch (const TsdlLexError& e) {
      throw TsdlError{e.message, e.offset, true};
    }
    if (auto e = CheckComplete(tokens)) {
      *error = path + ": line " + line_of(e->offset) + " (text offset " + Hex(e->offset) +
               "): " + e->message;
      return false;
    }
    *holder = std::make_unique<Parser>(std::move(tokens), limits);
    (*holder)->Run();
    *out = holder->get();
  } catch (const TsdlError& e) {
    const std::string where =
        path + ": line " + line_of(e.offset) + " (text offset " + Hex(e.offset) + "): ";
    if (e.hazard) {
      *error = where + e.message;
      return false;
    }
    // Beyond this parser, not known to be harmful: babeltrace2 decides (contained).
    *note = where + e.message;
    *out = nullptr;
  }
  return true;
}

}  // namespace

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
  // Packet layouts: the header, then each stream class's context; the clock of their times.
  Layout header;
  std::map<uint64_t, Layout> contexts;
  Parser::Clock clock;
  if (!r.metadata.empty() && r.metadata[0] == '\x1e') {
    // CTF 2 (LTTng 2.15+'s default): its JSON front-end builds the one metadata model; a
    // metadata the model refuses is refused here, in one line.
    ctf::Metadata m;
    std::string error;
    if (!ctf::ParseMetadataText(r.metadata, &m, &error)) {
      r.error = meta_path + ": " + error;
      return r;
    }
    r.uuid = m.uuid;
    if (m.packet_header >= 0 && !LayOutModel(m, m.packet_header, 0, &header)) return r;
    for (const ctf::StreamClass& sc : m.streams) {
      Layout c;
      if (sc.packet_context >= 0 && !LayOutModel(m, sc.packet_context, header.end_bit, &c))
        return r;
      if (sc.packet_context < 0) c.end_bit = header.end_bit;
      contexts[sc.id] = c;
    }
    const ctf::Clock* first = m.clocks.empty() ? nullptr : &m.clocks.front();
    for (const ctf::StreamClass& sc : m.streams) {
      if (const ctf::Clock* c = m.FindClock(sc.default_clock)) first = c;
      break;
    }
    if (first) clock = Parser::Clock{first->freq, first->offset_s, first->offset};
  } else {
    std::unique_ptr<Parser> holder;
    Parser* meta = nullptr;
    std::string note;
    if (!ParseMetadata(meta_path, r.metadata, limits, &meta, &holder, &r.error, &note)) return r;
    if (!meta) return r;  // packets not checked: babeltrace2 reads the trace as it is
    r.uuid = meta->uuid;
    if (meta->packet_header && !LayOut(*meta->packet_header, 0, meta->byte_order, &header))
      return r;
    for (const auto& [id, sc] : meta->streams) {
      Layout c;
      if (sc.context && !LayOut(*sc.context, header.end_bit, meta->byte_order, &c)) return r;
      if (!sc.context) c.end_bit = header.end_bit;
      contexts[id] = c;
    }
    if (!meta->clocks.empty()) clock = meta->clocks.begin()->second;
  }
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
    std::string hole_why;
    uint64_t hole_at = 0;
    auto close_hole = [&](std::optional<int64_t> resume_ns) {
      StreamLoss loss;
      loss.since_ns = hole_since.value_or(INT64_MIN);
      loss.at_ns = hole_since ? *hole_since : resume_ns.value_or(INT64_MIN);
      loss.cpu = scan.cpu() ? static_cast<uint16_t>(*scan.cpu()) : CpuFromName(kept.name);
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
