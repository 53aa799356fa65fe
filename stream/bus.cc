#include "stream/bus.h"

#include <fmt/format.h>
#include <nats/nats.h>

#include <chrono>
#include <cstdlib>
#include <sstream>

namespace waitpath {

std::string SubjectToken(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out.empty() ? "_" : out;
}

namespace {

std::string StatusText(natsStatus s) {
  const char* last = nats_GetLastError(nullptr);
  return last && *last ? std::string(last) : std::string(natsStatus_GetText(s));
}

}  // namespace

std::unique_ptr<Bus> Bus::Connect(const BusOptions& options, std::string* error) {
  std::unique_ptr<Bus> bus(new Bus());
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
  // With a callback, a first connection that fails goes on in the background (without one,
  // Connect itself would retry forever): the shard starts, and Poll makes the stream and the
  // subscriptions once connected.
  if (s == NATS_OK) {
    s = natsOptions_SetRetryOnFailedConnect(
        opts, true, [](natsConnection*, void*) {}, nullptr);
  }
  if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(opts, &Bus::OnDisconnected, bus.get());
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(opts, &Bus::OnReconnected, bus.get());
  // A consumer lost without our connection noticing (it lived on a cluster node that died):
  // its heartbeats stop; the subscriptions are made again (Poll), from where they were.
  if (s == NATS_OK) {
    s = natsOptions_SetErrorHandler(
        opts,
        [](natsConnection*, natsSubscription*, natsStatus err, void* arg) {
          if (err == NATS_MISSED_HEARTBEAT) static_cast<Bus*>(arg)->resubscribe_ = true;
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
  jo.PublishAsync.ErrHandler = [](jsCtx* js, jsPubAckErr* pae, void* arg) {
    // No ack (the node holding the publish gone, a stream leader moving, a timeout): sent
    // again, up to 3 times, with the same message id, which the stream deduplicates: stored
    // once whether an earlier try was or not. Then counted.
    const char* tries = nullptr;
    const int n = natsMsgHeader_Get(pae->Msg, "Waitpath-Try", &tries) == NATS_OK && tries
                      ? std::atoi(tries)
                      : 0;
    if (n < 3 &&
        natsMsgHeader_Set(pae->Msg, "Waitpath-Try", std::to_string(n + 1).c_str()) == NATS_OK) {
      jsPubOptions po;
      jsPubOptions_Init(&po);
      po.MaxWait = 5000;
      if (js_PublishMsgAsync(js, &pae->Msg, &po) == NATS_OK) return;
    }
    ++static_cast<Bus*>(arg)->counters_.publish_failed;
  };
  jo.PublishAsync.ErrHandlerClosure = bus.get();
  // Unacknowledged publishes kept at once: a bus away for a while (seconds of a shard's edges);
  // past that, a publish waits at most 1 ms for room, then fails (counted) rather than hold
  // the engine.
  jo.PublishAsync.MaxPending = 65536;
  jo.PublishAsync.StallWait = 1;
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
  return bus;
}

void Bus::Close() {
  if (closed_) return;
  closed_ = true;
  for (auto& sub : subs_) {
    if (sub->sub) natsSubscription_Unsubscribe(sub->sub);
  }
  if (conn_) natsConnection_Close(conn_);
}

Bus::~Bus() {
  Close();
  for (auto& sub : subs_) {
    if (sub->sub) natsSubscription_Destroy(sub->sub);
  }
  if (js_) jsCtx_Destroy(js_);
  if (conn_) natsConnection_Destroy(conn_);
}

bool Bus::connected() const {
  return natsConnection_Status(conn_) == NATS_CONN_STATUS_CONNECTED;
}

// Creates the stream, or keeps it as it is when it exists (another shard made it).
bool Bus::EnsureStream(std::string* error) {
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
  if (si) jsStreamInfo_Destroy(si);
  if (s != NATS_OK && jerr == JSStreamNameExistErr) s = NATS_OK;
  if (s != NATS_OK) {
    // Exists with another configuration (another shard's age limit): use it as it is.
    s = js_GetStreamInfo(&si, js_, options_.stream.c_str(), nullptr, &jerr);
    if (si) jsStreamInfo_Destroy(si);
  }
  if (s != NATS_OK) {
    *error =
        fmt::format("cannot create the JetStream stream {}: {}", options_.stream, StatusText(s));
    return false;
  }
  // A server that lost its store numbers from 1 again: resuming after a sequence it never
  // reached would miss everything up to it.
  if (js_GetStreamInfo(&si, js_, options_.stream.c_str(), nullptr, &jerr) == NATS_OK) {
    for (auto& sub : subs_) {
      if (sub->next_seq > si->State.LastSeq + 1) sub->next_seq = 0;
    }
    jsStreamInfo_Destroy(si);
  }
  stream_ready_ = true;
  return true;
}

bool Bus::Publish(const std::string& subject, const void* data, size_t size) {
  // While reconnecting (a server restarting, a cluster node lost) the client keeps what is
  // published in its reconnect buffer (8 MB) and sends it once connected: not lost.
  if (natsConnection_Status(conn_) == NATS_CONN_STATUS_CLOSED) {
    ++counters_.publish_failed;
    return false;
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 5000;  // the ack's bound: then sent again (ErrHandler)
  const std::string id = id_prefix_ + std::to_string(++published_ids_);
  po.MsgId = id.c_str();  // deduplicated by the stream
  if (js_PublishAsync(js_, subject.c_str(), data, static_cast<int>(size), &po) != NATS_OK) {
    ++counters_.publish_failed;
    return false;
  }
  ++counters_.published;
  return true;
}

void Bus::Flush(int64_t timeout_ms) {
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = timeout_ms;
  js_PublishAsyncComplete(js_, &po);
}

void Bus::OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* arg) {
  auto* sub = static_cast<Subscription*>(arg);
  ++sub->bus->counters_.received;
  // Where to resume after the connection comes back (Poll).
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
    sub->next_seq = meta->Sequence.Stream + 1;
    jsMsgMetaData_Destroy(meta);
  }
  sub->handler(
      natsMsg_GetSubject(msg),
      std::string_view(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg))));
  natsMsg_Destroy(msg);
}

void Bus::OnQuery(natsConnection*, natsSubscription*, natsMsg* msg, void* arg) {
  auto* sub = static_cast<Subscription*>(arg);
  if (sub->answer) {
    // An answer to one of our requests: its number is the subject's last token.
    const std::string_view subject = natsMsg_GetSubject(msg);
    const uint64_t n =
        std::strtoull(std::string(subject.substr(subject.rfind('.') + 1)).c_str(), nullptr, 10);
    Bus* bus = sub->bus;
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

void Bus::OnDisconnected(natsConnection*, void* arg) {
  ++static_cast<Bus*>(arg)->counters_.disconnects;
}
void Bus::OnReconnected(natsConnection*, void* arg) {
  auto* bus = static_cast<Bus*>(arg);
  ++bus->counters_.reconnects;
  bus->resubscribe_ = true;
}

bool Bus::Subscribe(const std::string& subject, Handler handler, std::string* error) {
  auto sub = std::make_unique<Subscription>();
  sub->bus = this;
  sub->subject = subject;
  sub->handler = std::move(handler);
  subs_.push_back(std::move(sub));
  return Activate(*subs_.back(), error);
}

bool Bus::Activate(Subscription& sub, std::string* error) {
  if (!connected() || (!stream_ready_ && !EnsureStream(error))) {
    if (error->empty()) *error = "the bus is not connected";
    return false;
  }
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = options_.stream.c_str();
  so.Config.AckPolicy = js_AckNone;
  so.Config.Heartbeat = 1'000'000'000;  // ns: its absence says the consumer is gone
  if (sub.next_seq > 0) {
    // Again after a reconnection: right after the last message delivered.
    so.Config.DeliverPolicy = js_DeliverByStartSequence;
    so.Config.OptStartSeq = sub.next_seq;
  } else {
    so.Config.DeliverPolicy = js_DeliverByStartTime;
    so.Config.OptStartTime = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count() -
                             options_.catch_up_ns;
  }
  const natsStatus s = js_Subscribe(&sub.sub, js_, sub.subject.c_str(), &Bus::OnMessage, &sub,
                                    nullptr, &so, nullptr);
  if (s != NATS_OK) {
    sub.sub = nullptr;
    *error = fmt::format("cannot subscribe to {}: {}", sub.subject, StatusText(s));
    return false;
  }
  return true;
}

void Bus::Poll() {
  if (!connected()) return;
  std::string error;
  // The server may have restarted: its consumers (ephemeral) are gone, and the stream too if
  // its store went. Made again, each subscription from where it was.
  if (resubscribe_.exchange(false)) {
    stream_ready_ = false;
    for (auto& sub : subs_) {
      if (!sub->handler || !sub->sub) continue;
      natsSubscription_Unsubscribe(sub->sub);
      natsSubscription_Destroy(sub->sub);
      sub->sub = nullptr;
    }
  }
  if (!stream_ready_ && !EnsureStream(&error)) return;
  for (auto& sub : subs_) {
    if (sub->handler && !sub->sub) Activate(*sub, &error);
  }
}

bool Bus::Serve(const std::string& subject, QueryHandler handler, std::string* error) {
  auto sub = std::make_unique<Subscription>();
  sub->bus = this;
  sub->subject = subject;
  sub->query = std::move(handler);
  const natsStatus s =
      natsConnection_Subscribe(&sub->sub, conn_, subject.c_str(), &Bus::OnQuery, sub.get());
  if (s != NATS_OK) {
    *error = fmt::format("cannot serve {}: {}", subject, StatusText(s));
    return false;
  }
  // The server knows the subscription once it answered a ping: a query sent right after
  // this returns finds it (else NATS answers "no responders").
  if (connected()) natsConnection_FlushTimeout(conn_, 1000);
  subs_.push_back(std::move(sub));
  return true;
}

bool Bus::Respond(std::string_view reply_to, const void* data, size_t size) {
  const std::string to(reply_to);
  return natsConnection_Publish(conn_, to.c_str(), data, static_cast<int>(size)) == NATS_OK;
}

bool Bus::StartInbox() {
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

bool Bus::Request(const std::string& subject, const void* data, size_t size, int64_t timeout_ms,
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
