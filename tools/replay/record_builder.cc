#include "tools/replay/record_builder.h"

#include <limits>

#include "model/event_views.h"
#include "model/replay_format.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

// An interned name as text; Event stores -1 when the dialect had no such string.
const char* Name(int32_t id, int32_t* marker) {
  if (id < 0) {
    *marker = -1;
    return "";
  }
  *marker = 0;
  // StringTable keeps each string in a std::string, so data() is NUL-terminated.
  return StringTable::Global().Get(static_cast<uint32_t>(id)).data();
}

// A span id of a later round (the id is 64 bits carried as signed).
int64_t RoundSpanId(int64_t id, uint32_t round) {
  return static_cast<int64_t>(static_cast<uint64_t>(id) + round * kRoundSpanStride);
}

}  // namespace

ReplayRecord BuildReplayRecord(const Event& e, const Batch& batch, uint32_t dialect, int64_t shift,
                               uint32_t round) {
  ReplayRecord r;
  waitpath_replay_record& f = r.fields;
  f.format_version = kReplayFormatVersion;
  f.orig_ts = e.ts + shift;
  f.cpu = e.cpu;
  f.kind = static_cast<uint8_t>(e.kind);
  f.ctx = e.ctx;
  f.cur_tid = e.cur_tid;
  f.cur_pid = e.cur_pid;
  // The per-kind fields travel slot for slot (docs/replay.md); names and what refers to this
  // trace alone are rewritten below.
  f.a = e.a;
  f.b = e.b;
  f.c = e.c;
  f.d = e.d;
  f.x = e.x;
  f.dialect = dialect;
  if (ReplayCIsString(e.kind)) r.c_str = Name(e.c, &f.c);
  if (ReplayDIsString(e.kind)) r.d_str = Name(e.d, &f.d);
  switch (e.kind) {
    case EventKind::kLost:
      // When the loss began: a timestamp, shifted like the event's own.
      if (AsLost(e).begin() != std::numeric_limits<int64_t>::min()) {
        AsLost(f).begin() = AsLost(e).begin() + shift;
      }
      break;
    case EventKind::kPacketOut:
    case EventKind::kPacketIn:
      // The batch-local packet index means nothing in another trace; the key travels instead.
      if (const int32_t key = AsPacket(e).key();
          key >= 0 && static_cast<size_t>(key) < batch.packets.size()) {
        const PacketKey& k = batch.packets[static_cast<size_t>(key)];
        f.has_key = k.has_tcp;
        f.has_addresses = k.has_addresses;
        f.saddr = k.saddr;
        f.daddr = k.daddr;
        f.sport = k.sport;
        f.dport = k.dport;
        // Unsigned: wraps modulo 2^32 as TCP's own numbers do.
        f.seq = k.seq + round * kRoundSeqStride;
        f.ack_seq = k.ack_seq + round * kRoundSeqStride;
        f.tcp_flags = k.flags;
        f.ip_len = k.ip_len;
      }
      AsPacket(f).key() = -1;
      break;
    case EventKind::kSpanBegin:
      // Like the packet key: the ids travel, the batch-local index does not.
      if (const int32_t ids = AsSpan(e).ids();
          ids >= 0 && static_cast<size_t>(ids) < batch.spans.size()) {
        const SpanIds& s = batch.spans[static_cast<size_t>(ids)];
        f.has_span_ids = 1;
        f.trace_hi = s.trace_hi;
        // Unsigned: wraps modulo 2^64.
        f.trace_lo = s.trace_lo + round * kRoundSpanStride;
        // 0 says "a root" and stays so.
        f.parent_span = s.parent == 0 ? 0 : s.parent + round * kRoundSpanStride;
      }
      AsSpan(f).ids() = -1;
      f.x = RoundSpanId(e.x, round);
      break;
    case EventKind::kSpanEnd:
    case EventKind::kSpanHandoff:
      f.x = RoundSpanId(e.x, round);
      break;
    default:
      break;
  }
  return r;
}

}  // namespace waitpath
