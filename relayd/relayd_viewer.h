// A live viewer of an lttng-relayd: attaches to sessions, then each Poll() returns what the
// relayd has for them, as events a CTF decoder (or a file writer) consumes: the metadata text
// of each trace as it grows, each stream's packets with their index, beacons of streams with
// nothing to send, streams appearing and ending, sessions ending. It follows the protocol's
// rules (metadata before the packets that need it, new streams when the relayd flags them or
// when nothing else is readable) so that its caller does not have to know them.
//
// Blocking and single-threaded; every request is bounded by RelaydLimits::io_timeout.
// Errors (relayd gone, refused, malformed) are RelaydError, one line each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "relayd/relayd_client.h"

namespace waitpath {

// Metadata text of one trace, to append to what came before for it (CTF 1.8 TSDL for UST
// and kernel traces). Comes before any packet that needs it.
struct ViewerMetadata {
  uint64_t session_id = 0;
  uint64_t trace_id = 0;  // ctf_trace_id: the streams of one trace share it
  std::string path;       // the trace's directory as the relayd names it
  std::string text;
};

// One packet of one stream, as the tracer wrote it (header, context, events, padding).
// `bytes`, `path` and `channel` stay valid until the next Poll().
struct ViewerPacket {
  uint64_t session_id = 0;
  uint64_t stream_id = 0;  // the relayd's handle of the stream
  uint64_t trace_id = 0;
  std::string_view path;     // the trace's directory
  std::string_view channel;  // the stream's file name ("chan_0")
  int cpu = -1;              // from the stream's file name, -1 when it does not say
  uint64_t ctf_stream_id = 0;
  uint64_t timestamp_begin = 0;
  uint64_t timestamp_end = 0;
  uint64_t events_discarded = 0;  // cumulative, as in the packet context
  uint64_t content_size_bits = 0;
  uint64_t packet_size_bits = 0;
  std::span<const std::byte> bytes;
};

// A stream has nothing before `timestamp` (its live beacon): its watermark moves there.
struct ViewerBeacon {
  uint64_t session_id = 0;
  uint64_t stream_id = 0;
  uint64_t ctf_stream_id = 0;
  uint64_t timestamp = 0;
};

struct ViewerStreamAdded {
  uint64_t session_id = 0;
  RelaydStreamInfo stream;
};
struct ViewerStreamEnded {
  uint64_t session_id = 0;
  uint64_t stream_id = 0;
};
struct ViewerSessionEnded {
  uint64_t session_id = 0;
};

using ViewerEvent = std::variant<ViewerMetadata, ViewerPacket, ViewerBeacon, ViewerStreamAdded,
                                 ViewerStreamEnded, ViewerSessionEnded>;

class RelaydViewer {
 public:
  using Seek = RelaydClient::Seek;

  RelaydViewer(const std::string& host, uint16_t port, const RelaydLimits& limits = {});

  std::vector<RelaydSessionInfo> ListSessions() { return client_.ListSessions(); }
  // Follows the session from now on (kLast: packets written from now; kBeginning: all of it).
  void Attach(uint64_t session_id, Seek seek);
  void Detach(uint64_t session_id);

  // The next event, or nothing when no attached stream has anything now (call again later:
  // the relayd's live timer is the pace, 100 ms between calls is plenty).
  std::optional<ViewerEvent> Poll();
  // Takes the buffer of the ViewerPacket Poll() last returned (its `bytes` now point into
  // `*into`) and keeps `*into`'s old buffer for the next packet: a packet is received once, not
  // copied (the copy and the zeroing of a fresh buffer were a tenth of a live process's CPU).
  void TakePacket(PacketBytes* into) { packet_.swap(*into); }

  // Sessions attached whose end (ViewerSessionEnded) Poll() has not returned yet.
  size_t active_sessions() const;
  // Data streams held (ended ones go once nothing is pending).
  size_t streams_held() const { return streams_.size(); }
  const std::string& peer() const { return client_.peer(); }
  uint32_t minor_version() const { return client_.minor_version(); }  // protocol 2.<minor>

 private:
  struct Stream {
    uint64_t session_id = 0;
    RelaydStreamInfo info;
    size_t trace = 0;  // index in traces_
    int cpu = -1;
    bool ended = false;
    uint64_t watermark = 0;            // latest packet end or beacon
    std::optional<RelaydIndex> index;  // fetched, its packet not yet (GET_PACKET said retry)
  };
  struct Trace {
    uint64_t session_id = 0;
    uint64_t trace_id = 0;
    std::string path;
    std::optional<uint64_t> metadata_stream;
    bool metadata_ended = false;
    uint64_t metadata_bytes = 0;  // received so far, bounded by max_metadata_total_bytes
  };
  struct Session {
    uint64_t id = 0;
    bool ended = false;         // nothing more to ask the relayd
    bool end_returned = false;  // its ViewerSessionEnded has been returned
  };

  void AddStreams(uint64_t session_id, const std::vector<RelaydStreamInfo>& streams);
  void FetchMetadata(size_t trace);
  void FetchNewStreams(uint64_t session_id);
  // Visits each stream once from the cursor; true when it queued something.
  bool Round();
  // Asks the stream for its next packet; true when it queued something.
  bool Visit(Stream& s);
  bool LookForNewStreams();
  // Drops the streams that ended (a relayd may announce streams and hang them up forever);
  // only when nothing is pending, since queued events point into them.
  void ForgetEndedStreams();

  RelaydClient client_;
  RelaydLimits limits_;
  std::vector<Session> sessions_;
  // Deques: events queued in pending_ point into them, and they grow while events wait.
  std::deque<Stream> streams_;  // data streams, in the order they appeared
  std::deque<Trace> traces_;
  size_t cursor_ = 0;
  std::deque<ViewerEvent> pending_;
  PacketBytes packet_;  // the bytes of the packet last returned
};

// The CPU of a stream from its file name ("chan_3", "channel0_3" → 3), or -1.
int StreamCpu(std::string_view channel);

}  // namespace waitpath
