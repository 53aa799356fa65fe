// Merges several hosts' event streams into one, in reference-clock order (the merger of
// stream/pipeline.h).
//
// The ordering algorithm. Each host delivers batches in its own time order (its reader merged
// its CPU streams) and a watermark: no later event of that host is older. An event's reference
// time is its host's transform applied to its timestamp, clamped to the host's last released
// time (a transform that improved may not reorder one host's events). Next() releases the
// head event with the smallest reference time across hosts, but only once every other host
// that has not ended is known not to hold anything older: it has a buffered head at least as
// late, or nothing buffered and a watermark at least as late. Otherwise Next() says which host
// must be read (needed()), and offline the pipeline blocks on that host's reader; live, a host
// quiet for a while is marked idle and not waited for (its later events still merge, after
// what was released meanwhile), and with a lag limit a host too far behind is not waited for
// and its too-old events are dropped as counted losses. Cost: one full comparison when the
// releasing host changes (the known heads are a min-heap: the earliest and the next-oldest are
// its top and the top's children, the released host's next head sifts down once; the hosts with
// nothing buffered are checked one by one); in between, a run of one host's events is released
// with a single comparison each against the bound that comparison computed (the next-oldest head
// or watermark), so a merge of H hosts costs O(1) per event while hosts alternate rarely and
// O(log H) at each switch. (Like Perfetto's trace sorter, but with no sorting window: each input
// is already ordered, so a watermark per input replaces a time window.)
#pragma once

#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "model/batch.h"
#include "stream/clock_transform.h"

namespace waitpath {

class TimeMerger {
 public:
  explicit TimeMerger(size_t hosts);

  void SetTransform(uint16_t host, const ClockTransform& t) {
    hosts_[host]->transform = t;
    hosts_[host]->head_ts.reset();
    run_host_ = -1;
    rebuild_ = true;
    UpdateLateFloor();
  }
  const ClockTransform& transform(uint16_t host) const { return hosts_[host]->transform; }
  // Live: hosts appear while running.
  void AddHost();
  // Live: an ended host reads again (its session recreated on the relayd); its later batches
  // follow the ones it has.
  void Reopen(uint16_t host) {
    hosts_[host]->ended = false;
    run_host_ = -1;
    rebuild_ = true;
  }
  size_t host_count() const { return hosts_.size(); }
  // Live: a host that has sent nothing for a while is not waited for (its late events are
  // still merged, after what was released meanwhile).
  void SetIdle(uint16_t host, bool idle) {
    hosts_[host]->idle = idle;
    run_host_ = -1;
  }
  // Live: a host more than `lag` behind (reference time) the newest event buffered from
  // another host is not waited for, and its events older than that are dropped as lost (a
  // `lost` marker per CPU goes out before its next event), so that one host with a bad clock
  // or a stalled stream cannot hold every other host's events in memory. 0: no limit.
  void SetMaxLag(int64_t lag_ns) {
    max_lag_ = lag_ns;
    UpdateLateFloor();
  }
  // Whether the host is lagging past the limit now, and its events dropped for it so far.
  bool lagging(uint16_t host) const { return hosts_[host]->lagging; }
  // Offline one pass: nothing later than `limit` (reference time) is released, so that the
  // transforms can still improve from what is read after it (max: no limit). Next() then
  // returns false with needed() -1 when only events past the limit could go.
  void SetReleaseLimit(int64_t limit) {
    limit_ = limit;
    run_host_ = -1;
  }
  uint64_t dropped_late(uint16_t host) const { return hosts_[host]->dropped_late; }

  void Push(std::unique_ptr<Batch> batch);

  // The next event (its ts in the reference clock, monotonic per host) and the batch it
  // came from; false when more input is needed, or when everything has been merged.
  bool Next(Event* event, const Batch** batch);
  bool done() const;
  // After Next() returned false: a host whose data is needed before anything can be
  // released (read from it next), or -1 when every host's input has ended.
  int needed() const { return needed_; }
  // Batches fully merged, for reuse.
  std::vector<std::unique_ptr<Batch>> TakeConsumed() { return std::move(consumed_); }

 private:
  struct Host {
    size_t index = 0;  // in hosts_ and heads_
    ClockTransform transform;
    std::deque<std::unique_ptr<Batch>> batches;
    size_t pos = 0;                  // next event in batches.front()
    std::optional<int64_t> head_ts;  // that event's reference time, once computed
    int64_t last = std::numeric_limits<int64_t>::min();       // last released (reference)
    int64_t watermark = std::numeric_limits<int64_t>::min();  // host clock
    bool ended = false;
    bool idle = false;
    int64_t newest = std::numeric_limits<int64_t>::min();  // newest buffered event, host clock
    bool lagging = false;
    uint64_t dropped_late = 0;
    std::map<uint16_t, std::pair<int64_t, uint64_t>> late_cpus;  // cpu -> (first dropped ts, count)
    std::unique_ptr<Batch> marker;                               // holds the lost markers it owes
  };
  // With a lag limit: the reference time before which events are dropped (min when none),
  // kept in late_floor_.
  void UpdateLateFloor();
  void DropLate(Host& h, int64_t floor);
  bool ReleaseLossMarker(Host& h, Event* event, const Batch** batch);
  // Skips empty batches; true when the host has a next event (its head_ts then set). Inline
  // for the usual case, a head already known: Next's full comparison asks every host.
  bool Head(Host& h) { return h.head_ts.has_value() || FindHead(h); }
  bool FindHead(Host& h);
  bool Release(Host& h, Event* event, const Batch** batch);
  // Next's full comparison: brings heads_ up to date (the top's consumed head, hosts whose head
  // was not known), leaving in unknown_ the hosts with nothing buffered.
  void UpdateHeads();
  void SiftDownTop();

  std::vector<std::unique_ptr<Host>> hosts_;  // added while running, never moved
  // Every host whose head is known, as (head_ts, index): a min-heap, so that the full
  // comparison (at 16 hosts: at almost every event, the hosts alternating) is the top and its
  // two children (the earliest other head) instead of a pass over every host. The earliest
  // head on equal times is the lowest index, as a pass in index order would choose.
  std::vector<std::pair<int64_t, size_t>> heads_;
  std::vector<size_t> unknown_;  // the other hosts, by index
  bool top_consumed_ = false;    // the top's head was released: its entry is stale
  bool rebuild_ = true;          // heads changed outside Next: every host is asked again
  int needed_ = -1;
  // The host Next last chose by a full comparison, and the reference time it may run to
  // without another: strictly before every other host's head or empty host's watermark.
  int run_host_ = -1;
  int64_t run_bound_ = 0;
  int64_t max_lag_ = 0;
  int64_t limit_ = std::numeric_limits<int64_t>::max();
  int64_t late_floor_ = std::numeric_limits<int64_t>::min();
  std::vector<std::unique_ptr<Batch>> consumed_;
};

}  // namespace waitpath
