// How reports show a process name.
#pragma once

#include <string_view>

namespace waitpath {

// A task whose name the trace never gave (a user-space-only session, a thread seen before any
// event named it) reads `(no name)` in views and text, never an empty field (`vm/`, `vm//12118`);
// JSON's and CSV's `comm` fields keep the name as traced (empty).
inline std::string_view ShownComm(std::string_view comm) {
  return comm.empty() ? std::string_view("(no name)") : comm;
}

}  // namespace waitpath
