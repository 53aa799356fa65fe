#include "readers/native_reader.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>

#include "base/untrusted_name.h"
#include "model/loss_marker.h"

namespace waitpath {
namespace {

// Reads a decoded event's fields for BuildEvent (model/event_schema.h), as babeltrace2's path
// reads its fields: an absent field (a variant option not selected) gives the fallback.
class SlotReader {
 public:
  SlotReader(const ctf::StreamCursor& c, LocalInterner& strings) : c_(c), strings_(strings) {}
  int64_t Int(const ctf::FieldHandle& h, int64_t fallback) const {
    if (!c_.Has(h) || h.leaf == ctf::FieldHandle::kString || h.leaf == ctf::FieldHandle::kAddress)
      return fallback;
    return static_cast<int64_t>(c_.Raw(h));
  }
  int32_t Str(const ctf::FieldHandle& h) const {
    if (h.leaf != ctf::FieldHandle::kString || !c_.Has(h)) return -1;
    return static_cast<int32_t>(strings_.Intern(c_.Text(h)));
  }
  bool Has(const ctf::FieldHandle& h) const { return c_.Has(h); }
  uint32_t Address(const ctf::FieldHandle& h) const {
    if (h.leaf != ctf::FieldHandle::kAddress) return static_cast<uint32_t>(Int(h, 0));
    return c_.Has(h) ? static_cast<uint32_t>(c_.Raw(h)) : 0;
  }

 private:
  const ctf::StreamCursor& c_;
  LocalInterner& strings_;
};

}  // namespace

NativeReader::NativeReader(HostInput& input) : input_(input) {
  dialect_ = input.dialect;
  ++input.graphs;
}

NativeReader::~NativeReader() {
  input_.dialect = dialect_;
}

bool NativeReader::Open(const std::vector<std::string>& dirs, std::string* why) {
  // Each file's first packet time, from the pre-flight check: the order of a rotated stream's
  // files.
  std::map<std::string, int64_t> first_packet;
  for (const std::string& dir : dirs) {
    auto trace = std::make_shared<ctf::TraceDecoder>();
    if (!trace->Open(dir, why)) {
      *why = PrintableMessage(*why);
      return false;
    }
    // LTTng's tracefile rotation splits one stream instance over several files (chan_0_0,
    // chan_0_1...), which babeltrace2 reads as one stream (one port, named by the instance):
    // here too, its files read one after the other in the order of their first packets.
    std::map<std::pair<uint64_t, uint64_t>, size_t> port_of_instance;
    for (const std::string& file : trace->files()) {
      const StreamPackets* checked = nullptr;
      for (const StreamPackets& s : input_.streams) {
        if (std::filesystem::path(s.path) == std::filesystem::path(file)) checked = &s;
      }
      first_packet[file] = checked && !checked->begin_ns.empty()
                               ? checked->begin_ns.front()
                               : std::numeric_limits<int64_t>::max();
      if (checked && checked->instance) {
        const auto [it, added] = port_of_instance.try_emplace(
            std::pair{checked->stream_id, *checked->instance}, ports_.size());
        if (!added) {
          ports_[it->second].files.push_back(file);
          continue;
        }
      }
      Port p;
      p.files.push_back(file);
      p.trace = trace;
      p.index = p.fallback_cpu = static_cast<uint16_t>(ports_.size());
      ports_.push_back(std::move(p));
    }
    traces_.push_back(std::move(trace));
  }
  for (Port& p : ports_) {
    std::stable_sort(p.files.begin(), p.files.end(), [&](const auto& a, const auto& b) {
      return first_packet[a] < first_packet[b];
    });
    p.cursor = std::make_unique<ctf::StreamCursor>(*p.trace, p.files[0]);
    merger_.AddPort(p.index);
  }
  return true;
}

bool NativeReader::Run(const std::atomic<bool>& stop) {
  merger_.RefillMissing([this](uint32_t port, int64_t* ts) { return FillHead(ports_[port], ts); });
  while (merger_.has_head()) {
    if (stop.load(std::memory_order_relaxed)) return false;
    Port& p = ports_[merger_.PopEarliest()];
    if (!input_.holes.empty()) input_.EmitHoles(p.head_ts);
    if (p.head == Head::kEvent) {
      OnEvent(p);
    } else {
      OnDiscarded(p);
    }
    int64_t ts = 0;
    const PortMerger::Refill next = FillHead(p, &ts);
    merger_.Requeue(p.index, next, ts);
    if (input_.batches.full()) Flush();
  }
  input_.EmitHoles(std::numeric_limits<int64_t>::max());
  Flush();
  return true;
}

bool NativeReader::AddLiveStream(LivePackets* packets, std::string name, int cpu) {
  uint16_t index;
  if (!free_ports_.empty()) {
    index = free_ports_.back();
    free_ports_.pop_back();
    merger_.SetTie(index, 0);  // as a new port's, until its CPU is known
  } else if (ports_.size() < kMaxLivePorts) {
    index = static_cast<uint16_t>(ports_.size());
    ports_.emplace_back();
  } else {
    return false;
  }
  Port& p = ports_[index];
  p = Port{};
  p.cursor = std::make_unique<ctf::StreamCursor>(*packets->trace, std::move(name),
                                                 ctf::StreamCursor::InMemory{});
  p.trace = packets->trace;
  p.live = packets;
  p.index = index;
  p.cpu = p.fallback_cpu = cpu >= 0 ? static_cast<uint16_t>(cpu) : p.index;
  merger_.AddPort(index);
  return true;
}

PortMerger::Refill NativeReader::Release(Port& p) {
  input_.cpus.ForgetStream(p.cursor.get());
  p.live->released = true;
  p.live = nullptr;
  p.cursor.reset();
  p.trace.reset();
  free_ports_.push_back(p.index);
  ++released_;
  return PortMerger::Refill::kEnded;
}

NativeReader::Merged NativeReader::Merge(const std::atomic<bool>& stop) {
  merger_.RefillMissing([this](uint32_t port, int64_t* ts) { return FillHead(ports_[port], ts); });
  while (!merger_.blocked() && merger_.has_head()) {
    if (stop.load(std::memory_order_relaxed)) return Merged::kStopped;
    Port& p = ports_[merger_.PopEarliest()];
    switch (p.head) {
      case Head::kEvent:
        OnEvent(p);
        break;
      case Head::kDiscarded:
        OnDiscarded(p);
        break;
      case Head::kInactivity:
        // (A replayed host's beacons are on the UST clock: its watermark only advances with its
        // events.)
        if (!Replayed()) input_.time.Idle(p.head_ts);
        break;
    }
    int64_t ts = 0;
    const PortMerger::Refill next = FillHead(p, &ts);
    merger_.Requeue(p.index, next, ts);
    if (input_.batches.full()) Flush();
  }
  input_.dialect = dialect_;
  return merger_.done() ? Merged::kEnded : Merged::kBlocked;
}

bool NativeReader::FeedLive(Port& p) {
  LivePackets& live = *p.live;
  if (live.reading_front) {
    live.reading_front = false;
    if (live.done) live.done(std::move(live.packets.front()));
    live.packets.pop_front();
  }
  if (live.packets.empty()) return false;
  if (live.trace != p.trace) {
    // Its metadata grew: packets from now on may have event classes only the new one knows.
    p.cursor->Rebind(*live.trace);
    p.trace = live.trace;
    p.noted = false;
  }
  const PacketBytes& bytes = live.packets.front();
  p.cursor->Feed(std::span<const uint8_t>(bytes.data(), bytes.size()));
  live.reading_front = true;
  return true;
}

PortMerger::Refill NativeReader::FillHead(Port& p, int64_t* ts) {
  using Item = ctf::StreamCursor::Item;
  for (;;) {
    switch (p.cursor->Next()) {
      case Item::kEvent:
        NoteStream(p);
        p.head = Head::kEvent;
        p.head_ts =
            p.trace->has_clock() ? p.trace->ToNs(p.cursor->timestamp()) : input_.time.last();
        *ts = p.head_ts;
        return PortMerger::Refill::kHead;
      case Item::kDiscarded:
        // In time order like an event (see MergingSink::FillHead).
        NoteStream(p);
        p.head = Head::kDiscarded;
        p.head_ts = p.cursor->discarded_has_time() ? p.trace->ToNs(p.cursor->discarded_begin())
                                                   : input_.time.last();
        *ts = p.head_ts;
        return PortMerger::Refill::kHead;
      case Item::kPacket:
        OnPacket(p);
        break;
      case Item::kError:
        OnDamage(p);
        break;
      case Item::kEnd:
        if (p.next_file < p.files.size()) {  // the stream goes on in its next rotated file
          auto next = std::make_unique<ctf::StreamCursor>(*p.trace, p.files[p.next_file++]);
          next->ContinueFrom(*p.cursor);
          p.cursor = std::move(next);
          p.noted = false;
          break;
        }
        if (!p.live) return PortMerger::Refill::kEnded;
        if (FeedLive(p)) break;
        if (p.live->beacon) {
          p.head = Head::kInactivity;
          p.head_ts = p.trace->ToNs(*p.live->beacon);
          p.live->beacon.reset();
          *ts = p.head_ts;
          return PortMerger::Refill::kHead;
        }
        return p.live->ended ? Release(p) : PortMerger::Refill::kAgain;
    }
  }
}

void NativeReader::NoteStream(Port& p) {
  if (p.noted) return;
  p.noted = true;
  const ctf::StreamClass* sc = p.cursor->stream() ? p.cursor->stream()->sc : nullptr;
  if (sc) {
    bool seen = false;
    for (const ctf::StreamClass* s : seen_stream_classes_) seen = seen || s == sc;
    if (!seen) {
      seen_stream_classes_.push_back(sc);
      for (const ctf::EventClass& ec : sc->events) dialect_ |= DialectOfName(ec.name);
    }
  }
  p.cpu = input_.cpus.CpuOf(p.cursor.get(), p.fallback_cpu);
  merger_.SetTie(p.index, p.cpu);
}

void NativeReader::OnPacket(Port& p) {
  const int64_t cpu = p.cursor->packet_cpu();
  if (cpu < 0) return;
  if (input_.cpus.SetStreamCpu(p.cursor.get(), static_cast<uint16_t>(cpu))) ++input_.counters.cpus;
  p.noted = false;  // re-resolve with the new CPU
  NoteStream(p);
}

void NativeReader::OnDamage(Port& p) {
  if (input_.warn) {
    input_.warn(PrintableMessage(p.cursor->error()) +
                ": the rest of that packet skipped (a loss on CPU " + std::to_string(p.cpu) + ")");
  }
  const int64_t last = input_.time.last();
  const int64_t at = last == std::numeric_limits<int64_t>::min() ? 0 : last;
  input_.batches.Current().events.push_back(LossMarker(input_.host, p.cpu, at, at, -1));
  ++input_.counters.damaged;
}

void NativeReader::OnEvent(Port& p) {
  ++input_.counters.events;
  ++p.events;
  Batch& b = input_.batches.Current();
  Event& e = b.events.emplace_back();
  const bool used = Decode(p, e, b.packets, &b.spans);
  if (!used) {
    b.events.pop_back();
    ++input_.counters.unknown;
    // Other events of a replayed host are on the UST clock: they must not move its time.
    if (!Replayed()) input_.time.Event(p.head_ts);
    return;
  }
  int64_t ts = p.head_ts;
  uint16_t cpu = p.cpu;
  if (p.cursor->event().replay) {
    ts = input_.OnReplayed(p.head_ts, e, b);
    cpu = e.cpu;
  }
  e.ts = input_.time.Event(ts);
  e.host = input_.host;
  e.cpu = cpu;
}

bool NativeReader::Decode(Port& p, Event& out, std::vector<PacketKey>& packets,
                          std::vector<SpanIds>* spans) {
  const ctf::StreamCursor& c = *p.cursor;
  const ctf::EventPlan& ep = c.event();
  dialect_ |= c.dialect();
  if (!ep.known) return false;
  if (!ep.assembly.general) {
    ep.assembly.Assemble(c, strings_, out);
    return true;
  }
  SlotReader read(c, strings_);
  if (ep.replay) {
    auto handle = [&](ReplayField f) { return ep.replay_fields[static_cast<size_t>(f)]; };
    auto get = [&](ReplayField f) { return read.Int(handle(f), 0); };
    auto str = [&](ReplayField f) { return read.Str(handle(f)); };
    return BuildReplayedEvent(get, str, out, packets, &dialect_, spans);
  }
  BuildEvent(ep.fields, read, dialect_, out, packets, spans);
  return true;
}

void NativeReader::OnDiscarded(Port& p) {
  const ctf::StreamCursor& c = *p.cursor;
  const bool known = c.discarded_known();
  const uint64_t count = c.discarded_count();
  input_.counters.discarded += known ? count : 0;
  std::vector<Event>& out = input_.batches.Current().events;
  if (Replayed()) {
    // As MergingSink::OnDiscarded: every original CPU seen so far, at the last original time.
    AppendLossMarkers(out, input_.host, input_.cpus.ReplayedCpus(), input_.time.last());
    return;
  }
  int64_t begin = input_.time.last();
  if (c.discarded_has_time()) begin = p.trace->ToNs(c.discarded_begin());
  out.push_back(
      LossMarker(input_.host, p.cpu, input_.time.Clamp(begin), begin, LossCount(known, count)));
}

void NativeReader::Flush() {
  input_.dialect = dialect_;
  input_.Flush();
}

}  // namespace waitpath
