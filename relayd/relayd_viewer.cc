#include "relayd/relayd_viewer.h"

#include <algorithm>
#include <charconv>

#include "base/untrusted_name.h"

namespace waitpath {

int StreamCpu(std::string_view channel) {
  const size_t sep = channel.rfind('_');
  if (sep == std::string_view::npos || sep + 1 == channel.size()) return -1;
  int cpu = -1;
  const char* end = channel.data() + channel.size();
  auto [ptr, ec] = std::from_chars(channel.data() + sep + 1, end, cpu);
  return ec == std::errc() && ptr == end ? cpu : -1;
}

RelaydViewer::RelaydViewer(const std::string& host, uint16_t port, const RelaydLimits& limits)
    : client_(host, port, limits), limits_(limits) {}

size_t RelaydViewer::active_sessions() const {
  return static_cast<size_t>(std::count_if(sessions_.begin(), sessions_.end(),
                                           [](const Session& s) { return !s.end_returned; }));
}

void RelaydViewer::Attach(uint64_t session_id, Seek seek) {
  const auto streams = client_.Attach(session_id, seek);
  sessions_.push_back({.id = session_id});
  AddStreams(session_id, streams);
}

void RelaydViewer::Detach(uint64_t session_id) {
  client_.Detach(session_id);
  for (Session& s : sessions_) {
    if (s.id == session_id) s.ended = s.end_returned = true;
  }
  for (Stream& s : streams_) {
    if (s.session_id == session_id) s.ended = true;
  }
}

void RelaydViewer::AddStreams(uint64_t session_id, const std::vector<RelaydStreamInfo>& streams) {
  auto trace_of = [&](const RelaydStreamInfo& info) {
    for (size_t i = 0; i < traces_.size(); ++i) {
      if (traces_[i].session_id == session_id && traces_[i].trace_id == info.ctf_trace_id) return i;
    }
    Trace t;
    t.session_id = session_id;
    t.trace_id = info.ctf_trace_id;
    t.path = info.path;
    traces_.push_back(std::move(t));
    return traces_.size() - 1;
  };
  auto known = [&](const RelaydStreamInfo& info) {
    for (const Trace& t : traces_) {
      if (t.session_id == session_id && t.metadata_stream == info.id) return true;
    }
    for (const Stream& s : streams_) {
      if (s.session_id == session_id && s.info.id == info.id) return true;
    }
    return false;
  };
  std::vector<size_t> touched;
  for (const RelaydStreamInfo& info : streams) {
    // The relayd announces a stream once; one announced again is not a second stream.
    if (known(info)) continue;
    const size_t trace = trace_of(info);
    pending_.push_back(ViewerStreamAdded{.session_id = session_id, .stream = info});
    if (info.metadata) {
      traces_[trace].metadata_stream = info.id;
      traces_[trace].metadata_ended = false;
      touched.push_back(trace);
    } else {
      if (streams_.size() >= limits_.max_streams) {
        throw RelaydError(RelaydError::Kind::kProtocol, "the relayd announced more than " +
                                                            std::to_string(limits_.max_streams) +
                                                            " streams alive at once");
      }
      Stream s;
      s.session_id = session_id;
      s.info = info;
      s.trace = trace;
      s.cpu = StreamCpu(info.channel);
      streams_.push_back(std::move(s));
    }
  }
  // A new trace's metadata first: none of its packets can be read without it.
  for (size_t trace : touched) FetchMetadata(trace);
}

void RelaydViewer::FetchMetadata(size_t index) {
  Trace& trace = traces_[index];
  if (!trace.metadata_stream || trace.metadata_ended) return;
  ViewerMetadata chunk{
      .session_id = trace.session_id, .trace_id = trace.trace_id, .path = trace.path, .text = {}};
  // The relayd sends what it has in one reply, and NO_NEW once the viewer has it all.
  for (;;) {
    const size_t before = chunk.text.size();
    const auto fetched = client_.GetMetadata(*trace.metadata_stream, &chunk.text);
    trace.metadata_bytes += chunk.text.size() - before;
    if (trace.metadata_bytes > limits_.max_metadata_total_bytes) {
      throw RelaydError(RelaydError::Kind::kProtocol,
                        "the relayd sent more than " +
                            std::to_string(limits_.max_metadata_total_bytes >> 20) +
                            " MiB of metadata for trace " + PrintableName(trace.path) +
                            ": refused (a trace's metadata is far smaller)");
    }
    if (fetched == RelaydClient::Fetch::kEnd) trace.metadata_ended = true;
    if (fetched != RelaydClient::Fetch::kOk) break;
  }
  if (!chunk.text.empty()) pending_.push_back(std::move(chunk));
}

void RelaydViewer::FetchNewStreams(uint64_t session_id) {
  std::vector<RelaydStreamInfo> added;
  const bool alive = client_.GetNewStreams(session_id, &added);
  AddStreams(session_id, added);
  if (alive) return;
  // The relayd says HUP once the session is closed and its streams are all gone.
  for (Session& s : sessions_) {
    if (s.id != session_id || s.ended) continue;
    s.ended = true;
    for (Stream& st : streams_) {
      if (st.session_id == session_id && !st.ended) {
        st.ended = true;
        pending_.push_back(ViewerStreamEnded{.session_id = session_id, .stream_id = st.info.id});
      }
    }
    pending_.push_back(ViewerSessionEnded{.session_id = session_id});
  }
}

bool RelaydViewer::Visit(Stream& s) {
  if (!s.index) {
    RelaydIndex index = client_.GetNextIndex(s.info.id);
    if (index.new_streams) FetchNewStreams(s.session_id);
    if (index.new_metadata) FetchMetadata(s.trace);
    switch (index.status) {
      case RelaydIndex::Status::kOk:
        s.index = index;
        break;
      case RelaydIndex::Status::kRetry:
        return !pending_.empty();
      case RelaydIndex::Status::kInactive:
        // The relayd repeats the same beacon while the stream is quiet: pass on only progress.
        if (index.timestamp_end <= s.watermark) return !pending_.empty();
        s.watermark = index.timestamp_end;
        pending_.push_back(ViewerBeacon{.session_id = s.session_id,
                                        .stream_id = s.info.id,
                                        .ctf_stream_id = index.ctf_stream_id,
                                        .timestamp = index.timestamp_end});
        return true;
      case RelaydIndex::Status::kHup:
        s.ended = true;
        pending_.push_back(ViewerStreamEnded{.session_id = s.session_id, .stream_id = s.info.id});
        return true;
    }
  }
  const RelaydIndex& index = *s.index;
  bool new_metadata = false;
  const auto fetched = client_.GetPacket(s.info.id, index.offset, index.packet_size_bits / 8,
                                         &packet_, &new_metadata);
  if (new_metadata) FetchMetadata(s.trace);
  if (fetched == RelaydClient::Fetch::kRetry) return !pending_.empty();
  if (fetched == RelaydClient::Fetch::kEnd) {
    s.index.reset();
    s.ended = true;
    pending_.push_back(ViewerStreamEnded{.session_id = s.session_id, .stream_id = s.info.id});
    return true;
  }
  const Trace& trace = traces_[s.trace];
  pending_.push_back(ViewerPacket{.session_id = s.session_id,
                                  .stream_id = s.info.id,
                                  .trace_id = trace.trace_id,
                                  .path = trace.path,
                                  .channel = s.info.channel,
                                  .cpu = s.cpu,
                                  .ctf_stream_id = index.ctf_stream_id,
                                  .timestamp_begin = index.timestamp_begin,
                                  .timestamp_end = index.timestamp_end,
                                  .events_discarded = index.events_discarded,
                                  .content_size_bits = index.content_size_bits,
                                  .packet_size_bits = index.packet_size_bits,
                                  .bytes = std::as_bytes(std::span<const uint8_t>(packet_))});
  s.watermark = std::max(s.watermark, index.timestamp_end);
  s.index.reset();
  return true;
}

bool RelaydViewer::Round() {
  const size_t n = streams_.size();
  for (size_t i = 0; i < n; ++i) {
    // Deque references stay valid while Visit adds streams.
    Stream& s = streams_[(cursor_ + i) % n];
    if (s.ended) continue;
    if (Visit(s)) {
      // Next time, start after this stream: every stream gets its turn.
      cursor_ = (cursor_ + i + 1) % n;
      return true;
    }
  }
  return false;
}

bool RelaydViewer::LookForNewStreams() {
  // Nothing readable: the moment to ask for streams the relayd did not flag (a session
  // without streams yet has no index to flag them on) and to notice a session that ended.
  // Nothing is pending: the streams that ended can go.
  ForgetEndedStreams();
  for (size_t i = 0; i < sessions_.size(); ++i) {
    if (!sessions_[i].ended) FetchNewStreams(sessions_[i].id);
  }
  return !pending_.empty();
}

void RelaydViewer::ForgetEndedStreams() {
  const size_t n = streams_.size();
  if (std::none_of(streams_.begin(), streams_.end(), [](const Stream& s) { return s.ended; }))
    return;
  // The cursor stays on the same live stream, or the next one.
  size_t kept_before_cursor = 0;
  for (size_t i = 0; i < std::min(cursor_, n); ++i) kept_before_cursor += !streams_[i].ended;
  std::erase_if(streams_, [](const Stream& s) { return s.ended; });
  cursor_ = streams_.empty() ? 0 : kept_before_cursor % streams_.size();
}

std::optional<ViewerEvent> RelaydViewer::Poll() {
  if (pending_.empty() && !Round() && !LookForNewStreams()) return std::nullopt;
  ViewerEvent event = std::move(pending_.front());
  pending_.pop_front();
  if (const auto* end = std::get_if<ViewerSessionEnded>(&event)) {
    for (Session& s : sessions_) {
      if (s.id == end->session_id) s.end_returned = true;
    }
  }
  return event;
}

}  // namespace waitpath
