// The byte layout of the lttng-relayd live viewer protocol (lttng-tools 2.4 to 2.16,
// src/bin/lttng-relayd/lttng-viewer-abi.h(pp)), written from its description: every message is a
// packed struct of big-endian integers and fixed-size NUL-padded strings. Fields are byte
// arrays, so the structs have alignment 1 and no padding on any compiler, and are copied from
// and to the socket as they are; the static_asserts pin each size to the relayd's.
// Implementation detail of relayd_client.cc and its tests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace waitpath::viewer_wire {

// An unsigned integer stored big-endian, whatever the host's order.
template <typename T>
class Big {
 public:
  T get() const {
    T v = 0;
    for (std::byte b : bytes_) v = static_cast<T>((v << 8) | static_cast<T>(b));
    return v;
  }
  void set(T v) {
    for (size_t i = sizeof(T); i-- > 0;) {
      bytes_[i] = static_cast<std::byte>(v & 0xff);
      v = static_cast<T>(v >> 8);
    }
  }

 private:
  std::array<std::byte, sizeof(T)> bytes_{};
};
using Be32 = Big<uint32_t>;
using Be64 = Big<uint64_t>;

// A fixed-size string field: NUL-padded, possibly not NUL-terminated when full.
template <size_t N>
struct FixedString {
  std::array<char, N> chars{};
  std::string str() const {
    size_t n = 0;
    while (n < N && chars[n] != '\0') ++n;
    return std::string(chars.data(), n);
  }
};

inline constexpr size_t kPathMax = 4096;
inline constexpr size_t kNameMax = 255;
inline constexpr size_t kHostNameMax = 64;

// The newest protocol this client speaks. CONNECT carries it; the relayd answers with its own
// version (LTTng 2.4 to 2.14: their release's minor; 2.15 and later: 15) and both then speak the
// lower. What depends on that minor (lttng-tools src/bin/lttng-relayd/live.c(pp), every test of
// the connection's minor):
inline constexpr uint32_t kMajor = 2;
inline constexpr uint32_t kMinor = 15;
// The oldest: the index and stream records below have not changed since.
inline constexpr uint32_t kMinorOldest = 4;
// DETACH_SESSION exists from 2.8 on; an older relayd answers it with an error and closes.
inline constexpr uint32_t kMinorDetach = 8;
// From 2.15 on, LIST_SESSIONS sends SessionRecord215 (lengths, names unbounded, trace format)
// instead of SessionRecord24, and lists and attaches CTF 2 sessions, which it hides from older
// viewers (not listed; ATTACH_SESSION answers UNKNOWN).
inline constexpr uint32_t kMinorSessionFormat = 15;

enum Command : uint32_t {
  kConnect = 1,
  kListSessions = 2,
  kAttachSession = 3,
  kGetNextIndex = 4,
  kGetPacket = 5,
  kGetMetadata = 6,
  kGetNewStreams = 7,
  kCreateSession = 8,
  kDetachSession = 9,
};

// Flags of a GET_NEXT_INDEX or GET_PACKET reply.
inline constexpr uint32_t kFlagNewMetadata = 1u << 0;
inline constexpr uint32_t kFlagNewStream = 1u << 1;
// There is no "data pending" viewer flag (up to lttng-tools master, 2026): DATA_PENDING is a
// command between session daemon and relayd, which a viewer never sees.

inline constexpr uint32_t kClientCommand = 1;  // connection type
inline constexpr uint32_t kSeekBeginning = 1;
inline constexpr uint32_t kSeekLast = 2;

enum AttachStatus : uint32_t {
  kAttachOk = 1,
  kAttachAlready = 2,
  kAttachUnknown = 3,
  kAttachNotLive = 4,
  kAttachSeekError = 5,
  kAttachNoSession = 6,
};
enum IndexStatus : uint32_t {
  kIndexOk = 1,
  kIndexRetry = 2,
  kIndexHup = 3,
  kIndexErr = 4,
  kIndexInactive = 5,
  kIndexEof = 6,
};
enum PacketStatus : uint32_t { kPacketOk = 1, kPacketRetry = 2, kPacketErr = 3, kPacketEof = 4 };
enum MetadataStatus : uint32_t { kMetadataOk = 1, kMetadataNoNew = 2, kMetadataErr = 3 };
enum NewStreamsStatus : uint32_t {
  kNewStreamsOk = 1,
  kNewStreamsNoNew = 2,
  kNewStreamsErr = 3,
  kNewStreamsHup = 4,
};
inline constexpr uint32_t kCreateSessionOk = 1;
inline constexpr uint32_t kDetachOk = 1;

// Every request starts with this header; data_size is the size of what follows.
struct CmdHeader {
  Be64 data_size;
  Be32 cmd;
  Be32 cmd_version;
};
struct ConnectMsg {  // request and reply
  Be64 viewer_session_id;
  Be32 major;
  Be32 minor;
  Be32 type;
};
// Trace format of a SessionRecord215.
enum TraceFormat : uint32_t { kTraceFormatCtf18 = 0, kTraceFormatCtf2 = 1 };

struct SessionCommon {
  Be64 id;
  Be32 live_timer;
  Be32 clients;
  Be32 streams;
};
// A LIST_SESSIONS record up to protocol 2.14: names truncated to their fields.
struct SessionRecord24 {
  SessionCommon common;
  FixedString<kHostNameMax> hostname;
  FixedString<kNameMax> session_name;
};
// A LIST_SESSIONS record from protocol 2.15 on: followed by hostname_len bytes of hostname, then
// session_name_len bytes of session name, neither NUL-terminated.
struct SessionRecord215 {
  SessionCommon common;
  Be32 hostname_len;
  Be32 session_name_len;
  Be32 trace_format;  // TraceFormat
};
struct StreamRecord {
  Be64 id;
  Be64 ctf_trace_id;
  Be32 metadata_flag;
  FixedString<kPathMax> path_name;
  FixedString<kNameMax> channel_name;
};
struct ListSessionsReply {
  Be32 sessions_count;  // followed by that many SessionRecord24 or SessionRecord215
};
struct AttachRequest {
  Be64 session_id;
  Be64 offset;  // unused by the relayd
  Be32 seek;
};
struct AttachReply {
  Be32 status;
  Be32 streams_count;  // followed by that many StreamRecord
};
struct StreamIdRequest {  // GET_NEXT_INDEX, GET_METADATA
  Be64 stream_id;
};
struct IndexReply {
  Be64 offset;       // bytes into the stream's file
  Be64 packet_size;  // bits
  Be64 content_size;
  Be64 timestamp_begin;
  Be64 timestamp_end;
  Be64 events_discarded;
  Be64 stream_id;  // the CTF stream id (stream class), not the relayd's stream handle
  Be32 status;
  Be32 flags;
};
struct GetPacketRequest {
  Be64 stream_id;
  Be64 offset;
  Be32 len;
};
struct PacketReply {
  Be32 status;
  Be32 len;  // followed by len bytes when OK
  Be32 flags;
};
struct MetadataReply {
  Be64 len;  // followed by len bytes
  Be32 status;
};
struct SessionIdRequest {  // GET_NEW_STREAMS, DETACH_SESSION
  Be64 session_id;
};
struct NewStreamsReply {
  Be32 status;
  Be32 streams_count;  // followed by that many StreamRecord
};
struct StatusReply {  // CREATE_SESSION, DETACH_SESSION
  Be32 status;
};

static_assert(sizeof(CmdHeader) == 16);
static_assert(sizeof(ConnectMsg) == 20);
static_assert(sizeof(SessionCommon) == 8 + 3 * 4);
static_assert(sizeof(SessionRecord24) == 8 + 3 * 4 + 64 + 255);
static_assert(sizeof(SessionRecord215) == 8 + 3 * 4 + 3 * 4);
static_assert(sizeof(StreamRecord) == 8 + 8 + 4 + 4096 + 255);
static_assert(sizeof(ListSessionsReply) == 4);
static_assert(sizeof(AttachRequest) == 20);
static_assert(sizeof(AttachReply) == 8);
static_assert(sizeof(StreamIdRequest) == 8);
static_assert(sizeof(IndexReply) == 7 * 8 + 2 * 4);
static_assert(sizeof(GetPacketRequest) == 20);
static_assert(sizeof(PacketReply) == 12);
static_assert(sizeof(MetadataReply) == 12);
static_assert(sizeof(SessionIdRequest) == 8);
static_assert(sizeof(NewStreamsReply) == 8);
static_assert(sizeof(StatusReply) == 4);
static_assert(alignof(StreamRecord) == 1 && std::is_trivially_copyable_v<StreamRecord>);
static_assert(alignof(IndexReply) == 1 && std::is_trivially_copyable_v<IndexReply>);
static_assert(alignof(SessionRecord215) == 1 && std::is_trivially_copyable_v<SessionRecord215>);

}  // namespace waitpath::viewer_wire
