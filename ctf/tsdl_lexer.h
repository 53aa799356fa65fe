// The tokens of CTF 1.8's metadata language (TSDL), for its one parser, the TSDL front-end of
// the metadata model (ctf/ctf_metadata.cc), and for the pre-flight check's test of a cut
// in recorded metadata (ctf/trace_check.cc, CheckComplete). Comments and whitespace (NUL bytes
// included, as LTTng pads packetized metadata) are skipped; numbers keep their text (decimal, 0x
// hex, 0 octal, u/l suffixes) and their value; strings are unescaped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace waitpath {

struct TsdlToken {
  enum Kind : uint8_t { kIdent, kNumber, kString, kPunct, kEnd } kind = kEnd;
  std::string text;    // a string's without its quotes, unescaped
  uint64_t value = 0;  // kNumber: saturated at UINT64_MAX beyond 64 bits
  size_t offset = 0;   // in the text
};

// What cannot be tokenized: an unterminated comment or string.
struct TsdlLexError {
  std::string message;
  size_t offset;
};

// Every token, the last one kEnd; throws TsdlLexError.
std::vector<TsdlToken> TokenizeTsdl(const std::string& text);

}  // namespace waitpath
