#include "fleet/nats_bus.h"

#include <fmt/format.h>
#include <nats/nats.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>

namespace waitpath {

namespace {

// How long a JetStream API call (stream info, a consumer made) waits for its answer.
constexpr int64_t kApiWaitMs = 2000;
// A publish not acknowledged within kAckWaitMs, or refused (no stream leader yet), is sent again
// kRetryEveryMs later, up to kRetries times: a cluster's election (seconds) is outlasted.
constexpr int64_t kAckWaitMs = 5000;
constexpr int64_t kRetryEveryMs = 500;
constexpr int kRetries = 20;
constexpr const char* kTryHeader = "Waitpath-Try";
// How often the bus's thread looks for what to send again and what to make again.
constexpr int kKeepEveryMs = 50;
// How long a lost consumer's subscription may take to drain before it is closed anyway.
constexpr int64_t kDrainMs = 5000;
// Closing: the whole connection's drain (the shard's Flush has already waited for the acks).
constexpr int64_t kCloseDrainMs = 1000;
// Publishes in flight at once (unacknowledged, or waiting to be sent again).
constexpr size_t kMaxPending = 65536;

// WAITPATH_BUS_DEBUG=1: one stderr line per event of the connection, its subscriptions and its
// publishes' retries (what happened around a cluster node's loss); =2 also one per message
// delivered.
int DebugLevel() {
  static const int level = [] {
    const char* v = std::getenv("WAITPATH_BUS_DEBUG");
    return v ? std::atoi(v) : 0;
  }();
  return level;
}
bool DebugOn() {
  return DebugLevel() > 0;
}

template <typename... Args>
void Debug(fmt::format_string<Args...> format, Args&&... args) {
  if (!DebugOn()) return;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
  fmt::print(stderr, "bus {}.{:03}: {}\n", ms / 1000 % 100000, ms % 1000,
             fmt::format(format, std::forward<Args>(args)...));
}

std::string StatusText(natsStatus s) {
  const char* last = nats_GetLastError(nullptr);
  return last && *last ? std::string(last) : std::string(natsStatus_GetText(s));
}

}  // namespace

std::unique_ptr<NatsBus> NatsBus::Connect(const BusOptions& options, std::string* error) {
  std::unique_ptr<NatsBus> bus(new NatsBus());
  bus->options_ = options;
  std::vector<std::string> urls;
  std::stringstream in(options.urls);
  for (std::string url; std::getline(in, url, ',');) {
    if (url.rfind("nats://", 0) != 0) {
      *error = fmt::format("--bus: {} is not nats://HOST:PORT", url);
      return nullptr;
    }
    urls.push_back(url);
  }
  if (urls.empty()) {
    *error = "--bus: give nats://HOST:PORT";
    return nullptr;
  }
  std::vector<const char*> servers;
  for (const std::string& u : urls) servers.push_back(u.c_str());
  natsOptions* opts = nullptr;
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK)
    s = natsOptions_SetServers(opts, servers.data(), static_cast<int>(servers.size()));
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, options.connect_timeout_ms);
  // Forever, every 250 ms: a bus that comes back is used again; meanwhile nothing waits on it.
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, 250);
  // Every message leaves at once, not when nats.c's flusher gets to it: a cross-shard query's round
  // trip 0.3 ms instead of 2 ms, an edge's delivery 0.17 ms instead of 1 ms at 20,000 edges/s,
  // for ~30 % more CPU per edge at that rate (docs/scale.md, "Figures").
  if (s == NATS_OK) s = natsOptions_SetSendAsap(opts, true);
  // With a callback, a first connection that fails goes on in the background (without one,
  // Connect itself would retry forever): the shard starts, and Maintain makes the stream and the
  // subscriptions once connected.
  if (s == NATS_OK) {
    s = natsOptions_SetRetryOnFailedConnect(
        opts, true, [](natsConnection*, void*) {}, nullptr);
  }
  if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(opts, &NatsBus::OnDisconnected, bus.get());
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(opts, &NatsBus::OnReconnected, bus.get());
  // A consumer lost without our connection noticing: it lived on a cluster node that died (its
  // heartbeats stop), or its last messages were lost while our connection moved to another
  // node (a heartbeat says it sent more than we got). Without an error handler the client
  // would not watch the heartbeats at all.
  if (s == NATS_OK) {
    s = natsOptions_SetErrorHandler(
        opts,
        [](natsConnection*, natsSubscription* sub, natsStatus err, void* arg) {
          // (The subscription may be freed by now: libnats 3.4.1 does not hold it for us.)
          Debug("client: {} (subscription {})", natsStatus_GetText(err),
                static_cast<const void*>(sub));
          if (sub && (err == NATS_MISSED_HEARTBEAT || err == NATS_MISMATCH))
            static_cast<NatsBus*>(arg)->MarkLost(sub);
        },
        bus.get());
  }
  if (s == NATS_OK) s = natsConnection_Connect(&bus->conn_, opts);
  natsOptions_Destroy(opts);
  // With retry-on-failed-connect, "not yet connected" is not an error: it keeps trying.
  if (s != NATS_OK && s != NATS_NOT_YET_CONNECTED) {
    *error = fmt::format("cannot connect to the bus {}: {}", options.urls, StatusText(s));
    return nullptr;
  }
  // A publish the stream did not acknowledge (no stream, a node lost mid-flight) is counted
  // when its negative ack or its error comes.
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.ErrHandler = &NatsBus::OnPublishFailed;
  jo.PublishAsync.ErrHandlerClosure = bus.get();
  // Unacknowledged publishes kept at once: a bus away for a while (seconds of a shard's edges);
  // past that, a publish waits at most 1 ms for room, then fails (counted) rather than hold
  // the engine.
  jo.PublishAsync.MaxPending = kMaxPending;
  jo.PublishAsync.StallWait = 1;
  // JetStream API calls (the stream's info, a consumer made) run on the bus's thread (Keep);
  // while a cluster elects a stream leader they get no answer: each waits at most this long,
  // and is tried again a second later.
  jo.Wait = kApiWaitMs;
  char* nuid = nullptr;
  if (natsInbox_Create(&nuid) == NATS_OK) {
    bus->id_prefix_ = std::string(nuid) + ".";
    natsInbox_Destroy(nuid);
  }
  if (natsConnection_JetStream(&bus->js_, bus->conn_, &jo) != NATS_OK) {
    *error = "cannot open a JetStream context on the bus";
    return nullptr;
  }
  std::string why;
  if (bus->connected()) bus->EnsureStream(&why);
  bus->keeper_ = std::thread([b = bus.get()] { b->Keep(); });
  return bus;
}

// The bus's own thread: what must go on while the engine thread waits (for an edge, an answer),
// since that may be what it waits for: publishes sent again, lost consumers made again.
void NatsBus::Keep() {
  std::unique_lock<std::mutex> lock(keeper_mu_);
  while (!stop_) {
    lock.unlock();
    Maintain();
    lock.lock();
    keeper_cv_.wait_for(lock, std::chrono::milliseconds(kKeepEveryMs));
  }
}

void NatsBus::Close() {
  if (closed_) return;
  closed_ = true;
  {
    std::lock_guard<std::mutex> lock(keeper_mu_);
    stop_ = true;
  }
  keeper_cv_.notify_all();
  if (keeper_.joinable()) keeper_.join();
  if (!conn_) return;
  // Drained, not unsubscribed one by one (the libnats 3.4.1 race of Drop): every subscription
  // is drained, then what was published is flushed, then the connection closes by itself;
  // waited for a little longer than its own bound. Not connected, it is closed at once.
  if (natsConnection_DrainTimeout(conn_, kCloseDrainMs) == NATS_OK) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kCloseDrainMs + 500);
    while (!natsConnection_IsClosed(conn_) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  natsConnection_Close(conn_);
}

NatsBus::~NatsBus() {
  Close();
  {
    std::lock_guard<std::mutex> lock(retry_mu_);
    for (const Retry& r : retries_) natsMsg_Destroy(r.msg);
    retries_.clear();
  }
  for (auto& sub : subs_) {
    if (sub->sub) natsSubscription_Destroy(sub->sub);
  }
  for (natsSubscription* gone : draining_) natsSubscription_Destroy(gone);
  if (js_) jsCtx_Destroy(js_);
  if (conn_) natsConnection_Destroy(conn_);
}

bool NatsBus::connected() const {
  return natsConnection_Status(conn_) == NATS_CONN_STATUS_CONNECTED;
}

bool NatsBus::DownLongerThan(std::chrono::milliseconds grace) const {
  if (connected()) return false;
  const int64_t since = down_since_ns_;
  if (since == 0) return true;  // never connected yet
  return std::chrono::steady_clock::now().time_since_epoch().count() - since >
         std::chrono::duration_cast<std::chrono::nanoseconds>(grace).count();
}

// Creates the stream, or keeps it as it is when it exists (another shard made it).
bool NatsBus::EnsureStream(std::string* error) {
  if (stream_ready_) return true;
  const char* subjects[] = {"waitpath.edge.>", "waitpath.sync.>"};
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = options_.stream.c_str();
  cfg.Subjects = subjects;
  cfg.SubjectsLen = 2;
  cfg.Storage = js_FileStorage;  // a restarted server still has what it acknowledged
  cfg.MaxAge = options_.max_age_ns;
  cfg.Replicas = options_.replicas;
  cfg.Discard = js_DiscardOld;
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&si, js_, &cfg, nullptr, &jerr);
  if (s != NATS_OK) {
    // Exists with another configuration (another shard's age limit): use it as it is.
    s = js_GetStreamInfo(&si, js_, options_.stream.c_str(), nullptr, &jerr);
  }
  if (s != NATS_OK) {
    *error =
        fmt::format("cannot create the JetStream stream {}: {}", options_.stream, StatusText(s));
    Debug("{}", *error);
    return false;
  }
  // A server that lost its store numbers from 1 again: resuming after a sequence it never
  // reached would miss everything up to it (and the subscription's consumer would resume
  // there by itself): such a subscription starts again, `catch_up_ns` back.
  for (auto& sub : subs_) {
    if (!sub->handler || sub->next_seq <= si->State.LastSeq + 1) continue;
    Debug("the stream ends at {}, before {}: {} starts again", si->State.LastSeq,
          sub->next_seq.load(), sub->subject);
    Drop(*sub);
    sub->next_seq = 0;
  }
  jsStreamInfo_Destroy(si);
  stream_ready_ = true;
  return true;
}

bool NatsBus::Publish(const std::string& subject, const void* data, size_t size) {
  // While reconnecting (a server restarting, a cluster node lost) the client keeps what is
  // published in its reconnect buffer (8 MB) and sends it once connected: not lost.
  if (natsConnection_Status(conn_) == NATS_CONN_STATUS_CLOSED) {
    ++counters_.publish_failed;
    return false;
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = kAckWaitMs;  // the ack's bound: then sent again (OnPublishFailed)
  const std::string id = id_prefix_ + std::to_string(++published_ids_);
  po.MsgId = id.c_str();  // deduplicated by the stream
  if (js_PublishAsync(js_, subject.c_str(), data, static_cast<int>(size), &po) != NATS_OK) {
    ++counters_.publish_failed;
    return false;
  }
  ++counters_.published;
  return true;
}

// From the client's thread that takes the acks: a publish the stream did not acknowledge (no
// stream leader while a cluster elects one: "no responders" at once; the node holding it gone;
// the ack's 5 s passed). Kept, and sent again (Keep) after kRetryEveryMs with the same message
// id, which the stream deduplicates: stored once whether an earlier try was or not. Sending it
// again here would spend every try within the same millisecond of an election.
void NatsBus::OnPublishFailed(jsCtx*, jsPubAckErr* pae, void* arg) {
  auto* bus = static_cast<NatsBus*>(arg);
  const char* tries = nullptr;
  const int n =
      natsMsgHeader_Get(pae->Msg, kTryHeader, &tries) == NATS_OK && tries ? std::atoi(tries) : 0;
  Debug("publish not acknowledged ({}, {}), try {}", natsStatus_GetText(pae->Err),
        pae->ErrText ? pae->ErrText : "", n);
  if (n < kRetries &&
      natsMsgHeader_Set(pae->Msg, kTryHeader, std::to_string(n + 1).c_str()) == NATS_OK) {
    std::lock_guard<std::mutex> lock(bus->retry_mu_);
    if (bus->retries_.size() < kMaxPending) {
      bus->retries_.push_back(
          {pae->Msg, std::chrono::steady_clock::now() + std::chrono::milliseconds(kRetryEveryMs)});
      pae->Msg = nullptr;  // ours now (the client destroys it otherwise)
      return;
    }
  }
  ++bus->counters_.publish_failed;
}

// The publishes due to be sent again (the bus's thread; Flush).
void NatsBus::Resend() {
  const auto now = std::chrono::steady_clock::now();
  std::vector<natsMsg*> due;
  {
    std::lock_guard<std::mutex> lock(retry_mu_);
    while (!retries_.empty() && retries_.front().due <= now) {
      due.push_back(retries_.front().msg);
      retries_.pop_front();
    }
  }
  for (natsMsg* msg : due) {
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = kAckWaitMs;
    if (js_PublishMsgAsync(js_, &msg, &po) != NATS_OK) {
      ++counters_.publish_failed;
      natsMsg_Destroy(msg);
    }
  }
}

size_t NatsBus::retrying() const {
  std::lock_guard<std::mutex> lock(retry_mu_);
  return retries_.size();
}

void NatsBus::Flush(int64_t timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  // Until every publish is acknowledged, those sent again included.
  while (std::chrono::steady_clock::now() < deadline) {
    Resend();
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 50;
    if (js_PublishAsyncComplete(js_, &po) == NATS_OK && retrying() == 0) return;
  }
}

void NatsBus::OnMessage(natsConnection*, natsSubscription* nsub, natsMsg* msg, void* arg) {
  auto* consumer = static_cast<Consumer*>(arg);
  Subscription& sub = *consumer->owner;
  jsMsgMetaData* meta = nullptr;
  if (consumer->lost || natsMsg_GetMetaData(&meta, msg) != NATS_OK) {
    natsMsg_Destroy(msg);
    return;
  }
  const uint64_t delivery = meta->Sequence.Consumer, stream_seq = meta->Sequence.Stream;
  jsMsgMetaData_Destroy(meta);
  if (delivery != consumer->next_delivery) {
    // A message this consumer sent never arrived (sent while our connection moved from a
    // dead node to another; without acks it is not sent again): a new consumer starts right
    // after the last message delivered, and this one's later messages are ignored, so that
    // the handler sees every message once, in order.
    Debug("{}: message {} of its consumer came, {} expected", sub.subject, delivery,
          consumer->next_delivery);
    consumer->lost = true;
    sub.bus->MarkLost(nsub);
    natsMsg_Destroy(msg);
    return;
  }
  ++consumer->next_delivery;
  // Delivered already, dropped and counted: the message an old consumer was delivering when
  // a new one took over from the same stream sequence; or the same publish stored twice (its
  // message id: sent again across a stream leader's election, the deduplication of nats-server
  // 2.9 missed it in about one run of twenty of BusCluster.NodeKilledLosesNoEdge).
  uint64_t next = sub.next_seq.load();
  bool again = false;
  do {
    again = stream_seq < next;
  } while (!again && !sub.next_seq.compare_exchange_weak(next, stream_seq + 1));
  const char* id = nullptr;
  if (!again && natsMsgHeader_Get(msg, "Nats-Msg-Id", &id) == NATS_OK && id)
    again = !sub.bus->FirstDelivery(id);
  if (again) {
    Debug("{}: stream sequence {} delivered again", sub.subject, stream_seq);
    ++sub.bus->counters_.duplicates;
    natsMsg_Destroy(msg);
    return;
  }
  ++sub.bus->counters_.received;
  if (DebugLevel() > 1) {
    Debug("{}: stream sequence {}, consumer's {}, {} bytes", sub.subject, stream_seq, delivery,
          natsMsg_GetDataLength(msg));
  }
  sub.handler(
      natsMsg_GetSubject(msg),
      std::string_view(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg))));
  natsMsg_Destroy(msg);
}

bool NatsBus::FirstDelivery(const char* id) {
  std::lock_guard<std::mutex> lock(ids_mu_);
  if (!delivered_ids_.emplace(id).second) return false;
  delivered_order_.emplace_back(id);
  // The last kMaxPending: a publish is sent again within 10 s of the first try.
  if (delivered_order_.size() > kMaxPending) {
    delivered_ids_.erase(delivered_order_.front());
    delivered_order_.pop_front();
  }
  return true;
}

void NatsBus::MarkLost(natsSubscription* sub) {
  std::lock_guard<std::mutex> lock(lost_mu_);
  lost_.push_back(sub);
}

void NatsBus::OnQuery(natsConnection*, natsSubscription*, natsMsg* msg, void* arg) {
  auto* sub = static_cast<Subscription*>(arg);
  if (sub->answer) {
    // An answer to one of our requests: its number is the subject's last token.
    const std::string_view subject = natsMsg_GetSubject(msg);
    const uint64_t n =
        std::strtoull(std::string(subject.substr(subject.rfind('.') + 1)).c_str(), nullptr, 10);
    NatsBus* bus = sub->bus;
    {
      std::lock_guard<std::mutex> lock(bus->answers_mu_);
      // Only for a request still waiting (one that timed out is gone): bounded.
      auto it = bus->answers_.find(n);
      if (it != bus->answers_.end()) {
        it->second.emplace(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
      }
    }
    bus->answered_.notify_all();
    natsMsg_Destroy(msg);
    return;
  }
  const char* reply = natsMsg_GetReply(msg);
  if (reply) {
    sub->query(reply, std::string_view(natsMsg_GetData(msg),
                                       static_cast<size_t>(natsMsg_GetDataLength(msg))));
  }
  natsMsg_Destroy(msg);
}

void NatsBus::OnDisconnected(natsConnection*, void* arg) {
  Debug("disconnected");
  auto* bus = static_cast<NatsBus*>(arg);
  ++bus->counters_.disconnects;
  bus->down_since_ns_ = std::chrono::steady_clock::now().time_since_epoch().count();
}
void NatsBus::OnReconnected(natsConnection* nc, void* arg) {
  if (DebugOn()) {
    char url[256] = "";
    natsConnection_GetConnectedUrl(nc, url, sizeof(url));
    Debug("reconnected to {}", url);
  }
  auto* bus = static_cast<NatsBus*>(arg);
  ++bus->counters_.reconnects;
  bus->down_since_ns_ = 0;
  bus->check_stream_ = true;
}

bool NatsBus::Subscribe(const std::string& subject, Handler handler, std::string* error) {
  auto sub = std::make_unique<Subscription>();
  sub->bus = this;
  sub->subject = subject;
  sub->handler = std::move(handler);
  std::lock_guard<std::mutex> lock(subs_mu_);
  subs_.push_back(std::move(sub));
  return Activate(*subs_.back(), error);
}

bool NatsBus::Activate(Subscription& sub, std::string* error) {
  if (!connected() || (!stream_ready_ && !EnsureStream(error))) {
    if (error->empty()) *error = "the bus is not connected";
    return false;
  }
  const uint64_t from = sub.next_seq;
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = options_.stream.c_str();
  // No acks: the stream is replicated, a consumer is one server's, and what it loses is found
  // by its consumer sequence (OnMessage) and its heartbeats (Connect's error handler), then
  // asked again from the stream (Maintain). (The client's "ordered consumer" does the same by
  // itself, but its new consumer keeps the first one's start time next to the start sequence,
  // which the server refuses: libnats 3.4.1, and nats.c's main branch as of November 2026.)
  so.Config.AckPolicy = js_AckNone;
  so.Config.Heartbeat = 1'000'000'000;  // ns: a lost consumer is noticed within 2-4 s
  if (from > 0) {
    // A consumer lost: right after the last message delivered.
    so.Config.DeliverPolicy = js_DeliverByStartSequence;
    so.Config.OptStartSeq = from;
  } else {
    so.Config.DeliverPolicy = js_DeliverByStartTime;
    so.Config.OptStartTime = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count() -
                             options_.catch_up_ns;
  }
  sub.consumers.push_back(std::make_unique<Consumer>());
  sub.consumers.back()->owner = &sub;
  const natsStatus s = js_Subscribe(&sub.sub, js_, sub.subject.c_str(), &NatsBus::OnMessage,
                                    sub.consumers.back().get(), nullptr, &so, nullptr);
  if (s != NATS_OK) {
    sub.sub = nullptr;
    *error = fmt::format("cannot subscribe to {}: {}", sub.subject, StatusText(s));
    Debug("{}", *error);
    return false;
  }
  Debug("subscribed to {} from stream sequence {}", sub.subject, from);
  return true;
}

void NatsBus::Drop(Subscription& sub) {
  if (!sub.sub) return;
  sub.consumers.back()->lost = true;  // a message it is delivering now is ignored
  // Drained, not unsubscribed: the server is told first, and the subscription is closed once
  // what it had sent is through, so that none of its messages is still being read when it is
  // freed (an unsubscription while its consumer still sends raced with the client's read loop
  // in libnats 3.4.1: "Crash processing inbound message for destroyed subscription", fixed in
  // later nats.c). Freed by Maintain once closed.
  if (natsSubscription_DrainTimeout(sub.sub, kDrainMs) == NATS_OK) {
    draining_.push_back(sub.sub);
  } else {
    natsSubscription_Unsubscribe(sub.sub);
    natsSubscription_Destroy(sub.sub);
  }
  sub.sub = nullptr;
}

void NatsBus::Poll() {
  keeper_cv_.notify_all();
}

void NatsBus::Maintain() {
  if (!connected()) return;
  Resend();
  std::lock_guard<std::mutex> lock(subs_mu_);
  // Reconnected: the server may have restarted without its store, and the stream is gone or
  // numbers from 1 again (EnsureStream). A consumer lost with it is found by its heartbeats.
  if (check_stream_.exchange(false)) stream_ready_ = false;
  std::erase_if(draining_, [](natsSubscription* gone) {
    if (natsSubscription_IsValid(gone)) return false;
    natsSubscription_Destroy(gone);
    return true;
  });
  std::vector<natsSubscription*> lost;
  {
    std::lock_guard<std::mutex> relock(lost_mu_);
    lost.swap(lost_);
  }
  for (natsSubscription* gone : lost) {
    for (auto& sub : subs_) {
      if (sub->handler && sub->sub == gone) {
        Debug("{}: its consumer is lost, a new one from stream sequence {}", sub->subject,
              sub->next_seq.load());
        Drop(*sub);
      }
    }
  }
  const auto now = std::chrono::steady_clock::now();
  bool pending = !stream_ready_;
  for (auto& sub : subs_) pending = pending || (sub->handler && !sub->sub);
  if (!pending || now < retry_at_) return;
  std::string error;
  bool ok = EnsureStream(&error);
  for (auto& sub : subs_) {
    if (ok && sub->handler && !sub->sub) ok = Activate(*sub, &error);
  }
  // Each call may have waited kApiWaitMs (a cluster electing a leader): not again at once.
  if (!ok) retry_at_ = now + std::chrono::seconds(1);
}

bool NatsBus::Serve(const std::string& subject, QueryHandler handler, std::string* error) {
  auto sub = std::make_unique<Subscription>();
  sub->bus = this;
  sub->subject = subject;
  sub->query = std::move(handler);
  const natsStatus s =
      natsConnection_Subscribe(&sub->sub, conn_, subject.c_str(), &NatsBus::OnQuery, sub.get());
  if (s != NATS_OK) {
    *error = fmt::format("cannot serve {}: {}", subject, StatusText(s));
    return false;
  }
  // The server knows the subscription once it answered a ping: a query sent right after
  // this returns finds it (else NATS answers "no responders").
  if (connected()) natsConnection_FlushTimeout(conn_, 1000);
  std::lock_guard<std::mutex> lock(subs_mu_);
  subs_.push_back(std::move(sub));
  return true;
}

bool NatsBus::Respond(std::string_view reply_to, const void* data, size_t size) {
  const std::string to(reply_to);
  return natsConnection_Publish(conn_, to.c_str(), data, static_cast<int>(size)) == NATS_OK;
}

bool NatsBus::StartInbox() {
  if (!inbox_.empty()) return true;
  char* inbox = nullptr;
  if (natsInbox_Create(&inbox) != NATS_OK) return false;
  const std::string prefix = inbox;
  natsInbox_Destroy(inbox);
  std::string error;
  const bool ok = Serve(
      prefix + ".*", [this](std::string_view, std::string_view) {}, &error);
  if (!ok) return false;
  // Answers come to the subscription's handler with their subject; route them by number.
  subs_.back()->answer = true;
  inbox_ = prefix;
  return true;
}

bool NatsBus::Request(const std::string& subject, const void* data, size_t size, int64_t timeout_ms,
                      std::string* answer, const std::function<void()>& meanwhile) {
  ++counters_.requests;
  if (!connected() || !StartInbox()) {
    ++counters_.request_failures;
    return false;
  }
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(answers_mu_);
    n = ++next_request_;
    answers_[n];  // waited for: an answer is kept only while it is
  }
  const std::string reply = inbox_ + "." + std::to_string(n);
  if (natsConnection_PublishRequest(conn_, subject.c_str(), reply.c_str(), data,
                                    static_cast<int>(size)) != NATS_OK) {
    std::lock_guard<std::mutex> lock(answers_mu_);
    answers_.erase(n);
    ++counters_.request_failures;
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::unique_lock<std::mutex> lock(answers_mu_);
  while (!answers_[n]) {
    if (std::chrono::steady_clock::now() >= deadline) {
      answers_.erase(n);
      ++counters_.request_failures;
      return false;
    }
    if (meanwhile) {
      lock.unlock();
      meanwhile();
      lock.lock();
      if (answers_[n]) break;
    }
    answered_.wait_for(lock, std::chrono::milliseconds(5));
  }
  *answer = std::move(*answers_[n]);
  answers_.erase(n);
  // The server's "no responders" status comes as an empty message; our answers never are.
  if (answer->empty()) {
    ++counters_.request_failures;
    return false;
  }
  return true;
}

}  // namespace waitpath
