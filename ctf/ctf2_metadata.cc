#include "ctf/ctf2_metadata.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

#include "base/untrusted_name.h"

namespace waitpath::ctf {
namespace {

using Json = nlohmann::json;

// An error of the record being read. `record` (1-based), when set, names another record than
// the one being read (an event class found twice is known once all are read).
struct Ctf2Error {
  explicit Ctf2Error(std::string what, size_t in_record = 0, std::string of_type = {})
      : message(std::move(what)), record(in_record), type(std::move(of_type)) {}
  std::string message;
  size_t record;
  std::string type;
};

// Bytes beyond ASCII shown as \xNN, at most `max` of them: nlohmann's syntax errors quote what
// they read, which may be anything.
std::string Clean(const std::string& s, size_t max = 240) {
  std::string out;
  for (const char ch : s.substr(0, max)) {
    const auto u = static_cast<unsigned char>(ch);
    if (u >= 0x80) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += ch;
    }
  }
  return s.size() > max ? out + "..." : out;
}

// The bounds of one record, checked by a first, SAX pass of nlohmann's parser (it sees every
// key, value, array and object as they come): a structure of a million members or JSON nested
// ten thousand deep is refused before anything is built. (A parser callback did this before,
// but nlohmann 3.11's callback parser walks the enclosing array at every object's end: a
// record of 100,000 structures took 0.7 s, and 35 s under AddressSanitizer, which the fuzz
// run took for a hang.)
class JsonBounds : public nlohmann::json_sax<Json> {
 public:
  explicit JsonBounds(const Ctf2Limits& limits) : l_(limits) {}

  bool null() override { return Element(); }
  bool boolean(bool) override { return Element(); }
  bool number_integer(number_integer_t) override { return Element(); }
  bool number_unsigned(number_unsigned_t) override { return Element(); }
  bool number_float(number_float_t, const string_t&) override { return Element(); }
  bool string(string_t&) override { return Element(); }
  bool binary(binary_t&) override { return Element(); }
  bool start_object(std::size_t) override { return Start(false); }
  bool start_array(std::size_t) override { return Start(true); }
  bool end_object() override { return End(); }
  bool end_array() override { return End(); }
  bool key(string_t& k) override {
    key_ = k;
    if (!open_.empty()) Count(open_.back());
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    std::string what = e.what();
    const size_t tag = what.find("] ");  // "[json.exception.parse_error.101] parse error ..."
    if (tag != std::string::npos && what.front() == '[') what = what.substr(tag + 2);
    throw Ctf2Error{"not JSON: " + Clean(what)};
  }

 private:
  struct Open {
    bool is_array;
    size_t elements;
    std::string name;    // the key it is the value of (an array's elements: the array's)
    std::string parent;  // its container's
  };

  bool Element() {
    if (++values_ > l_.max_json_values) {
      throw Ctf2Error{"a record of more than " + std::to_string(l_.max_json_values) +
                      " JSON values (the limit)"};
    }
    if (!open_.empty() && open_.back().is_array) Count(open_.back());
    return true;
  }
  bool Start(bool is_array) {
    Element();
    if (open_.size() >= l_.max_json_depth) {
      throw Ctf2Error{"JSON nested deeper than " + std::to_string(l_.max_json_depth) +
                      " levels (the limit)"};
    }
    const std::string name = open_.empty() ? "" : open_.back().is_array ? open_.back().name : key_;
    open_.push_back(Open{is_array, 0, name, open_.empty() ? std::string() : open_.back().name});
    return true;
  }
  bool End() {
    if (!open_.empty()) open_.pop_back();
    return true;
  }

  void Count(Open& o) {
    if (++o.elements <= l_.max_elements) return;
    const std::string n = std::to_string(l_.max_elements);
    std::string what = "a JSON " + std::string(o.is_array ? "array" : "object") + " of more than " +
                       n + " elements";
    if (o.name == "member-classes") what = "a structure of more than " + n + " members";
    if (o.name == "options") what = "a variant of more than " + n + " options";
    if (o.name == "mappings" || o.name == "flags") what = "more than " + n + " mappings";
    if (o.parent == "mappings" || o.name == "selector-field-ranges")
      what = "an integer range set of more than " + n + " ranges";
    if (o.name == "path") what = "a field location of more than " + n + " steps";
    if (o.name == "environment") what = "an environment of more than " + n + " entries";
    throw Ctf2Error{what + " (the limit)"};
  }

  const Ctf2Limits& l_;
  std::vector<Open> open_;
  std::string key_;
  size_t values_ = 0;
};

Json ParseRecord(const char* begin, const char* end, const Ctf2Limits& limits) {
  JsonBounds bounds(limits);
  Json::sax_parse(begin, end, &bounds);  // throws Ctf2Error past a bound or on bad JSON
  try {
    return Json::parse(begin, end);
  } catch (const Json::parse_error& e) {
    std::string what = e.what();
    const size_t tag = what.find("] ");  // "[json.exception.parse_error.101] parse error ..."
    if (tag != std::string::npos && what.front() == '[') what = what.substr(tag + 2);
    throw Ctf2Error{"not JSON: " + Clean(what)};
  }
}

// An integer range bound as JSON writes it: either sign, the full unsigned range.
struct Bound {
  bool negative = false;
  uint64_t bits = 0;  // two's complement when negative
  bool operator<=(const Bound& o) const {
    if (negative != o.negative) return negative;
    return bits <= o.bits;
  }
  std::string str() const {
    return negative ? std::to_string(static_cast<int64_t>(bits)) : std::to_string(bits);
  }
};

constexpr std::pair<const char*, Role> kRoles[] = {
    {"packet-magic-number", Role::kPacketMagicNumber},
    {"metadata-stream-uuid", Role::kMetadataStreamUuid},
    {"data-stream-class-id", Role::kDataStreamClassId},
    {"data-stream-id", Role::kDataStreamId},
    {"packet-total-length", Role::kPacketTotalLength},
    {"packet-content-length", Role::kPacketContentLength},
    {"default-clock-timestamp", Role::kDefaultClockTimestamp},
    {"packet-end-default-clock-timestamp", Role::kPacketEndClockTimestamp},
    {"discarded-event-record-counter-snapshot", Role::kDiscardedEventCounter},
    {"packet-sequence-number", Role::kPacketSequenceNumber},
    {"event-record-class-id", Role::kEventRecordClassId},
};

constexpr std::pair<const char*, FieldLocation::Origin> kOrigins[] = {
    {"packet-header", FieldLocation::Origin::kPacketHeader},
    {"packet-context", FieldLocation::Origin::kPacketContext},
    {"event-record-header", FieldLocation::Origin::kEventHeader},
    {"event-record-common-context", FieldLocation::Origin::kCommonContext},
    {"event-record-specific-context", FieldLocation::Origin::kSpecificContext},
    {"event-record-payload", FieldLocation::Origin::kPayload},
};

// An event record class, attached to its stream class once every record is read (sorting then,
// not inserting one by one: hostile metadata may list a quarter million in reverse order).
struct PendingEvent {
  EventClass ec;
  size_t record;
};

// Builds the model from the records, one fragment at a time, as CTF2-SPEC-2.0 describes them.
class Builder {
 public:
  Builder(Metadata& m, const Ctf2Limits& limits) : m_(m), l_(limits) {}

  void Fragment(const Json& j, size_t record) {
    record_ = record;
    where_.clear();
    if (!j.is_object()) Fail("a fragment is a JSON object");
    const std::string type = String(Need(j, "type"), "type");
    if (!preamble_ && type != "preamble")
      Fail("the first fragment is a '" + type + "', not a preamble");
    if (type == "preamble") {
      Preamble(j);
    } else if (type == "field-class-alias") {
      Alias(j);
    } else if (type == "trace-class") {
      TraceClass(j);
    } else if (type == "clock-class") {
      ClockClass(j);
    } else if (type == "data-stream-class") {
      DataStreamClass(j);
    } else if (type == "event-record-class") {
      EventRecordClass(j);
    } else {
      Fail("unknown fragment type '" + type + "'");
    }
  }

  void Finish() {
    std::stable_sort(pending_.begin(), pending_.end(),
                     [](const PendingEvent& a, const PendingEvent& b) {
                       return a.ec.stream_id != b.ec.stream_id ? a.ec.stream_id < b.ec.stream_id
                                                               : a.ec.id < b.ec.id;
                     });
    for (size_t i = 0; i < pending_.size(); ++i) {
      const PendingEvent& p = pending_[i];
      if (i > 0 && pending_[i - 1].ec.stream_id == p.ec.stream_id &&
          pending_[i - 1].ec.id == p.ec.id) {
        throw Ctf2Error{"event record class id " + std::to_string(p.ec.id) +
                            " declared twice in data stream class " +
                            std::to_string(p.ec.stream_id),
                        std::max(p.record, pending_[i - 1].record), "event-record-class"};
      }
    }
    for (auto& [id, sc] : streams_) m_.streams.push_back(std::move(sc));
    streams_.clear();
    size_t next = 0;  // pending_ and m_.streams are both in stream id order
    for (StreamClass& sc : m_.streams) {
      for (; next < pending_.size() && pending_[next].ec.stream_id == sc.id; ++next)
        sc.events.push_back(std::move(pending_[next].ec));
    }
    pending_.clear();
    m_.format = Metadata::Format::kCtf2;
    detail::NoteTracer(&m_);
  }

 private:
  // Where in the fragment the reading is, for errors: "payload-field-class.member-classes[2]
  // 'len'.field-class".
  class At {
   public:
    At(Builder& b, std::string step) : b_(b) { b_.where_.push_back(std::move(step)); }
    ~At() { b_.where_.pop_back(); }
    At(const At&) = delete;
    At& operator=(const At&) = delete;

   private:
    Builder& b_;
  };

  [[noreturn]] void Fail(const std::string& what) const {
    // Deep nesting shows its first and last steps (the line stays short).
    std::string where;
    const size_t n = where_.size();
    for (size_t i = 0; i < n; ++i) {
      const std::string& step = where_[i];
      if (n > 12 && i == 5) where += ".(" + std::to_string(n - 10) + " more)";
      if (step.empty() || (n > 12 && i >= 5 && i < n - 5)) continue;
      if (!where.empty() && step.front() != '[' && step.front() != ' ') where += '.';
      where += step;
    }
    throw Ctf2Error{where.empty() ? what : where + ": " + what};
  }

  // ---- JSON values -----------------------------------------------------------------------

  static const Json* Get(const Json& obj, const char* key) {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  const Json& Need(const Json& obj, const char* key) const {
    const Json* v = Get(obj, key);
    if (!v) Fail(std::string("missing required property '") + key + "'");
    return *v;
  }
  std::string String(const Json& v, const char* what) const {
    if (!v.is_string()) Fail(std::string("'") + what + "' is not a string");
    return v.get<std::string>();
  }
  uint64_t Unsigned(const Json& v, const char* what) const {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer() && v.get<int64_t>() >= 0) return v.get<uint64_t>();
    Fail(std::string("'") + what + "' is not an integer of at least 0");
  }
  int64_t Signed(const Json& v, const char* what) const {
    if (v.is_number_unsigned() && v.get<uint64_t>() <= uint64_t{INT64_MAX})
      return static_cast<int64_t>(v.get<uint64_t>());
    if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<int64_t>();
    Fail(std::string("'") + what + "' is not a 64-bit integer");
  }
  Bound RangeBound(const Json& v) const {
    if (v.is_number_unsigned()) return Bound{false, v.get<uint64_t>()};
    if (v.is_number_integer()) {
      const int64_t s = v.get<int64_t>();
      return Bound{s < 0, static_cast<uint64_t>(s)};
    }
    Fail("an integer range bound is not an integer");
  }
  // An integer range set: [[lo, hi], ...], one or more.
  std::vector<std::pair<Bound, Bound>> Ranges(const Json& v) const {
    if (!v.is_array() || v.empty()) Fail("an integer range set is not a non-empty array");
    std::vector<std::pair<Bound, Bound>> out;
    for (const Json& r : v) {
      if (!r.is_array() || r.size() != 2) Fail("an integer range is not an array of two bounds");
      const Bound lo = RangeBound(r[0]), hi = RangeBound(r[1]);
      if (!(lo <= hi))
        Fail("integer range [" + lo.str() + ", " + hi.str() + "] ends before it begins");
      out.emplace_back(lo, hi);
    }
    return out;
  }
  uint32_t Alignment(const Json& j, const char* key) const {
    const Json* v = Get(j, key);
    if (!v) return 1;
    const uint64_t a = Unsigned(*v, key);
    if (a == 0 || (a & (a - 1)) != 0 || a > (1u << 20))
      Fail(std::string("'") + key + "' of " + std::to_string(a) +
           " bits (a power of two expected)");
    return static_cast<uint32_t>(a);
  }
  uint64_t StaticLength(const Json& j, const char* what, const char* unit) const {
    const uint64_t n = Unsigned(Need(j, "length"), "length");
    if (n > l_.max_static_length) {
      Fail(std::string(what) + " of " + std::to_string(n) + " " + unit +
           " (more than the limit of " + std::to_string(l_.max_static_length) + ")");
    }
    return n;
  }

  // ---- field classes ---------------------------------------------------------------------

  TypeId Add(Type t) {
    if (m_.types.size() >= l_.max_field_classes) {
      Fail("more than " + std::to_string(l_.max_field_classes) + " field classes (the limit)");
    }
    m_.types.push_back(std::move(t));
    return static_cast<TypeId>(m_.types.size() - 1);
  }

  // The 8-bit element of strings (text) and BLOBs, made once.
  TypeId Byte(bool text) {
    TypeId& id = text ? text_byte_ : blob_byte_;
    if (id < 0) {
      Type t;
      t.kind = Type::kInt;
      t.size = 8;
      t.align = 8;
      t.byte_order = 1;
      t.text = text;
      id = Add(std::move(t));
    }
    return id;
  }

  void Utf8(const Json& j) const {
    const Json* e = Get(j, "encoding");
    if (!e) return;
    const std::string enc = String(*e, "encoding");
    if (enc != "utf-8") Fail("string encoding '" + enc + "' (only UTF-8 is decoded natively)");
  }

  FieldLocation Location(const Json& j, const char* key) {
    At at(*this, key);
    const Json& v = Need(j, key);
    if (!v.is_object()) Fail("a field location is not an object");
    FieldLocation loc;
    loc.syntax = FieldLocation::Syntax::kCtf2;
    loc.text = "relative";
    if (const Json* o = Get(v, "origin")) {
      const std::string origin = String(*o, "origin");
      bool known = false;
      for (const auto& [name, value] : kOrigins) {
        if (origin == name) {
          loc.origin = value;
          known = true;
        }
      }
      if (!known) Fail("unknown field location origin '" + origin + "'");
      loc.text = origin;
    }
    const Json& path = Need(v, "path");
    if (!path.is_array() || path.empty()) Fail("'path' is not a non-empty array");
    for (const Json& step : path) {
      if (step.is_null()) {
        loc.path.emplace_back(std::nullopt);
        loc.text += "/..";
      } else if (step.is_string()) {
        loc.path.emplace_back(step.get<std::string>());
        loc.text += "/" + step.get<std::string>();
      } else {
        Fail("a field location step is neither a string nor null");
      }
    }
    if (!loc.path.back()) Fail("a field location ends with null");
    return loc;
  }

  uint16_t Roles(const Json& j) const {
    const Json* v = Get(j, "roles");
    if (!v) return 0;
    if (!v->is_array()) Fail("'roles' is not an array");
    uint16_t roles = 0;
    for (const Json& r : *v) {
      if (!r.is_string()) Fail("a role is not a string");
      // Roles this decoder does not know mean nothing to it.
      for (const auto& [name, role] : kRoles) {
        if (r.get_ref<const std::string&>() == name) roles |= static_cast<uint16_t>(role);
      }
    }
    return roles;
  }

  TypeId FieldClass(const Json& j, uint32_t depth) {
    if (depth > l_.max_depth) {
      Fail("field classes nested deeper than " + std::to_string(l_.max_depth) + " (the limit)");
    }
    if (j.is_string()) {
      auto it = aliases_.find(j.get_ref<const std::string&>());
      if (it == aliases_.end())
        Fail("unknown field class alias '" + j.get_ref<const std::string&>() + "'");
      return it->second;
    }
    if (!j.is_object()) Fail("a field class is neither an object nor an alias name");
    const std::string type = String(Need(j, "type"), "type");
    if (type == "fixed-length-bit-array" || type == "fixed-length-bit-map" ||
        type == "fixed-length-boolean" || type == "fixed-length-unsigned-integer" ||
        type == "fixed-length-signed-integer" || type == "fixed-length-floating-point-number" ||
        type == "fixed-length-unsigned-enumeration" || type == "fixed-length-signed-enumeration") {
      return FixedLength(j, type);
    }
    if (type == "variable-length-unsigned-integer" || type == "variable-length-signed-integer" ||
        type == "variable-length-unsigned-enumeration" ||
        type == "variable-length-signed-enumeration") {
      Fail("a " + type + " (LEB128) is not decoded natively");
    }
    if (type == "null-terminated-string") {
      Utf8(j);
      Type t;
      t.kind = Type::kString;
      return Add(std::move(t));
    }
    if (type == "static-length-string" || type == "static-length-blob") {
      const bool text = type == "static-length-string";
      if (text) Utf8(j);
      Type t;
      t.kind = Type::kArray;
      t.length = StaticLength(j, text ? "a static-length string" : "a static-length BLOB", "bytes");
      t.element = Byte(text);
      t.align = 8;
      t.roles = Roles(j);
      return Add(std::move(t));
    }
    if (type == "dynamic-length-string" || type == "dynamic-length-blob") {
      const bool text = type == "dynamic-length-string";
      if (text) Utf8(j);
      Type t;
      t.kind = Type::kSequence;
      t.ref = Location(j, "length-field-location");
      t.element = Byte(text);
      t.align = 8;
      return Add(std::move(t));
    }
    if (type == "structure") return Structure(j, depth);
    if (type == "static-length-array" || type == "dynamic-length-array") {
      Type t;
      if (type == "static-length-array") {
        t.kind = Type::kArray;
        t.length = StaticLength(j, "a static-length array", "elements");
      } else {
        t.kind = Type::kSequence;
        t.ref = Location(j, "length-field-location");
      }
      {
        At at(*this, "element-field-class");
        t.element = FieldClass(Need(j, "element-field-class"), depth + 1);
      }
      t.align = std::max(Alignment(j, "minimum-alignment"), m_.type(t.element).align);
      return Add(std::move(t));
    }
    if (type == "optional") {
      Type t;
      t.kind = Type::kVariant;
      t.optional = true;
      t.align = 1;
      t.ref = Location(j, "selector-field-location");
      if (const Json* r = Get(j, "selector-field-ranges")) {
        At at(*this, "selector-field-ranges");
        for (const auto& [lo, hi] : Ranges(*r)) t.selector_ranges.push_back({0, lo.bits, hi.bits});
      }
      At at(*this, "field-class");
      t.members.emplace_back("", FieldClass(Need(j, "field-class"), depth + 1));
      return Add(std::move(t));
    }
    if (type == "variant") return Variant(j, depth);
    Fail("unknown field class type '" + type + "'");
  }

  TypeId FixedLength(const Json& j, const std::string& type) {
    Type t;
    const bool is_float = type == "fixed-length-floating-point-number";
    t.kind = is_float ? Type::kFloat : Type::kInt;
    const uint64_t length = Unsigned(Need(j, "length"), "length");
    const std::string order = String(Need(j, "byte-order"), "byte-order");
    if (order != "little-endian" && order != "big-endian") Fail("byte order '" + order + "'");
    t.byte_order = order == "big-endian" ? 2 : 1;
    if (const Json* b = Get(j, "bit-order")) {
      // The bit order that is not the byte order's natural one reverses the bits: not read here.
      const std::string bits = String(*b, "bit-order");
      const char* natural = t.byte_order == 1 ? "first-to-last" : "last-to-first";
      if (bits != "first-to-last" && bits != "last-to-first") Fail("bit order '" + bits + "'");
      if (bits != natural)
        Fail("bit order '" + bits + "' with byte order '" + order + "' is not decoded natively");
    }
    t.align = Alignment(j, "alignment");
    if (is_float) {
      if (length != 32 && length != 64) {
        Fail("a floating point number of " + std::to_string(length) +
             " bits (32 and 64 are decoded natively)");
      }
      t.size = static_cast<uint32_t>(length);
      return Add(std::move(t));
    }
    if (length == 0 || length > 64)
      Fail("a " + type + " of " + std::to_string(length) + " bits (1 to 64 are decoded natively)");
    t.size = static_cast<uint32_t>(length);
    t.is_signed =
        type == "fixed-length-signed-integer" || type == "fixed-length-signed-enumeration";
    t.roles = Roles(j);
    if (const Json* b = Get(j, "preferred-display-base")) {
      const uint64_t base = Unsigned(*b, "preferred-display-base");
      if (base == 2 || base == 8 || base == 16) t.base = static_cast<uint8_t>(base);
    }
    if (const Json* maps = Get(j, "mappings")) {
      At at(*this, "mappings");
      if (!maps->is_object()) Fail("'mappings' is not an object");
      for (const auto& [label, ranges] : maps->items()) {
        At at_label(*this, " '" + label + "'");
        for (const auto& [lo, hi] : Ranges(ranges)) {
          if (t.mappings.size() >= l_.max_elements) {
            Fail("more than " + std::to_string(l_.max_elements) + " mapping ranges (the limit)");
          }
          t.mappings.push_back(
              EnumMapping{label, static_cast<int64_t>(lo.bits), static_cast<int64_t>(hi.bits)});
        }
      }
      t.is_enum = !t.mappings.empty();
    }
    return Add(std::move(t));
  }

  TypeId Structure(const Json& j, uint32_t depth) {
    Type t;
    t.kind = Type::kStruct;
    uint32_t align = Alignment(j, "minimum-alignment");
    if (const Json* members = Get(j, "member-classes")) {
      if (!members->is_array()) Fail("'member-classes' is not an array");
      std::set<std::string> names;
      for (size_t i = 0; i < members->size(); ++i) {
        const Json& member = (*members)[i];
        At at(*this, "member-classes[" + std::to_string(i) + "]");
        if (!member.is_object()) Fail("a member class is not an object");
        std::string name = String(Need(member, "name"), "name");
        At named(*this, " '" + name + "'");
        if (!names.insert(name).second) Fail("duplicate member '" + name + "'");
        TypeId type;
        {
          At fc(*this, "field-class");
          type = FieldClass(Need(member, "field-class"), depth + 1);
        }
        align = std::max(align, m_.type(type).align);
        t.members.emplace_back(std::move(name), type);
      }
    }
    t.align = align;
    return Add(std::move(t));
  }

  TypeId Variant(const Json& j, uint32_t depth) {
    Type t;
    t.kind = Type::kVariant;
    t.align = 1;  // the selected option's, known when decoding
    t.ref = Location(j, "selector-field-location");
    const Json& options = Need(j, "options");
    if (!options.is_array() || options.empty()) Fail("'options' is not a non-empty array");
    std::set<std::string> names;
    for (size_t i = 0; i < options.size(); ++i) {
      const Json& option = options[i];
      At at(*this, "options[" + std::to_string(i) + "]");
      if (!option.is_object()) Fail("a variant option is not an object");
      std::string name;
      if (const Json* n = Get(option, "name")) {
        name = String(*n, "name");
        if (!names.insert(name).second) Fail("duplicate option '" + name + "'");
      }
      {
        At ranges(*this, "selector-field-ranges");
        for (const auto& [lo, hi] : Ranges(Need(option, "selector-field-ranges"))) {
          if (t.selector_ranges.size() >= l_.max_elements) {
            Fail("more than " + std::to_string(l_.max_elements) + " selector ranges (the limit)");
          }
          t.selector_ranges.push_back({static_cast<uint32_t>(i), lo.bits, hi.bits});
        }
      }
      At fc(*this, "field-class");
      t.members.emplace_back(std::move(name), FieldClass(Need(option, "field-class"), depth + 1));
    }
    return Add(std::move(t));
  }

  // A fragment's scope root: a structure (or its alias).
  TypeId Scope(const Json& j, const char* key) {
    const Json* v = Get(j, key);
    if (!v) return -1;
    At at(*this, key);
    const TypeId id = FieldClass(*v, 0);
    if (m_.type(id).kind != Type::kStruct) Fail("not a structure");
    return id;
  }

  // ---- fragments ---------------------------------------------------------------------------

  void Preamble(const Json& j) {
    if (preamble_) Fail("a second preamble");
    preamble_ = true;
    const Json& version = Need(j, "version");
    if (!version.is_number_integer() || version.get<int64_t>() != 2)
      Fail("CTF version " + Clean(version.dump(), 40) + " (2 expected)");
    if (const Json* uuid = Get(j, "uuid")) {
      if (!uuid->is_array() || uuid->size() != 16) Fail("'uuid' is not an array of 16 bytes");
      std::string s;
      for (size_t i = 0; i < 16; ++i) {
        const uint64_t b = Unsigned((*uuid)[i], "uuid");
        if (b > 255) Fail("'uuid' is not an array of 16 bytes");
        char buf[4];
        snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(b));
        if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
        s += buf;
      }
      m_.uuid = s;
    }
    if (const Json* ext = Get(j, "extensions")) {
      // Declared extensions may change the format itself: a trace with one this decoder does not
      // know must not be read (CTF2-SPEC-2.0, 5.1).
      if (!ext->is_object()) Fail("'extensions' is not an object");
      for (const auto& [ns, names] : ext->items()) {
        if (!names.is_object()) Fail("extensions of namespace '" + ns + "' are not an object");
        if (!names.empty()) {
          Fail("extension '" + ns + "/" + names.begin().key() +
               "' declared: not supported (the trace cannot be read without it)");
        }
      }
    }
  }

  void Alias(const Json& j) {
    const std::string name = String(Need(j, "name"), "name");
    At at(*this, "field class alias '" + name + "'");
    if (aliases_.count(name)) Fail("declared twice");
    At fc(*this, "field-class");
    const TypeId id = FieldClass(Need(j, "field-class"), 0);
    aliases_[name] = id;
  }

  void TraceClass(const Json& j) {
    if (trace_class_) Fail("a second trace class");
    if (!streams_.empty()) Fail("a trace class after a data stream class");
    trace_class_ = true;
    if (const Json* uid = Get(j, "uid")) m_.trace_uid = String(*uid, "uid");
    if (const Json* env = Get(j, "environment")) {
      At at(*this, "environment");
      if (!env->is_object()) Fail("not an object");
      for (const auto& [key, value] : env->items()) {
        if (value.is_string()) {
          m_.env[key] = value.get<std::string>();
        } else if (value.is_number_unsigned()) {
          m_.env[key] = std::to_string(value.get<uint64_t>());
        } else if (value.is_number_integer()) {
          m_.env[key] = std::to_string(value.get<int64_t>());
        } else {
          Fail("entry '" + key + "' is neither a string nor an integer");
        }
      }
    }
    m_.packet_header = Scope(j, "packet-header-field-class");
  }

  void ClockClass(const Json& j) {
    Clock c;
    c.name = String(Need(j, "id"), "id");
    At at(*this, "clock class '" + c.name + "'");
    if (clock_ids_.count(c.name)) Fail("declared twice");
    if (clock_ids_.size() >= l_.max_clock_classes) {
      Fail("more than " + std::to_string(l_.max_clock_classes) + " clock classes (the limit)");
    }
    clock_ids_.insert(c.name);
    c.freq = Unsigned(Need(j, "frequency"), "frequency");
    if (c.freq == 0) Fail("frequency 0");
    if (const Json* uid = Get(j, "uid")) c.uid = String(*uid, "uid");
    if (const Json* origin = Get(j, "origin")) {
      if (origin->is_string()) {
        if (origin->get_ref<const std::string&>() != "unix-epoch")
          Fail("unknown origin '" + origin->get<std::string>() + "'");
        c.origin = Clock::Origin::kUnixEpoch;
      } else if (origin->is_object()) {
        c.origin = Clock::Origin::kCustom;
        const Json* ns = Get(*origin, "namespace");
        c.origin_id = (ns ? String(*ns, "namespace") : std::string()) + "/" +
                      String(Need(*origin, "name"), "name") + "/" +
                      String(Need(*origin, "uid"), "uid");
      } else {
        Fail("'origin' is neither a string nor an object");
      }
    }
    if (const Json* offset = Get(j, "offset-from-origin")) {
      if (!offset->is_object()) Fail("'offset-from-origin' is not an object");
      if (const Json* s = Get(*offset, "seconds")) c.offset_s = Signed(*s, "seconds");
      if (const Json* cycles = Get(*offset, "cycles")) {
        const uint64_t n = Unsigned(*cycles, "cycles");
        if (n >= c.freq)
          Fail("offset of " + std::to_string(n) + " cycles, not below the frequency");
        c.offset = static_cast<int64_t>(n);
      }
      // Nanoseconds since the origin must fit 64 bits (about 292 years either way).
      constexpr int64_t kMaxSeconds = 9'000'000'000;
      if (c.offset_s > kMaxSeconds || c.offset_s < -kMaxSeconds)
        Fail("offset of " + std::to_string(c.offset_s) + " s (out of range)");
    }
    m_.clocks.push_back(std::move(c));
  }

  void DataStreamClass(const Json& j) {
    StreamClass sc;
    if (const Json* id = Get(j, "id")) sc.id = Unsigned(*id, "id");
    At at(*this, "data stream class " + std::to_string(sc.id));
    if (streams_.count(sc.id)) Fail("declared twice");
    if (streams_.size() >= l_.max_stream_classes) {
      Fail("more than " + std::to_string(l_.max_stream_classes) +
           " data stream classes (the limit)");
    }
    const Json* clock = Get(j, "default-clock-class-id");
    if (!clock) clock = Get(j, "default-clock-class-name");  // drafts before CTF2-SPEC-2.0
    if (clock) {
      sc.default_clock = String(*clock, "default-clock-class-id");
      if (!clock_ids_.count(sc.default_clock))
        Fail("unknown default clock class '" + sc.default_clock + "'");
    }
    sc.packet_context = Scope(j, "packet-context-field-class");
    sc.event_header = Scope(j, "event-record-header-field-class");
    sc.event_context = Scope(j, "event-record-common-context-field-class");
    // Timestamps are of the stream's default clock; cpu_id is LTTng's field without a role.
    const std::string dc = sc.default_clock;
    auto bind = [&dc](const std::string& name, bool top, Type& t, bool packet_context) {
      if (t.kind != Type::kInt) return false;
      bool changed = false;
      if (!dc.empty() && t.clock != dc &&
          (t.Has(Role::kDefaultClockTimestamp) || t.Has(Role::kPacketEndClockTimestamp))) {
        t.clock = dc;
        changed = true;
      }
      if (packet_context && top && detail::NameIs(name, "cpu_id") && !t.Has(Role::kCpuId)) {
        t.roles |= static_cast<uint16_t>(Role::kCpuId);
        changed = true;
      }
      return changed;
    };
    sc.packet_context = detail::RewriteMembers(
        m_, sc.packet_context, true,
        [&](const std::string& name, bool top, Type& t) { return bind(name, top, t, true); });
    sc.event_header = detail::RewriteMembers(
        m_, sc.event_header, true,
        [&](const std::string& name, bool top, Type& t) { return bind(name, top, t, false); });
    const uint64_t id = sc.id;
    streams_.emplace(id, std::move(sc));
  }

  void EventRecordClass(const Json& j) {
    EventClass ec;
    if (const Json* id = Get(j, "id")) ec.id = Unsigned(*id, "id");
    if (const Json* sid = Get(j, "data-stream-class-id"))
      ec.stream_id = Unsigned(*sid, "data-stream-class-id");
    if (const Json* name = Get(j, "name")) ec.name = String(*name, "name");
    At at(*this, "event record class " + std::to_string(ec.id) + " '" + ec.name + "'");
    if (!streams_.count(ec.stream_id))
      Fail("of undeclared data stream class " + std::to_string(ec.stream_id));
    if (pending_.size() >= l_.max_event_classes) {
      Fail("more than " + std::to_string(l_.max_event_classes) +
           " event record classes (the limit)");
    }
    ec.context = Scope(j, "specific-context-field-class");
    ec.fields = Scope(j, "payload-field-class");
    pending_.push_back(PendingEvent{std::move(ec), record_});
  }

  Metadata& m_;
  const Ctf2Limits& l_;
  size_t record_ = 0;
  std::vector<std::string> where_;
  bool preamble_ = false;
  bool trace_class_ = false;
  std::map<std::string, TypeId> aliases_;
  TypeId text_byte_ = -1, blob_byte_ = -1;
  std::set<std::string> clock_ids_;
  // Stream classes by id (looked up by every event class), into m_.streams at the end.
  std::map<uint64_t, StreamClass> streams_;
  std::vector<PendingEvent> pending_;
};

}  // namespace

bool ParseCtf2(const std::string& text, Metadata* out, std::string* error,
               const Ctf2Limits& limits) {
  *out = Metadata{};
  out->format = Metadata::Format::kCtf2;
  if (text.size() > limits.max_bytes) {
    *error = "CTF 2 metadata of " + std::to_string(text.size()) +
             " bytes (more than the limit of " + std::to_string(limits.max_bytes) + ")";
    return false;
  }
  if (text.empty() || text.front() != kCtf2RecordSeparator) {
    *error = "CTF 2 metadata: does not start with the record separator 0x1E";
    return false;
  }
  Builder builder(*out, limits);
  size_t record = 0;
  std::string type;
  try {
    size_t records = 0;
    for (size_t at = 0; at < text.size();) {
      size_t next = text.find(kCtf2RecordSeparator, at + 1);
      if (next == std::string::npos) next = text.size();
      const char* begin = text.data() + at + 1;
      const char* end = text.data() + next;
      at = next;
      // RFC 7464: a record ends with a line feed (LTTng writes none); separators in a row are
      // no record.
      while (end > begin && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' ||
                             end[-1] == '\t' || end[-1] == '\0')) {
        --end;
      }
      if (begin == end) continue;
      record = ++records;
      type.clear();
      if (records > limits.max_records)
        throw Ctf2Error{"more than " + std::to_string(limits.max_records) + " records (the limit)"};
      // nlohmann would read a NUL as the end of the text, silently.
      if (std::memchr(begin, '\0', static_cast<size_t>(end - begin)))
        throw Ctf2Error{"a NUL byte inside the record"};
      const Json j = ParseRecord(begin, end, limits);
      if (j.is_object()) {
        auto t = j.find("type");
        if (t != j.end() && t->is_string()) type = Clean(t->get<std::string>(), 40);
      }
      builder.Fragment(j, record);
    }
    if (records == 0) throw Ctf2Error{"no record"};
    builder.Finish();
  } catch (const Ctf2Error& e) {
    if (e.record) {
      record = e.record;
      type = e.type;
    }
    *error = (record == 0 ? std::string("CTF 2 metadata")
                          : "metadata record " + std::to_string(record) +
                                (type.empty() ? "" : " (" + type + ")")) +
             ": " + PrintableMessage(e.message);
    return false;
  } catch (const std::exception& e) {  // memory, or a JSON access this code did not expect
    *error = "metadata record " + std::to_string(record) + ": " + PrintableMessage(Clean(e.what()));
    return false;
  }
  return true;
}

}  // namespace waitpath::ctf
