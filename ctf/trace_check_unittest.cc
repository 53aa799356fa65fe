#include "ctf/trace_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace waitpath {
namespace {

namespace fs = std::filesystem;

const std::string kShared = WAITPATH_SHARED_TRACES;
const std::string kFixtures = WAITPATH_FIXTURES;

// A text metadata trace in a scratch directory (no streams).
class MetadataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("waitpath-check-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  CheckedTrace Check(const std::string& body) {
    std::ofstream(dir_ / "metadata") << "/* CTF 1.8 */\n"
                                        "typealias integer { size = 32; align = 8; signed = "
                                        "false; } := uint32_t;\n"
                                        "trace { major = 1; minor = 8; byte_order = le; "
                                        "packet.header := struct { uint32_t magic; }; };\n"
                                     << body;
    return CheckTrace(dir_.string());
  }
  fs::path dir_;
};

TEST_F(MetadataTest, SoundMetadataPasses) {
  const CheckedTrace r = Check(
      "stream { id = 0; };\nevent { name = \"e\"; id = 0; stream_id = 0; fields := struct "
      "{ uint32_t a; uint32_t b[16]; string s; }; };\n");
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(r.packets_checked);
}

TEST_F(MetadataTest, HazardsAreRefusedNamingTheLine) {
  const struct {
    std::string body, expect;
  } cases[] = {
      {"event { name = \"e\"; fields := struct { uint32_t a[100000000]; }; };\n",
       "array length 100000000"},
      {"event { name = \"e\"; fields := struct { uint32_t a; uint32_t a; }; };\n",
       "duplicate member 'a'"},
      {"typealias integer { size = 4096; } := big;\n", "integer of 4096 bits"},
      {"event { name = \"e\"; fields := struct { uint32_t a;", "ends inside a declaration"},
      {"event { name = \"e\"; } ", "truncated"},
      {"/* unterminated", "unterminated comment"},
      {"stream { id = 0; };\nstream { id = 0; };\n", "stream id 0 declared twice"},
      {"clock { name = c; freq = 0; };\n", "frequency 0"},
      // What babeltrace2 refuses too: TSDL is CTF 1.8, and encodings are the ones it knows.
      {"trace { major = 2; minor = 0; byte_order = le; };\n", "trace major version 2"},
      {"event { name = \"e\"; fields := struct { integer { size = 8; encoding = none1; base = 10; "
       "} a; }; };\n",
       "unknown encoding 'none1'"},
      {"typealias integer { size = 8; byte_order = little; } := u8;\n", "byte order 'little'"},
      {"stream { id = 0; };\nevent { name = \"e\"; stream_id = 1; };\n", "undeclared stream 1"},
  };
  for (const auto& c : cases) {
    const CheckedTrace r = Check(c.body);
    EXPECT_NE(r.error.find(c.expect), std::string::npos) << c.body << " -> " << r.error;
    EXPECT_NE(r.error.find((dir_ / "metadata").string() + ": line "), std::string::npos) << r.error;
  }
}

TEST_F(MetadataTest, NestingIsBounded) {
  std::string deep = "event { name = \"e\"; fields := ";
  for (int i = 0; i < 200; ++i) deep += "struct { ";
  deep += "uint32_t x; ";
  for (int i = 0; i < 200; ++i) deep += "} f; ";
  const CheckedTrace r = Check(deep + "; };\n");
  EXPECT_NE(r.error, "");
}

// The caller's limits reach the TSDL front-end, and its refusals name the line.
TEST_F(MetadataTest, LimitsAreTheCallers) {
  const std::string body =
      "event { name = \"e\"; fields := struct { uint32_t a[32]; struct { uint32_t b; } s; }; "
      "};\n";
  EXPECT_EQ(Check(body).error, "");
  TsdlLimits limits;
  limits.max_array_length = 16;
  CheckedTrace r = CheckTrace(dir_.string(), limits);
  EXPECT_NE(r.error.find("array length 32 (at most 16)"), std::string::npos) << r.error;
  limits = TsdlLimits{};
  limits.max_depth = 1;
  r = CheckTrace(dir_.string(), limits);
  EXPECT_NE(r.error.find("types nested deeper than 1"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("metadata: line 4 (text offset 0x"), std::string::npos) << r.error;
}

// A typealias inside a structure inside a typealias... nests too: refused, never a stack overflow.
TEST_F(MetadataTest, NestedTypealiasesAreBounded) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "typealias struct { ";
  deep += "uint32_t x; ";
  for (int i = 0; i < 100000; ++i) deep += "} := t; ";
  const CheckedTrace r = Check(deep + "\n");
  EXPECT_NE(r.error.find("types nested deeper than 32"), std::string::npos) << r.error;
}

// Types composed of aliases, each a structure of two of the one before (2^60 integers in 60
// lines), or of the one before (100,000 deep): refused at once, naming the scope, in a packet
// header (whose layout recursed) as in an event's fields (which the native decoder compiled for
// ever).
TEST_F(MetadataTest, TypesComposedOfAliasesAreBounded) {
  for (const bool wide : {true, false}) {
    for (const bool header : {true, false}) {
      std::string text =
          "/* CTF 1.8 */\ntypealias integer { size = 8; align = 8; signed = false; } := t0;\n";
      const int levels = wide ? 60 : 100000;
      for (int i = 1; i <= levels; ++i) {
        const std::string prev = "t" + std::to_string(i - 1);
        text += "typealias struct { " + prev + " a; " + (wide ? prev + " b; " : "") + "} := t" +
                std::to_string(i) + ";\n";
      }
      const std::string type = "struct { t" + std::to_string(levels) + " h; }";
      text += "trace { major = 1; minor = 8; byte_order = le;" +
              (header ? " packet.header := " + type + ";" : std::string()) +
              " };\nstream { id = 0; };\n";
      if (!header) text += "event { name = e; id = 0; fields := " + type + "; };\n";
      std::ofstream(dir_ / "metadata", std::ios::trunc) << text;
      const CheckedTrace r = CheckTrace(dir_.string());
      const std::string scope = header ? "the packet header: " : "event 'e' (id 0)'s fields: ";
      const std::string why = wide ? "more than 1048576 fields (aliases followed)"
                                   : "types nested deeper than 64 (aliases followed)";
      EXPECT_EQ(r.error, (dir_ / "metadata").string() + ": " + scope + why);
    }
  }
}

TEST_F(MetadataTest, UnknownSyntaxIsLeftToBabeltrace) {
  // Not known to be harmful: not refused, packets not checked.
  const CheckedTrace r = Check("event { name = \"e\"; fields := struct { mystery_t a; }; };\n");
  EXPECT_EQ(r.error, "");
  EXPECT_FALSE(r.packets_checked);
}

TEST(TraceCheckTest, RealTracesAndFixturesAreSound) {
  std::vector<std::string> dirs;
  for (const char* t : {"bug446190", "hello-lost", "many-threads", "scp_dest", "scp_src"}) {
    if (fs::exists(kShared + "/" + t + "/metadata")) dirs.push_back(kShared + "/" + t);
  }
  for (const char* kind : {"lttng", "perf"}) {
    for (const auto& e : fs::directory_iterator(kFixtures + "/" + kind)) {
      if (fs::exists(e.path() / "metadata")) dirs.push_back(e.path().string());
    }
  }
  ASSERT_FALSE(dirs.empty());
  for (const std::string& d : dirs) {
    const CheckedTrace r = CheckTrace(d);
    EXPECT_EQ(r.error, "") << d;
    EXPECT_TRUE(r.warnings.empty()) << d << ": " << r.warnings[0];
    EXPECT_TRUE(r.packets_checked) << d;
    EXPECT_EQ(r.read_dir, d) << "a sound trace is read in place";
    EXPECT_GT(r.packets, 0u) << d;
  }
}

}  // namespace
}  // namespace waitpath
