// Small helpers around the babeltrace2 C API: errors for people, plugin lookup, values.
#pragma once

#include <babeltrace2/babeltrace.h>

#include <mutex>
#include <string>
#include <vector>

#include "readers/bt_ref.h"

namespace waitpath {

// babeltrace2's component classes and plugins are reference counted without atomics, so
// graphs are built and torn down under this lock; running graphs touch only their own objects.
std::mutex& BabeltraceSetupMutex();

// Silences the library's own logging unless `verbose` (errors are reported by us instead).
void ConfigureBabeltraceLogging(bool verbose);

// Takes the current thread's babeltrace2 error and summarizes it: the root cause on one line,
// or with `verbose` the whole cause chain. Empty when there is no error.
std::string TakeBabeltraceError(bool verbose = false);

// Loads a plugin and borrows a component class; nullptr (and `error`) when not found.
const bt_component_class_source* FindSourceClass(const char* plugin, const char* name,
                                                 const bt_plugin** plugin_out, std::string* error);

// Runs query `object` of source component class `plugin`.`name` with `params`, retrying while
// it answers AGAIN (a live relayd may). Holds BabeltraceSetupMutex. `result` receives a new
// reference (put it). On failure: `setup_error` when the class could not be loaded (then
// `error` is the full line to show), else `error` is babeltrace2's root cause (may be empty).
struct QueryOutcome {
  const bt_value* result = nullptr;
  bool setup_error = false;
  std::string error;
};
QueryOutcome QuerySource(const char* plugin, const char* name, const char* object,
                         const bt_value* params);

// {"inputs": [paths...]} plus optional string entries, as src.ctf.fs and friends want.
bt_value* MakeInputsParams(const std::vector<std::string>& inputs);

}  // namespace waitpath
