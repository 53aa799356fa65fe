#include "tools/gen/scenario.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <charconv>
#include <stdexcept>

namespace waitpath::gen {
namespace {

std::runtime_error ScenarioError(const std::string& what) {
  return std::runtime_error("scenario: " + what);
}

// Durations may be written as strings with a unit ("250us") or as integers (ns).
Ns GetDuration(const toml::table& t, std::string_view key, Ns fallback,
               DurationSign sign = DurationSign::kNonNegative) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return fallback;
  if (auto i = n->value<int64_t>(); i && n->is_integer()) {
    if (*i < 0 && sign == DurationSign::kNonNegative) {
      throw ScenarioError(fmt::format("'{}': {} is negative", key, *i));
    }
    return *i;
  }
  try {
    if (auto s = n->value<std::string>()) return DurationOrThrow(*s, sign);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(fmt::format("'{}': {}", key, e.what()));
  }
  throw ScenarioError(fmt::format("'{}' must be a duration like \"3ms\"", key));
}

DurationRange GetDurationRange(const toml::table& t, std::string_view key, DurationRange fallback) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return fallback;
  if (n->is_integer()) {
    Ns v = *n->value<int64_t>();
    if (v < 0) throw ScenarioError(fmt::format("'{}': {} is negative", key, v));
    return {v, v};
  }
  try {
    if (auto s = n->value<std::string>()) return ParseDurationRange(*s);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(fmt::format("'{}': {}", key, e.what()));
  }
  throw ScenarioError(fmt::format("'{}' must be a duration range like \"80us..120us\"", key));
}

template <typename T>
T Get(const toml::table& t, std::string_view key, T fallback) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return fallback;
  if (auto v = n->value<T>()) return *v;
  throw ScenarioError(fmt::format("'{}' has the wrong type", key));
}

std::vector<std::string> GetStrings(const toml::table& t, std::string_view key) {
  std::vector<std::string> out;
  const toml::array* a = t.get_as<toml::array>(key);
  if (a == nullptr) return out;
  for (const toml::node& n : *a) {
    auto s = n.value<std::string>();
    if (!s) throw ScenarioError(fmt::format("'{}' must be an array of strings", key));
    out.push_back(*s);
  }
  return out;
}

// Replaces the node at a dotted path by the TOML value `text` (a bare word is a string).
void ApplyOverride(toml::table& root, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ScenarioError("--set expects key=value, got '" + assignment + "'");
  }
  std::string path = assignment.substr(0, eq);
  std::string text = assignment.substr(eq + 1);
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + text);
  } catch (const toml::parse_error&) {
    parsed.insert_or_assign("v", text);
  }
  const toml::node* value = parsed.get("v");

  std::vector<std::string> parts;
  for (size_t pos = 0;;) {
    size_t dot = path.find('.', pos);
    parts.push_back(path.substr(pos, dot - pos));
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  toml::node* node = &root;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    bool last = i + 1 == parts.size();
    if (toml::table* tbl = node->as_table()) {
      if (last) {
        value->visit([&](const auto& v) { tbl->insert_or_assign(part, v); });
        return;
      }
      if (tbl->get(part) == nullptr) tbl->insert_or_assign(part, toml::table{});
      node = tbl->get(part);
    } else if (toml::array* arr = node->as_array()) {
      size_t index = 0;
      auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), index);
      if (ec != std::errc() || index >= arr->size()) {
        throw ScenarioError(
            fmt::format("--set {}: '{}' is not an index of that array", path, part));
      }
      if (last) {
        value->visit([&](const auto& v) { arr->replace(arr->cbegin() + index, v); });
        return;
      }
      node = arr->get(index);
    } else {
      throw ScenarioError(fmt::format("--set {}: '{}' is not a table or array", path, part));
    }
  }
}

TaskSpec ParseTask(const toml::table& t) {
  TaskSpec task;
  task.name = Get<std::string>(t, "name", "");
  if (task.name.empty()) throw ScenarioError("every task needs a name");
  task.comm = Get<std::string>(t, "comm", task.name);
  if (task.comm.size() > 15) task.comm.resize(15);  // TASK_COMM_LEN - 1
  task.process = Get<std::string>(t, "process", "");
  task.forked = Get<bool>(t, "forked", false);
  task.thread = Get<bool>(t, "thread", false);
  task.tid = static_cast<int>(Get<int64_t>(t, "tid", 0));
  task.port = static_cast<int>(Get<int64_t>(t, "port", 0));
  task.start = GetDuration(t, "start", 0);
  task.script = GetStrings(t, "script");
  return task;
}

Scenario Parse(toml::table& root, const std::vector<std::string>& overrides,
               const uint64_t* seed_override) {
  for (const std::string& o : overrides) ApplyOverride(root, o);
  Scenario s;
  s.name = Get<std::string>(root, "name", "unnamed");
  s.description = Get<std::string>(root, "description", "");
  s.seed = static_cast<uint64_t>(Get<int64_t>(root, "seed", 1));
  if (seed_override != nullptr) s.seed = *seed_override;
  s.duration = GetDuration(root, "duration", s.duration);
  s.epoch_ns = Get<int64_t>(root, "epoch_ns", s.epoch_ns);
  s.slice = GetDuration(root, "slice", s.slice);
  s.truth_retention = GetDuration(root, "truth_retention", s.truth_retention);
  s.watch = GetStrings(root, "watch");

  if (const toml::table* net = root.get_as<toml::table>("network")) {
    s.network.latency = GetDurationRange(*net, "latency", s.network.latency);
    s.network.gbps = Get<double>(*net, "gbps", s.network.gbps);
    s.network.mss = static_cast<int>(Get<int64_t>(*net, "mss", s.network.mss));
    s.network.acks = Get<bool>(*net, "acks", s.network.acks);
  }
  if (const toml::table* loss = root.get_as<toml::table>("loss")) {
    s.loss.host = Get<std::string>(*loss, "host", "");
    s.loss.cpu = static_cast<int>(Get<int64_t>(*loss, "cpu", 0));
    s.loss.share = Get<double>(*loss, "share", 0.0);
    s.loss.chunk = static_cast<int>(Get<int64_t>(*loss, "chunk", s.loss.chunk));
    if (s.loss.share < 0 || s.loss.share > 0.9) {
      throw ScenarioError("loss.share must be within [0, 0.9]");
    }
  }
  if (const toml::array* hosts = root.get_as<toml::array>("hosts")) {
    for (const toml::node& hn : *hosts) {
      const toml::table* h = hn.as_table();
      if (h == nullptr) throw ScenarioError("[[hosts]] entries must be tables");
      HostSpec host;
      host.name = Get<std::string>(*h, "name", fmt::format("host{}", s.hosts.size()));
      host.cpus = static_cast<int>(Get<int64_t>(*h, "cpus", host.cpus));
      if (host.cpus < 1 || host.cpus > 256) throw ScenarioError("cpus must be within 1..256");
      host.clock_offset = GetDuration(*h, "clock_offset", 0, DurationSign::kSigned);
      host.drift_ppm = Get<double>(*h, "drift_ppm", 0.0);
      host.ip = Get<std::string>(*h, "ip", fmt::format("10.0.0.{}", s.hosts.size() + 1));
      host.preempt_state = Get<int64_t>(*h, "preempt_state", 0);
      host.threaded_rx = Get<bool>(*h, "threaded_rx", false);
      if (const toml::array* tasks = h->get_as<toml::array>("tasks")) {
        for (const toml::node& tn : *tasks) {
          const toml::table* t = tn.as_table();
          if (t == nullptr) throw ScenarioError("[[hosts.tasks]] entries must be tables");
          host.tasks.push_back(ParseTask(*t));
        }
      }
      s.hosts.push_back(std::move(host));
    }
  }
  if (const toml::table* scale = root.get_as<toml::table>("scale")) {
    s.is_scale = true;
    s.scale_hosts = static_cast<int>(Get<int64_t>(*scale, "hosts", s.scale_hosts));
    s.scale_tasks_per_host =
        static_cast<int>(Get<int64_t>(*scale, "tasks_per_host", s.scale_tasks_per_host));
    s.scale_cpus = static_cast<int>(Get<int64_t>(*scale, "cpus", s.scale_cpus));
    s.scale_event_rate = Get<double>(*scale, "event_rate", s.scale_event_rate);
    if (const toml::node* n = scale->get("event_rate"); n != nullptr && n->is_integer()) {
      s.scale_event_rate = static_cast<double>(*n->value<int64_t>());
    }
    if (s.scale_hosts < 1 || s.scale_tasks_per_host < 1 || s.scale_cpus < 1 ||
        s.scale_event_rate <= 0) {
      throw ScenarioError("scale.hosts, tasks_per_host, cpus and event_rate must be positive");
    }
  }
  if (s.hosts.empty() && !s.is_scale) throw ScenarioError("no [[hosts]]");
  return s;
}

}  // namespace

Scenario ScenarioLoader::Load(const std::string& path, const std::vector<std::string>& overrides,
                              const uint64_t* seed_override) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(fmt::format("{}:{}:{}: {}", path, e.source().begin.line,
                                         e.source().begin.column, e.description()));
  }
  return Parse(root, overrides, seed_override);
}

Scenario ScenarioLoader::LoadFromString(const std::string& toml_text,
                                        const std::vector<std::string>& overrides,
                                        const uint64_t* seed_override) {
  toml::table root;
  try {
    root = toml::parse(toml_text);
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(fmt::format("scenario text:{}:{}: {}", e.source().begin.line,
                                         e.source().begin.column, e.description()));
  }
  return Parse(root, overrides, seed_override);
}

void ScaleWorkloadBuilder::Build(Scenario& s, Ns cycle) {
  // Four kinds of task in equal shares, chosen so that every wait cause appears:
  // RPC client/server pairs across neighbouring hosts, disk writers, sleepers, and
  // CPU hogs (more runnable tasks than CPUs now and then).
  s.hosts.clear();
  const int n_hosts = s.scale_hosts;
  const int per_host = s.scale_tasks_per_host;
  const Ns c = std::max<Ns>(cycle, 20 * kUs);
  auto d = [](Ns ns) { return fmt::format("{}ns", std::max<Ns>(ns, 1000)); };
  auto range = [&](Ns lo, Ns hi) { return d(lo) + ".." + d(hi); };
  for (int h = 0; h < n_hosts; ++h) {
    HostSpec host;
    host.name = fmt::format("node{:02}", h);
    host.cpus = s.scale_cpus;
    // First host is the reference; the others get seconds of offset and tens of ppm.
    host.clock_offset = h == 0 ? 0 : (h % 2 == 0 ? 1 : -1) * (h * 1700 * kMs + 123457);
    host.drift_ppm = h == 0 ? 0 : (h % 2 == 0 ? 1 : -1) * (10.0 + 7.0 * h);
    host.ip = fmt::format("10.1.{}.{}", h / 200, h % 200 + 1);
    host.preempt_state = h % 2 == 0 ? 0 : 0x100;
    for (int i = 0; i < per_host; ++i) {
      TaskSpec t;
      t.start = (i * 37 % 100) * kUs;
      int kind = i % 4;
      // RPC needs a peer host; with one host, RPC slots become sleepers.
      if (n_hosts == 1 && kind <= 1) kind = 2;
      switch (kind) {
        case 0: {  // RPC client talking to the server of the same slot on the next host
          t.name = fmt::format("cli{}_{}", h, i);
          t.comm = "client";
          std::string peer = fmt::format("srv{}_{}", (h + 1) % n_hosts, i + 1);
          t.script = {
              "repeat 1000000000", "compute " + range(c / 8, c / 4), "send " + peer + " 200..3000",
              "recv " + peer,      "sleep " + range(c / 4, c / 2),   "end"};
          break;
        }
        case 1: {  // RPC server
          t.name = fmt::format("srv{}_{}", h, i);
          t.comm = "server";
          t.port = 8000 + i;
          std::string peer = fmt::format("cli{}_{}", (h + n_hosts - 1) % n_hosts, i - 1);
          t.script = {"repeat 1000000000", "recv " + peer, "compute " + range(c / 10, c / 5),
                      "send " + peer + " 100..1000", "end"};
          break;
        }
        case 2:  // timer-driven worker
          t.name = fmt::format("tick{}_{}", h, i);
          t.comm = "ticker";
          t.script = {"repeat 1000000000", "compute " + range(c / 6, c / 3),
                      "sleep " + range(c / 2, c), "end"};
          break;
        default:  // disk writer
          t.name = fmt::format("disk{}_{}", h, i);
          t.comm = "writer";
          t.script = {"repeat 1000000000", "compute " + range(c / 6, c / 3),
                      "disk " + range(c / 4, c / 2) + " 4096", "end"};
          break;
      }
      host.tasks.push_back(std::move(t));
    }
    s.hosts.push_back(std::move(host));
  }
  // An RPC client whose server slot does not exist (odd split) talks to nobody: drop it.
  for (HostSpec& host : s.hosts) {
    for (TaskSpec& t : host.tasks) {
      if (t.name.rfind("cli", 0) != 0) continue;
      int i = std::stoi(t.name.substr(t.name.find('_') + 1));
      if (i + 1 >= per_host) {
        t.script = {"repeat 1000000000", "compute " + range(c / 6, c / 3),
                    "sleep " + range(c / 2, c), "end"};
      }
    }
  }
}

}  // namespace waitpath::gen
