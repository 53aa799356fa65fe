// The bus against a real nats-server with JetStream (skipped when nats-server is not installed).
#include "fleet/nats_bus.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace waitpath {
namespace {

// A loopback port free now (the kernel's choice): tests running at once do not collide.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// A private nats-server with JetStream storing under a temporary directory.
class NatsServer {
 public:
  NatsServer(int port, std::string dir) : port_(port), dir_(std::move(dir)) { Start(); }
  ~NatsServer() { Stop(); }
  void Start() {
    pid_ = fork();
    if (pid_ == 0) {
      const std::string p = std::to_string(port_);
      execlp("nats-server", "nats-server", "-a", "127.0.0.1", "-p", p.c_str(), "-js", "-sd",
             dir_.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(700));  // until it listens
  }
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

 private:
  int port_;
  std::string dir_;
  pid_t pid_ = -1;
};

bool HaveNatsServer() {
  return system("command -v nats-server >/dev/null 2>&1") == 0;
}

template <typename F>
bool WaitFor(F done, int ms = 10000) {
  for (int i = 0; i < ms / 10; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

class BusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveNatsServer()) GTEST_SKIP() << "nats-server not installed";
    dir_ = std::filesystem::temp_directory_path() /
           ("waitpath-bus-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    port_ = FreePort();
    server_ = std::make_unique<NatsServer>(port_, dir_.string());
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<NatsBus> Connect() {
    BusOptions o;
    o.urls = server_->url();
    std::string error;
    auto bus = NatsBus::Connect(o, &error);
    EXPECT_TRUE(bus) << error;
    return bus;
  }

  std::filesystem::path dir_;
  int port_ = 0;
  std::unique_ptr<NatsServer> server_;
};

TEST_F(BusTest, PublishedBeforeSubscribingIsDelivered) {
  auto a = Connect();
  auto b = Connect();
  ASSERT_TRUE(a && b);
  for (int i = 0; i < 100; ++i) {
    const std::string m = std::to_string(i);
    ASSERT_TRUE(a->Publish("waitpath.edge.h1", m.data(), m.size()));
  }
  a->Flush(5000);
  std::mutex mu;
  std::vector<std::string> got;
  std::string error;
  ASSERT_TRUE(b->Subscribe(
      "waitpath.edge.h1",
      [&](std::string_view, std::string_view d) {
        std::lock_guard<std::mutex> lock(mu);
        got.emplace_back(d);
      },
      &error))
      << error;
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return got.size() == 100;
  }));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(got[i], std::to_string(i));  // in order
  EXPECT_EQ(a->counters().published, 100u);
  EXPECT_EQ(b->counters().received, 100u);
}

TEST_F(BusTest, QueriesAreAnswered) {
  auto owner = Connect();
  auto asker = Connect();
  ASSERT_TRUE(owner && asker);
  std::string error;
  NatsBus* o = owner.get();
  ASSERT_TRUE(owner->Serve(
      "waitpath.cum.h1",
      [o](std::string_view reply, std::string_view d) {
        const std::string a = "re:" + std::string(d);
        o->Respond(reply, a.data(), a.size());
      },
      &error));
  std::string answer;
  ASSERT_TRUE(asker->Request("waitpath.cum.h1", "q", 1, 2000, &answer));
  EXPECT_EQ(answer, "re:q");
  EXPECT_FALSE(asker->Request("waitpath.cum.nobody", "q", 1, 200, &answer));
  EXPECT_EQ(asker->counters().request_failures, 1u);
}

// The server killed and restarted on its store: no crash, what is published while it is away
// is kept by the client and delivered after the restart, the subscription resumes, and what it
// had acknowledged is still delivered.
TEST_F(BusTest, ServerRestartIsSurvived) {
  auto a = Connect();
  auto b = Connect();
  ASSERT_TRUE(a && b);
  std::mutex mu;
  std::set<std::string> got;
  std::string error;
  ASSERT_TRUE(b->Subscribe(
      "waitpath.edge.h2",
      [&](std::string_view, std::string_view d) {
        std::lock_guard<std::mutex> lock(mu);
        got.emplace(d);
      },
      &error));
  ASSERT_TRUE(a->Publish("waitpath.edge.h2", "before", 6));
  a->Flush(5000);
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return got.count("before") == 1;
  }));
  server_->Stop();
  ASSERT_TRUE(WaitFor([&] { return !a->connected(); }));
  EXPECT_TRUE(a->Publish("waitpath.edge.h2", "away", 4));
  server_->Start();
  ASSERT_TRUE(WaitFor([&] { return a->connected() && b->connected(); }, 20000));
  EXPECT_GE(a->counters().reconnects, 1u);
  a->Poll(), b->Poll();
  ASSERT_TRUE(WaitFor([&] { return a->Publish("waitpath.edge.h2", "after", 5); }));
  a->Flush(5000);
  ASSERT_TRUE(WaitFor(
      [&] {
        b->Poll();
        std::lock_guard<std::mutex> lock(mu);
        return got.count("after") == 1;
      },
      30000));
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return got.count("away") == 1;
  }));
}

// No server at start: Connect returns at once (not connected), the subscription waits; once a
// server is there, Poll makes the stream and the subscription, and what is published arrives.
TEST_F(BusTest, ServerThatComesLaterIsUsed) {
  server_->Stop();
  const auto before = std::chrono::steady_clock::now();
  auto a = Connect();
  ASSERT_TRUE(a);
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(3));
  EXPECT_FALSE(a->connected());
  std::mutex mu;
  std::set<std::string> got;
  std::string error;
  EXPECT_FALSE(a->Subscribe(
      "waitpath.edge.h3",
      [&](std::string_view, std::string_view d) {
        std::lock_guard<std::mutex> lock(mu);
        got.emplace(d);
      },
      &error));
  server_->Start();
  ASSERT_TRUE(WaitFor([&] { return a->connected(); }, 20000));
  ASSERT_TRUE(WaitFor(
      [&] {
        a->Poll();
        a->Publish("waitpath.edge.h3", "late", 4);
        std::lock_guard<std::mutex> lock(mu);
        return got.count("late") == 1;
      },
      20000));
}

// The name of the node leading `stream` (its cluster's election), or "" when none answers.
std::string StreamLeader(const std::string& urls, const std::string& stream) {
  natsOptions* opts = nullptr;
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  jsStreamInfo* si = nullptr;
  std::string leader;
  std::vector<std::string> list;
  std::stringstream in(urls);
  for (std::string u; std::getline(in, u, ',');) list.push_back(u);
  std::vector<const char*> servers;
  for (const std::string& u : list) servers.push_back(u.c_str());
  if (natsOptions_Create(&opts) == NATS_OK &&
      natsOptions_SetServers(opts, servers.data(), static_cast<int>(servers.size())) == NATS_OK &&
      natsConnection_Connect(&nc, opts) == NATS_OK &&
      natsConnection_JetStream(&js, nc, nullptr) == NATS_OK &&
      js_GetStreamInfo(&si, js, stream.c_str(), nullptr, nullptr) == NATS_OK && si->Cluster &&
      si->Cluster->Leader) {
    leader = si->Cluster->Leader;
  }
  if (si) jsStreamInfo_Destroy(si);
  if (js) jsCtx_Destroy(js);
  if (nc) natsConnection_Destroy(nc);
  if (opts) natsOptions_Destroy(opts);
  return leader;
}

// A three-node JetStream cluster (three nats-server processes on loopback), the stream
// replicated on all three; the node leading the stream killed (SIGKILL) while edges flow: every
// edge is delivered, exactly once, and every publish is acknowledged. Where the
// subscriber's connection and its consumer are varies from run to run (the client picks a
// server at random, the cluster a node for the consumer); the lost leader is each time the
// election during which a publish finds no stream ("no responders").
TEST(BusCluster, NodeKilledLosesNoEdge) {
  if (!HaveNatsServer()) GTEST_SKIP() << "nats-server not installed";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("waitpath-bus-cluster-" + std::to_string(getpid()));
  int ports[3], routes[3];
  for (int i = 0; i < 3; ++i) ports[i] = FreePort(), routes[i] = FreePort();
  std::vector<pid_t> nodes;
  std::string urls;
  for (int i = 0; i < 3; ++i) {
    std::string others;
    for (int j = 0; j < 3; ++j) {
      if (j != i)
        others += (others.empty() ? "" : ",") + ("nats://127.0.0.1:" + std::to_string(routes[j]));
    }
    const std::string port = std::to_string(ports[i]), cluster = std::to_string(routes[i]),
                      store = (dir / std::to_string(i)).string(), name = "n" + std::to_string(i);
    std::filesystem::create_directories(store);
    const pid_t pid = fork();
    if (pid == 0) {
      // Its log only when asked: it says when it lost the others and who leads what.
      if (!getenv("WAITPATH_BUS_DEBUG")) dup2(open("/dev/null", O_WRONLY), 2);
      execlp("nats-server", "nats-server", "-a", "127.0.0.1", "-p", port.c_str(), "-js", "-sd",
             store.c_str(), "-n", name.c_str(), "--cluster_name", "waitpath", "--cluster",
             ("nats://127.0.0.1:" + cluster).c_str(), "--routes", others.c_str(),
             static_cast<char*>(nullptr));
      _exit(127);
    }
    nodes.push_back(pid);
    urls += (urls.empty() ? "" : ",") + ("nats://127.0.0.1:" + port);
  }
  BusOptions o;
  o.urls = urls;
  o.replicas = 3;
  std::string error;
  auto pub = NatsBus::Connect(o, &error);
  ASSERT_TRUE(pub) << error;
  auto sub = NatsBus::Connect(o, &error);
  ASSERT_TRUE(sub) << error;
  std::mutex mu;
  std::vector<std::string> got;
  auto handler = [&](std::string_view, std::string_view d) {
    std::lock_guard<std::mutex> lock(mu);
    got.emplace_back(d);
  };
  // False while the cluster elects its leaders: Poll makes the stream and the subscription
  // then (its consumer starts 10 s back, so nothing published meanwhile is missed).
  sub->Subscribe("waitpath.edge.c", handler, &error);
  std::string leader;
  ASSERT_TRUE(WaitFor(
      [&] {
        pub->Poll(), sub->Poll();
        leader = StreamLeader(urls, "WAITPATH");
        return !leader.empty();
      },
      30000));
  ASSERT_EQ(leader.size(), 2u) << leader;
  const int victim = leader[1] - '0';
  constexpr int kEdges = 2000;
  for (int i = 0; i < kEdges; ++i) {
    if (i == kEdges / 2) {
      kill(nodes[victim], SIGKILL);
      waitpid(nodes[victim], nullptr, 0);
    }
    const std::string m = std::to_string(i);
    EXPECT_TRUE(pub->Publish("waitpath.edge.c", m.data(), m.size()));
    // As a shard's engine thread does between batches.
    if (i % 20 == 0) pub->Poll(), sub->Poll();
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  pub->Flush(30000);
  const bool all = WaitFor(
      [&] {
        sub->Poll();
        std::lock_guard<std::mutex> lock(mu);
        return got.size() >= kEdges;
      },
      30000);
  EXPECT_TRUE(all) << "leader n" << victim << " killed";
  {
    std::lock_guard<std::mutex> lock(mu);
    // Each once. (Not in order: a publish sent again after the election is stored after
    // those that came later.)
    std::set<std::string> distinct(got.begin(), got.end());
    EXPECT_EQ(got.size(), static_cast<size_t>(kEdges));
    EXPECT_EQ(distinct.size(), static_cast<size_t>(kEdges));
    for (int i = 0; i < kEdges; ++i) EXPECT_EQ(distinct.count(std::to_string(i)), 1u) << i;
  }
  EXPECT_EQ(pub->counters().published, static_cast<uint64_t>(kEdges));
  EXPECT_EQ(pub->counters().publish_failed, 0u);
  EXPECT_EQ(sub->counters().received, static_cast<uint64_t>(kEdges));
  // Delivered twice and dropped by the bus (a consumer's hand-over, a publish stored twice):
  // printed, as how often it happens.
  fprintf(stderr, "leader n%d killed; duplicates dropped: %llu\n", victim,
          static_cast<unsigned long long>(sub->counters().duplicates.load()));
  pub.reset();
  sub.reset();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (static_cast<int>(i) == victim) continue;
    kill(nodes[i], SIGKILL);
    waitpid(nodes[i], nullptr, 0);
  }
  std::filesystem::remove_all(dir);
}

TEST(SubjectToken, KeepsSubjectsOneToken) {
  EXPECT_EQ(SubjectToken("web-1"), "web-1");
  EXPECT_EQ(SubjectToken("a.b*c>d e"), "a_b_c_d_e");
  EXPECT_EQ(SubjectToken(""), "_");
}

}  // namespace
}  // namespace waitpath
