#include "ctf/ctf_metadata.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <utility>

#include "base/untrusted_name.h"
#include "ctf/ctf2_metadata.h"
#include "ctf/trace_check.h"
#include "ctf/tsdl_lexer.h"

namespace waitpath::ctf {
namespace {

using Token = TsdlToken;
using Kind = TsdlError::Kind;

// A number as TSDL writes it (decimal, 0x hex, 0 octal, u/l suffixes), optionally negative.
bool ToInt(const std::string& v, int64_t* out) {
  if (v.empty()) return false;
  const bool neg = v[0] == '-';
  const std::string digits = neg ? v.substr(1) : v;
  if (digits.empty() || !std::isdigit(static_cast<unsigned char>(digits[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long u = std::strtoull(digits.c_str(), &end, 0);
  if (errno == ERANGE) return false;
  while (end && (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')) ++end;
  if (end && *end) return false;
  *out = neg ? -static_cast<int64_t>(u) : static_cast<int64_t>(u);
  return true;
}

// The same without a sign, over all 64 bits; beyond them UINT64_MAX (as the tokenizer saturates),
// which every bound refuses.
bool ToUint(const std::string& v, uint64_t* out) {
  if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long u = std::strtoull(v.c_str(), &end, 0);
  while (end && (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')) ++end;
  if (end && *end) return false;
  *out = errno == ERANGE ? UINT64_MAX : u;
  return true;
}

// The encodings babeltrace2 knows (any other refuses the trace there).
bool KnownEncoding(const std::string& v) {
  for (const char* known : {"none", "UTF8", "utf8", "UTF-8", "utf-8", "ASCII", "ascii"}) {
    if (v == known) return true;
  }
  return false;
}

// A TSDL field path (a variant's tag, a sequence's length) as a location: absolute when it
// starts with a scope's name, relative (TSDL's lexical scoping) otherwise.
FieldLocation TsdlLocation(const std::string& ref) {
  static constexpr std::pair<const char*, FieldLocation::Origin> kScopes[] = {
      {"trace.packet.header.", FieldLocation::Origin::kPacketHeader},
      {"stream.packet.context.", FieldLocation::Origin::kPacketContext},
      {"stream.event.header.", FieldLocation::Origin::kEventHeader},
      {"stream.event.context.", FieldLocation::Origin::kCommonContext},
      {"event.context.", FieldLocation::Origin::kSpecificContext},
      {"event.fields.", FieldLocation::Origin::kPayload}};
  FieldLocation loc;
  loc.syntax = FieldLocation::Syntax::kTsdl;
  loc.text = ref;
  std::string rest = ref;
  for (const auto& [prefix, origin] : kScopes) {
    if (ref.rfind(prefix, 0) == 0) {
      loc.origin = origin;
      rest = ref.substr(std::string_view(prefix).size());
      break;
    }
  }
  for (size_t from = 0;;) {
    const size_t dot = rest.find('.', from);
    loc.path.emplace_back(rest.substr(from, dot == std::string::npos ? dot : dot - from));
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  return loc;
}

// TSDL text to the model. Fail: syntax it does not know (babeltrace2 may read it); Refuse: text
// no reader should be handed (TsdlError::Kind::kInvalid), with its position.
class Parser {
 public:
  Parser(std::vector<Token> tokens, const TsdlBounds& bounds, Metadata* m)
      : t_(std::move(tokens)), bounds_(bounds), m_(*m) {}

  void Run() {
    while (!AtEnd()) TopLevel();
    AttachEvents();
  }

 private:
  const Token& Peek(size_t ahead = 0) const { return t_[std::min(p_ + ahead, t_.size() - 1)]; }
  const Token& Take() {
    const Token& t = Peek();
    if (p_ < t_.size() - 1) ++p_;
    return t;
  }
  bool Is(const char* text, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return (t.kind == Token::kPunct || t.kind == Token::kIdent) && t.text == text;
  }
  bool AtEnd() const { return Peek().kind == Token::kEnd; }

  [[noreturn]] void Fail(const std::string& what) const {
    throw TsdlError{Kind::kUnsupported, what, Peek().offset};
  }
  [[noreturn]] static void RefuseAt(size_t offset, const std::string& what) {
    throw TsdlError{Kind::kInvalid, what, offset};
  }
  [[noreturn]] void Refuse(const std::string& what) const { RefuseAt(Peek().offset, what); }
  // The last attribute's value is wrong: refused where it is written.
  [[noreturn]] void RefuseValue(const std::string& what) const { RefuseAt(value_at_, what); }
  // Text that ends inside something was cut short.
  void NotAtEnd(const std::string& inside) const {
    if (AtEnd()) Refuse("ends inside " + inside);
  }
  void Expect(const char* text) {
    if (AtEnd()) Refuse(std::string("ends where '") + text + "' is expected");
    if (!Is(text)) Fail(std::string("expected '") + text + "', found '" + Peek().text + "'");
    Take();
  }

  // The value of `key = value;`: its tokens up to ';', joined.
  std::string Value() {
    value_at_ = Peek().offset;
    std::string v;
    while (!Is(";")) {
      NotAtEnd("an attribute");
      if (Is("{") || Is("}")) Fail("unexpected '" + Peek().text + "' in an attribute");
      v += Take().text;
    }
    Take();
    return v;
  }
  // Where TSDL wants a number, babeltrace2 refuses anything else.
  uint64_t UintValue(const std::string& v) const {
    uint64_t n = 0;
    if (!ToUint(v, &n)) RefuseValue("'" + v + "' is not an unsigned number");
    return n;
  }
  int64_t IntValue(const std::string& v) const {
    int64_t n = 0;
    if (!ToInt(v, &n)) RefuseValue("'" + v + "' is not a number");
    return n;
  }
  // be, le, network, or (in a type) native: the trace's (0). babeltrace2 refuses any other.
  uint8_t ByteOrder(const std::string& v, bool in_type) const {
    if (v == "le") return 1;
    if (v == "be" || v == "network") return 2;
    if (in_type && v == "native") return 0;
    RefuseValue("byte order '" + v + "' (" +
                (in_type ? "le, be, network or native" : "le, be or network") + ")");
  }

  TypeId Add(Type t) {
    m_.types.push_back(std::move(t));
    return static_cast<TypeId>(m_.types.size() - 1);
  }

  void TopLevel() {
    if (Peek().kind != Token::kIdent) Fail("unexpected '" + Peek().text + "' at top level");
    if (Declaration()) return;
    const std::string& w = Peek().text;
    if (w == "trace" || w == "env" || w == "clock" || w == "stream" || w == "event" ||
        w == "callsite") {
      const std::string block = Take().text;
      Expect("{");
      Block(block);
      Expect("}");
      Expect(";");
      return;
    }
    if (w == "struct" || w == "variant" || w == "enum" || w == "integer" || w == "floating_point" ||
        w == "string") {
      TypeSpec(0);
      Expect(";");
      return;
    }
    Fail("unexpected '" + w + "' at top level");
  }

  // typealias / typedef; true when one was read.
  bool Declaration() {
    if (Is("typealias")) {
      Take();
      const TypeId type = TypeSpec(0);
      Expect(":=");
      std::string name;
      while (Peek().kind == Token::kIdent) name += (name.empty() ? "" : " ") + Take().text;
      if (name.empty()) Fail("typealias without a name");
      aliases_[name] = type;
      Expect(";");
      return true;
    }
    if (Is("typedef")) {
      Take();
      const TypeId type = TypeSpec(0);
      if (Peek().kind != Token::kIdent) Fail("typedef without a name");
      const std::string name = Take().text;
      aliases_[name] = Dimensions(type, 0);
      Expect(";");
      return true;
    }
    return false;
  }

  void Block(const std::string& block) {
    const size_t at = Peek().offset;
    EventClass ev;
    StreamClass sc;
    Clock clock;
    while (!Is("}")) {
      NotAtEnd("a '" + block + "' block");
      if (Declaration()) continue;
      std::string key;
      while (Peek().kind == Token::kIdent || Is(".")) key += Take().text;
      if (key.empty()) Fail("unexpected '" + Peek().text + "' in a '" + block + "' block");
      if (Is(":=")) {
        Take();
        const TypeId type = TypeSpec(0);
        Expect(";");
        if (block == "trace" && key == "packet.header") m_.packet_header = type;
        if (block == "stream" && key == "packet.context") sc.packet_context = type;
        if (block == "stream" && key == "event.header") sc.event_header = type;
        if (block == "stream" && key == "event.context") sc.event_context = type;
        if (block == "event" && key == "context") ev.context = type;
        if (block == "event" && key == "fields") ev.fields = type;
        continue;
      }
      Expect("=");
      const std::string value = Value();
      if (block == "trace") {
        // babeltrace2 reads TSDL as CTF 1.8 only; CTF 2's metadata is JSON (ParseCtf2).
        if (key == "major" && UintValue(value) != 1)
          RefuseValue("trace major version " + value + " (TSDL is CTF 1.8: major = 1)");
        if (key == "minor" && UintValue(value) != 8)
          RefuseValue("trace minor version " + value + " (TSDL is CTF 1.8: minor = 8)");
        if (key == "uuid") m_.uuid = value;
        if (key == "byte_order") m_.byte_order = ByteOrder(value, false);
      } else if (block == "env") {
        m_.env[key] = value;
      } else if (block == "clock") {
        if (key == "name") clock.name = value;
        if (key == "freq") clock.freq = UintValue(value);
        if (key == "offset_s") clock.offset_s = IntValue(value);  // may be negative
        if (key == "offset") clock.offset = static_cast<int64_t>(UintValue(value));
        if (key == "uuid") clock.uid = value;
        if (key == "absolute" && (value == "true" || value == "TRUE" || value == "1"))
          clock.origin = Clock::Origin::kUnixEpoch;
      } else if (block == "stream") {
        if (key == "id") sc.id = UintValue(value);
      } else if (block == "event") {
        if (key == "name") ev.name = value;
        if (key == "id") ev.id = UintValue(value);
        if (key == "stream_id") ev.stream_id = UintValue(value);
      }
    }
    if (block == "clock") {
      if (clock.freq == 0) RefuseAt(at, "clock '" + clock.name + "' of frequency 0");
      m_.clocks.push_back(clock);
    } else if (block == "stream") {
      if (m_.FindStream(sc.id))
        RefuseAt(at, "stream id " + std::to_string(sc.id) + " declared twice");
      m_.streams.push_back(std::move(sc));
      std::sort(m_.streams.begin(), m_.streams.end(),
                [](const StreamClass& a, const StreamClass& b) { return a.id < b.id; });
    } else if (block == "event") {
      pending_events_.emplace_back(std::move(ev), at);
    }
  }

  // Events may come before their stream's block (never in practice): attached at the end.
  // babeltrace2 refuses an event of a stream never declared, and an event id declared twice.
  void AttachEvents() {
    if (m_.streams.empty() && !pending_events_.empty()) m_.streams.emplace_back();
    for (auto& [ev, at] : pending_events_) {
      auto it = std::find_if(m_.streams.begin(), m_.streams.end(),
                             [&](const StreamClass& s) { return s.id == ev.stream_id; });
      if (it == m_.streams.end()) {
        RefuseAt(at,
                 "event '" + ev.name + "' of undeclared stream " + std::to_string(ev.stream_id));
      }
      auto pos = std::lower_bound(it->events.begin(), it->events.end(), ev.id,
                                  [](const EventClass& e, uint64_t id) { return e.id < id; });
      if (pos != it->events.end() && pos->id == ev.id)
        RefuseAt(at, "event id " + std::to_string(ev.id) + " declared twice");
      it->events.insert(pos, std::move(ev));
    }
    pending_events_.clear();
  }

  TypeId Named(const std::string& key) const {
    auto it = aliases_.find(key);
    return it == aliases_.end() ? -1 : it->second;
  }

  // `depth`: the nesting inside the current declaration; nesting_ counts the types being parsed
  // at once (a typealias inside a structure begins a declaration of its own at depth 0).
  void Depth(uint32_t depth) const {
    if (depth > bounds_.max_depth || nesting_ / 2 > bounds_.max_depth)
      Refuse("types nested deeper than " + std::to_string(bounds_.max_depth));
  }

  TypeId TypeSpec(uint32_t depth) {
    Depth(depth);
    ++nesting_;
    struct Leave {
      uint32_t& n;
      ~Leave() { --n; }
    } leave{nesting_};
    if (Peek().kind != Token::kIdent) Fail("expected a type, found '" + Peek().text + "'");
    const std::string w = Peek().text;
    if (w == "integer" || w == "floating_point") return Scalar();
    if (w == "string") return String();
    if (w == "enum") return Enum(depth);
    if (w == "struct" || w == "variant") return Compound(depth);
    return TypeName();
  }

  TypeId String() {
    Take();
    if (Is("{")) {
      Take();
      while (!Is("}")) {
        NotAtEnd("a string type");
        std::string key;
        while (Peek().kind == Token::kIdent) key += Take().text;
        Expect("=");
        const std::string v = Value();
        if (key == "encoding" && !KnownEncoding(v)) RefuseValue("unknown encoding '" + v + "'");
      }
      Take();
    }
    Type t;
    t.kind = Type::kString;
    return Add(std::move(t));
  }

  TypeId Scalar() {
    const bool integer = Take().text == "integer";
    Type t;
    t.kind = integer ? Type::kInt : Type::kFloat;
    bool explicit_align = false;
    uint32_t exp = 0, mant = 0;
    Expect("{");
    while (!Is("}")) {
      NotAtEnd("a type");
      std::string key;
      while (Peek().kind == Token::kIdent) key += Take().text;
      Expect("=");
      const std::string v = Value();
      if (key == "size") {
        const uint64_t size = UintValue(v);
        if (size == 0 || size > 64) RefuseValue("integer of " + v + " bits (1 to 64)");
        t.size = static_cast<uint32_t>(size);
      } else if (key == "align") {
        const uint64_t a = UintValue(v);
        if (a == 0 || (a & (a - 1)) != 0 || a > (1u << 20))
          RefuseValue("alignment of " + v + " bits");
        t.align = static_cast<uint32_t>(a);
        explicit_align = true;
      } else if (key == "signed") {
        t.is_signed = v == "true" || v == "1" || v == "TRUE";
      } else if (key == "byte_order") {
        t.byte_order = ByteOrder(v, true);
      } else if (key == "encoding") {
        if (!KnownEncoding(v)) RefuseValue("unknown encoding '" + v + "'");
        t.text = v != "none";
      } else if (key == "map") {
        // clock.NAME.value
        if (v.rfind("clock.", 0) == 0 && v.size() > 12 && v.compare(v.size() - 6, 6, ".value") == 0)
          t.clock = v.substr(6, v.size() - 12);
      } else if (key == "base") {
        // 2, 8, 10, 16 or their names (CTF 1.8, 4.1.5); anything else keeps decimal.
        if (v == "2" || v == "binary" || v == "b") t.base = 2;
        if (v == "8" || v == "octal" || v == "oct" || v == "o") t.base = 8;
        if (v == "16" || v == "hexadecimal" || v == "hex" || v == "x" || v == "X" || v == "p")
          t.base = 16;
      } else if (key == "exp_dig") {
        exp = static_cast<uint32_t>(std::min<uint64_t>(UintValue(v), 1u << 16));
      } else if (key == "mant_dig") {
        mant = static_cast<uint32_t>(std::min<uint64_t>(UintValue(v), 1u << 16));
      }
    }
    Take();
    if (!integer) {
      t.size = exp + mant;
      if (t.size != 32 && t.size != 64)
        Refuse("floating point of " + std::to_string(t.size) + " bits (32 or 64)");
    }
    if (integer && t.size == 0) Refuse("integer without a size");
    if (!explicit_align) t.align = t.size % 8 == 0 ? 8 : 1;
    return Add(std::move(t));
  }

  TypeId Enum(uint32_t depth) {
    Take();
    std::string name;
    if (Peek().kind == Token::kIdent) name = Take().text;
    TypeId container = -1;
    if (Is(":")) {
      Take();
      if (Is("integer")) {
        container = TypeSpec(depth + 1);
      } else {
        std::string cname;
        while (Peek().kind == Token::kIdent) cname += (cname.empty() ? "" : " ") + Take().text;
        container = Named(cname);
        if (container < 0) Fail("unknown enum container type '" + cname + "'");
      }
    } else if (!Is("{")) {
      const TypeId known = Named("enum " + name);
      if (known < 0) Fail("unknown enum '" + name + "'");
      return known;
    } else {
      container = Named("int");
      if (container < 0) Fail("enum without a container type and no 'int' alias");
    }
    if (m_.type(container).kind != Type::kInt) Refuse("enum container is not an integer");
    Type t = m_.type(container);
    t.is_enum = true;
    t.mappings.clear();
    Expect("{");
    int64_t next = 0;
    while (!Is("}")) {
      NotAtEnd("an enum");
      if (Peek().kind != Token::kIdent && Peek().kind != Token::kString)
        Fail("expected an enum label, found '" + Peek().text + "'");
      EnumMapping mapping;
      mapping.label = Take().text;
      mapping.lo = mapping.hi = next;
      if (Is("=")) {
        Take();
        mapping.lo = mapping.hi = EnumValue();
        if (Is("...")) {
          Take();
          mapping.hi = EnumValue();
        }
      }
      next = mapping.hi + 1;
      t.mappings.push_back(std::move(mapping));
      if (Is(","))
        Take();
      else if (!Is("}"))
        Fail("expected ',' or '}' in an enum, found '" + Peek().text + "'");
    }
    Take();
    const TypeId id = Add(std::move(t));
    if (!name.empty()) aliases_["enum " + name] = id;
    return id;
  }

  int64_t EnumValue() {
    std::string v;
    if (Is("-")) v += Take().text;
    if (Peek().kind != Token::kNumber) Fail("expected a number, found '" + Peek().text + "'");
    v += Take().text;
    int64_t n = 0;
    if (!ToInt(v, &n)) Fail("'" + v + "' is not a number");
    return n;
  }

  TypeId Compound(uint32_t depth) {
    const bool is_struct = Take().text == "struct";
    const std::string kw = is_struct ? "struct " : "variant ";
    std::string name;
    if (Peek().kind == Token::kIdent) name = Take().text;
    std::string tag;
    if (!is_struct && Is("<")) {
      Take();
      while (!Is(">")) {
        NotAtEnd("a variant tag");
        tag += Take().text;
      }
      Take();
    }
    if (!Is("{")) {
      TypeId known = Named(kw + name);
      if (known < 0) Fail("unknown " + kw + "'" + name + "'");
      if (!tag.empty()) {
        Type copy = m_.type(known);
        copy.ref = TsdlLocation(tag);
        known = Add(std::move(copy));
      }
      if (is_struct && Is("align")) known = StructAlign(known);
      return known;
    }
    Take();
    Type t;
    t.kind = is_struct ? Type::kStruct : Type::kVariant;
    if (!tag.empty()) t.ref = TsdlLocation(tag);
    std::set<std::string> names;
    uint32_t align = 1;
    while (!Is("}")) {
      NotAtEnd("a " + kw + "body");
      if (Declaration()) continue;
      const TypeId ftype = TypeSpec(depth + 1);
      for (;;) {
        if (Peek().kind != Token::kIdent)
          Fail("expected a member name, found '" + Peek().text + "'");
        const size_t at = Peek().offset;
        std::string fname = Take().text;
        const TypeId full = Dimensions(ftype, depth + 1);
        if (!names.insert(fname).second) {
          RefuseAt(at, "duplicate member '" + fname + "'" +
                           (name.empty() ? std::string() : " in " + kw + name));
        }
        t.members.emplace_back(std::move(fname), full);
        align = std::max(align, m_.type(full).align);
        if (!Is(",")) break;
        Take();
      }
      Expect(";");
    }
    Take();
    // A variant's alignment is its selected option's, known only when decoding.
    t.align = is_struct ? align : 1;
    TypeId id = Add(std::move(t));
    if (is_struct && Is("align")) id = StructAlign(id);
    if (!name.empty()) aliases_[kw + name] = id;
    return id;
  }

  TypeId StructAlign(TypeId id) {
    Take();
    Expect("(");
    if (Peek().kind != Token::kNumber) Fail("align() needs a number");
    const size_t at = Peek().offset;
    const Token& n = Take();
    Expect(")");
    const uint64_t a = n.value;
    if (a == 0 || (a & (a - 1)) != 0 || a > (1u << 20))
      RefuseAt(at, "struct alignment of " + n.text);
    Type copy = m_.type(id);
    copy.align = std::max<uint32_t>(copy.align, static_cast<uint32_t>(a));
    return Add(std::move(copy));
  }

  // A type named by an alias: the longest run of words naming one, leaving the declarator.
  TypeId TypeName() {
    std::vector<std::string> words;
    for (size_t k = 0; Peek(k).kind == Token::kIdent; ++k) words.push_back(Peek(k).text);
    for (size_t n = words.size(); n >= 1; --n) {
      std::string key;
      for (size_t k = 0; k < n; ++k) key += (k ? " " : "") + words[k];
      const TypeId type = Named(key);
      if (type >= 0) {
        p_ += n;
        return type;
      }
    }
    Fail("unknown type '" + (words.empty() ? Peek().text : words[0]) + "'");
  }

  // A declarator's dimensions: `depth` is its member's (each dimension nests once more).
  TypeId Dimensions(TypeId type, uint32_t depth) {
    struct Dim {
      bool fixed;
      std::string what;  // length or path
      size_t at;
    };
    std::vector<Dim> dims;
    while (Is("[")) {
      Take();
      const size_t at = Peek().offset;
      std::string what;
      const bool fixed = Peek().kind == Token::kNumber && Is("]", 1);
      if (fixed && Peek().value > bounds_.max_array_length) {
        Refuse("array length " + Peek().text + " (at most " +
               std::to_string(bounds_.max_array_length) + ")");
      }
      while (!Is("]")) {
        NotAtEnd("an array length");
        what += Take().text;
      }
      Take();
      if (what.empty()) Fail("empty array length");
      dims.push_back(Dim{fixed, std::move(what), at});
    }
    if (!dims.empty()) Depth(depth + static_cast<uint32_t>(dims.size()));
    // int a[2][3]: an array of 2 arrays of 3.
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      Type t;
      t.element = type;
      t.align = m_.type(type).align;
      if (it->fixed) {
        t.kind = Type::kArray;
        value_at_ = it->at;
        t.length = UintValue(it->what);
      } else {
        t.kind = Type::kSequence;
        t.ref = TsdlLocation(it->what);
      }
      type = Add(std::move(t));
    }
    return type;
  }

  std::vector<Token> t_;
  size_t p_ = 0;
  const TsdlBounds bounds_;
  Metadata& m_;
  std::map<std::string, TypeId> aliases_;
  std::vector<std::pair<EventClass, size_t>> pending_events_;  // and their block's offset
  uint32_t nesting_ = 0;
  size_t value_at_ = 0;  // where the last attribute's value began
};

}  // namespace

const EventClass* StreamClass::Find(uint64_t event_id) const {
  auto it = std::lower_bound(events.begin(), events.end(), event_id,
                             [](const EventClass& e, uint64_t id) { return e.id < id; });
  return it != events.end() && it->id == event_id ? &*it : nullptr;
}

const StreamClass* Metadata::FindStream(uint64_t id) const {
  for (const StreamClass& s : streams) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

const Clock* Metadata::FindClock(const std::string& name) const {
  for (const Clock& c : clocks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

namespace detail {

bool NameIs(const std::string& name, std::string_view want) {
  std::string_view n = name;
  for (int i = 0; i < 3; ++i) {
    if (n == want) return true;
    if (n.empty() || n.front() != '_') return false;
    n.remove_prefix(1);
  }
  return false;
}

namespace {

// RewriteMembers' walk: one per rewrite, its results memoized per type (a type shared by many
// members is rewritten once, and an alias nesting itself exponentially stays linear).
class MemberRewriter {
 public:
  using Change = std::function<bool(const std::string&, bool, Type&)>;
  MemberRewriter(Metadata& m, bool nested, const Change& change)
      : m_(m), nested_(nested), change_(change) {}

  TypeId Visit(TypeId id, bool top, uint32_t depth) {
    if (id < 0) return id;
    if (!top) {
      auto it = memo_.find(id);
      if (it != memo_.end()) return it->second;
    }
    const Type::Kind kind = m_.type(id).kind;
    if (kind != Type::kStruct && kind != Type::kVariant) return id;
    // A copy: adding types below moves m_.types.
    std::vector<std::pair<std::string, TypeId>> members = m_.type(id).members;
    // A member of the root structure is `top` (a variant's options never are).
    const bool member_top = top && kind == Type::kStruct;
    bool changed = false;
    for (auto& [name, member] : members) {
      const Type::Kind mk = m_.type(member).kind;
      if (mk == Type::kStruct || mk == Type::kVariant) {
        if (!nested_ || depth >= kMaxDepth) continue;
        const TypeId rewritten = Visit(member, false, depth + 1);
        changed = changed || rewritten != member;
        member = rewritten;
        continue;
      }
      Type copy = m_.type(member);
      if (change_(name, member_top, copy)) {
        m_.types.push_back(std::move(copy));
        member = static_cast<TypeId>(m_.types.size() - 1);
        changed = true;
      }
    }
    TypeId out = id;
    if (changed) {
      Type copy = m_.type(id);
      copy.members = std::move(members);
      m_.types.push_back(std::move(copy));
      out = static_cast<TypeId>(m_.types.size() - 1);
    }
    if (!top) memo_[id] = out;
    return out;
  }

 private:
  static constexpr uint32_t kMaxDepth = 64;
  Metadata& m_;
  const bool nested_;
  const Change& change_;
  std::map<TypeId, TypeId> memo_;
};

}  // namespace

TypeId RewriteMembers(Metadata& m, TypeId root, bool nested,
                      const std::function<bool(const std::string&, bool, Type&)>& change) {
  return MemberRewriter(m, nested, change).Visit(root, true, 0);
}

void NoteTracer(Metadata* m) {
  auto env = [&](const char* key) {
    auto it = m->env.find(key);
    return it == m->env.end() ? std::string() : it->second;
  };
  m->tracer_name = env("tracer_name");
  const std::string major = env("tracer_major"), minor = env("tracer_minor");
  const std::string patch = env("tracer_patchlevel");
  m->tracer_version.clear();
  if (!major.empty()) {
    m->tracer_version = major;
    if (!minor.empty()) m->tracer_version += "." + minor;
    if (!minor.empty() && !patch.empty()) m->tracer_version += "." + patch;
  }
}

}  // namespace detail

namespace {

using detail::NameIs;

void AddRole(Type& t, Role r) {
  t.roles |= static_cast<uint16_t>(r);
}

// TSDL names what CTF 2 gives roles: the fields of LTTng's (and CTF 1.8's) headers and contexts
// get the roles CTF 2 would write, under the same name rules the decoder used to find them by.
void AssignTsdlRoles(Metadata& m) {
  auto packet_header = [](const std::string& name, bool, Type& t) {
    const uint16_t before = t.roles;
    if (t.kind == Type::kInt) {
      if (NameIs(name, "magic")) AddRole(t, Role::kPacketMagicNumber);
      if (NameIs(name, "stream_id")) AddRole(t, Role::kDataStreamClassId);
      if (NameIs(name, "stream_instance_id")) AddRole(t, Role::kDataStreamId);
    } else if ((t.kind == Type::kArray || t.kind == Type::kSequence) && NameIs(name, "uuid")) {
      AddRole(t, Role::kMetadataStreamUuid);
    }
    return t.roles != before;
  };
  auto packet_context = [](const std::string& name, bool, Type& t) {
    if (t.kind != Type::kInt) return false;
    const uint16_t before = t.roles;
    if (NameIs(name, "timestamp_begin")) AddRole(t, Role::kDefaultClockTimestamp);
    if (NameIs(name, "timestamp_end")) AddRole(t, Role::kPacketEndClockTimestamp);
    if (NameIs(name, "events_discarded")) AddRole(t, Role::kDiscardedEventCounter);
    if (NameIs(name, "packet_size")) AddRole(t, Role::kPacketTotalLength);
    if (NameIs(name, "content_size")) AddRole(t, Role::kPacketContentLength);
    if (NameIs(name, "packet_seq_num")) AddRole(t, Role::kPacketSequenceNumber);
    if (NameIs(name, "cpu_id")) AddRole(t, Role::kCpuId);
    return t.roles != before;
  };
  // The event header: `id` at any depth (LTTng's compact tag and its extended id); `timestamp`
  // at the top, and any integer mapped to a clock (LTTng's compact and extended timestamps).
  auto event_header = [](const std::string& name, bool top, Type& t) {
    if (t.kind != Type::kInt) return false;
    const uint16_t before = t.roles;
    if (NameIs(name, "id")) AddRole(t, Role::kEventRecordClassId);
    if ((top && NameIs(name, "timestamp")) || !t.clock.empty())
      AddRole(t, Role::kDefaultClockTimestamp);
    return t.roles != before;
  };
  m.packet_header = detail::RewriteMembers(m, m.packet_header, false, packet_header);
  for (StreamClass& sc : m.streams) {
    sc.packet_context = detail::RewriteMembers(m, sc.packet_context, false, packet_context);
    sc.event_header = detail::RewriteMembers(m, sc.event_header, true, event_header);
  }
}

}  // namespace

bool ParseTsdl(const std::string& text, const TsdlBounds& bounds, Metadata* out, TsdlError* error) {
  *out = Metadata{};
  try {
    std::vector<Token> tokens;
    try {
      tokens = TokenizeTsdl(text);
    } catch (const TsdlLexError& e) {
      throw TsdlError{Kind::kInvalid, e.message, e.offset};
    }
    Parser(std::move(tokens), bounds, out).Run();
  } catch (TsdlError& e) {
    e.offset = std::min(e.offset, text.size());
    e.line = static_cast<size_t>(
        std::count(text.begin(), text.begin() + static_cast<long>(e.offset), '\n') + 1);
    e.message = PrintableMessage(e.message);
    *error = std::move(e);
    return false;
  }
  AssignTsdlRoles(*out);
  detail::NoteTracer(out);
  return true;
}

bool ParseTsdl(const std::string& text, Metadata* out, std::string* error) {
  TsdlError e;
  if (ParseTsdl(text, TsdlBounds{}, out, &e)) return true;
  *error = "metadata line " + std::to_string(e.line) + ": " + e.message;
  return false;
}

bool ParseMetadataText(const std::string& text, Metadata* out, std::string* error) {
  if (IsCtf2Text(text)) return ParseCtf2(text, out, error);
  return ParseTsdl(text, out, error);
}

bool LoadMetadata(const std::string& dir, Metadata* out, std::string* error) {
  std::string text;
  if (!ReadMetadataText(dir, TsdlLimits{}.max_metadata_bytes, &text, error)) return false;
  if (!ParseMetadataText(text, out, error)) {
    *error = dir + "/metadata: " + *error;
    return false;
  }
  return true;
}

}  // namespace waitpath::ctf
