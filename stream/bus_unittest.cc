// The bus against a real nats-server with JetStream (skipped when nats-server is not installed).
#include "stream/bus.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

namespace waitpath {
namespace {

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
    port_ = 24000 + getpid() % 1000;
    server_ = std::make_unique<NatsServer>(port_, dir_.string());
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<Bus> Connect() {
    BusOptions o;
    o.urls = server_->url();
    std::string error;
    auto bus = Bus::Connect(o, &error);
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
  Bus* o = owner.get();
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

// A three-node JetStream cluster (three nats-server processes on loopback), the stream
// replicated on all three; one node killed while edges flow: none is lost. Disabled: it passes
// in most runs here but in about one of three the subscriber gets nothing after the kill within
// the minute (docs/scale.md, "Not done yet"). Run it with --gtest_also_run_disabled_tests.
TEST(BusCluster, DISABLED_NodeKilledLosesNoEdge) {
  if (!HaveNatsServer()) GTEST_SKIP() << "nats-server not installed";
  const int base = 26000 + getpid() % 500 * 2;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("waitpath-bus-cluster-" + std::to_string(getpid()));
  std::vector<pid_t> nodes;
  std::string urls;
  for (int i = 0; i < 3; ++i) {
    const std::string port = std::to_string(base + i * 10),
                      cluster = std::to_string(base + i * 10 + 1);
    std::string routes;
    for (int j = 0; j < 3; ++j) {
      if (j != i)
        routes +=
            (routes.empty() ? "" : ",") + ("nats://127.0.0.1:" + std::to_string(base + j * 10 + 1));
    }
    const std::string store = (dir / std::to_string(i)).string(), name = "n" + std::to_string(i);
    std::filesystem::create_directories(store);
    const pid_t pid = fork();
    if (pid == 0) {
      execlp("nats-server", "nats-server", "-a", "127.0.0.1", "-p", port.c_str(), "-js", "-sd",
             store.c_str(), "-n", name.c_str(), "--cluster_name", "waitpath", "--cluster",
             ("nats://127.0.0.1:" + cluster).c_str(), "--routes", routes.c_str(),
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
  auto pub = Bus::Connect(o, &error);
  auto sub = Bus::Connect(o, &error);
  ASSERT_TRUE(pub && sub) << error;
  std::mutex mu;
  std::set<std::string> got;
  auto handler = [&](std::string_view, std::string_view d) {
    std::lock_guard<std::mutex> lock(mu);
    got.emplace(d);
  };
  // Until the cluster has elected its leaders and made the stream.
  bool subscribed = false;
  for (int i = 0; i < 600 && !subscribed; ++i) {
    error.clear();
    subscribed = sub->Subscribe("waitpath.edge.c", handler, &error);
    if (!subscribed) {
      sub.reset();
      sub = Bus::Connect(o, &error);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ASSERT_TRUE(subscribed) << error;
  pub->Poll();
  constexpr int kEdges = 2000;
  for (int i = 0; i < kEdges; ++i) {
    if (i == kEdges / 2) {
      kill(nodes[0], SIGKILL);
      waitpid(nodes[0], nullptr, 0);
    }
    const std::string m = std::to_string(i);
    EXPECT_TRUE(pub->Publish("waitpath.edge.c", m.data(), m.size()));
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  pub->Flush(20000);
  EXPECT_TRUE(WaitFor(
      [&] {
        sub->Poll();
        std::lock_guard<std::mutex> lock(mu);
        return got.size() == kEdges;
      },
      60000));
  EXPECT_EQ(got.size(), static_cast<size_t>(kEdges));
  // Publishes whose ack was lost with the node are counted as not acknowledged: stored all
  // the same (delivered above), but the publisher could not know.
  EXPECT_LE(pub->counters().publish_failed, static_cast<uint64_t>(kEdges));
  pub.reset();
  sub.reset();
  for (size_t i = 1; i < nodes.size(); ++i) {
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
