#include "tools/gen/script.h"

#include <fmt/format.h>

#include <sstream>
#include <stdexcept>

namespace waitpath::gen {
namespace {

void ParseBytes(const std::string& text, Op& op) {
  auto dots = text.find("..");
  if (dots == std::string::npos) {
    op.bytes_lo = op.bytes_hi = std::stoll(text);
  } else {
    op.bytes_lo = std::stoll(text.substr(0, dots));
    op.bytes_hi = std::stoll(text.substr(dots + 2));
  }
  if (op.bytes_lo < 0 || op.bytes_hi < op.bytes_lo) throw std::invalid_argument("bad byte count");
}

}  // namespace

std::vector<Op> ScriptCompiler::Compile(const std::vector<std::string>& lines,
                                        const std::string& task_name) {
  std::vector<Op> ops;
  std::vector<size_t> open_repeats;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::istringstream in(lines[i]);
    std::vector<std::string> w;
    for (std::string word; in >> word;) w.push_back(word);
    if (w.empty()) continue;
    auto fail = [&](const std::string& why) {
      return std::runtime_error(
          fmt::format("task '{}', script line {} ('{}'): {}", task_name, i + 1, lines[i], why));
    };
    auto need = [&](size_t lo, size_t hi) {
      if (w.size() < lo || w.size() > hi) throw fail("wrong number of arguments");
    };
    Op op;
    try {
      const std::string& verb = w[0];
      if (verb == "compute" || verb == "sleep") {
        need(2, 2);
        op.code = verb == "compute" ? OpCode::kCompute : OpCode::kSleep;
        op.duration = ParseDurationRange(w[1]);
      } else if (verb == "disk") {
        need(2, 4);
        op.code = OpCode::kDisk;
        op.duration = ParseDurationRange(w[1]);
        op.bytes_lo = op.bytes_hi = 4096;
        for (size_t k = 2; k < w.size(); ++k) {
          if (w[k] == "read" || w[k] == "write") {
            op.write = w[k] == "write";
          } else {
            ParseBytes(w[k], op);
          }
        }
      } else if (verb == "send") {
        need(3, 3);
        op.code = OpCode::kSend;
        op.target = w[1];
        ParseBytes(w[2], op);
        if (op.bytes_lo < 1) throw fail("a message has at least one byte");
      } else if (verb == "recv" || verb == "lock" || verb == "unlock" || verb == "fork" ||
                 verb == "wait") {
        need(2, 2);
        op.code = verb == "recv"     ? OpCode::kRecv
                  : verb == "lock"   ? OpCode::kLock
                  : verb == "unlock" ? OpCode::kUnlock
                  : verb == "fork"   ? OpCode::kFork
                                     : OpCode::kWait;
        op.target = w[1];
      } else if (verb == "repeat") {
        need(2, 2);
        op.code = OpCode::kRepeat;
        op.count = std::stoll(w[1]);
        if (op.count < 0) throw fail("negative repeat count");
        open_repeats.push_back(ops.size());
      } else if (verb == "end") {
        need(1, 1);
        if (open_repeats.empty()) throw fail("'end' without 'repeat'");
        op.code = OpCode::kEnd;
        op.match = static_cast<int32_t>(open_repeats.back());
        ops[open_repeats.back()].match = static_cast<int32_t>(ops.size());
        open_repeats.pop_back();
      } else if (verb == "span" || verb == "handoff") {
        need(2, 2);
        op.code = verb == "span" ? OpCode::kSpan : OpCode::kHandoff;
        op.target = w[1];
      } else if (verb == "end_span") {
        need(1, 1);
        op.code = OpCode::kEndSpan;
      } else if (verb == "exit") {
        need(1, 1);
        op.code = OpCode::kExit;
      } else {
        throw fail("unknown step '" + verb + "'");
      }
    } catch (const std::invalid_argument& e) {
      throw fail(e.what());
    } catch (const std::out_of_range& e) {
      throw fail(e.what());
    }
    ops.push_back(std::move(op));
  }
  if (!open_repeats.empty()) {
    throw std::runtime_error(fmt::format("task '{}': 'repeat' without 'end'", task_name));
  }
  return ops;
}

}  // namespace waitpath::gen
