#include "incremental/packet_matcher.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

PacketKey TcpKey(uint32_t seq, bool addresses) {
  PacketKey k;
  k.seq = seq;
  k.ack_seq = 7;
  k.flags = 0x18;
  k.has_tcp = true;
  if (addresses) {
    k.saddr = 0x0a000001;
    k.daddr = 0x0a000002;
    k.sport = 4000;
    k.dport = 80;
    k.has_addresses = true;
  }
  return k;
}

TEST(PacketMatcherTest, SkbaddrMatchesOnTheSameHostOnly) {
  PacketMatcher m;
  m.OnSend(0, 100, 0xabc, nullptr, 3);
  EXPECT_EQ(m.pending(), 1u);
  EXPECT_FALSE(m.OnReceive(1, 100, 0xabc, nullptr).has_value());  // other host
  EXPECT_FALSE(m.OnReceive(0, 100, 0xdef, nullptr).has_value());  // other skb
  const auto send = m.OnReceive(0, 100, 0xabc, nullptr);
  ASSERT_TRUE(send.has_value());
  EXPECT_EQ(send->host, 0);
  EXPECT_EQ(send->sender, 3u);
  EXPECT_EQ(send->ts, 100);
  EXPECT_EQ(m.pending(), 0u);
  EXPECT_FALSE(m.OnReceive(0, 100, 0xabc, nullptr).has_value());  // consumed
  EXPECT_EQ(m.counters().sends, 1u);
  EXPECT_EQ(m.counters().receives, 4u);
  EXPECT_EQ(m.counters().matched, 1u);
  EXPECT_EQ(m.counters().matched_cross_host, 0u);
}

TEST(PacketMatcherTest, ReusedSkbaddrMatchesInSendOrder) {
  PacketMatcher m;
  m.OnSend(0, 10, 0x1, nullptr, 1);
  m.OnSend(0, 20, 0x1, nullptr, 2);
  EXPECT_EQ(m.OnReceive(0, 100, 0x1, nullptr)->sender, 1u);
  EXPECT_EQ(m.OnReceive(0, 100, 0x1, nullptr)->sender, 2u);
}

TEST(PacketMatcherTest, TcpKeyMatchesAcrossHostsIgnoringSkbaddr) {
  PacketMatcher m;
  const PacketKey key = TcpKey(1000, true);
  m.OnSend(0, 50, 0x1111, &key, 4);
  const PacketKey other = TcpKey(1001, true);
  EXPECT_FALSE(m.OnReceive(1, 100, 0x2222, &other).has_value());
  const auto send = m.OnReceive(1, 100, 0x2222, &key);
  ASSERT_TRUE(send.has_value());
  EXPECT_EQ(send->host, 0);
  EXPECT_EQ(send->sender, 4u);
  EXPECT_EQ(m.counters().matched_cross_host, 1u);
}

TEST(PacketMatcherTest, TcpKeyWithoutAddressesStillMatches) {
  PacketMatcher m;
  const PacketKey key = TcpKey(5, false);
  m.OnSend(0, 50, 0x1, &key, kNoTask);
  const auto send = m.OnReceive(0, 100, 0x9, &key);
  ASSERT_TRUE(send.has_value());
  EXPECT_EQ(send->sender, kNoTask);
}

// An overlay shows one received packet twice on the receiving host (underlay device, then the
// overlay device): both sightings get the send, within a few milliseconds only.
TEST(PacketMatcherTest, ATcpPacketReceivedTwiceOnOneHostMatchesBothTimes) {
  PacketMatcher m;
  const PacketKey key = TcpKey(1000, true);
  m.OnSend(0, 50, 0x1111, &key, 4);
  ASSERT_TRUE(m.OnReceive(1, 1000, 0x2222, &key).has_value());
  const auto again = m.OnReceive(1, 1000 + 20'000, 0x3333, &key);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->sender, 4u);
  EXPECT_EQ(again->ts, 50);
  EXPECT_EQ(m.counters().matched, 1u);
  EXPECT_EQ(m.counters().duplicates, 1u);
  EXPECT_FALSE(m.OnReceive(2, 1000 + 30'000, 0x4444, &key).has_value());  // another host
  EXPECT_FALSE(
      m.OnReceive(1, 1000 + PacketMatcher::kDuplicateWindowNs + 1, 0x5555, &key).has_value());
  // Without a TCP key a packet is its skb on one host: no duplicates.
  m.OnSend(0, 60, 0x77, nullptr, 1);
  ASSERT_TRUE(m.OnReceive(0, 2000, 0x77, nullptr).has_value());
  EXPECT_FALSE(m.OnReceive(0, 2001, 0x77, nullptr).has_value());
}

TEST(PacketMatcherTest, KeyWithoutTcpFallsBackToSkbaddr) {
  PacketMatcher m;
  PacketKey key;  // no has_tcp: the dialect carried no TCP header
  m.OnSend(0, 50, 0x77, &key, 1);
  EXPECT_FALSE(m.OnReceive(1, 100, 0x77, &key).has_value());
  EXPECT_TRUE(m.OnReceive(0, 100, 0x77, &key).has_value());
}

TEST(PacketMatcherTest, UnmatchedSendsExpire) {
  PacketMatcher m;
  m.OnSend(0, 10, 0x1, nullptr, 1);
  m.OnSend(0, 20, 0x2, nullptr, 1);
  m.OnSend(0, 30, 0x3, nullptr, 1);
  ASSERT_TRUE(m.OnReceive(0, 100, 0x1, nullptr).has_value());  // matched before expiry
  m.ExpireBefore(25);
  EXPECT_EQ(m.counters().expired, 1u);  // only 0x2: 0x1 was matched, 0x3 is recent
  EXPECT_EQ(m.pending(), 1u);
  EXPECT_FALSE(m.OnReceive(0, 100, 0x2, nullptr).has_value());
  EXPECT_TRUE(m.OnReceive(0, 100, 0x3, nullptr).has_value());
  m.ExpireBefore(1000);
  EXPECT_EQ(m.counters().expired, 1u);
  EXPECT_EQ(m.pending(), 0u);
}

TEST(PacketMatcherTest, ExpiryKeepsALaterSendWithTheSameKey) {
  PacketMatcher m;
  m.OnSend(0, 10, 0x1, nullptr, 1);
  m.OnSend(0, 40, 0x1, nullptr, 2);
  m.ExpireBefore(20);
  EXPECT_EQ(m.counters().expired, 1u);
  const auto send = m.OnReceive(0, 100, 0x1, nullptr);
  ASSERT_TRUE(send.has_value());
  EXPECT_EQ(send->sender, 2u);
}

}  // namespace
}  // namespace waitpath
