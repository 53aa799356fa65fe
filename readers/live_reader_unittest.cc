#include "readers/live_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <iterator>
#include <vector>

#include "ctf/trace_check.h"
#include "readers/native_reader.h"
#include "relayd/fake_relayd.h"

namespace waitpath {
namespace {

TEST(LiveSessionUrlTest, NamesTheRelaydTheHostAndTheSession) {
  LiveSessionUrl u;
  ASSERT_TRUE(ParseLiveSessionUrl("net://127.0.0.1:16002/host/web-1/s-web", &u));
  EXPECT_EQ(u.relayd, "127.0.0.1");
  EXPECT_EQ(u.port, 16002);
  EXPECT_EQ(u.hostname, "web-1");
  EXPECT_EQ(u.session, "s-web");
  ASSERT_TRUE(ParseLiveSessionUrl("net://relay.example/host/db/s", &u));
  EXPECT_EQ(u.relayd, "relay.example");
  EXPECT_EQ(u.port, 5344);  // the live port
}

TEST(LiveSessionUrlTest, RefusesWhatIsNotASessionUrl) {
  LiveSessionUrl u;
  for (const char* bad :
       {"", "net://127.0.0.1", "net://127.0.0.1:5344", "tcp://h/host/a/b", "net://h/host/a",
        "net://h/host//b", "net://h/session/a/b", "net://h:0/host/a/b", "net://h:70000/host/a/b",
        "net://h:x/host/a/b", "net:///host/a/b"}) {
    EXPECT_FALSE(ParseLiveSessionUrl(bad, &u)) << bad;
  }
}

// A relayd announcing a thousand new streams at every ask and hanging each up at once, for
// ever (a test double: a real lttng-relayd does not do this on demand). The reader keeps
// following the session past 65,536 streams (a port's index is 16 bits: the reader reuses the
// ports of streams that ended), holds only the live ones, and a stop request ends it (before:
// the loop looked at the stop flag only when the relayd had nothing, which this one never has).
TEST(LiveReaderTest, StreamsThatComeAndGoHoldNothingAndAStopEndsTheReader) {
  namespace w = viewer_wire;
  using namespace fake_relayd;
  std::ifstream in(std::string(WAITPATH_FIXTURES) + "/lttng/rpc/metadata", std::ios::binary);
  const std::string metadata{std::istreambuf_iterator<char>(in), {}};
  ASSERT_FALSE(metadata.empty());
  auto stream = [](uint64_t id, bool is_metadata, const std::string& channel) {
    w::StreamRecord s{};
    s.id.set(id);
    s.ctf_trace_id.set(1);
    s.metadata_flag.set(is_metadata ? 1 : 0);
    std::memcpy(s.path_name.chars.data(), "host/session/kernel", 19);
    std::memcpy(s.channel_name.chars.data(), channel.data(), channel.size());
    return Bytes(s);
  };
  std::atomic<uint64_t> announced{0};
  bool metadata_sent = false;
  FakeSession session;
  session.id = 7;
  FakeRelayd f(
      RelaydOf(13, {session}, std::make_shared<FakeRelaydLog>(),
               [&](uint32_t cmd, const std::string&) -> Answer {
                 switch (cmd) {
                   case w::kAttachSession: {
                     w::AttachReply r{};
                     r.status.set(w::kAttachOk);
                     r.streams_count.set(1);
                     return {Bytes(r) + stream(1, true, "metadata")};
                   }
                   case w::kGetMetadata: {
                     w::MetadataReply r{};
                     r.len.set(metadata_sent ? 0 : metadata.size());
                     r.status.set(metadata_sent ? w::kMetadataNoNew : w::kMetadataOk);
                     std::string bytes = Bytes(r) + (metadata_sent ? std::string() : metadata);
                     metadata_sent = true;
                     return {bytes};
                   }
                   case w::kGetNewStreams: {
                     w::NewStreamsReply r{};
                     r.status.set(w::kNewStreamsOk);
                     r.streams_count.set(1000);
                     std::string bytes = Bytes(r);
                     for (int i = 0; i < 1000; ++i)
                       bytes += stream(100 + announced++, false, "chan_" + std::to_string(i % 4));
                     return {bytes};
                   }
                   case w::kGetNextIndex: {
                     w::IndexReply r{};
                     r.status.set(w::kIndexHup);
                     return {Bytes(r)};
                   }
                 }
                 return Close();
               }));
  BatchPool pool{8};
  HostInput input{0, 512, pool, [&pool](Batch* b) { pool.Give(b); }};
  std::atomic<bool> stop{false};
  auto reading = std::async(std::launch::async, [&] {
    return ReadLiveSession(input, f.url() + "/host/host/session", LiveReadOptions{}, stop);
  });
  while (announced < 70000 &&
         reading.wait_for(std::chrono::milliseconds(10)) == std::future_status::timeout) {
  }
  ASSERT_GE(announced.load(), 70000u) << reading.get().error;
  stop = true;
  // Before: never returned (the fake's end, at the test's, broke the connection).
  ASSERT_EQ(reading.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const LiveAttempt result = reading.get();
  EXPECT_EQ(result.error, "");
  EXPECT_FALSE(result.refused);
}

// An event as the reader hands it downstream: all of it but the host and the padding, a
// packet event's key instead of its index in the batch (batches are cut where they are cut).
struct Seen {
  int64_t ts;
  uint16_t cpu;
  EventKind kind;
  uint8_t ctx;
  int32_t cur_tid, cur_pid, a, b, c, d;
  int64_t x;
  std::array<uint32_t, 6> key{};
  bool operator==(const Seen&) const = default;
};
struct Collected {
  BatchPool pool{64};
  std::vector<Seen> events;
  HostInput input{0, 512, pool, [this](Batch* b) {
                    for (const Event& e : b->events) {
                      Seen s{e.ts, e.cpu, e.kind, e.ctx, e.cur_tid, e.cur_pid,
                             e.a,  e.b,   e.c,    e.d,   e.x};
                      if ((e.kind == EventKind::kPacketOut || e.kind == EventKind::kPacketIn) &&
                          e.a >= 0 && static_cast<size_t>(e.a) < b->packets.size()) {
                        const PacketKey& k = b->packets[static_cast<size_t>(e.a)];
                        s.a = -1;
                        s.key = {k.saddr, k.daddr,   uint32_t{k.sport} << 16 | k.dport,
                                 k.seq,   k.ack_seq, uint32_t{k.flags} << 16 | k.ip_len};
                      }
                      events.push_back(s);
                    }
                    pool.Give(b);
                  }};
};

// The rpc fixture served by a scripted relayd that answers every command as lttng-relayd does
// (fake_relayd::TraceRelayd, the peer of the relayd mutation run): read live, natively, it
// gives exactly the events `analyze` (the native decoder, recorded) reads from the files, and
// the session ends when its streams do.
TEST(LiveReaderTest, ARecordedTraceServedByARelaydReadsAsTheRecordedTrace) {
  using namespace fake_relayd;
  const std::string dir = std::string(WAITPATH_FIXTURES) + "/lttng/rpc";
  Collected recorded;
  recorded.input.recorded = true;
  {
    NativeReader reader(recorded.input);
    std::string why;
    ASSERT_TRUE(reader.Open({dir}, &why)) << why;
    std::atomic<bool> stop{false};
    ASSERT_TRUE(reader.Run(stop));
    recorded.input.Finish("");
  }
  ASSERT_GT(recorded.events.size(), 6000u);

  ServedTrace trace;
  std::string why;
  ASSERT_TRUE(LoadServedTrace(dir, {"waitpath_0_0", "waitpath_1_0"}, &trace, &why)) << why;
  // The index files say what the packet contexts say.
  const CheckedTrace checked = CheckTrace(dir, {}, /*make_view=*/false);
  ASSERT_EQ(checked.streams.size(), trace.streams.size());
  for (const StreamPackets& packets : checked.streams) {
    const std::string channel = packets.path.substr(packets.path.rfind('/') + 1);
    const auto served = std::find_if(trace.streams.begin(), trace.streams.end(),
                                     [&](const ServedStream& s) { return s.channel == channel; });
    ASSERT_NE(served, trace.streams.end()) << channel;
    ASSERT_EQ(served->index.size(), packets.offsets.size()) << channel;
    for (size_t k = 0; k < packets.offsets.size(); ++k) {
      EXPECT_EQ(served->index[k].offset.get(), packets.offsets[k]);
      EXPECT_EQ(served->index[k].packet_size.get(), packets.sizes[k] * 8);
    }
  }
  // Everything at once; with retries, beacons and the metadata in parts; with the streams
  // announced after the attach too.
  const std::vector<Pacing> pacings = {
      Pacing{}, Pacing{.retry_every = 3, .metadata_chunk = 4096},
      Pacing{.late_streams = true, .retry_every = 2, .metadata_chunk = 1000}};
  for (uint32_t minor : {13u, 15u}) {
    for (const Pacing& pacing : pacings) {
      SCOPED_TRACE("protocol 2." + std::to_string(minor) + ", late streams " +
                   std::to_string(pacing.late_streams) + ", retry every " +
                   std::to_string(pacing.retry_every));
      FakeSession session;
      session.id = 3;
      session.name = "rpc";
      auto relayd = std::make_shared<TraceRelayd>(trace, session, minor, pacing);
      FakeRelayd f(TraceRelayd::Serve(relayd));
      Collected live;
      std::atomic<bool> stop{false};
      const LiveAttempt result =
          ReadLiveSession(live.input, f.url() + "/host/host/rpc", LiveReadOptions{}, stop);
      live.input.Finish("");
      EXPECT_EQ(result.error, "");
      EXPECT_TRUE(result.ended);
      EXPECT_TRUE(relayd->AllSent());
      EXPECT_EQ(live.events.size(), recorded.events.size());
      EXPECT_TRUE(live.events == recorded.events);
    }
  }
}

// The rpc fixture's two CPUs, served live as session 3 by a scripted relayd of 2.15.
void ServeRpcFixture(fake_relayd::Script* serve) {
  using namespace fake_relayd;
  ServedTrace trace;
  std::string why;
  ASSERT_TRUE(LoadServedTrace(std::string(WAITPATH_FIXTURES) + "/lttng/rpc",
                              {"waitpath_0_0", "waitpath_1_0"}, &trace, &why))
      << why;
  FakeSession session;
  session.id = 3;
  *serve = TraceRelayd::Serve(std::make_shared<TraceRelayd>(std::move(trace), session, 15));
}

// A relayd serving a trace's packets with no metadata for it (the metadata stream it announces
// is another trace's): the packets wait for metadata within a bound, then the session is
// refused with one line (before: held without a bound, whatever the relayd sent).
TEST(LiveReaderTest, PacketsWithoutMetadataAreHeldWithinABound) {
  namespace w = viewer_wire;
  using namespace fake_relayd;
  Script serve;
  ASSERT_NO_FATAL_FAILURE(ServeRpcFixture(&serve));
  FakeRelayd f([&](uint32_t cmd, const std::string& payload) {
    Answer a = serve(cmd, payload);
    if (cmd == w::kAttachSession) {
      // The first record, the metadata stream's: its trace id.
      w::Be64 other;
      other.set(2);
      std::memcpy(a.bytes.data() + sizeof(w::AttachReply) + 8, &other, sizeof(other));
    }
    return a;
  });
  Collected live;
  LiveReadOptions options;
  options.max_unreadable_bytes = 100 << 10;
  std::atomic<bool> stop{false};
  const LiveAttempt result =
      ReadLiveSession(live.input, f.url() + "/host/host/session", options, stop);
  EXPECT_TRUE(result.refused);
  EXPECT_FALSE(result.ended);
  EXPECT_NE(result.error.find("MiB of packets of trace host/session-20260101-000000/ust/uid/1000/"
                              "64-bit and no metadata to read them"),
            std::string::npos)
      << result.error;
  EXPECT_EQ(live.events.size(), 0u);
}

// The same relayd ending the session before the bound: the packets never read are said, in one
// line (before: the session ended well, empty, every packet dropped in silence).
TEST(LiveReaderTest, PacketsNeverReadForWantOfMetadataAreSaid) {
  namespace w = viewer_wire;
  using namespace fake_relayd;
  Script serve;
  ASSERT_NO_FATAL_FAILURE(ServeRpcFixture(&serve));
  FakeRelayd f([&](uint32_t cmd, const std::string& payload) {
    Answer a = serve(cmd, payload);
    if (cmd == w::kGetMetadata) {
      // An unknown status: the metadata stream is over before any metadata came.
      w::MetadataReply r{};
      r.status.set(7);
      a.bytes = Bytes(r);
    }
    return a;
  });
  Collected live;
  std::atomic<bool> stop{false};
  const LiveAttempt result =
      ReadLiveSession(live.input, f.url() + "/host/host/session", LiveReadOptions{}, stop);
  EXPECT_TRUE(result.refused);
  EXPECT_FALSE(result.ended);
  EXPECT_EQ(result.error,
            "the relayd ended the session with 8 packets of trace "
            "host/session-20260101-000000/ust/uid/1000/64-bit unread: it sent no metadata to "
            "read them");
  EXPECT_EQ(live.events.size(), 0u);
}

}  // namespace
}  // namespace waitpath
