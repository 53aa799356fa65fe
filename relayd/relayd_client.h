// One connection to an lttng-relayd's live port, speaking the viewer protocol: one method per
// command, each a request and its whole reply, checked (sizes bounded, statuses known) before
// anything is returned. Speaks the newest protocol both sides know (2.4 to 2.15: docs/live.md,
// "Protocol versions"). Stateless beyond the connection; RelaydViewer drives it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/packet_bytes.h"
#include "relayd/relayd_socket.h"

namespace waitpath {

struct RelaydLimits {
  std::chrono::milliseconds io_timeout{10000};  // per request: send, then the whole reply
  // Non-zero: everything the connection does, from the connect on, within this (one-shot
  // queries such as a session listing).
  std::chrono::milliseconds total_timeout{0};
  // When given and raised, any wait for the relayd ends within RelaydSocket::kStopPoll with a
  // RelaydError of kind kStopped.
  const std::atomic<bool>* stop = nullptr;
  uint64_t max_packet_bytes = 64ull << 20;    // LTTng sub-buffers are far smaller
  uint64_t max_metadata_bytes = 64ull << 20;  // per GET_METADATA reply
  // A trace's whole metadata (LTTng's kernel metadata is under 1 MiB, a UST trace's grows with
  // its event classes): a relayd that answers GET_METADATA with more forever is refused here
  // rather than when memory runs out.
  uint64_t max_metadata_total_bytes = 128ull << 20;
  uint32_t max_sessions = 10000;   // per LIST_SESSIONS reply
  uint32_t max_name_bytes = 4096;  // per hostname or session name (protocol 2.15)
  uint32_t max_streams = 100000;   // per ATTACH / GET_NEW_STREAMS reply, and streams alive at once
};

// The trace format of a session: CTF 1.8 (TSDL metadata) or CTF 2 (JSON metadata, LTTng 2.15's
// default). kUnknown: a format number this client does not know (a newer relayd).
enum class RelaydTraceFormat : uint8_t { kCtf18, kCtf2, kUnknown };
const char* TraceFormatName(RelaydTraceFormat format);  // "ctf-1.8", "ctf-2", "unknown"

struct RelaydSessionInfo {
  uint64_t id = 0;
  std::string hostname;  // bytes as the relayd sent them (from 2.15 on, any bytes: NUL, '/'...)
  std::string name;
  uint32_t live_timer_us = 0;
  uint32_t clients = 0;  // 1 when a viewer is attached
  uint32_t streams = 0;
  // Before protocol 2.15 the relayd does not say, and lists CTF 1.8 sessions only: a relayd
  // older than 2.15 has no other, a newer one hides its CTF 2 sessions from such viewers.
  RelaydTraceFormat trace_format = RelaydTraceFormat::kCtf18;
};

struct RelaydStreamInfo {
  uint64_t id = 0;            // the relayd's stream handle, named in every stream request
  uint64_t ctf_trace_id = 0;  // streams of one trace share this, and one metadata stream
  bool metadata = false;
  std::string path;     // the trace's directory as the relayd writes it (host/session-.../ust/...)
  std::string channel;  // file name in that directory: "metadata", "chan_0"...
};

struct RelaydIndex {
  enum class Status : uint8_t { kOk, kRetry, kHup, kInactive };
  Status status = Status::kRetry;
  bool new_metadata = false;
  bool new_streams = false;
  uint64_t offset = 0;            // bytes, in the stream's file
  uint64_t packet_size_bits = 0;  // whole packet, padding included
  uint64_t content_size_bits = 0;
  uint64_t timestamp_begin = 0;
  uint64_t timestamp_end = 0;  // for kInactive: the beacon's time
  uint64_t events_discarded = 0;
  uint64_t ctf_stream_id = 0;  // the stream class in the metadata
};

class RelaydClient {
 public:
  enum class Seek : uint8_t { kBeginning, kLast };
  enum class Fetch : uint8_t { kOk, kRetry, kEnd };

  // CONNECT (protocol 2.15, or the relayd's if lower; 2.4 at least) and CREATE_SESSION.
  RelaydClient(const std::string& host, uint16_t port, const RelaydLimits& limits = {});

  // The relayd's sessions, in the layout of the protocol spoken; the whole reply within
  // io_timeout. More than max_sessions, or a name longer than max_name_bytes: kProtocol.
  std::vector<RelaydSessionInfo> ListSessions();
  // The session's streams; throws kAlreadyViewed when another viewer holds it, kRefused when
  // it is unknown or not live.
  std::vector<RelaydStreamInfo> Attach(uint64_t session_id, Seek seek);
  // Streams created since the last call (or the attach). Returns false once the session has
  // ended and none of its streams is left.
  bool GetNewStreams(uint64_t session_id, std::vector<RelaydStreamInfo>* streams);
  RelaydIndex GetNextIndex(uint64_t stream_id);
  // The `bytes` bytes at `offset` of the stream into `out` (resized). kRetry: not readable yet.
  Fetch GetPacket(uint64_t stream_id, uint64_t offset, uint64_t bytes, PacketBytes* out,
                  bool* new_metadata);
  // Metadata not sent yet, appended to `out`. kRetry: none new; kEnd: the stream is gone.
  Fetch GetMetadata(uint64_t stream_id, std::string* out);
  // DETACH_SESSION; with a relayd older than 2.8, which does not know it, nothing is sent (the
  // session stays this viewer's until the connection closes).
  void Detach(uint64_t session_id);

  uint32_t minor_version() const { return minor_; }        // the protocol spoken: 2.<minor>
  uint32_t relayd_minor() const { return relayd_minor_; }  // the relayd's own: 2.<minor>
  const std::string& peer() const { return socket_.peer(); }

 private:
  void Request(uint32_t cmd, const void* payload, size_t size, const char* what);
  RelaydSessionInfo ReceiveSession24(RelaydSocket::Clock::time_point deadline);
  RelaydSessionInfo ReceiveSession215(RelaydSocket::Clock::time_point deadline);
  // `count` stream records, the rest of a reply due by `deadline`.
  std::vector<RelaydStreamInfo> ReceiveStreams(uint32_t count, const char* what,
                                               RelaydSocket::Clock::time_point deadline);
  [[noreturn]] void Fail(RelaydError::Kind kind, const std::string& what) const;

  RelaydSocket socket_;
  RelaydLimits limits_;
  uint32_t minor_ = 0;
  uint32_t relayd_minor_ = 0;
};

}  // namespace waitpath
