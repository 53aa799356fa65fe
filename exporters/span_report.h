// What `analyze`, `live` and `tail` print of application spans (requests): one record per span
// as it ends (its active path's breakdown, the tasks and the other spans it went through), and
// at the end a summary per operation, the idle time of the threads that carry spans, and the
// span input's quality counters (docs/requests.md).
#pragma once

#include <re2/re2.h>

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "base/time_format.h"
#include "incremental/engine.h"

namespace waitpath {

struct SpanReportOptions {
  bool json = false;
  bool records = true;      // one record per span; false: the summary only
  bool summary = true;      // per-operation summary at Finish (text or JSON)
  int64_t min_span_ns = 0;  // records of shorter spans are not written (still summarized)
  std::string operation;    // RE2 the whole operation name must match ("" = every span)
  size_t top = 10;          // by_task / blocked_by entries per record, rows per summary list
  TimeFormat time_format;   // of the span lines' end times (text)
};

// Where a span's time went, per task credited (the span's own thread for its own states),
// largest first.
std::vector<std::pair<Utid, StateVec>> SpanTimeByTask(const ResolvedSpan& span);

// A span's record as `--json` writes it (docs/requests.md): ids, operation, who, when, its
// breakdown, the `top` tasks and spans it went through.
nlohmann::ordered_json SpanRecordJson(const Engine& engine, const std::vector<std::string>& hosts,
                                      const ResolvedSpan& span, size_t top);

class SpanReport : public SpanListener {
 public:
  SpanReport(const Engine& engine, const std::vector<std::string>& host_names,
             SpanReportOptions options, std::ostream& out);
  ~SpanReport() override;

  void OnSpan(const ResolvedSpan& span) override;
  void OnIdle(Utid u, int64_t from, int64_t to, const StateVec& states) override;
  // After the input ended: the summary (when any span was seen).
  void Finish();

  uint64_t spans_written() const { return written_; }
  // A valid --operation pattern (else `error` says why).
  static bool CheckOperation(const std::string& pattern, std::string* error);

 private:
  struct OperationStats {
    // Durations for p50/p99: every span's up to kMaxSamples, then a uniform sample of them
    // (reservoir), so that a long `live` run stays bounded.
    std::vector<int64_t> durations;
    uint64_t spans = 0;
    int64_t total_ns = 0;
    StateVec breakdown;
    std::map<std::string, int64_t> by_task;     // "host/comm" -> ns
    std::map<std::string, int64_t> blocked_by;  // "host:operation" -> ns
  };
  struct IdleThread {
    std::string who;  // "host/comm/tid"
    StateVec states;
  };

  static constexpr size_t kMaxSamples = 100'000;
  static constexpr size_t kMaxOperations = 1000;  // (host, operation) rows; later ones: "other"

  std::string Who(Utid u) const;
  void WriteSummary();

  const Engine& engine_;
  const std::vector<std::string>& hosts_;
  SpanReportOptions options_;
  std::ostream& out_;
  std::unique_ptr<RE2> operation_re_;
  std::map<std::pair<std::string, std::string>, OperationStats> operations_;  // (host, operation)
  std::map<std::pair<uint16_t, int32_t>, IdleThread> idle_;                   // (host, tid)
  uint64_t written_ = 0;
  uint64_t seen_ = 0;
  uint64_t rng_ = 0x9e3779b97f4a7c15ULL;  // reservoir sampling, deterministic
};

// Hex forms of span and trace ids, as tracers print them.
std::string SpanIdHex(uint64_t id);
std::string TraceIdHex(const SpanIds& ids);

}  // namespace waitpath
