// The byte layout of the lttng-relayd live viewer protocol (lttng-tools 2.13,
// src/bin/lttng-relayd/lttng-viewer-abi.h), written from its description: every message is a
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

// Protocol 2.4 is what the index and stream records below describe (lttng-tools >= 2.4);
// the relayd answers with the lower of its version and ours.
inline constexpr uint32_t kMajor = 2;
inline constexpr uint32_t kMinor = 4;

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
struct SessionRecord {
  Be64 id;
  Be32 live_timer;
  Be32 clients;
  Be32 streams;
  FixedString<kHostNameMax> hostname;
  FixedString<kNameMax> session_name;
};
struct StreamRecord {
  Be64 id;
  Be64 ctf_trace_id;
  Be32 metadata_flag;
  FixedString<kPathMax> path_name;
  FixedString<kNameMax> channel_name;
};
struct ListSessionsReply {
  Be32 sessions_count;  // followed by that many SessionRecord
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
static_assert(sizeof(SessionRecord) == 8 + 3 * 4 + 64 + 255);
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

}  // namespace waitpath::viewer_wire
