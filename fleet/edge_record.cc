#include "fleet/edge_record.h"

#include <cstring>

namespace waitpath {
namespace {

// The leaf count is carried, so a reader with more or fewer states still decodes; more than
// this is not a record of ours.
constexpr size_t kMaxStates = 64;

class Writer {
 public:
  explicit Writer(uint8_t kind) { out_.push_back(static_cast<char>(kEdgeRecordVersion)), U8(kind); }
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  template <typename T>
  void Fixed(T v) {  // little-endian on every machine we build for (x86-64, arm64)
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out_.append(b, sizeof(T));
  }
  void Var(int64_t v) {  // zigzag LEB128
    uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    while (z >= 0x80) {
      out_.push_back(static_cast<char>((z & 0x7f) | 0x80));
      z >>= 7;
    }
    out_.push_back(static_cast<char>(z));
  }
  void Str(std::string_view s) {
    const size_t n = std::min<size_t>(s.size(), 255);
    U8(static_cast<uint8_t>(n));
    out_.append(s.data(), n);
  }
  void Vec(const std::vector<int64_t>& v) {
    U8(static_cast<uint8_t>(std::min(v.size(), kMaxStates)));
    for (size_t i = 0; i < v.size() && i < kMaxStates; ++i) Var(v[i]);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(std::string_view in, uint8_t kind) : in_(in) {
    uint8_t version = 0, k = 0;
    ok_ = U8(&version) && U8(&k) && version == kEdgeRecordVersion && k == kind;
  }
  bool ok() const { return ok_ && pos_ == in_.size(); }
  bool U8(uint8_t* v) {
    if (pos_ + 1 > in_.size()) return ok_ = false;
    *v = static_cast<uint8_t>(in_[pos_++]);
    return true;
  }
  template <typename T>
  bool Fixed(T* v) {
    if (pos_ + sizeof(T) > in_.size()) return ok_ = false;
    std::memcpy(v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool Var(int64_t* v) {
    uint64_t z = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!U8(&b)) return false;
      z |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        *v = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
        return true;
      }
    }
    return ok_ = false;
  }
  bool Str(std::string* s) {
    uint8_t n;
    if (!U8(&n) || pos_ + n > in_.size()) return ok_ = false;
    s->assign(in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool Vec(std::vector<int64_t>* v) {
    uint8_t n;
    if (!U8(&n) || n > kMaxStates) return ok_ = false;
    v->resize(n);
    for (int64_t& x : *v) {
      if (!Var(&x)) return false;
    }
    return true;
  }

 private:
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

enum Kind : uint8_t { kEdge = 1, kSample = 2, kQuery = 3, kAnswer = 4, kProgress = 5 };

// Hosts, addresses and last edges a progress record carries at most (more are not a record of
// ours: a shard follows a few hosts, each with a few addresses).
constexpr int64_t kMaxProgressItems = 65536;

}  // namespace

std::string EncodeEdge(const EdgeRecord& r) {
  Writer w(kEdge);
  const PacketKey& k = r.key;
  w.Fixed(k.saddr), w.Fixed(k.daddr), w.Fixed(k.sport), w.Fixed(k.dport);
  w.Fixed(k.seq), w.Fixed(k.ack_seq), w.Fixed(k.flags), w.Fixed(k.ip_len);
  w.U8(static_cast<uint8_t>((k.has_addresses ? 1 : 0) | (k.has_tcp ? 2 : 0)));
  w.Fixed(r.send_ns);
  w.Var(r.tid), w.Var(r.pid);
  w.Str(r.shard), w.Str(r.host), w.Str(r.comm);
  w.Vec(r.cum);
  return w.Take();
}

std::optional<EdgeRecord> DecodeEdge(std::string_view bytes) {
  Reader in(bytes, kEdge);
  EdgeRecord r;
  PacketKey& k = r.key;
  uint8_t has = 0;
  int64_t tid = 0, pid = 0;
  in.Fixed(&k.saddr), in.Fixed(&k.daddr), in.Fixed(&k.sport), in.Fixed(&k.dport);
  in.Fixed(&k.seq), in.Fixed(&k.ack_seq), in.Fixed(&k.flags), in.Fixed(&k.ip_len);
  in.U8(&has);
  in.Fixed(&r.send_ns);
  in.Var(&tid), in.Var(&pid);
  in.Str(&r.shard), in.Str(&r.host), in.Str(&r.comm);
  in.Vec(&r.cum);
  if (!in.ok() || tid < 0 || tid > INT32_MAX || pid < -1 || pid > INT32_MAX) return std::nullopt;
  k.has_addresses = has & 1;
  k.has_tcp = has & 2;
  r.tid = static_cast<int32_t>(tid);
  r.pid = static_cast<int32_t>(pid);
  return r;
}

std::string EncodeSample(const SyncSample& s) {
  Writer w(kSample);
  w.Fixed(s.send_ns), w.Fixed(s.recv_ns);
  return w.Take();
}

std::optional<SyncSample> DecodeSample(std::string_view bytes) {
  Reader in(bytes, kSample);
  SyncSample s;
  in.Fixed(&s.send_ns), in.Fixed(&s.recv_ns);
  if (!in.ok()) return std::nullopt;
  return s;
}

std::string EncodeQuery(const CumQuery& q) {
  Writer w(kQuery);
  w.Str(q.host), w.Var(q.tid), w.Fixed(q.at_ns), w.Fixed(q.send_ns);
  return w.Take();
}

std::optional<CumQuery> DecodeQuery(std::string_view bytes) {
  Reader in(bytes, kQuery);
  CumQuery q;
  int64_t tid = 0;
  in.Str(&q.host), in.Var(&tid), in.Fixed(&q.at_ns), in.Fixed(&q.send_ns);
  if (!in.ok() || tid <= 0 || tid > INT32_MAX) return std::nullopt;
  q.tid = static_cast<int32_t>(tid);
  return q;
}

std::string EncodeAnswer(const CumAnswer& a) {
  Writer w(kAnswer);
  w.U8(a.known ? 1 : 0), w.Vec(a.cum);
  return w.Take();
}

std::optional<CumAnswer> DecodeAnswer(std::string_view bytes) {
  Reader in(bytes, kAnswer);
  CumAnswer a;
  uint8_t known = 0;
  in.U8(&known), in.Vec(&a.cum);
  if (!in.ok()) return std::nullopt;
  a.known = known == 1;
  return a;
}

std::string EncodeProgress(const ProgressRecord& p) {
  Writer w(kProgress);
  w.Str(p.shard);
  w.Var(static_cast<int64_t>(p.hosts.size()));
  for (const auto& h : p.hosts) {
    w.Str(h.name), w.Fixed(h.done_ns);
    w.Var(static_cast<int64_t>(h.addrs.size()));
    for (uint32_t a : h.addrs) w.Fixed(a);
  }
  w.Var(static_cast<int64_t>(p.last_edges.size()));
  for (const auto& e : p.last_edges) w.Fixed(e.daddr), w.Fixed(e.send_ns);
  return w.Take();
}

std::optional<ProgressRecord> DecodeProgress(std::string_view bytes) {
  Reader in(bytes, kProgress);
  ProgressRecord p;
  int64_t n = 0;
  in.Str(&p.shard);
  if (!in.Var(&n) || n < 0 || n > kMaxProgressItems) return std::nullopt;
  p.hosts.resize(static_cast<size_t>(n));
  for (auto& h : p.hosts) {
    int64_t addrs = 0;
    in.Str(&h.name), in.Fixed(&h.done_ns);
    if (!in.Var(&addrs) || addrs < 0 || addrs > kMaxProgressItems) return std::nullopt;
    h.addrs.resize(static_cast<size_t>(addrs));
    for (uint32_t& a : h.addrs) {
      if (!in.Fixed(&a)) return std::nullopt;
    }
  }
  if (!in.Var(&n) || n < 0 || n > kMaxProgressItems) return std::nullopt;
  p.last_edges.resize(static_cast<size_t>(n));
  for (auto& e : p.last_edges) {
    if (!in.Fixed(&e.daddr) || !in.Fixed(&e.send_ns)) return std::nullopt;
  }
  if (!in.ok()) return std::nullopt;
  return p;
}

}  // namespace waitpath
