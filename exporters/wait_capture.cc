#include "exporters/wait_capture.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/untrusted_name.h"
#include "ctf/ctf_cut.h"
#include "exporters/analysis_report.h"
#include "exporters/span_report.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr int64_t kHourNs = int64_t{3600} * 1'000'000'000;

uint64_t DirectoryBytes(const fs::path& dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file(ec)) bytes += it->file_size(ec);
  }
  return bytes;
}

}  // namespace

WaitCapture::WaitCapture(WatchedAccounting& accounting, CaptureOptions options, TraceLocator locate,
                         std::function<void(const std::string&)> warn)
    : accounting_(accounting),
      engine_(accounting.engine()),
      options_(std::move(options)),
      locate_(std::move(locate)),
      warn_(std::move(warn)) {
  if (!warn_) warn_ = [](const std::string& line) { fmt::print(stderr, "waitpath: {}\n", line); };
  accounting_.AddSink(this);
}

void WaitCapture::OnWatchedWait(const ResolvedWait& wait, std::span<const PathSegment> path) {
  if (wait.end - wait.start < options_.min_wait_ns) return;
  const std::vector<std::string>& hosts = accounting_.hosts();
  auto name = [&](Utid u) {
    return std::string(StringTable::Global().Get(engine_.tasks()[u].comm));
  };
  const Task& t = engine_.tasks()[wait.task];
  // The record as `--json` writes a wait (docs/analyze.md), so that the capture's analysis can
  // be compared with it field by field.
  Json j;
  j["type"] = "wait";
  j["host"] = hosts[t.host];
  j["tid"] = t.tid;
  j["pid"] = t.pid < 0 ? t.tid : t.pid;
  j["comm"] = name(wait.task);
  j["start_ns"] = wait.start;
  j["end_ns"] = wait.end;
  j["duration_ns"] = wait.end - wait.start;
  j["cause"] = WaitCauseName(wait.link);
  if ((wait.link.type == WaitLink::Type::kTask || wait.link.type == WaitLink::Type::kPacket) &&
      wait.link.task != kNoTask) {
    const Task& w = engine_.tasks()[wait.link.task];
    j["waker"] = Json{{"host", hosts[w.host]}, {"tid", w.tid}, {"comm", name(wait.link.task)}};
  }
  Json breakdown = Json::object();
  for (int i = 0; i < kLeafCount; ++i)
    breakdown[std::string(LeafName(static_cast<Leaf>(i)))] = wait.breakdown.ns[i];
  j["breakdown_ns"] = std::move(breakdown);
  Json pieces = Json::array();
  Pending p;
  p.hosts.push_back(t.host);
  AddPathHosts(path, &p.hosts);
  for (const PathSegment& s : path) {
    Json piece;
    if (s.task == kNoTask) {
      piece = Json{{"host", ""}, {"tid", -1}, {"comm", "?"}};
    } else {
      const Task& on = engine_.tasks()[s.task];
      piece = Json{{"host", hosts[on.host]}, {"tid", on.tid}, {"comm", name(s.task)}};
    }
    piece["state"] = LeafName(s.leaf);
    piece["start_ns"] = s.start;
    piece["end_ns"] = s.end;
    pieces.push_back(std::move(piece));
  }
  j["path"] = std::move(pieces);
  p.kind = "wait";
  p.record = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  p.task = PathComponent(hosts[t.host] + "-" + std::to_string(t.tid));
  p.from_ns = wait.start - options_.margin_ns;
  p.to_ns = wait.end + options_.margin_ns;
  Queue(std::move(p));
}

bool WaitCapture::SlowerThanUsual(uint16_t host, uint32_t operation, int64_t ns) {
  constexpr size_t kWindow = 1000, kWarmUp = 100;
  RecentDurations& r = request_durations_[{host, operation}];
  bool slower = false;
  if (r.sorted.size() >= kWarmUp) {
    // Strictly slower than the quantile of the recent spans: a run of equal durations (a
    // replayed trace) is not captured again and again.
    const size_t rank = static_cast<size_t>(
        std::ceil(options_.request_quantile * static_cast<double>(r.sorted.size())));
    slower = ns > r.sorted[std::clamp<size_t>(rank, 1, r.sorted.size()) - 1];
  }
  if (r.arrival.size() == kWindow) {
    r.sorted.erase(std::lower_bound(r.sorted.begin(), r.sorted.end(), r.arrival.front()));
    r.arrival.pop_front();
  }
  r.arrival.push_back(ns);
  r.sorted.insert(std::upper_bound(r.sorted.begin(), r.sorted.end(), ns), ns);
  return slower;
}

void WaitCapture::OnSpan(const ResolvedSpan& span) {
  if (span.task == kNoTask) return;
  const int64_t ns = span.end - span.start;
  if (options_.request_quantile > 0) {
    if (!SlowerThanUsual(span.span.host, span.span.name, ns)) return;
  } else if (options_.min_request_ns < 0 || ns < options_.min_request_ns) {
    return;
  }
  const std::vector<std::string>& hosts = accounting_.hosts();
  Pending p;
  p.kind = "span";
  // The record as `--json` writes it, every task and blocking span listed, so that the
  // capture's analysis can be compared with it field by field.
  p.record = SpanRecordJson(engine_, hosts, span, SIZE_MAX)
                 .dump(-1, ' ', false, Json::error_handler_t::replace);
  p.hosts.push_back(engine_.tasks()[span.task].host);
  AddPathHosts(span.path, &p.hosts);
  p.task = PathComponent(hosts[span.span.host] + "-" +
                         std::string(StringTable::Global().Get(span.span.name)) + "-" +
                         SpanIdHex(span.span.span_id));
  p.from_ns = span.start - options_.margin_ns;
  p.to_ns = span.end + options_.margin_ns;
  Queue(std::move(p));
}

void WaitCapture::Queue(Pending p) {
  // Waits and spans are told when they end, not in the order of their ends: pending captures
  // are kept in the order their windows end, the order Poll cuts them.
  auto at = std::upper_bound(pending_.begin(), pending_.end(), p.to_ns,
                             [](int64_t to, const Pending& q) { return to < q.to_ns; });
  pending_.insert(at, std::move(p));
}

void WaitCapture::AddPathHosts(std::span<const PathSegment> path,
                               std::vector<uint16_t>* hosts) const {
  for (const PathSegment& s : path) {
    if (s.task == kNoTask) continue;
    const uint16_t host = engine_.tasks()[s.task].host;
    if (std::find(hosts->begin(), hosts->end(), host) == hosts->end()) hosts->push_back(host);
  }
}

void WaitCapture::ObserveClockOffset(uint16_t host, int64_t ts, int64_t offset_ns) {
  if (host >= offsets_.size()) offsets_.resize(host + 1u);
  auto& samples = offsets_[host];
  // A replay paced slower than real time drifts: a sample per millisecond of change keeps the
  // map within a millisecond (the margin absorbs it); the oldest go past a bound.
  if (!samples.empty() && std::abs(samples.back().second - offset_ns) < 1'000'000) return;
  if (offset_ns == 0 && samples.empty()) return;  // events on the trace's clock
  samples.emplace_back(ts, offset_ns);
  if (samples.size() > 100'000) samples.pop_front();
}

bool WaitCapture::Cut(const Pending& p, const std::string& out, uint64_t* bytes) {
  const std::vector<std::string>& hosts = accounting_.hosts();
  Json host_list = Json::array();
  for (uint16_t h : p.hosts) {
    const std::string& host = hosts[h];
    const std::vector<std::string> dirs = locate_(host);
    if (dirs.empty()) {
      warn_(fmt::format("capture skipped: the stored trace of host {} was not found", host));
      ++counters_.skipped_no_trace;
      return false;
    }
    // The window in the host's own clock: the traces are cut by their own timestamps.
    ClockTransform to_host;
    Json transform = Json{{"slope", 1.0}, {"offset_ns", 0.0}};
    for (const HostClock& c : clocks_) {
      if (c.host != host) continue;
      to_host = c.transform.Inverse();
      transform = Json{{"slope", c.transform.slope()},
                       {"offset_ns", c.transform.offset()},
                       {"accuracy_ns", c.accuracy},
                       {"quality", SyncQualityName(c.quality)}};
    }
    int64_t from = to_host.ToReference(p.from_ns), to = to_host.ToReference(p.to_ns);
    if (h < offsets_.size() && !offsets_[h].empty()) {
      // The samples on either side of t. A sample stands for a batch of events, and within it
      // the offset of a replay paced slower (or faster) than real time keeps moving: the true
      // offset at t lies between the two. The window is widened to both (the smaller offset
      // for its start, the larger for its end), never cut short; with a single sample on a
      // side, that one.
      auto around = [&](int64_t t) {
        const auto& samples = offsets_[h];
        auto it = std::upper_bound(samples.begin(), samples.end(), t,
                                   [](int64_t v, const auto& s) { return v < s.first; });
        const int64_t before =
            it == samples.begin() ? samples.front().second : std::prev(it)->second;
        const int64_t after = it == samples.end() ? samples.back().second : it->second;
        return std::pair{std::min(before, after), std::max(before, after)};
      };
      from += around(from).first;
      to += around(to).second;
    }
    Json traces = Json::array();
    for (size_t i = 0; i < dirs.size(); ++i) {
      const fs::path trace_out =
          fs::path(out) / PathComponent(host) /
          (dirs.size() == 1 ? std::string("trace") : fmt::format("trace-{}", i));
      const CtfCut cut = CutTrace(dirs[i], from, to, trace_out.string());
      if (!cut.error.empty()) {
        // A trace of the host without data in the window (another user's UST buffers, a
        // channel idle then) is not part of it.
        std::error_code ec;
        fs::remove_all(trace_out, ec);
        if (cut.error.find("no packet overlaps") != std::string::npos) continue;
        warn_(fmt::format("capture skipped: {}", cut.error));
        ++(cut.overwritten ? counters_.skipped_overwritten : counters_.skipped_failed);
        return false;
      }
      *bytes += cut.bytes;
      traces.push_back(Json{{"from", dirs[i]},
                            {"dir", fs::relative(trace_out, out).string()},
                            {"packets", cut.packets}});
    }
    if (traces.empty()) {
      warn_(fmt::format("capture skipped: host {} stored nothing over the wait's window",
                        PrintableName(host)));
      ++counters_.skipped_no_trace;
      return false;
    }
    host_list.push_back(Json{{"host", host},
                             {"window_ns", Json::array({from, to})},
                             {"to_reference", transform},
                             {"traces", std::move(traces)}});
  }
  Json info;
  info[p.kind] = Json::parse(p.record);
  info["window_ns"] = Json::array({p.from_ns, p.to_ns});
  info["margin_ns"] = options_.margin_ns;
  info["reference"] = clocks_.empty() ? hosts[p.hosts[0]] : clocks_[0].reference;
  info["hosts"] = std::move(host_list);
  std::ofstream file(fs::path(out) / "wait.json");
  file << info.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
  if (!file.flush()) {
    warn_(fmt::format("capture skipped: cannot write {}/wait.json", out));
    ++counters_.skipped_failed;
    return false;
  }
  return true;
}

std::vector<CaptureMade> WaitCapture::Poll(int64_t now_ns, int64_t settle_ns, int64_t wall_ns) {
  std::vector<CaptureMade> made;
  while (!pending_.empty() &&
         (now_ns == INT64_MAX || pending_.front().to_ns + settle_ns <= now_ns)) {
    const Pending p = std::move(pending_.front());
    pending_.pop_front();
    while (!recent_.empty() && recent_.front() <= wall_ns - kHourNs) recent_.pop_front();
    if (recent_.size() >= options_.max_per_hour) {
      ++counters_.skipped_rate;
      continue;
    }
    const std::time_t secs = static_cast<std::time_t>(wall_ns / 1'000'000'000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    const std::string name = fmt::format("{}-{:06}-{}", stamp, ++sequence_, p.task);
    const fs::path final_dir = fs::path(options_.dir) / name;
    // Made beside and renamed: a reader never sees half a capture, and one that failed leaves
    // nothing.
    const fs::path part = fs::path(options_.dir) / (name + ".part");
    std::error_code ec;
    fs::create_directories(part, ec);
    uint64_t bytes = 0;
    if (ec || !Cut(p, part.string(), &bytes)) {
      if (ec) {
        warn_(fmt::format("capture skipped: cannot create {}: {}", part.string(), ec.message()));
        ++counters_.skipped_failed;
      }
      fs::remove_all(part, ec);
      continue;
    }
    if (finish_) {
      finish_(CaptureMade{part.string(), p.from_ns, p.to_ns});
      bytes = DirectoryBytes(part);
    }
    if (bytes > options_.max_bytes) {
      warn_(fmt::format("capture skipped: {} MB, more than --capture-max-mb by itself",
                        (bytes + (1u << 20) - 1) >> 20));
      ++counters_.skipped_too_big;
      fs::remove_all(part, ec);
      continue;
    }
    fs::rename(part, final_dir, ec);
    if (ec) {
      warn_(fmt::format("capture skipped: cannot rename it to {}: {}", final_dir.string(),
                        ec.message()));
      ++counters_.skipped_failed;
      fs::remove_all(part, ec);
      continue;
    }
    recent_.push_back(wall_ns);
    ++counters_.written;
    made.push_back(CaptureMade{final_dir.string(), p.from_ns, p.to_ns});
    Trim();
  }
  return made;
}

void WaitCapture::Trim() {
  // Capture names start with their UTC time and a sequence number: by name is oldest first.
  std::vector<fs::path> captures;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(options_.dir, ec)) {
    const std::string n = entry.path().filename().string();
    if (entry.is_directory(ec) && !n.empty() && n[0] != '.' && !n.ends_with(".part") &&
        fs::exists(entry.path() / "wait.json", ec))
      captures.push_back(entry.path());
  }
  std::sort(captures.begin(), captures.end());
  std::vector<uint64_t> sizes;
  uint64_t total = 0;
  for (const fs::path& c : captures) total += sizes.emplace_back(DirectoryBytes(c));
  for (size_t i = 0; i + 1 < captures.size() && total > options_.max_bytes; ++i) {
    fs::remove_all(captures[i], ec);
    total -= sizes[i];
    ++counters_.removed;
  }
}

}  // namespace waitpath
