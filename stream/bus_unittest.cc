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

// The server killed and restarted on its store: no crash, publishes while it is away fail and
// are counted, the subscription resumes, and what it had acknowledged is still delivered.
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
  EXPECT_FALSE(a->Publish("waitpath.edge.h2", "away", 4));
  EXPECT_EQ(a->counters().publish_failed, 1u);
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
  EXPECT_EQ(got.count("away"), 0u);
}

TEST(SubjectToken, KeepsSubjectsOneToken) {
  EXPECT_EQ(SubjectToken("web-1"), "web-1");
  EXPECT_EQ(SubjectToken("a.b*c>d e"), "a_b_c_d_e");
  EXPECT_EQ(SubjectToken(""), "_");
}

}  // namespace
}  // namespace waitpath
