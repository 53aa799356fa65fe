#include "base/untrusted_name.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace waitpath {
namespace {

// What a relayd or a trace may name a host, session, channel or trace path.
const std::vector<std::string>& HostileNames() {
  static const std::vector<std::string> names = {
      "",
      ".",
      "..",
      "../../../../tmp/x",
      "/tmp/hx-abs",
      "a/b",
      ".hidden",
      std::string("nul\0inside", 10),
      std::string(100'000, 'x'),
      std::string(300, '/'),
      "\xff\xfe not UTF-8",
      "\xc0\xaf overlong slash",
      "\xed\xa0\x80 surrogate",
      "\x1b]0;title\x07\x1b[2J escapes",
      "\xc2\x9b C1 CSI",
      "back\\slash",
      "100%",
      "line\nbreak",
      "tab\there",
  };
  return names;
}

TEST(UntrustedNameTest, PathComponentIsAlwaysOneHarmlessFileName) {
  std::set<std::string> seen;
  for (const std::string& name : HostileNames()) {
    const std::string c = PathComponent(name);
    EXPECT_FALSE(c.empty()) << name;
    EXPECT_LE(c.size(), kMaxPathComponent) << name;
    EXPECT_EQ(c.find('/'), std::string::npos) << c;
    EXPECT_EQ(c.find('\0'), std::string::npos) << c;
    EXPECT_NE(c[0], '.') << c;
    for (unsigned char ch : c) EXPECT_TRUE(ch > 0x20 && ch < 0x7F) << c;
    EXPECT_TRUE(seen.insert(c).second) << "two names, one file: " << c;
  }
}

TEST(UntrustedNameTest, OrdinaryNamesStayAsTheyAre) {
  for (const std::string name :
       {"waitpath_0_0", "db", "vm-fake", "metadata", "chan_1.idx", "user@host", "a+b,c=d"}) {
    EXPECT_EQ(PathComponent(name), name);
    EXPECT_TRUE(IsPlainName(name));
  }
  EXPECT_EQ(PathComponent("../x"), "%2E.%2Fx");
  EXPECT_EQ(PathComponent(""), "%");
  EXPECT_FALSE(IsPlainName("../etc"));
  EXPECT_FALSE(IsPlainName("a b"));
}

TEST(UntrustedNameTest, LongNamesThatShareAStartStayDistinct) {
  const std::string a = std::string(500, 'a') + "1";
  const std::string b = std::string(500, 'a') + "2";
  EXPECT_NE(PathComponent(a), PathComponent(b));
  EXPECT_EQ(PathComponent(a).size(), kMaxPathComponent);
  // A cut never splits a %XX.
  const std::string c = PathComponent(std::string(500, '/'));
  const size_t tilde = c.rfind('~');
  ASSERT_NE(tilde, std::string::npos);
  EXPECT_EQ(tilde % 3, 0u) << c;
}

TEST(UntrustedNameTest, PrintableNameIsOneLineOfValidUtf8WithoutControls) {
  for (const std::string& name : HostileNames()) {
    const std::string p = PrintableName(name);
    EXPECT_LE(p.size(), 256u + 4 + 3) << name;  // the last escape, then "…"
    for (size_t i = 0; i < p.size(); ++i) {
      const auto ch = static_cast<unsigned char>(p[i]);
      EXPECT_TRUE(ch >= 0x20 && ch != 0x7F) << p;
      // C1 controls never pass (U+0080..U+009F is C2 80..C2 9F).
      if (ch == 0xC2 && i + 1 < p.size()) {
        EXPECT_GE(static_cast<unsigned char>(p[i + 1]), 0xA0) << p;
      }
    }
  }
  EXPECT_EQ(PrintableName("db"), "db");
  EXPECT_EQ(PrintableName("héllo ±µs"), "héllo ±µs");
  EXPECT_EQ(PrintableName(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(PrintableName("\x1b[2J"), "\\x1B[2J");
  EXPECT_EQ(PrintableName("\xff"), "\\xFF");
  EXPECT_EQ(PrintableName("a\\b"), "a\\\\b");
  EXPECT_EQ(PrintableName(std::string(10, 'x'), 4), "xxxx…");
}

}  // namespace
}  // namespace waitpath
