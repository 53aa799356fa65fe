#include "ctf/tsdl_lexer.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

TEST(TsdlLexerTest, TokensOfEachKindWithTheirOffsets) {
  const auto t = TokenizeTsdl(
      "/* c */ event {\n\tname = \"a\\\"b\"; // x\n id := 0x1Fu; len = 18446744073709551616; } "
      "...");
  ASSERT_EQ(t.size(), 17u);
  EXPECT_EQ(t[0].kind, TsdlToken::kIdent);
  EXPECT_EQ(t[0].text, "event");
  EXPECT_EQ(t[0].offset, 8u);
  EXPECT_EQ(t[3].kind, TsdlToken::kPunct);
  EXPECT_EQ(t[4].kind, TsdlToken::kString);
  EXPECT_EQ(t[4].text, "a\"b");  // unescaped, without its quotes
  EXPECT_EQ(t[7].text, ":=");
  EXPECT_EQ(t[8].kind, TsdlToken::kNumber);
  EXPECT_EQ(t[8].text, "0x1Fu");
  EXPECT_EQ(t[8].value, 31u);
  EXPECT_EQ(t[12].value, UINT64_MAX);  // beyond 64 bits: saturated
  EXPECT_EQ(t[15].text, "...");
  EXPECT_EQ(t[16].kind, TsdlToken::kEnd);
}

TEST(TsdlLexerTest, NulPaddingIsSpaceAndUnterminatedPartsThrow) {
  EXPECT_EQ(TokenizeTsdl(std::string("a\0\0b", 4)).size(), 3u);
  EXPECT_THROW(TokenizeTsdl("a /* b"), TsdlLexError);
  EXPECT_THROW(TokenizeTsdl("name = \"abc"), TsdlLexError);
  EXPECT_THROW(TokenizeTsdl("name = \"abc\\"), TsdlLexError);
  EXPECT_EQ(TokenizeTsdl("// only a comment").size(), 1u);
}

}  // namespace
}  // namespace waitpath
