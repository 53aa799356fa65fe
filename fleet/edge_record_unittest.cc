#include "fleet/edge_record.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

EdgeRecord Sample() {
  EdgeRecord r;
  r.key.saddr = 0x0a00000a, r.key.daddr = 0x0a000014, r.key.sport = 40000, r.key.dport = 80;
  r.key.seq = 123456789, r.key.ack_seq = 987654321, r.key.flags = 0x18, r.key.ip_len = 352;
  r.key.has_addresses = r.key.has_tcp = true;
  r.send_ns = 1'700'000'000'123'456'789;
  r.shard = "east", r.host = "web", r.comm = "nginx", r.tid = 4242, r.pid = 4240;
  r.cum = {12'345'678, 0, 0, 250'000, -1, 0, 3, 0, 0, 0};
  return r;
}

TEST(EdgeRecord, RoundTripsEveryField) {
  const EdgeRecord r = Sample();
  const auto back = DecodeEdge(EncodeEdge(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->key.saddr, r.key.saddr);
  EXPECT_EQ(back->key.daddr, r.key.daddr);
  EXPECT_EQ(back->key.sport, r.key.sport);
  EXPECT_EQ(back->key.dport, r.key.dport);
  EXPECT_EQ(back->key.seq, r.key.seq);
  EXPECT_EQ(back->key.ack_seq, r.key.ack_seq);
  EXPECT_EQ(back->key.flags, r.key.flags);
  EXPECT_EQ(back->key.ip_len, r.key.ip_len);
  EXPECT_TRUE(back->key.has_addresses && back->key.has_tcp);
  EXPECT_EQ(TcpKeyHash(back->key), TcpKeyHash(r.key));
  EXPECT_EQ(back->send_ns, r.send_ns);
  EXPECT_EQ(back->shard, r.shard);
  EXPECT_EQ(back->host, r.host);
  EXPECT_EQ(back->comm, r.comm);
  EXPECT_EQ(back->tid, r.tid);
  EXPECT_EQ(back->pid, r.pid);
  EXPECT_EQ(back->cum, r.cum);
}

// The figure docs/scale.md gives: a typical edge (short names, a vector of a few ms) in about
// 70 bytes.
TEST(EdgeRecord, IsCompact) {
  EXPECT_LE(EncodeEdge(Sample()).size(), 80u);
}

TEST(EdgeRecord, EveryTruncationAndOtherVersionsAreRefused) {
  const std::string bytes = EncodeEdge(Sample());
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(DecodeEdge(bytes.substr(0, n))) << n;
  EXPECT_FALSE(DecodeEdge(bytes + "x"));
  std::string other = bytes;
  other[0] = kEdgeRecordVersion + 1;
  EXPECT_FALSE(DecodeEdge(other));
  EXPECT_FALSE(DecodeSample(bytes));  // another kind of record
}

TEST(EdgeRecord, GarbageNeverDecodes) {
  std::string junk(200, '\xff');
  EXPECT_FALSE(DecodeEdge(junk));
  EXPECT_FALSE(DecodeQuery(junk));
  EXPECT_FALSE(DecodeAnswer(junk));
  EXPECT_FALSE(DecodeProgress(junk));
}

TEST(EdgeRecord, ProgressRoundTripsAndEveryTruncationIsRefused) {
  ProgressRecord p{
      "east", {{"db", 123456789, {0x0a000001, 0x0a000002}}, {"web", -4, {}}}, {{0x0a000003, 77}}};
  const std::string bytes = EncodeProgress(p);
  const auto d = DecodeProgress(bytes);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->shard, "east");
  ASSERT_EQ(d->hosts.size(), 2u);
  EXPECT_EQ(d->hosts[0].name, "db");
  EXPECT_EQ(d->hosts[0].done_ns, 123456789);
  EXPECT_EQ(d->hosts[0].addrs, (std::vector<uint32_t>{0x0a000001, 0x0a000002}));
  EXPECT_EQ(d->hosts[1].done_ns, -4);
  ASSERT_EQ(d->last_edges.size(), 1u);
  EXPECT_EQ(d->last_edges[0].daddr, 0x0a000003u);
  EXPECT_EQ(d->last_edges[0].send_ns, 77);
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(DecodeProgress(bytes.substr(0, n)));
  EXPECT_FALSE(DecodeEdge(bytes));
}

TEST(EdgeRecord, SamplesQueriesAndAnswersRoundTrip) {
  const auto s = DecodeSample(EncodeSample({-5, 7}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->send_ns, -5);
  EXPECT_EQ(s->recv_ns, 7);
  const auto q = DecodeQuery(EncodeQuery({"db", 77, 123, 456}));
  ASSERT_TRUE(q);
  EXPECT_EQ(q->host, "db");
  EXPECT_EQ(q->tid, 77);
  EXPECT_EQ(q->at_ns, 123);
  EXPECT_EQ(q->send_ns, 456);
  const auto a = DecodeAnswer(EncodeAnswer({true, {1, 2, 3}}));
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->known);
  EXPECT_EQ(a->cum, (std::vector<int64_t>{1, 2, 3}));
}

}  // namespace
}  // namespace waitpath
