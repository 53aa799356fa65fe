// What the engine of one shard asks of the other shards of a fleet (docs/scale.md). The
// engine stays single-host-set: a packet from a host it does not analyse is matched with the
// sender's edge record, the sender stands in the task table as a remote task (Task::remote,
// no history), and the wait it ends is resolved from the sender's cumulative vectors at the
// wait's start and at the send, both from the shard that owns it. Implemented over the bus in
// fleet/ (fleet/shard_peers.h).
#pragma once

#include <cstdint>
#include <optional>

#include "incremental/leaf_state.h"
#include "incremental/task_table.h"
#include "model/event.h"

namespace waitpath {

struct RemoteSend {
  Utid sender;  // a remote task (Task::remote)
  int64_t ts;   // the send, in this engine's clock
  // The sender's shard stalled before it said whether this packet was sent (docs/scale.md,
  // "Progress"): the wait it ends is `unknown` (sender kNoTask).
  bool unknown = false;
};

class RemotePeers {
 public:
  virtual ~RemotePeers() = default;
  // Whether a packet sent by a local host with this key leaves the hosts this engine analyses.
  virtual bool Remote(const PacketKey& key) = 0;
  // A packet sent to such an address; `cum`: the sender's cumulative vector at the send
  // (zero for kNoTask, a send from interrupt context).
  virtual void OnSend(uint16_t host, int64_t ts, const PacketKey& key, Utid sender,
                      const StateVec& cum) = 0;
  // A receive that no local send matches: the remote send, if it is known within the bound.
  virtual std::optional<RemoteSend> OnReceive(uint16_t host, int64_t ts, const PacketKey& key) = 0;
  // The remote sender's breakdown over [a, send) (this engine's clock), its total exactly
  // send - a; nothing when it is not known within the bound (the wait is then `network`).
  virtual std::optional<StateVec> RemoteBreakdown(const RemoteSend& send, int64_t a) = 0;
};

}  // namespace waitpath
