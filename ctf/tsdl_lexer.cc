#include "ctf/tsdl_lexer.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <utility>

namespace waitpath {

std::vector<TsdlToken> TokenizeTsdl(const std::string& s) {
  std::vector<TsdlToken> out;
  size_t i = 0;
  for (;;) {
    for (;;) {
      while (i < s.size() && (std::isspace(static_cast<unsigned char>(s[i])) || s[i] == 0)) ++i;
      if (s.compare(i, 2, "/*") == 0) {
        const size_t e = s.find("*/", i + 2);
        if (e == std::string::npos) throw TsdlLexError{"unterminated comment", i};
        i = e + 2;
      } else if (s.compare(i, 2, "//") == 0) {
        const size_t e = s.find('\n', i);
        i = e == std::string::npos ? s.size() : e + 1;
      } else {
        break;
      }
    }
    TsdlToken t;
    t.offset = i;
    if (i >= s.size()) {
      out.push_back(std::move(t));
      return out;
    }
    const char c = s[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t e = i;
      while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_')) ++e;
      t.kind = TsdlToken::kIdent;
      t.text = s.substr(i, e - i);
      i = e;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t e = i;
      while (e < s.size() && std::isalnum(static_cast<unsigned char>(s[e]))) ++e;
      t.kind = TsdlToken::kNumber;
      t.text = s.substr(i, e - i);
      errno = 0;
      char* end = nullptr;
      t.value = std::strtoull(t.text.c_str(), &end, 0);
      if (errno == ERANGE) t.value = UINT64_MAX;
      i = e;
    } else if (c == '"' || c == '\'') {
      size_t e = i + 1;
      std::string text;
      while (e < s.size() && s[e] != c) {
        if (s[e] == '\\' && e + 1 < s.size()) ++e;
        text += s[e++];
      }
      if (e >= s.size()) throw TsdlLexError{"unterminated string", i};
      t.kind = TsdlToken::kString;
      t.text = std::move(text);
      i = e + 1;
    } else {
      t.kind = TsdlToken::kPunct;
      const size_t n = s.compare(i, 2, ":=") == 0 || s.compare(i, 2, "->") == 0 ? 2
                       : s.compare(i, 3, "...") == 0                            ? 3
                                                                                : 1;
      t.text = s.substr(i, n);
      i += n;
    }
    out.push_back(std::move(t));
  }
}

}  // namespace waitpath
