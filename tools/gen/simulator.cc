#include "tools/gen/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <queue>
#include <stdexcept>

#include "tools/gen/rng.h"
#include "tools/gen/script.h"

namespace waitpath::gen {
namespace {

// The scripted workload starts after the state dump, which LTTng emits at session start.
constexpr Ns kSimStart = 200 * kUs;

// prev_state values of sched_switch (TASK_REPORT encoding of kernels >= 4.14; the
// low bits are the same in older kernels).
constexpr int64_t kStateInterruptible = 1;
constexpr int64_t kStateUninterruptible = 2;
constexpr int64_t kStateZombie = 0x20;

// lttng_statedump_process_state status values (enum lttng_process_status).
constexpr int32_t kStatusWait = 5;

constexpr uint32_t kRwbsWrite = 1u << 0;
constexpr uint32_t kRwbsRead = 1u << 2;
constexpr uint32_t kRwbsSync = 1u << 5;

constexpr int32_t kNetRxSoftirq = 3;  // NET_RX_SOFTIRQ

uint16_t IpChecksum(const PacketInfo& p, uint16_t tot_len) {
  // RFC 1071 over the 20-byte header as the kernel would have written it.
  uint32_t words[10] = {0x4500u,
                        tot_len,
                        p.ip_id,
                        0x4000u,
                        (64u << 8) | 6u,
                        0,
                        static_cast<uint32_t>(p.saddr[0] << 8 | p.saddr[1]),
                        static_cast<uint32_t>(p.saddr[2] << 8 | p.saddr[3]),
                        static_cast<uint32_t>(p.daddr[0] << 8 | p.daddr[1]),
                        static_cast<uint32_t>(p.daddr[2] << 8 | p.daddr[3])};
  uint32_t sum = 0;
  for (uint32_t w : words) sum += w;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xffff);
}

std::array<uint8_t, 4> ParseIp(const std::string& text, const std::string& host) {
  std::array<uint8_t, 4> out{};
  unsigned a, b, c, d;
  char extra;
  if (std::sscanf(text.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &extra) != 4 || a > 255 ||
      b > 255 || c > 255 || d > 255) {
    throw std::runtime_error(fmt::format("host '{}': bad ip '{}'", host, text));
  }
  out = {static_cast<uint8_t>(a), static_cast<uint8_t>(b), static_cast<uint8_t>(c),
         static_cast<uint8_t>(d)};
  return out;
}

}  // namespace

class Simulator::Impl {
 public:
  explicit Impl(const Scenario& s) : s_(s), rng_(s.seed) {}

  SimulationResult Run();

 private:
  enum class Ev : uint8_t { kTaskStep, kSlice, kDispatch, kIrq, kIrqBody, kIrqEnd };
  struct QEv {
    Ns t;
    uint64_t seq;
    Ev type;
    int32_t a;
    uint64_t token;
    bool operator>(const QEv& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };

  enum class Micro : uint8_t {
    kCompute,
    kSleepBlock,
    kDiskIssue,
    kDiskWait,
    kSendSeg,
    kRecv,
    kLock,
    kUnlock,
    kFork,
    kWaitChild,
    kReap,
    kExitNotify,
    kDie,
    kSpanBegin,  // a = index in span_names_
    kSpanEnd,
    kSpanHandoff,  // ref = the task handing over
  };
  struct MicroOp {
    Micro kind;
    int64_t a = 0;  // duration / bytes
    int64_t b = 0;  // flags
    int32_t ref = -1;
  };

  enum class Wait : uint8_t { kNone, kSleep, kDisk, kRecv, kLock, kChild };
  enum class St : uint8_t { kUnborn, kBlocked, kRunnable, kRunning, kDead };

  struct TaskRt {
    St st = St::kUnborn;
    int cpu = -1;      // global cpu index while running
    int last_cpu = 0;  // local index
    std::vector<Op> ops;
    size_t pc = 0;
    std::vector<int64_t> loop_left;
    std::deque<MicroOp> micro;
    Ns remaining = 0;
    Ns run_since = 0;
    uint64_t token = 0;
    bool computing = false;
    Wait wait = Wait::kNone;
    int64_t wait_ref = -1;
    int32_t pending_disk = -1;
    bool disk_done = false;
    bool exited = false;
    uint64_t hrtimer = 0;
    std::vector<int32_t> spans;  // held, innermost last (indices in result_.spans)
  };

  struct Cpu {
    int host = 0;
    int local = 0;
    int32_t idle_task = -1;
    int32_t cur = -1;
    int32_t reserved = -1;
    bool in_irq = false;
    Ns irq_end = 0;
    int32_t interrupted = -1;
    bool preempt_pending = false;
    uint64_t slice_token = 0;
    int32_t napi = -1;  // threaded_rx: this CPU's NAPI poller task
  };

  struct HostRt {
    int first_cpu = 0;
    int cpus = 0;
    std::deque<int32_t> runqueue;
    std::array<uint8_t, 4> ip{};
    uint16_t ip_id = 1;
    int32_t timer_irq_name = -1;
    std::vector<int32_t> disk_irq_name;
    std::vector<int32_t> nic_irq_name;
    uint64_t next_sector = 2048;
  };

  enum class IrqKind : uint8_t { kTimerWake, kTick, kDisk, kNetRx };
  struct IrqReq {
    IrqKind kind;
    int32_t task = -1;
    int64_t ref = -1;
  };

  struct Direction {
    int32_t from = -1;
    int32_t to = -1;
    uint32_t snd_nxt = 0;
    uint32_t rcv_nxt = 0;
    int64_t complete = 0;  // whole messages arrived and not yet received
    Ns last_arrival = 0;
  };
  struct Connection {
    int32_t task[2];
    uint16_t port[2];
    Direction dir[2];  // dir[i]: task[i] -> task[1 - i]
  };
  struct PacketMeta {
    int32_t conn;
    uint8_t side;  // direction index in the connection
    bool last;     // last segment of a message
    bool ack;      // pure ACK
  };

  void Setup();
  void Post(Ns t, Ev type, int32_t a, uint64_t token = 0) {
    queue_.push({t, seq_++, type, a, token});
  }
  void Emit(int g, Ns t, EventKind kind, int32_t a = 0, int32_t b = 0, int64_t c = 0) {
    const Cpu& cpu = cpus_[g];
    result_.hosts[cpu.host].records.push_back(
        {t, static_cast<uint16_t>(cpu.local), kind, 0, a, b, c});
  }
  std::vector<std::string> span_names_;  // of `span` steps, by MicroOp::a
  int32_t IrqName(int host, const std::string& name) {
    auto& names = result_.hosts[host].irq_names;
    names.push_back(name);
    return static_cast<int32_t>(names.size() - 1);
  }

  int32_t Place(int32_t task, Ns t);
  void Wake(int32_t task, Ns t, WakeCause cause, int32_t waker, Ns sent, int ctx_cpu);
  void Block(int32_t task, Ns t, int64_t prev_state, Wait wait, int64_t ref);
  void SwitchTo(int g, Ns t, int32_t prev, int64_t prev_state);
  void StartRunning(int32_t task, int g, Ns t);
  void Advance(int32_t task, Ns t);
  void Expand(int32_t task);
  void SendSegment(int32_t task, int g, Ns t, int32_t conn, int side, int64_t len, bool last);
  int32_t MakePacket(int32_t conn, int side, Ns t, int64_t len, bool last, bool ack,
                     int32_t sender);
  int32_t ConnectionFor(int32_t a, int32_t b);
  int32_t TaskByName(const std::string& name, const std::string& user) const;

  void OnTaskStep(int32_t task, uint64_t token, Ns t);
  void OnSlice(int g, uint64_t token, Ns t);
  void OnDispatch(int g, Ns t);
  void OnIrq(int g, int32_t irq, Ns t);
  void OnIrqBody(int g, int32_t irq, Ns t);
  void OnIrqEnd(int g, Ns t);

  const Scenario& s_;
  Rng rng_;
  SimulationResult result_;
  std::vector<TaskRt> rt_;
  std::vector<Cpu> cpus_;
  std::vector<HostRt> hosts_;
  std::vector<IrqReq> irqs_;
  std::vector<Connection> conns_;
  std::map<std::pair<int32_t, int32_t>, int32_t> conn_index_;
  std::vector<PacketMeta> pkt_meta_;
  std::map<std::string, int32_t> task_by_name_;
  std::map<std::string, int32_t> mutex_index_;                    // "host/name"
  std::vector<std::pair<int32_t, std::deque<int32_t>>> mutexes_;  // owner, waiters
  std::priority_queue<QEv, std::vector<QEv>, std::greater<>> queue_;
  uint64_t seq_ = 0;
};

int32_t Simulator::Impl::TaskByName(const std::string& name, const std::string& user) const {
  auto it = task_by_name_.find(name);
  if (it == task_by_name_.end()) {
    throw std::runtime_error(fmt::format("task '{}' refers to unknown task '{}'", user, name));
  }
  return it->second;
}

void Simulator::Impl::Setup() {
  result_.hosts.resize(s_.hosts.size());
  hosts_.resize(s_.hosts.size());
  // Idle tasks first, then scenario tasks: pre-existing ones get tids before forked ones.
  for (size_t h = 0; h < s_.hosts.size(); ++h) {
    const HostSpec& hs = s_.hosts[h];
    HostRt& host = hosts_[h];
    host.first_cpu = static_cast<int>(cpus_.size());
    host.cpus = hs.cpus;
    host.ip = ParseIp(hs.ip, hs.name);
    host.timer_irq_name = IrqName(static_cast<int>(h), "local_timer");
    for (int c = 0; c < hs.cpus; ++c) {
      TaskInfo idle;
      idle.comm = fmt::format("swapper/{}", c);
      idle.host = static_cast<int>(h);
      idle.idle = true;
      result_.tasks.push_back(idle);
      Cpu cpu;
      cpu.host = static_cast<int>(h);
      cpu.local = c;
      cpu.idle_task = static_cast<int32_t>(result_.tasks.size() - 1);
      cpu.cur = cpu.idle_task;
      cpus_.push_back(cpu);
      host.disk_irq_name.push_back(IrqName(static_cast<int>(h), fmt::format("nvme0q{}", c + 1)));
      host.nic_irq_name.push_back(IrqName(static_cast<int>(h), fmt::format("eth0-TxRx-{}", c)));
    }
    if (hs.threaded_rx) {
      for (int c = 0; c < hs.cpus; ++c) {
        TaskInfo napi;
        napi.comm = fmt::format("napi/eth0-{}", 8192 + c);
        napi.host = static_cast<int>(h);
        napi.tid = 90 + c;
        napi.pid = napi.tid;
        napi.ppid = 2;
        napi.kernel = true;
        result_.tasks.push_back(napi);
        cpus_[static_cast<size_t>(host.first_cpu + c)].napi =
            static_cast<int32_t>(result_.tasks.size() - 1);
      }
    }
  }
  std::vector<int> next_tid(s_.hosts.size(), 1000);
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t h = 0; h < s_.hosts.size(); ++h) {
      for (const TaskSpec& ts : s_.hosts[h].tasks) {
        if (ts.forked != (pass == 1)) continue;
        if (task_by_name_.count(ts.name) != 0) {
          throw std::runtime_error(fmt::format("task name '{}' is used twice", ts.name));
        }
        TaskInfo info;
        info.name = ts.name;
        info.comm = ts.comm;
        info.host = static_cast<int>(h);
        info.tid = ts.tid != 0 ? ts.tid : next_tid[h];
        next_tid[h] = std::max(next_tid[h], info.tid) + 1 + static_cast<int>(rng_.Uniform(0, 40));
        info.pid = info.tid;
        info.ppid = 1;
        info.forked = ts.forked;
        task_by_name_[ts.name] = static_cast<int32_t>(result_.tasks.size());
        result_.tasks.push_back(info);
      }
    }
  }
  rt_.resize(result_.tasks.size());
  result_.timelines.resize(result_.tasks.size());
  // Scripts, thread groups, fork links.
  for (size_t h = 0; h < s_.hosts.size(); ++h) {
    for (const TaskSpec& ts : s_.hosts[h].tasks) {
      int32_t id = task_by_name_.at(ts.name);
      TaskRt& r = rt_[id];
      r.ops = ScriptCompiler::Compile(ts.script, ts.name);
      r.loop_left.assign(r.ops.size(), -1);
      r.hrtimer = 0xffffc90000a03e28ULL + static_cast<uint64_t>(id) * 0x4000ULL;
      if (!ts.process.empty()) {
        int32_t leader = TaskByName(ts.process, ts.name);
        if (result_.tasks[leader].host != static_cast<int>(h)) {
          throw std::runtime_error(
              fmt::format("task '{}': process '{}' is on another host", ts.name, ts.process));
        }
        result_.tasks[id].pid = result_.tasks[leader].tid;
      }
      r.last_cpu = static_cast<int>(id % s_.hosts[h].cpus);
      for (Op& op : r.ops) {
        if (op.target.empty() || op.code == OpCode::kSpan) continue;
        if (op.code == OpCode::kLock || op.code == OpCode::kUnlock) {
          std::string key = fmt::format("{}/{}", h, op.target);
          auto [it, added] = mutex_index_.emplace(key, static_cast<int32_t>(mutexes_.size()));
          if (added) mutexes_.push_back({-1, {}});
          op.ref = it->second;
          continue;
        }
        op.ref = TaskByName(op.target, ts.name);
        const TaskInfo& target = result_.tasks[op.ref];
        if (op.code == OpCode::kSend || op.code == OpCode::kRecv) {
          if (op.ref == id) throw std::runtime_error("task '" + ts.name + "' talks to itself");
          ConnectionFor(id, op.ref);
        } else if (op.code == OpCode::kFork) {
          if (!target.forked || target.host != static_cast<int>(h) || target.parent >= 0) {
            throw std::runtime_error(fmt::format(
                "task '{}' forks '{}', which must be declared forked = true on the same host "
                "and forked only once",
                ts.name, op.target));
          }
          result_.tasks[op.ref].parent = id;
        } else if (op.code == OpCode::kWait) {
          if (!target.forked) {
            throw std::runtime_error(
                fmt::format("task '{}' waits for '{}', which is not forked", ts.name, op.target));
          }
        }
      }
    }
  }
  for (TaskInfo& t : result_.tasks) {
    if (t.parent >= 0) {
      const TaskSpec* spec = nullptr;
      for (const TaskSpec& ts : s_.hosts[t.host].tasks) {
        if (ts.name == t.name) spec = &ts;
      }
      const TaskInfo& parent = result_.tasks[t.parent];
      t.ppid = parent.pid;
      if (spec != nullptr && spec->thread) t.pid = parent.pid;
    }
  }
  // Watched tasks.
  for (TaskInfo& t : result_.tasks) t.watched = !t.idle && !t.kernel && s_.watch.empty();
  for (const std::string& name : s_.watch) {
    result_.tasks[TaskByName(name, "watch")].watched = true;
  }
}

int32_t Simulator::Impl::ConnectionFor(int32_t a, int32_t b) {
  auto key = std::minmax(a, b);
  auto it = conn_index_.find({key.first, key.second});
  if (it != conn_index_.end()) return it->second;
  const TaskInfo& ta = result_.tasks[a];
  const TaskInfo& tb = result_.tasks[b];
  if (ta.host == tb.host) {
    throw std::runtime_error(
        fmt::format("tasks '{}' and '{}' talk over TCP but are on the same host (loopback is not "
                    "simulated)",
                    ta.name, tb.name));
  }
  auto port_of = [&](int32_t t) {
    for (const TaskSpec& ts : s_.hosts[result_.tasks[t].host].tasks) {
      if (ts.name == result_.tasks[t].name) return ts.port;
    }
    return 0;
  };
  Connection c{};
  c.task[0] = key.first;
  c.task[1] = key.second;
  // The server side keeps its listening port; the client gets an ephemeral one.
  int server = port_of(key.first) != 0 && port_of(key.second) == 0 ? 0 : 1;
  int server_port = port_of(c.task[server]);
  if (server_port == 0) server_port = 5000 + c.task[server] % 1000;
  c.port[server] = static_cast<uint16_t>(server_port);
  c.port[1 - server] = static_cast<uint16_t>(33000 + (conns_.size() * 7919) % 28000);
  for (int i = 0; i < 2; ++i) {
    c.dir[i].from = c.task[i];
    c.dir[i].to = c.task[1 - i];
    c.dir[i].snd_nxt = static_cast<uint32_t>(rng_.Next());
  }
  for (int i = 0; i < 2; ++i) c.dir[i].rcv_nxt = c.dir[i].snd_nxt;
  conns_.push_back(c);
  int32_t index = static_cast<int32_t>(conns_.size() - 1);
  conn_index_[{key.first, key.second}] = index;
  return index;
}

int32_t Simulator::Impl::MakePacket(int32_t conn, int side, Ns t, int64_t len, bool last, bool ack,
                                    int32_t sender) {
  Connection& c = conns_[conn];
  Direction& d = c.dir[side];
  Direction& rev = c.dir[1 - side];
  const TaskInfo& from = result_.tasks[d.from];
  const TaskInfo& to = result_.tasks[d.to];
  PacketInfo p;
  p.src_host = from.host;
  p.dst_host = to.host;
  p.saddr = hosts_[from.host].ip;
  p.daddr = hosts_[to.host].ip;
  p.sport = c.port[side];
  p.dport = c.port[1 - side];
  p.seq = d.snd_nxt;
  d.snd_nxt += static_cast<uint32_t>(len);
  // What this side has received from the peer so far.
  p.ack_seq = rev.rcv_nxt;
  p.flags = ack ? 0x010 : (last ? 0x018 : 0x010);
  p.ip_id = hosts_[from.host].ip_id++;
  p.payload = static_cast<uint16_t>(len);
  p.ip_checksum = IpChecksum(p, static_cast<uint16_t>(40 + len));
  p.tcp_checksum = static_cast<uint16_t>(rng_.Next());
  p.tx_skbaddr = 0xffff888000000000ULL | ((rng_.Next() & 0x3fffffffULL) << 8);
  p.rx_skbaddr = 0xffff888000000000ULL | ((rng_.Next() & 0x3fffffffULL) << 8);
  p.sender_task = sender;
  p.sent = t;
  result_.packets.push_back(p);
  pkt_meta_.push_back({conn, static_cast<uint8_t>(side), last, ack});
  int32_t index = static_cast<int32_t>(result_.packets.size() - 1);

  // Wire: latency plus serialization; TCP delivers in order on each direction.
  Ns wire = rng_.Draw(s_.network.latency) +
            static_cast<Ns>(static_cast<double>(len + 54) * 8.0 / s_.network.gbps);
  Ns arrival = std::max(t + wire, d.last_arrival + 1 * kUs);
  d.last_arrival = arrival;
  // RSS: the flow hash picks the receive queue, hence the CPU.
  const HostRt& dst = hosts_[to.host];
  int local = static_cast<int>(
      (static_cast<uint32_t>(c.port[0]) * 2654435761u + static_cast<uint32_t>(c.port[1])) %
      static_cast<uint32_t>(dst.cpus));
  irqs_.push_back({IrqKind::kNetRx, -1, index});
  Post(arrival, Ev::kIrq, dst.first_cpu + local, irqs_.size() - 1);
  return index;
}

int32_t Simulator::Impl::Place(int32_t task, Ns t) {
  // Prefer the task's previous CPU, then any idle one; otherwise queue it.
  TaskRt& r = rt_[task];
  const HostRt& host = hosts_[result_.tasks[task].host];
  for (int k = 0; k < host.cpus; ++k) {
    int local = (r.last_cpu + k) % host.cpus;
    Cpu& cpu = cpus_[host.first_cpu + local];
    if (cpu.cur == cpu.idle_task && cpu.reserved < 0) {
      cpu.reserved = task;
      Post(t + rng_.Uniform(2 * kUs, 8 * kUs), Ev::kDispatch, host.first_cpu + local);
      return local;
    }
  }
  hosts_[result_.tasks[task].host].runqueue.push_back(task);
  return r.last_cpu;
}

void Simulator::Impl::Wake(int32_t task, Ns t, WakeCause cause, int32_t waker, Ns sent,
                           int ctx_cpu) {
  TaskRt& r = rt_[task];
  if (r.st != St::kBlocked) throw std::logic_error("waking a task that is not blocked");
  r.st = St::kRunnable;
  r.wait = Wait::kNone;
  result_.timelines[task].Wake(t, cause, waker, sent);
  int32_t target = Place(task, t);
  Emit(ctx_cpu, t, EventKind::kSchedWaking, task, target);
  Emit(ctx_cpu, t, EventKind::kSchedWakeup, task, target);
}

void Simulator::Impl::Block(int32_t task, Ns t, int64_t prev_state, Wait wait, int64_t ref) {
  TaskRt& r = rt_[task];
  r.st = St::kBlocked;
  r.wait = wait;
  r.wait_ref = ref;
  r.computing = false;
  result_.timelines[task].Enter(t, TaskState::kBlocked);
  int g = r.cpu;
  r.cpu = -1;
  SwitchTo(g, t, task, prev_state);
}

void Simulator::Impl::SwitchTo(int g, Ns t, int32_t prev, int64_t prev_state) {
  Cpu& cpu = cpus_[g];
  HostRt& host = hosts_[cpu.host];
  int32_t next = cpu.idle_task;
  if (!host.runqueue.empty()) {
    next = host.runqueue.front();
    host.runqueue.pop_front();
  }
  Emit(g, t, EventKind::kSchedSwitch, prev, next, prev_state);
  cpu.cur = next;
  ++cpu.slice_token;
  if (next != cpu.idle_task) StartRunning(next, g, t);
}

void Simulator::Impl::StartRunning(int32_t task, int g, Ns t) {
  TaskRt& r = rt_[task];
  Cpu& cpu = cpus_[g];
  r.st = St::kRunning;
  r.cpu = g;
  r.last_cpu = cpu.local;
  result_.timelines[task].Enter(t, TaskState::kRunning);
  Post(t + s_.slice, Ev::kSlice, g, ++cpu.slice_token);
  if (!r.computing) {
    // Return from the kernel to user space after a wake-up takes a little CPU.
    r.computing = true;
    r.remaining = rng_.Uniform(1 * kUs, 3 * kUs);
  }
  r.run_since = t;
  Post(t + r.remaining, Ev::kTaskStep, task, ++r.token);
}

void Simulator::Impl::Expand(int32_t task) {
  TaskRt& r = rt_[task];
  auto push = [&](Micro kind, int64_t a = 0, int64_t b = 0, int32_t ref = -1) {
    r.micro.push_back({kind, a, b, ref});
  };
  while (r.micro.empty()) {
    if (r.pc >= r.ops.size()) {
      push(Micro::kExitNotify);
      push(Micro::kCompute, 3 * kUs);
      push(Micro::kDie);
      return;
    }
    const Op& op = r.ops[r.pc];
    switch (op.code) {
      case OpCode::kRepeat:
        if (r.loop_left[r.pc] < 0) r.loop_left[r.pc] = op.count;
        if (r.loop_left[r.pc] == 0) {
          r.loop_left[r.pc] = -1;
          r.pc = static_cast<size_t>(op.match) + 1;
        } else {
          ++r.pc;
        }
        continue;
      case OpCode::kEnd: {
        size_t head = static_cast<size_t>(op.match);
        if (--r.loop_left[head] > 0) {
          r.pc = head + 1;
        } else {
          r.loop_left[head] = -1;
          ++r.pc;
        }
        continue;
      }
      case OpCode::kExit:
        r.pc = r.ops.size();
        continue;
      case OpCode::kCompute:
        push(Micro::kCompute, rng_.Draw(op.duration));
        break;
      case OpCode::kSleep:
        push(Micro::kCompute, 1 * kUs);
        push(Micro::kSleepBlock, rng_.Draw(op.duration));
        break;
      case OpCode::kDisk:
        push(Micro::kCompute, 2 * kUs);
        push(Micro::kDiskIssue, rng_.Draw(op.duration), rng_.Uniform(op.bytes_lo, op.bytes_hi),
             op.write ? 1 : 0);
        push(Micro::kCompute, 1 * kUs);
        push(Micro::kDiskWait);
        break;
      case OpCode::kSend: {
        int64_t bytes = rng_.Uniform(op.bytes_lo, op.bytes_hi);
        int64_t mss = std::max(1, s_.network.mss);
        push(Micro::kCompute, 2 * kUs);
        for (int64_t off = 0; off < bytes; off += mss) {
          int64_t len = std::min(mss, bytes - off);
          push(Micro::kSendSeg, len, off + len >= bytes ? 1 : 0, op.ref);
          push(Micro::kCompute, 1 * kUs);
        }
        break;
      }
      case OpCode::kRecv:
        push(Micro::kCompute, 1 * kUs);
        push(Micro::kRecv, 0, 0, op.ref);
        break;
      case OpCode::kLock:
        push(Micro::kCompute, 300);
        push(Micro::kLock, 0, 0, op.ref);
        break;
      case OpCode::kUnlock:
        push(Micro::kUnlock, 0, 0, op.ref);
        push(Micro::kCompute, 300);
        break;
      case OpCode::kFork:
        push(Micro::kCompute, 15 * kUs);
        push(Micro::kFork, 0, 0, op.ref);
        push(Micro::kCompute, 5 * kUs);
        break;
      case OpCode::kWait:
        push(Micro::kCompute, 1 * kUs);
        push(Micro::kWaitChild, 0, 0, op.ref);
        push(Micro::kReap, 0, 0, op.ref);
        break;
      // A span event is a user-space call between two bits of the task's own running.
      case OpCode::kSpan:
        span_names_.push_back(op.target);
        push(Micro::kCompute, 500);
        push(Micro::kSpanBegin, static_cast<int64_t>(span_names_.size() - 1));
        push(Micro::kCompute, 500);
        break;
      case OpCode::kEndSpan:
        push(Micro::kCompute, 500);
        push(Micro::kSpanEnd);
        push(Micro::kCompute, 500);
        break;
      case OpCode::kHandoff:
        push(Micro::kCompute, 500);
        push(Micro::kSpanHandoff, 0, 0, op.ref);
        push(Micro::kCompute, 500);
        break;
    }
    ++r.pc;
  }
}

void Simulator::Impl::Advance(int32_t task, Ns t) {
  TaskRt& r = rt_[task];
  const int g = r.cpu;
  const TaskInfo& info = result_.tasks[task];
  for (;;) {
    if (r.micro.empty()) Expand(task);
    MicroOp m = r.micro.front();
    r.micro.pop_front();
    switch (m.kind) {
      case Micro::kCompute:
        if (m.a <= 0) continue;
        r.computing = true;
        r.remaining = m.a;
        r.run_since = t;
        Post(t + m.a, Ev::kTaskStep, task, ++r.token);
        return;
      case Micro::kSleepBlock:
        // hrtimers fire on the CPU that armed them.
        irqs_.push_back({IrqKind::kTimerWake, task, -1});
        Post(t + m.a, Ev::kIrq, g, irqs_.size() - 1);
        Block(task, t, kStateInterruptible, Wait::kSleep, -1);
        return;
      case Micro::kDiskIssue: {
        BlockRequest req;
        req.dev = (259u << 20) | 0u;  // nvme0n1, kernel-internal dev_t (MKDEV(259, 0))
        req.bytes = static_cast<uint32_t>(std::max<int64_t>(512, (m.b + 511) / 512 * 512));
        req.nr_sector = req.bytes / 512;
        HostRt& host = hosts_[info.host];
        req.sector = host.next_sector;
        host.next_sector += req.nr_sector + static_cast<uint64_t>(rng_.Uniform(0, 64)) * 8;
        req.rwbs = (m.ref == 0 ? kRwbsRead : (kRwbsWrite | kRwbsSync));
        req.task = task;
        result_.block_requests.push_back(req);
        int32_t index = static_cast<int32_t>(result_.block_requests.size() - 1);
        Emit(g, t, EventKind::kBlockRqIssue, task, 0, index);
        r.pending_disk = index;
        r.disk_done = false;
        // NVMe completes on the submitting CPU's queue.
        irqs_.push_back({IrqKind::kDisk, task, index});
        Post(t + m.a, Ev::kIrq, g, irqs_.size() - 1);
        continue;
      }
      case Micro::kDiskWait:
        if (r.disk_done) continue;
        Block(task, t, kStateUninterruptible, Wait::kDisk, r.pending_disk);
        return;
      case Micro::kSendSeg: {
        int32_t conn = ConnectionFor(task, m.ref);
        int side = conns_[conn].task[0] == task ? 0 : 1;
        int32_t p = MakePacket(conn, side, t, m.a, m.b != 0, false, task);
        Emit(g, t, EventKind::kNetDevQueue, 0, 0, p);
        continue;
      }
      case Micro::kRecv: {
        int32_t conn = ConnectionFor(task, m.ref);
        int side = conns_[conn].task[0] == m.ref ? 0 : 1;  // direction peer -> task
        Direction& d = conns_[conn].dir[side];
        if (d.complete > 0) {
          --d.complete;
          continue;
        }
        Block(task, t, kStateInterruptible, Wait::kRecv, conn * 2 + side);
        return;
      }
      case Micro::kLock: {
        auto& [owner, waiters] = mutexes_[m.ref];
        if (owner < 0) {
          owner = task;
          continue;
        }
        waiters.push_back(task);
        Block(task, t, kStateInterruptible, Wait::kLock, m.ref);
        return;
      }
      case Micro::kUnlock: {
        auto& [owner, waiters] = mutexes_[m.ref];
        if (owner != task) {
          throw std::runtime_error(
              fmt::format("task '{}' unlocks a mutex it does not hold", info.name));
        }
        owner = -1;
        if (!waiters.empty()) {
          // Futex hand-off: the unlocker wakes the first waiter, which now owns it.
          owner = waiters.front();
          waiters.pop_front();
          Wake(owner, t, WakeCause::kTask, task, 0, g);
        }
        continue;
      }
      case Micro::kSpanBegin: {
        SpanInfo span;
        span.id = 0x100 + result_.spans.size();
        span.name = span_names_[static_cast<size_t>(m.a)];
        span.host = info.host;
        span.task = task;
        span.begin = t;
        if (!r.spans.empty()) {
          const SpanInfo& parent = result_.spans[static_cast<size_t>(r.spans.back())];
          span.parent = parent.id;
          span.trace_hi = parent.trace_hi;
          span.trace_lo = parent.trace_lo;
        } else {
          span.trace_hi = 0x7a17'0000'0000'0000ULL | static_cast<uint64_t>(info.host);
          span.trace_lo = 0x1000 + result_.spans.size();
        }
        const auto index = static_cast<int32_t>(result_.spans.size());
        result_.spans.push_back(std::move(span));
        r.spans.push_back(index);
        Emit(g, t, EventKind::kSpanBegin, task, 0, index);
        continue;
      }
      case Micro::kSpanEnd: {
        if (r.spans.empty()) {
          throw std::runtime_error(fmt::format("task '{}': end_span without a span", info.name));
        }
        const int32_t index = r.spans.back();
        r.spans.pop_back();
        SpanInfo& span = result_.spans[static_cast<size_t>(index)];
        span.end = t;
        span.marks.push_back({task, t});
        Emit(g, t, EventKind::kSpanEnd, task, 0, index);
        continue;
      }
      case Micro::kSpanHandoff: {
        std::vector<int32_t>& from = rt_[m.ref].spans;
        if (from.empty()) {
          throw std::runtime_error(fmt::format("task '{}': handoff from '{}', which holds no span",
                                               info.name, result_.tasks[m.ref].name));
        }
        const int32_t index = from.back();
        from.pop_back();
        r.spans.push_back(index);
        result_.spans[static_cast<size_t>(index)].marks.push_back({task, t});
        Emit(g, t, EventKind::kSpanHandoff, task, 0, index);
        continue;
      }
      case Micro::kFork: {
        int32_t child = m.ref;
        if (rt_[child].st != St::kUnborn) {
          throw std::runtime_error(
              fmt::format("task '{}' forked twice", result_.tasks[child].name));
        }
        result_.timelines[child] = TaskTimeline(t, TaskState::kPreempted);
        rt_[child].st = St::kRunnable;
        rt_[child].last_cpu = cpus_[g].local;
        Emit(g, t, EventKind::kSchedProcessFork, task, child);
        int32_t target = Place(child, t);
        Emit(g, t, EventKind::kSchedWakeupNew, child, target);
        continue;
      }
      case Micro::kWaitChild:
        Emit(g, t, EventKind::kSchedProcessWait, task, 0, result_.tasks[m.ref].tid);
        if (rt_[m.ref].exited) continue;
        Block(task, t, kStateInterruptible, Wait::kChild, m.ref);
        return;
      case Micro::kReap:
        Emit(g, t, EventKind::kSchedProcessFree, m.ref);
        continue;
      case Micro::kExitNotify: {
        Emit(g, t, EventKind::kSchedProcessExit, task);
        r.exited = true;
        int32_t parent = info.parent;
        if (parent >= 0 && rt_[parent].st == St::kBlocked && rt_[parent].wait == Wait::kChild &&
            rt_[parent].wait_ref == task) {
          // do_notify_parent() wakes the parent from the exiting child's context.
          Wake(parent, t, WakeCause::kTask, task, 0, g);
        }
        continue;
      }
      case Micro::kDie:
        r.st = St::kDead;
        r.computing = false;
        result_.timelines[task].Finish(t);
        r.cpu = -1;
        SwitchTo(g, t, task, kStateZombie);
        return;
    }
  }
}

void Simulator::Impl::OnTaskStep(int32_t task, uint64_t token, Ns t) {
  TaskRt& r = rt_[task];
  if (token != r.token || r.st != St::kRunning || !r.computing) return;
  r.computing = false;
  r.remaining = 0;
  Advance(task, t);
}

void Simulator::Impl::OnSlice(int g, uint64_t token, Ns t) {
  Cpu& cpu = cpus_[g];
  if (token != cpu.slice_token || cpu.cur == cpu.idle_task) return;
  if (cpu.in_irq) {
    Post(cpu.irq_end, Ev::kSlice, g, token);
    return;
  }
  if (hosts_[cpu.host].runqueue.empty()) {
    Post(t + s_.slice, Ev::kSlice, g, ++cpu.slice_token);
    return;
  }
  // The scheduler tick finds the slice used up and others waiting: preempt at its end.
  irqs_.push_back({IrqKind::kTick, -1, -1});
  OnIrq(g, static_cast<int32_t>(irqs_.size() - 1), t);
}

void Simulator::Impl::OnDispatch(int g, Ns t) {
  Cpu& cpu = cpus_[g];
  if (cpu.in_irq) {
    Post(cpu.irq_end, Ev::kDispatch, g);
    return;
  }
  int32_t task = cpu.reserved;
  cpu.reserved = -1;
  if (task < 0) return;
  if (cpu.cur != cpu.idle_task) {
    hosts_[cpu.host].runqueue.push_back(task);
    return;
  }
  Emit(g, t, EventKind::kSchedSwitch, cpu.idle_task, task, 0);
  cpu.cur = task;
  StartRunning(task, g, t);
}

void Simulator::Impl::OnIrq(int g, int32_t irq, Ns t) {
  Cpu& cpu = cpus_[g];
  if (cpu.in_irq) {
    // Interrupts do not nest in this model: a pending one runs when the current one ends.
    Post(cpu.irq_end, Ev::kIrq, g, static_cast<uint64_t>(irq));
    return;
  }
  if (cpu.cur != cpu.idle_task) {
    TaskRt& r = rt_[cpu.cur];
    if (r.computing) {
      r.remaining = std::max<Ns>(0, r.remaining - (t - r.run_since));
      ++r.token;
    }
    result_.timelines[cpu.cur].Enter(t, TaskState::kInterrupted);
    cpu.interrupted = cpu.cur;
  }
  cpu.in_irq = true;
  const IrqReq& req = irqs_[irq];
  const HostRt& host = hosts_[cpu.host];
  Ns body = 0;
  switch (req.kind) {
    case IrqKind::kTimerWake:
      Emit(g, t, EventKind::kHrtimerExpireEntry, 0, kHrtimerWakeup,
           static_cast<int64_t>(rt_[req.task].hrtimer));
      body = 400;
      break;
    case IrqKind::kTick:
      Emit(g, t, EventKind::kHrtimerExpireEntry, 0, kTickSchedTimer,
           static_cast<int64_t>(0xffff88807fc1e8c0ULL +
                                static_cast<uint64_t>(cpu.local) * 0x40000ULL));
      body = 600;
      break;
    case IrqKind::kDisk:
      Emit(g, t, EventKind::kIrqHandlerEntry, 130 + cpu.local, host.disk_irq_name[cpu.local]);
      Emit(g, t + 500, EventKind::kBlockRqComplete, 0, 0, req.ref);
      body = 800;
      break;
    case IrqKind::kNetRx:
      Emit(g, t, EventKind::kIrqHandlerEntry, 150 + cpu.local, host.nic_irq_name[cpu.local]);
      if (cpu.napi >= 0) {
        // Threaded NAPI: the hard irq wakes the poller, which takes the CPU (the interrupted
        // task runs again from the irq's exit until then, and is preempted meanwhile).
        result_.timelines[cpu.napi].Wake(t + 300, WakeCause::kIrq, -1, 0);
        Emit(g, t + 300, EventKind::kSchedWaking, cpu.napi, cpu.local);
        Emit(g, t + 700, EventKind::kIrqHandlerExit, 150 + cpu.local, 1);
        if (cpu.interrupted >= 0)
          result_.timelines[cpu.interrupted].Enter(t + 700, TaskState::kRunning);
        Emit(g, t + 1000, EventKind::kSchedSwitch, cpu.cur, cpu.napi,
             cpu.cur == cpu.idle_task ? 0 : s_.hosts[cpu.host].preempt_state);
        if (cpu.interrupted >= 0)
          result_.timelines[cpu.interrupted].Enter(t + 1000, TaskState::kPreempted);
        result_.timelines[cpu.napi].Enter(t + 1000, TaskState::kRunning);
        body = 1200;
        break;
      }
      Emit(g, t + 300, EventKind::kSoftirqRaise, kNetRxSoftirq);
      Emit(g, t + 700, EventKind::kIrqHandlerExit, 150 + cpu.local, 1);
      Emit(g, t + 1000, EventKind::kSoftirqEntry, kNetRxSoftirq);
      body = 1500;
      break;
  }
  cpu.irq_end = t + body;  // provisional, extended by the body
  Post(t + body, Ev::kIrqBody, g, static_cast<uint64_t>(irq));
}

void Simulator::Impl::OnIrqBody(int g, int32_t irq, Ns t) {
  Cpu& cpu = cpus_[g];
  const IrqReq& req = irqs_[irq];
  Ns tail = 0;
  switch (req.kind) {
    case IrqKind::kTimerWake: {
      TaskRt& r = rt_[req.task];
      if (r.st == St::kBlocked && r.wait == Wait::kSleep) {
        Wake(req.task, t, WakeCause::kTimer, -1, 0, g);
      }
      Emit(g, t + 600, EventKind::kHrtimerExpireExit, 0, 0,
           static_cast<int64_t>(rt_[req.task].hrtimer));
      tail = 600;
      break;
    }
    case IrqKind::kTick:
      cpu.preempt_pending = true;
      Emit(g, t + 400, EventKind::kHrtimerExpireExit, 0, 0,
           static_cast<int64_t>(0xffff88807fc1e8c0ULL +
                                static_cast<uint64_t>(cpu.local) * 0x40000ULL));
      tail = 400;
      break;
    case IrqKind::kDisk: {
      TaskRt& r = rt_[req.task];
      if (r.pending_disk == req.ref) {
        r.disk_done = true;
        if (r.st == St::kBlocked && r.wait == Wait::kDisk) {
          Wake(req.task, t, WakeCause::kDisk, -1, 0, g);
        }
      }
      Emit(g, t + 700, EventKind::kIrqHandlerExit, 130 + cpu.local, 1);
      tail = 700;
      break;
    }
    case IrqKind::kNetRx: {
      int32_t p = static_cast<int32_t>(req.ref);
      result_.packets[p].arrived = t;
      Emit(g, t, EventKind::kNetIfReceiveSkb, 0, 0, p);
      const PacketMeta meta = pkt_meta_[p];
      Connection& c = conns_[meta.conn];
      Direction& d = c.dir[meta.side];
      tail = 1200;
      if (!meta.ack) {
        d.rcv_nxt = result_.packets[p].seq + result_.packets[p].payload;
        if (meta.last) {
          ++d.complete;
          TaskRt& r = rt_[d.to];
          if (r.st == St::kBlocked && r.wait == Wait::kRecv &&
              r.wait_ref == meta.conn * 2 + meta.side) {
            --d.complete;
            const PacketInfo& pkt = result_.packets[p];
            Wake(d.to, t, WakeCause::kPacket, pkt.sender_task, pkt.sent, g);
          }
          if (s_.network.acks) {
            // The receiving stack acknowledges from softirq context.
            int32_t a = MakePacket(meta.conn, 1 - meta.side, t + 500, 0, false, true, -1);
            Emit(g, t + 500, EventKind::kNetDevQueue, 0, 0, a);
            tail = 1600;
          }
        }
      }
      tail -= 200;
      if (cpu.napi >= 0) {
        // The poller sleeps again; the CPU goes back to the task it took it from.
        Emit(g, t + tail, EventKind::kSchedSwitch, cpu.napi, cpu.cur, 1);
        result_.timelines[cpu.napi].Enter(t + tail, TaskState::kBlocked);
        break;
      }
      Emit(g, t + tail, EventKind::kSoftirqExit, kNetRxSoftirq);
      break;
    }
  }
  // The interrupted task resumes at the context's last exit event: an observer of the trace
  // can place every boundary of the truth on an event.
  cpu.irq_end = t + tail;
  Post(t + tail, Ev::kIrqEnd, g);
}

void Simulator::Impl::OnIrqEnd(int g, Ns t) {
  Cpu& cpu = cpus_[g];
  cpu.in_irq = false;
  int32_t task = cpu.interrupted;
  cpu.interrupted = -1;
  bool preempt = cpu.preempt_pending;
  cpu.preempt_pending = false;
  if (task < 0) return;
  TaskRt& r = rt_[task];
  HostRt& host = hosts_[cpu.host];
  if (preempt && !host.runqueue.empty()) {
    r.st = St::kRunnable;
    r.cpu = -1;
    result_.timelines[task].Enter(t, TaskState::kPreempted);
    host.runqueue.push_back(task);
    SwitchTo(g, t, task, s_.hosts[cpu.host].preempt_state);
    return;
  }
  result_.timelines[task].Enter(t, TaskState::kRunning);
  r.run_since = t;
  Post(t + r.remaining, Ev::kTaskStep, task, ++r.token);
  if (preempt) Post(t + s_.slice, Ev::kSlice, g, ++cpu.slice_token);
}

SimulationResult Simulator::Impl::Run() {
  Setup();
  // State dump on CPU 0 of every host; every pre-existing task sits in a sleep that ends
  // at its start time, so each one enters the trace through an ordinary timer wake-up.
  for (size_t h = 0; h < s_.hosts.size(); ++h) {
    int g0 = hosts_[h].first_cpu;
    Ns t = 10 * kUs;
    Emit(g0, t, EventKind::kStatedumpStart);
    std::vector<Ns> dumped(result_.tasks.size(), 0);
    for (size_t i = 0; i < result_.tasks.size(); ++i) {
      const TaskInfo& info = result_.tasks[i];
      if (info.host != static_cast<int>(h) || info.idle || info.forked) continue;
      t += 700;
      dumped[i] = t;
      Emit(g0, t, EventKind::kStatedumpProcessState, static_cast<int32_t>(i), kStatusWait,
           rt_[i].last_cpu);
    }
    Emit(g0, t + 700, EventKind::kStatedumpEnd);
    for (size_t i = 0; i < result_.tasks.size(); ++i) {
      const TaskInfo& info = result_.tasks[i];
      if (info.host == static_cast<int>(h) && info.kernel) {
        result_.timelines[i] = TaskTimeline(dumped[i], TaskState::kBlocked);
        rt_[i].st = St::kBlocked;
      }
    }
    for (const TaskSpec& ts : s_.hosts[h].tasks) {
      if (ts.forked) continue;
      int32_t id = task_by_name_.at(ts.name);
      // Its observed life starts at its state dump entry, the first event naming it.
      result_.timelines[id] = TaskTimeline(dumped[static_cast<size_t>(id)], TaskState::kBlocked);
      rt_[id].st = St::kBlocked;
      rt_[id].wait = Wait::kSleep;
      irqs_.push_back({IrqKind::kTimerWake, id, -1});
      Post(kSimStart + ts.start, Ev::kIrq, hosts_[h].first_cpu + rt_[id].last_cpu,
           irqs_.size() - 1);
    }
  }
  while (!queue_.empty() && queue_.top().t < s_.duration) {
    QEv e = queue_.top();
    queue_.pop();
    switch (e.type) {
      case Ev::kTaskStep:
        OnTaskStep(e.a, e.token, e.t);
        break;
      case Ev::kSlice:
        OnSlice(e.a, e.token, e.t);
        break;
      case Ev::kDispatch:
        OnDispatch(e.a, e.t);
        break;
      case Ev::kIrq:
        OnIrq(e.a, static_cast<int32_t>(e.token), e.t);
        break;
      case Ev::kIrqBody:
        OnIrqBody(e.a, static_cast<int32_t>(e.token), e.t);
        break;
      case Ev::kIrqEnd:
        OnIrqEnd(e.a, e.t);
        break;
    }
  }
  result_.end = s_.duration;
  // Tasks still alive are observed until their host's last event.
  std::vector<Ns> host_last(result_.hosts.size(), 0);
  for (size_t h = 0; h < result_.hosts.size(); ++h) {
    for (const TraceRecord& rec : result_.hosts[h].records)
      host_last[h] = std::max(host_last[h], rec.t);
  }
  for (size_t i = 0; i < rt_.size(); ++i) {
    if (rt_[i].st != St::kDead && rt_[i].st != St::kUnborn)
      result_.timelines[i].Finish(host_last[static_cast<size_t>(result_.tasks[i].host)]);
  }
  return std::move(result_);
}

Simulator::Simulator(const Scenario& scenario) : impl_(std::make_unique<Impl>(scenario)) {}
Simulator::~Simulator() = default;
SimulationResult Simulator::Run() {
  return impl_->Run();
}

}  // namespace waitpath::gen
