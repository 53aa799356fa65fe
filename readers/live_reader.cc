#include "readers/live_reader.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <memory>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "base/untrusted_name.h"
#include "ctf/ctf2_metadata.h"
#include "ctf/trace_check.h"
#include "readers/native_reader.h"
#include "relayd/relayd_viewer.h"

namespace waitpath {
namespace {

// A trace of the session (kernel, or UST per UID and bitness): its metadata text so far and
// the decoder of it.
struct LiveTrace {
  uint64_t session_id = 0;
  uint64_t trace_id = 0;
  std::string path;
  std::string raw;  // as received: metadata text (TSDL or CTF 2), or metadata packets (LTTng's)
  std::string text;
  std::shared_ptr<ctf::TraceDecoder> decoder;
  uint64_t unreadable_bytes = 0;  // packets received before its metadata, waiting for it
};

struct LiveStream {
  uint64_t session_id = 0;
  uint64_t id = 0;
  LiveTrace* trace = nullptr;
  std::string channel;
  std::string name;  // "TRACE PATH/CHANNEL", for errors
  int cpu = -1;
  bool merged = false;  // a port of the reader (once its trace has a decoder)
  LivePackets packets;
};

// Packet buffers given back, reused for the next packets (sub-buffers are 4 KiB to a few MiB):
// as many as a few rounds of a large host's streams need.
constexpr size_t kSpareBuffers = 256;

}  // namespace

bool ParseLiveSessionUrl(const std::string& url, LiveSessionUrl* out) {
  const std::string scheme = "net://";
  if (url.rfind(scheme, 0) != 0) return false;
  const std::string rest = url.substr(scheme.size());
  const size_t slash = rest.find('/');
  if (slash == std::string::npos) return false;
  std::string address = rest.substr(0, slash);
  const std::string path = rest.substr(slash);  // "/host/HOSTNAME/SESSION"
  const std::string host_prefix = "/host/";
  if (path.rfind(host_prefix, 0) != 0) return false;
  const size_t sep = path.find('/', host_prefix.size());
  if (sep == std::string::npos) return false;
  LiveSessionUrl u;
  u.hostname = path.substr(host_prefix.size(), sep - host_prefix.size());
  u.session = path.substr(sep + 1);
  const size_t colon = address.rfind(':');
  if (colon != std::string::npos && address.find(':') == colon) {
    unsigned port = 0;
    const char* end = address.data() + address.size();
    auto [ptr, ec] = std::from_chars(address.data() + colon + 1, end, port);
    if (ec != std::errc() || ptr != end || port == 0 || port > 65535) return false;
    u.port = static_cast<uint16_t>(port);
    address.resize(colon);
  }
  u.relayd = address;
  if (u.relayd.empty() || u.hostname.empty() || u.session.empty()) return false;
  *out = std::move(u);
  return true;
}

LiveAttempt ReadLiveSession(HostInput& input, const std::string& url,
                            const LiveReadOptions& options, const std::atomic<bool>& stop) {
  LiveAttempt result;
  LiveSessionUrl where;
  if (!ParseLiveSessionUrl(url, &where)) {
    result.error = url + ": not a live session URL (net://HOST[:PORT]/host/HOSTNAME/SESSION)";
    result.refused = true;
    return result;
  }
  auto stopped = [&] { return stop.load(std::memory_order_relaxed); };
  // After the relayd had nothing: a short wait first (the other streams' packets of the same
  // live-timer flush follow within milliseconds), doubling while nothing comes.
  std::chrono::milliseconds idle_sleep = options.min_idle_sleep;
  // One sleep, not a millisecond at a time: each wake-up is a context switch, and sleeping 1 ms
  // at a time up to 16 ms made them a tenth of a live process's CPU (docs/bench.md). A stop
  // waits at most the longest sleep.
  auto idle = [&] {
    if (!stopped()) std::this_thread::sleep_for(idle_sleep);
    idle_sleep = std::min(idle_sleep * 2, options.max_idle_sleep);
  };
  // This attempt's streams go with it (a reattach has new ones); their CPUs stay known.
  struct ForgetStreams {
    CpuDirectory& cpus;
    ~ForgetStreams() { cpus.ForgetStreams(); }
  } forget{input.cpus};
  // Declared before the reader, whose ports read them.
  std::vector<PacketBytes> spare;
  auto take_spare = [&spare] {
    PacketBytes b;
    if (!spare.empty()) {
      b = std::move(spare.back());
      spare.pop_back();
    }
    return b;
  };
  auto give_spare = [&spare](PacketBytes&& b) {
    if (b.capacity() > 0 && spare.size() < kSpareBuffers) spare.push_back(std::move(b));
  };
  std::deque<LiveTrace> traces;
  // Owned one by one: a stream the reader released is erased while the reader holds others.
  std::vector<std::unique_ptr<LiveStream>> streams;
  try {
    RelaydLimits limits;
    limits.stop = &stop;  // a wait for the relayd ends at a stop request, not at its timeout
    RelaydViewer viewer(where.relayd, where.port, limits);
    auto find = [&] {
      std::vector<uint64_t> ids;
      for (const RelaydSessionInfo& s : viewer.ListSessions()) {
        if (s.hostname == where.hostname && s.name == where.session) ids.push_back(s.id);
      }
      return ids;
    };
    std::vector<uint64_t> ids = find();
    if (ids.empty() && !options.reattach) {
      result.ended = true;  // gone before it could be followed
      return result;
    }
    if (options.on_attached && ids.empty()) options.on_attached();
    while (ids.empty() && !stopped()) {
      // A restarted relayd: the session comes back when its session daemon streams again
      // (discovery lets the host go if it does not).
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      ids = find();
    }
    if (stopped()) return result;
    for (uint64_t id : ids) {
      viewer.Attach(
          id, options.from_beginning ? RelaydViewer::Seek::kBeginning : RelaydViewer::Seek::kLast);
    }
    if (options.on_attached) options.on_attached();

    NativeReader reader(input);
    // The trace, known from now on.
    auto trace_of = [&](uint64_t session_id, uint64_t trace_id, const std::string& path) {
      for (LiveTrace& t : traces) {
        if (t.session_id == session_id && t.trace_id == trace_id) return &t;
      }
      LiveTrace& t = traces.emplace_back();
      t.session_id = session_id;
      t.trace_id = trace_id;
      t.path = path;
      return &t;
    };
    auto stream_of = [&](uint64_t session_id, uint64_t id) -> LiveStream* {
      for (const auto& s : streams) {
        if (s->session_id == session_id && s->id == id) return s.get();
      }
      return nullptr;
    };
    // Streams whose trace has a decoder join the merge.
    auto merge_ready = [&] {
      for (const auto& s : streams) {
        if (s->merged || !s->trace->decoder) continue;
        s->packets.trace = s->trace->decoder;
        if (!reader.AddLiveStream(&s->packets, s->name, s->cpu)) return false;
        s->merged = true;
      }
      return true;
    };
    // Streams that ended and were read, or ended with nothing before they could be merged,
    // are forgotten: a relayd announcing streams and hanging each up at once holds no memory
    // here (docs/live.md, "What a relayd, a trace and a metrics client can make waitpath do").
    auto forget_ended = [&] {
      std::erase_if(streams, [](const std::unique_ptr<LiveStream>& s) {
        return s->packets.released ||
               (!s->merged && s->packets.ended && s->packets.packets.empty());
      });
    };
    auto too_many = [&] {
      result.refused = true;
      result.error = "the relayd holds more than " + std::to_string(NativeReader::kMaxLivePorts) +
                     " streams of this session open at once: not following it";
      return result;
    };
    int64_t handed_watermark = input.time.watermark();
    size_t released = 0;  // streams the reader had released when they were last forgotten
    for (;;) {
      // Checked at every turn, not only when the relayd has nothing: a relayd that always has
      // something (streams announced and hung up forever) kept Ctrl-C waiting.
      if (stopped()) break;
      const NativeReader::Merged merged = reader.Merge(stop);
      if (merged == NativeReader::Merged::kStopped) break;
      // Only when the merge let a stream go: not a walk of every stream at every packet.
      if (reader.released() != released) {
        released = reader.released();
        forget_ended();
      }
      if (merged == NativeReader::Merged::kEnded && viewer.active_sessions() == 0) {
        // Packets still waiting for their trace's metadata were never read: said, not dropped
        // in silence (a relayd whose metadata never came, or ended at once, read as an empty
        // session that ended well).
        for (const auto& s : streams) {
          if (s->merged || s->packets.packets.empty()) continue;
          size_t unread = 0;
          for (const auto& t : streams)
            unread += t->trace == s->trace ? t->packets.packets.size() : 0;
          result.refused = true;
          result.error = "the relayd ended the session with " + std::to_string(unread) +
                         " packets of trace " + PrintableName(s->trace->path) +
                         " unread: it sent no metadata to read them";
          return result;
        }
        result.ended = true;
        break;
      }
      // The merge waits for a stream: what it merged goes downstream now, as MergingSink does
      // (latency).
      if (input.batches.size() > 0) {
        input.Flush();
        handed_watermark = input.time.watermark();
      }
      std::optional<ViewerEvent> event = viewer.Poll();
      if (!event) {
        // Nothing new: a watermark that beacons moved goes downstream too.
        if (input.time.watermark() != handed_watermark) {
          input.Flush();
          handed_watermark = input.time.watermark();
        }
        if (stopped()) break;
        idle();
        continue;
      }
      idle_sleep = options.min_idle_sleep;
      if (auto* m = std::get_if<ViewerMetadata>(&*event)) {
        LiveTrace* t = trace_of(m->session_id, m->trace_id, m->path);
        t->raw += m->text;
        auto decoder = std::make_shared<ctf::TraceDecoder>();
        std::string why;
        if (!MetadataText(t->path + "/metadata", t->raw, &t->text, &why) ||
            !decoder->OpenText(t->path, t->text, &why)) {
          why = PrintableMessage(why);
          if (!t->decoder && options.may_fall_back && input.counters.events == 0) {
            result.unsupported = true;
            result.ctf2 = ctf::IsCtf2Text(t->text);
            result.error = why;
            return result;
          }
          // Text that does not parse yet may be completed by the next chunk; a packet that
          // needs what it declares is reported as damage.
          if (t->decoder) continue;
          result.refused = true;
          result.error = "the native decoder cannot read it: " + why;
          return result;
        }
        t->decoder = std::move(decoder);
        t->unreadable_bytes = 0;
        if (options.ring) options.ring->SetMetadata(t->path, t->raw);
        for (const auto& s : streams) {
          if (s->trace == t && s->merged) s->packets.trace = t->decoder;
        }
        if (!merge_ready()) return too_many();
      } else if (auto* p = std::get_if<ViewerPacket>(&*event)) {
        LiveStream* s = stream_of(p->session_id, p->stream_id);
        if (!s) continue;
        PacketBytes bytes = take_spare();
        viewer.TakePacket(&bytes);
        const auto* data = reinterpret_cast<const uint8_t*>(p->bytes.data());
        if (options.ring) {
          // Kept for captures as it arrives, not once decoded: a packet whose events run past
          // a capture's window is decoded only as far as the merge has gone, and the window's
          // part of it must be in the ring when the capture is cut. The ring gives back the
          // buffer of a packet it let go.
          PacketBytes kept = take_spare();
          kept.assign(data, data + p->bytes.size());
          give_spare(options.ring->Add(s->trace->path, s->channel, std::move(kept)));
        }
        s->packets.packets.push_back(std::move(bytes));
        // Before its trace's metadata (lttng-relayd may serve a trace's packets while it has no
        // metadata stream for it): held, within a bound. Before, held without one: a relayd
        // serving a trace whose metadata never came filled memory.
        if (!s->trace->decoder && (s->trace->unreadable_bytes += s->packets.packets.back().size()) >
                                      options.max_unreadable_bytes) {
          result.refused = true;
          result.error = "the relayd sent more than " +
                         std::to_string(options.max_unreadable_bytes >> 20) +
                         " MiB of packets of trace " + PrintableName(s->trace->path) +
                         " and no metadata to read them: not following it";
          return result;
        }
        // Once its events are read, the packet's end stands for a beacon: the stream has nothing
        // before it (a packet's events end by its timestamp_end, the next packet begins at or
        // after it), as babeltrace2's packet-end message tells its muxer. Without it a stream
        // whose packet was read up blocked the merge until its next packet or beacon, a live
        // timer later: p99 latency 334 ms against babeltrace2's 215 (docs/bench.md).
        if (p->timestamp_end > 0 && p->timestamp_end >= p->timestamp_begin)
          s->packets.beacon = p->timestamp_end;
        else
          s->packets.beacon.reset();
      } else if (auto* b = std::get_if<ViewerBeacon>(&*event)) {
        if (LiveStream* s = stream_of(b->session_id, b->stream_id))
          s->packets.beacon = b->timestamp;
      } else if (auto* added = std::get_if<ViewerStreamAdded>(&*event)) {
        if (added->stream.metadata) continue;
        LiveTrace* t = trace_of(added->session_id, added->stream.ctf_trace_id, added->stream.path);
        LiveStream& s = *streams.emplace_back(std::make_unique<LiveStream>());
        s.session_id = added->session_id;
        s.id = added->stream.id;
        s.trace = t;
        s.channel = added->stream.channel;
        s.name = t->path + "/" + s.channel;
        s.cpu = StreamCpu(s.channel);
        s.packets.done = give_spare;
        if (!merge_ready()) return too_many();
      } else if (auto* ended = std::get_if<ViewerStreamEnded>(&*event)) {
        if (LiveStream* s = stream_of(ended->session_id, ended->stream_id)) {
          s->packets.ended = true;
          if (!s->merged) forget_ended();
        }
      }
    }
  } catch (const RelaydError& e) {
    if (e.kind() == RelaydError::Kind::kStopped) {
      // Asked to stop while waiting for the relayd: not an error.
    } else if (e.kind() == RelaydError::Kind::kAlreadyViewed) {
      result.refused = true;
      result.error =
          "another viewer is attached to this session (the relayd serves one per session): not "
          "following it";
    } else {
      result.error = e.what();
    }
  }
  return result;
}

}  // namespace waitpath
