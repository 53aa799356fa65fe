#include "tools/replay/record_builder.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "model/event_views.h"
#include "model/replay_format.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

constexpr uint32_t kSomeDialect = 0x31;  // any DialectFlags value

// An event of `kind` at 1000 on CPU 3, in a softirq over task 42 (perf's context fields).
Event PerfEvent(EventKind kind) {
  Event e = MakeEvent(kind, 1'000, 3);
  e.ctx = kCtxKnown | kCtxSoftirq;
  e.cur_tid = 42;
  e.cur_pid = 41;
  return e;
}

TEST(RecordBuilder, SwitchCarriesBothNamesAndShiftsTime) {
  Event e = PerfEvent(EventKind::kSchedSwitch);
  const auto sw = AsSchedSwitch(e);
  sw.prev_tid() = 10;
  sw.next_tid() = 11;
  sw.prev_comm() = static_cast<int32_t>(StringTable::Global().Intern("make"));
  sw.next_comm() = static_cast<int32_t>(StringTable::Global().Intern("cc1"));
  sw.prev_state() = 1;
  const ReplayRecord r = BuildReplayRecord(e, Batch{}, kSomeDialect, 500);
  EXPECT_EQ(r.fields.format_version, kReplayFormatVersion);
  EXPECT_EQ(r.fields.orig_ts, 1'500);
  EXPECT_EQ(r.fields.cpu, 3);
  EXPECT_EQ(r.fields.kind, static_cast<uint8_t>(EventKind::kSchedSwitch));
  EXPECT_EQ(r.fields.ctx, kCtxKnown | kCtxSoftirq);
  EXPECT_EQ(r.fields.cur_tid, 42);
  EXPECT_EQ(r.fields.cur_pid, 41);
  EXPECT_EQ(r.fields.a, 10);
  EXPECT_EQ(r.fields.b, 11);
  EXPECT_EQ(r.fields.c, 0);  // "has a name": the text is in c_str
  EXPECT_EQ(r.fields.d, 0);
  EXPECT_EQ(std::string(r.c_str), "make");
  EXPECT_EQ(std::string(r.d_str), "cc1");
  EXPECT_EQ(r.fields.x, 1);  // prev_state is not a time
  EXPECT_EQ(r.fields.dialect, kSomeDialect);
}

TEST(RecordBuilder, MissingNameStaysMinusOne) {
  Event e = PerfEvent(EventKind::kSchedWaking);
  const ReplayRecord r = BuildReplayRecord(e, Batch{}, 0, 0);
  EXPECT_EQ(r.fields.c, -1);
  EXPECT_EQ(std::string(r.c_str), "");
}

TEST(RecordBuilder, IntegerCAndDTravelAsIntegers) {
  Event e = PerfEvent(EventKind::kProcessFork);
  AsFork(e).child_pid() = 1234;  // an integer even though the child's name is a name
  const ReplayRecord r = BuildReplayRecord(e, Batch{}, 0, 0);
  EXPECT_EQ(r.fields.d, 1234);
  EXPECT_EQ(std::string(r.d_str), "");
}

TEST(RecordBuilder, PacketKeyReplacesTheBatchIndex) {
  Batch batch;
  batch.packets.resize(2);
  PacketKey& k = batch.packets[1];
  k.has_tcp = k.has_addresses = true;
  k.saddr = 0x7f000001;
  k.daddr = 0x7f000002;
  k.sport = 5000;
  k.dport = 80;
  k.seq = 7;
  k.ack_seq = 9;
  k.flags = 0x18;
  Event e = PerfEvent(EventKind::kPacketOut);
  AsPacket(e).key() = 1;
  AsPacket(e).len() = 60;
  AsPacket(e).skbaddr() = 0xdead;
  const ReplayRecord r = BuildReplayRecord(e, batch, 0, 0);
  EXPECT_EQ(r.fields.a, -1);
  EXPECT_EQ(r.fields.b, 60);
  EXPECT_EQ(r.fields.x, 0xdead);
  EXPECT_EQ(r.fields.has_key, 1);
  EXPECT_EQ(r.fields.has_addresses, 1);
  EXPECT_EQ(r.fields.saddr, 0x7f000001u);
  EXPECT_EQ(r.fields.daddr, 0x7f000002u);
  EXPECT_EQ(r.fields.sport, 5000);
  EXPECT_EQ(r.fields.dport, 80);
  EXPECT_EQ(r.fields.seq, 7u);
  EXPECT_EQ(r.fields.ack_seq, 9u);
  EXPECT_EQ(r.fields.tcp_flags, 0x18);

  // A later round: the same segment gets other sequence numbers, the same on both sides
  // (seq and ack_seq advance together, wrapping as TCP's do).
  k.seq = 0xffffffffu;
  const ReplayRecord later = BuildReplayRecord(e, batch, 0, 0, 3);
  EXPECT_EQ(later.fields.seq, 0xffffffffu + 3 * kRoundSeqStride);
  EXPECT_EQ(later.fields.ack_seq, 9u + 3 * kRoundSeqStride);
  EXPECT_NE(later.fields.seq, k.seq);

  AsPacket(e).key() = -1;  // no key (e.g. perf's skbaddr-only packets)
  EXPECT_EQ(BuildReplayRecord(e, batch, 0, 0).fields.has_key, 0);
}

TEST(RecordBuilder, LossBeginIsShiftedLikeTheTimestamp) {
  Event e = PerfEvent(EventKind::kLost);
  AsLost(e).count() = 17;
  AsLost(e).begin() = 900;
  const ReplayRecord r = BuildReplayRecord(e, Batch{}, 0, 100);
  EXPECT_EQ(r.fields.a, 17);
  EXPECT_EQ(r.fields.x, 1'000);
  AsLost(e).begin() = std::numeric_limits<int64_t>::min();  // loss before any event: no begin time
  EXPECT_EQ(BuildReplayRecord(e, Batch{}, 0, 100).fields.x, std::numeric_limits<int64_t>::min());
}

TEST(RecordBuilder, SpanBeginCarriesItsNameAndIds) {
  Batch batch;
  batch.spans.resize(2);
  batch.spans[1] = SpanIds{0x0123456789abcdefULL, 0xfedcba9876543210ULL, 0x42};
  Event e = MakeEvent(EventKind::kSpanBegin, 1'000, 0);
  const auto span = AsSpan(e);
  span.tid() = 7;
  span.pid() = 6;
  span.name() = static_cast<int32_t>(StringTable::Global().Intern("checkout"));
  span.ids() = 1;
  span.span_id() = static_cast<int64_t>(0x8000000000000101ULL);  // top bit set: as signed
  const ReplayRecord r = BuildReplayRecord(e, batch, 0, 10);
  EXPECT_EQ(r.fields.kind, static_cast<uint8_t>(EventKind::kSpanBegin));
  EXPECT_EQ(r.fields.orig_ts, 1'010);
  EXPECT_EQ(r.fields.a, 7);
  EXPECT_EQ(r.fields.b, 6);
  EXPECT_EQ(r.fields.c, 0);
  EXPECT_EQ(std::string(r.c_str), "checkout");
  EXPECT_EQ(r.fields.d, -1);  // the batch-local index does not travel
  EXPECT_EQ(static_cast<uint64_t>(r.fields.x), 0x8000000000000101ULL);
  EXPECT_EQ(r.fields.has_span_ids, 1);
  EXPECT_EQ(r.fields.trace_hi, 0x0123456789abcdefULL);
  EXPECT_EQ(r.fields.trace_lo, 0xfedcba9876543210ULL);
  EXPECT_EQ(r.fields.parent_span, 0x42u);

  // A later round: new span and trace ids, consistently (the parent's id moves with it).
  const ReplayRecord later = BuildReplayRecord(e, batch, 0, 0, 2);
  EXPECT_EQ(static_cast<uint64_t>(later.fields.x), 0x8000000000000101ULL + 2 * kRoundSpanStride);
  EXPECT_EQ(later.fields.trace_hi, 0x0123456789abcdefULL);
  EXPECT_EQ(later.fields.trace_lo, 0xfedcba9876543210ULL + 2 * kRoundSpanStride);
  EXPECT_EQ(later.fields.parent_span, 0x42u + 2 * kRoundSpanStride);
  batch.spans[1].parent = 0;  // a root stays a root
  EXPECT_EQ(BuildReplayRecord(e, batch, 0, 0, 2).fields.parent_span, 0u);

  span.ids() = -1;  // a begin without ids (e.g. read without a span table)
  EXPECT_EQ(BuildReplayRecord(e, batch, 0, 0).fields.has_span_ids, 0);
}

TEST(RecordBuilder, SpanEndAndHandoffCarryTheSpanIdOnly) {
  for (const EventKind kind : {EventKind::kSpanEnd, EventKind::kSpanHandoff}) {
    Event e = MakeEvent(kind, 1'000, 1);
    AsSpan(e).tid() = 9;
    AsSpan(e).pid() = 6;
    AsSpan(e).span_id() = 0x101;
    const ReplayRecord r = BuildReplayRecord(e, Batch{}, 0, 0);
    EXPECT_EQ(r.fields.a, 9);
    EXPECT_EQ(r.fields.b, 6);
    EXPECT_EQ(r.fields.c, -1);
    EXPECT_EQ(std::string(r.c_str), "");
    EXPECT_EQ(r.fields.x, 0x101);
    EXPECT_EQ(r.fields.has_span_ids, 0);
    EXPECT_EQ(static_cast<uint64_t>(BuildReplayRecord(e, Batch{}, 0, 0, 1).fields.x),
              0x101 + kRoundSpanStride);
  }
}

}  // namespace
}  // namespace waitpath
