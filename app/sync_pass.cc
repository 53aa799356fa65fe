#include "app/sync_pass.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "stream/host_streams.h"

namespace waitpath {

bool KeptBatches::Keep(std::unique_ptr<Batch>& batch) {
  if (over_budget) return false;
  const size_t size = sizeof(Batch) + batch->events.capacity() * sizeof(Event) +
                      batch->packets.capacity() * sizeof(PacketKey) + batch->error.capacity();
  if (bytes + size > budget_bytes) {
    hosts.clear();
    bytes = 0;
    over_budget = true;
    return false;
  }
  if (batch->host >= hosts.size()) hosts.resize(batch->host + 1u);
  bytes += size;
  hosts[batch->host].push_back(std::move(batch));
  return true;
}

bool RunSyncPass(const std::vector<HostSpec>& hosts, const std::string& reference,
                 const ReaderOptions& reader_options, bool two_phase, SyncPassResult* out,
                 std::string* error, KeptBatches* keep) {
  const std::vector<std::string> names = HostNames(hosts);
  size_t ref = 0;  // default: the first host
  if (!reference.empty()) {
    ref = static_cast<size_t>(std::find(names.begin(), names.end(), reference) - names.begin());
    if (ref == names.size()) {
      *error = "--reference " + reference + ": no such host in the traces";
      return false;
    }
  }
  out->sync = std::make_unique<ClockSync>(names, ref, two_phase);
  out->stats.assign(hosts.size(), HostStats{});
  for (size_t i = 0; i < hosts.size(); ++i) out->stats[i].host = names[i];
  HostStreams streams(hosts, reader_options);
  streams.Start();
  while (auto batch = streams.Next()) {
    out->stats[batch->host].Add(*batch);
    for (const Event& e : batch->events) {
      if ((e.kind == EventKind::kPacketOut || e.kind == EventKind::kPacketIn) && e.a >= 0) {
        out->sync->OnPacket(batch->host, e.ts, e.kind == EventKind::kPacketOut,
                            batch->packets[static_cast<size_t>(e.a)]);
      }
    }
    out->sync->OnWatermark(batch->host, batch->watermark);
    if (!keep || !keep->Keep(batch)) streams.Recycle(std::move(batch));
  }
  return true;
}

std::string ClockJson(const HostClock& c) {
  nlohmann::ordered_json j;
  j["type"] = "clock";
  j["host"] = c.host;
  j["reference"] = c.reference;
  j["slope"] = c.transform.slope();
  j["offset_ns"] = c.transform.offset();
  j["accuracy"] = c.accuracy;
  j["quality"] = SyncQualityName(c.quality);
  j["matches"] = c.matches;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace waitpath
