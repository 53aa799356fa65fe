#include "relayd/relayd_client.h"

#include <algorithm>
#include <cstring>

#include "relayd/viewer_wire.h"

namespace waitpath {
namespace w = viewer_wire;
namespace {

template <typename T>
T Zero() {
  T v;
  std::memset(static_cast<void*>(&v), 0, sizeof(v));
  return v;
}

std::string Status(uint32_t s) {
  return "status " + std::to_string(s);
}

RelaydSessionInfo SessionOf(const w::SessionCommon& c) {
  RelaydSessionInfo s;
  s.id = c.id.get();
  s.live_timer_us = c.live_timer.get();
  s.clients = c.clients.get();
  s.streams = c.streams.get();
  return s;
}

}  // namespace

const char* TraceFormatName(RelaydTraceFormat format) {
  switch (format) {
    case RelaydTraceFormat::kCtf18:
      return "ctf-1.8";
    case RelaydTraceFormat::kCtf2:
      return "ctf-2";
    case RelaydTraceFormat::kUnknown:
      break;
  }
  return "unknown";
}

RelaydClient::RelaydClient(const std::string& host, uint16_t port, const RelaydLimits& limits)
    : socket_(host, port, limits.io_timeout, limits.total_timeout, limits.stop), limits_(limits) {
  auto hello = Zero<w::ConnectMsg>();
  hello.viewer_session_id.set(~uint64_t{0});
  hello.major.set(w::kMajor);
  hello.minor.set(w::kMinor);
  hello.type.set(w::kClientCommand);
  Request(w::kConnect, &hello, sizeof(hello), "CONNECT");
  // A relayd with another major version closes the connection instead of answering. The reply
  // carries the relayd's own version, not the lower of both: the lower is the one spoken.
  auto reply = Zero<w::ConnectMsg>();
  socket_.Receive(&reply, sizeof(reply), "CONNECT (is this a relayd's live port, of LTTng 2.x?)");
  if (reply.major.get() != w::kMajor) {
    Fail(RelaydError::Kind::kProtocol,
         "it speaks viewer protocol " + std::to_string(reply.major.get()) + "." +
             std::to_string(reply.minor.get()) + ", this client " + std::to_string(w::kMajor) +
             "." + std::to_string(w::kMinor));
  }
  relayd_minor_ = reply.minor.get();
  minor_ = std::min(relayd_minor_, w::kMinor);
  if (minor_ < w::kMinorOldest) {
    Fail(RelaydError::Kind::kProtocol, "it speaks viewer protocol 2." + std::to_string(minor_) +
                                           ", older than 2.4 (LTTng 2.4) which this client needs");
  }
  Request(w::kCreateSession, nullptr, 0, "CREATE_SESSION");
  auto created = Zero<w::StatusReply>();
  socket_.Receive(&created, sizeof(created), "CREATE_SESSION");
  if (created.status.get() != w::kCreateSessionOk) {
    Fail(RelaydError::Kind::kRefused,
         "it refused to create a viewer session (" + Status(created.status.get()) + ")");
  }
}

void RelaydClient::Fail(RelaydError::Kind kind, const std::string& what) const {
  throw RelaydError(kind, "relayd " + socket_.peer() + ": " + what);
}

void RelaydClient::Request(uint32_t cmd, const void* payload, size_t size, const char* what) {
  // Header and payload in one send: two small writes would wait on the peer's delayed ACK.
  std::array<std::byte, sizeof(w::CmdHeader) + sizeof(w::GetPacketRequest)> buf{};
  static_assert(sizeof(w::GetPacketRequest) >= sizeof(w::ConnectMsg));
  auto header = Zero<w::CmdHeader>();
  header.data_size.set(size);
  header.cmd.set(cmd);
  std::memcpy(buf.data(), &header, sizeof(header));
  if (size > 0) std::memcpy(buf.data() + sizeof(header), payload, size);
  socket_.Send(buf.data(), sizeof(header) + size, what);
}

std::vector<RelaydSessionInfo> RelaydClient::ListSessions() {
  Request(w::kListSessions, nullptr, 0, "LIST_SESSIONS");
  // One deadline for the whole reply: a relayd that sends part of what it announced, then
  // stalls or trickles, costs io_timeout, not io_timeout per session.
  const auto deadline = socket_.ReplyDeadline();
  auto reply = Zero<w::ListSessionsReply>();
  socket_.Receive(&reply, sizeof(reply), "LIST_SESSIONS", deadline);
  const uint32_t count = reply.sessions_count.get();
  if (count > limits_.max_sessions) {
    Fail(RelaydError::Kind::kProtocol, "it announced " + std::to_string(count) +
                                           " sessions, more than the limit of " +
                                           std::to_string(limits_.max_sessions));
  }
  const bool v215 = minor_ >= w::kMinorSessionFormat;
  std::vector<RelaydSessionInfo> sessions;
  sessions.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    sessions.push_back(v215 ? ReceiveSession215(deadline) : ReceiveSession24(deadline));
  }
  return sessions;
}

RelaydSessionInfo RelaydClient::ReceiveSession24(RelaydSocket::Clock::time_point deadline) {
  auto r = Zero<w::SessionRecord24>();
  socket_.Receive(&r, sizeof(r), "LIST_SESSIONS", deadline);
  RelaydSessionInfo s = SessionOf(r.common);
  s.hostname = r.hostname.str();
  s.name = r.session_name.str();
  return s;
}

RelaydSessionInfo RelaydClient::ReceiveSession215(RelaydSocket::Clock::time_point deadline) {
  auto r = Zero<w::SessionRecord215>();
  socket_.Receive(&r, sizeof(r), "LIST_SESSIONS", deadline);
  RelaydSessionInfo s = SessionOf(r.common);
  const uint32_t hostname_len = r.hostname_len.get();
  const uint32_t name_len = r.session_name_len.get();
  // The relayd's own names are at most 255 bytes; anything near 4 GiB is a broken peer.
  if (hostname_len > limits_.max_name_bytes || name_len > limits_.max_name_bytes) {
    Fail(RelaydError::Kind::kProtocol, "it listed session " + std::to_string(s.id) +
                                           " with a hostname of " + std::to_string(hostname_len) +
                                           " bytes and a name of " + std::to_string(name_len) +
                                           " bytes, more than the limit of " +
                                           std::to_string(limits_.max_name_bytes) + " bytes each");
  }
  s.hostname.resize(hostname_len);
  socket_.Receive(s.hostname.data(), hostname_len, "LIST_SESSIONS", deadline);
  s.name.resize(name_len);
  socket_.Receive(s.name.data(), name_len, "LIST_SESSIONS", deadline);
  switch (r.trace_format.get()) {
    case w::kTraceFormatCtf18:
      s.trace_format = RelaydTraceFormat::kCtf18;
      break;
    case w::kTraceFormatCtf2:
      s.trace_format = RelaydTraceFormat::kCtf2;
      break;
    default:
      s.trace_format = RelaydTraceFormat::kUnknown;
  }
  return s;
}

std::vector<RelaydStreamInfo> RelaydClient::ReceiveStreams(
    uint32_t count, const char* what, RelaydSocket::Clock::time_point deadline) {
  if (count > limits_.max_streams) {
    Fail(RelaydError::Kind::kProtocol, "it announced " + std::to_string(count) +
                                           " streams, more than the limit of " +
                                           std::to_string(limits_.max_streams));
  }
  std::vector<RelaydStreamInfo> streams;
  streams.reserve(count);
  // A stream record is 4 KiB, mostly padding of its path: read it into one reused buffer.
  auto r = std::make_unique<w::StreamRecord>();
  for (uint32_t i = 0; i < count; ++i) {
    socket_.Receive(r.get(), sizeof(*r), what, deadline);
    streams.push_back({.id = r->id.get(),
                       .ctf_trace_id = r->ctf_trace_id.get(),
                       .metadata = r->metadata_flag.get() != 0,
                       .path = r->path_name.str(),
                       .channel = r->channel_name.str()});
  }
  return streams;
}

std::vector<RelaydStreamInfo> RelaydClient::Attach(uint64_t session_id, Seek seek) {
  auto req = Zero<w::AttachRequest>();
  req.session_id.set(session_id);
  req.seek.set(seek == Seek::kBeginning ? w::kSeekBeginning : w::kSeekLast);
  Request(w::kAttachSession, &req, sizeof(req), "ATTACH_SESSION");
  const auto deadline = socket_.ReplyDeadline();  // the whole reply, records included
  auto reply = Zero<w::AttachReply>();
  socket_.Receive(&reply, sizeof(reply), "ATTACH_SESSION", deadline);
  const std::string session = "session " + std::to_string(session_id);
  switch (reply.status.get()) {
    case w::kAttachOk:
      return ReceiveStreams(reply.streams_count.get(), "ATTACH_SESSION", deadline);
    case w::kAttachAlready:
      Fail(RelaydError::Kind::kAlreadyViewed,
           session + " already has a viewer (a relayd serves one viewer per session)");
    case w::kAttachUnknown:
      Fail(RelaydError::Kind::kRefused, "it does not know " + session + " (or it has just ended)");
    case w::kAttachNotLive:
      Fail(RelaydError::Kind::kRefused, session + " is not a live session (lttng create --live)");
    default:
      Fail(RelaydError::Kind::kRefused,
           "it refused to attach " + session + " (" + Status(reply.status.get()) + ")");
  }
}

bool RelaydClient::GetNewStreams(uint64_t session_id, std::vector<RelaydStreamInfo>* streams) {
  auto req = Zero<w::SessionIdRequest>();
  req.session_id.set(session_id);
  Request(w::kGetNewStreams, &req, sizeof(req), "GET_NEW_STREAMS");
  const auto deadline = socket_.ReplyDeadline();
  auto reply = Zero<w::NewStreamsReply>();
  socket_.Receive(&reply, sizeof(reply), "GET_NEW_STREAMS", deadline);
  streams->clear();
  switch (reply.status.get()) {
    case w::kNewStreamsOk:
      *streams = ReceiveStreams(reply.streams_count.get(), "GET_NEW_STREAMS", deadline);
      return true;
    case w::kNewStreamsNoNew:
      return true;
    case w::kNewStreamsHup:
      return false;
    default:
      Fail(RelaydError::Kind::kRefused, "it refused GET_NEW_STREAMS for session " +
                                            std::to_string(session_id) + " (" +
                                            Status(reply.status.get()) + ")");
  }
}

RelaydIndex RelaydClient::GetNextIndex(uint64_t stream_id) {
  auto req = Zero<w::StreamIdRequest>();
  req.stream_id.set(stream_id);
  Request(w::kGetNextIndex, &req, sizeof(req), "GET_NEXT_INDEX");
  auto r = Zero<w::IndexReply>();
  socket_.Receive(&r, sizeof(r), "GET_NEXT_INDEX");
  RelaydIndex index;
  const uint32_t flags = r.flags.get();
  index.new_metadata = (flags & w::kFlagNewMetadata) != 0;
  index.new_streams = (flags & w::kFlagNewStream) != 0;
  index.offset = r.offset.get();
  index.packet_size_bits = r.packet_size.get();
  index.content_size_bits = r.content_size.get();
  index.timestamp_begin = r.timestamp_begin.get();
  index.timestamp_end = r.timestamp_end.get();
  index.events_discarded = r.events_discarded.get();
  index.ctf_stream_id = r.stream_id.get();
  switch (r.status.get()) {
    case w::kIndexOk:
      index.status = RelaydIndex::Status::kOk;
      if (index.packet_size_bits % 8 != 0 || index.packet_size_bits == 0 ||
          index.packet_size_bits / 8 > limits_.max_packet_bytes ||
          index.content_size_bits > index.packet_size_bits) {
        Fail(RelaydError::Kind::kProtocol,
             "it sent an index of stream " + std::to_string(stream_id) + " with packet size " +
                 std::to_string(index.packet_size_bits) + " bits and content size " +
                 std::to_string(index.content_size_bits) + " bits (limit " +
                 std::to_string(limits_.max_packet_bytes) + " bytes)");
      }
      break;
    case w::kIndexRetry:
      index.status = RelaydIndex::Status::kRetry;
      break;
    case w::kIndexInactive:
      index.status = RelaydIndex::Status::kInactive;
      break;
    case w::kIndexHup:
    case w::kIndexEof:
      index.status = RelaydIndex::Status::kHup;
      break;
    default:
      Fail(RelaydError::Kind::kRefused, "it answered GET_NEXT_INDEX of stream " +
                                            std::to_string(stream_id) + " with an error (" +
                                            Status(r.status.get()) + ")");
  }
  return index;
}

RelaydClient::Fetch RelaydClient::GetPacket(uint64_t stream_id, uint64_t offset, uint64_t bytes,
                                            PacketBytes* out, bool* new_metadata) {
  if (bytes > limits_.max_packet_bytes) {
    Fail(RelaydError::Kind::kProtocol, "a packet of " + std::to_string(bytes) +
                                           " bytes is over the limit of " +
                                           std::to_string(limits_.max_packet_bytes));
  }
  auto req = Zero<w::GetPacketRequest>();
  req.stream_id.set(stream_id);
  req.offset.set(offset);
  req.len.set(static_cast<uint32_t>(bytes));
  Request(w::kGetPacket, &req, sizeof(req), "GET_PACKET");
  const auto deadline = socket_.ReplyDeadline();
  auto r = Zero<w::PacketReply>();
  socket_.Receive(&r, sizeof(r), "GET_PACKET", deadline);
  *new_metadata = (r.flags.get() & w::kFlagNewMetadata) != 0;
  switch (r.status.get()) {
    case w::kPacketOk:
      break;
    case w::kPacketRetry:
      return Fetch::kRetry;
    case w::kPacketEof:
      return Fetch::kEnd;
    default:
      Fail(RelaydError::Kind::kRefused,
           "it answered GET_PACKET of stream " + std::to_string(stream_id) + " at offset " +
               std::to_string(offset) + " with an error (" + Status(r.status.get()) + ")");
  }
  // The reply carries what the relayd says it carries; more than asked is a broken peer.
  if (r.len.get() != bytes) {
    Fail(RelaydError::Kind::kProtocol, "it answered a GET_PACKET of " + std::to_string(bytes) +
                                           " bytes with " + std::to_string(r.len.get()) + " bytes");
  }
  out->clear();  // nothing of the old packet is kept (a resize would copy it when it grows)
  out->resize(bytes);
  socket_.Receive(out->data(), bytes, "GET_PACKET", deadline);
  return Fetch::kOk;
}

RelaydClient::Fetch RelaydClient::GetMetadata(uint64_t stream_id, std::string* out) {
  auto req = Zero<w::StreamIdRequest>();
  req.stream_id.set(stream_id);
  Request(w::kGetMetadata, &req, sizeof(req), "GET_METADATA");
  const auto deadline = socket_.ReplyDeadline();
  auto r = Zero<w::MetadataReply>();
  socket_.Receive(&r, sizeof(r), "GET_METADATA", deadline);
  const uint64_t len = r.len.get();
  if (len > limits_.max_metadata_bytes) {
    Fail(RelaydError::Kind::kProtocol, "it announced " + std::to_string(len) +
                                           " bytes of metadata, more than the limit of " +
                                           std::to_string(limits_.max_metadata_bytes));
  }
  // The relayd sends `len` bytes whatever the status (0 unless OK); read them to stay in step.
  const size_t old = out->size();
  out->resize(old + len);
  if (len > 0) socket_.Receive(out->data() + old, len, "GET_METADATA", deadline);
  switch (r.status.get()) {
    case w::kMetadataOk:
      return len > 0 ? Fetch::kOk : Fetch::kRetry;
    case w::kMetadataNoNew:
      return Fetch::kRetry;
    default:
      // The relayd answers ERR for a metadata stream it has closed and released (a per-PID
      // session's application exited): the trace is over, not the connection.
      out->resize(old);
      return Fetch::kEnd;
  }
}

void RelaydClient::Detach(uint64_t session_id) {
  if (minor_ < w::kMinorDetach) return;
  auto req = Zero<w::SessionIdRequest>();
  req.session_id.set(session_id);
  Request(w::kDetachSession, &req, sizeof(req), "DETACH_SESSION");
  auto r = Zero<w::StatusReply>();
  socket_.Receive(&r, sizeof(r), "DETACH_SESSION");
  if (r.status.get() != w::kDetachOk) {
    Fail(RelaydError::Kind::kRefused, "it refused to detach session " + std::to_string(session_id) +
                                          " (" + Status(r.status.get()) + ")");
  }
}

}  // namespace waitpath
