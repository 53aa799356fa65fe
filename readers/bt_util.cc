#include "readers/bt_util.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <regex>
#include <string>

namespace waitpath {

std::mutex& BabeltraceSetupMutex() {
  static std::mutex mutex;
  return mutex;
}

void ConfigureBabeltraceLogging(bool verbose) {
  bt_logging_set_global_level(verbose ? BT_LOGGING_LEVEL_WARNING : BT_LOGGING_LEVEL_NONE);
}

namespace {

std::string OneLine(const char* s) {
  std::string out(s ? s : "");
  std::replace(out.begin(), out.end(), '\n', ' ');
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// babeltrace2 messages end in ": addr=0x..., name=..." diagnostics; people need the sentence.
std::string Sentence(const char* s) {
  static const std::regex kDiagnostics(R"(:\s+[a-z][a-z0-9-]*=.*$)");
  return std::regex_replace(OneLine(s), kDiagnostics, "");
}

}  // namespace

std::string TakeBabeltraceError(bool verbose) {
  const bt_error* error = bt_current_thread_take_error();
  if (!error) return {};
  std::string out;
  const uint64_t n = bt_error_get_cause_count(error);
  if (verbose) {
    for (uint64_t i = 0; i < n; ++i) {
      const bt_error_cause* c = bt_error_borrow_cause_by_index(error, i);
      if (!out.empty()) out += "\n  caused by: ";
      out += OneLine(bt_error_cause_get_message(c));
    }
  } else if (n > 0) {
    // Cause 0 is where the failure started (e.g. "Cannot decode packet header"); the later
    // ones are each layer above saying that it failed too.
    out = Sentence(bt_error_cause_get_message(bt_error_borrow_cause_by_index(error, 0)));
  }
  bt_error_release(error);
  return out;
}

namespace {

// A plugin found once per process and kept: bt_plugin_find loads every plugin of the system
// directory (a dlopen of each, and of their libraries: libdw, libelf, liblzma…), and they are
// unloaded when the last reference goes. Live discovery asks the relayd for its sessions every
// second through src.ctf.lttng-live: it loaded and unloaded them each time (2–4 % of a live
// process's CPU, docs/bench.md "Live overheads"). A plugin not found is looked for again.
const bt_plugin* FindPlugin(const char* name) {
  static std::mutex mu;
  static std::map<std::string, const bt_plugin*> found;
  std::lock_guard lock(mu);
  auto it = found.find(name);
  if (it == found.end()) {
    const bt_plugin* p = nullptr;
    if (bt_plugin_find(name, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &p) !=
            BT_PLUGIN_FIND_STATUS_OK ||
        !p) {
      return nullptr;
    }
    it = found.emplace(name, p).first;  // the cache's reference
  }
  bt_plugin_get_ref(it->second);  // the caller's
  return it->second;
}

}  // namespace

const bt_component_class_source* FindSourceClass(const char* plugin, const char* name,
                                                 const bt_plugin** plugin_out, std::string* error) {
  const bt_plugin* p = FindPlugin(plugin);
  if (!p) {
    bt_current_thread_clear_error();
    *error = std::string("babeltrace2 plugin '") + plugin +
             "' not found (is the babeltrace2 package installed?)";
    return nullptr;
  }
  const bt_component_class_source* cls =
      bt_plugin_borrow_source_component_class_by_name_const(p, name);
  if (!cls) {
    *error =
        std::string("babeltrace2 component class source.") + plugin + "." + name + " not found";
    bt_plugin_put_ref(p);
    return nullptr;
  }
  *plugin_out = p;
  return cls;
}

QueryOutcome QuerySource(const char* plugin_name, const char* name, const char* object,
                         const bt_value* params) {
  QueryOutcome out;
  std::lock_guard lock(BabeltraceSetupMutex());
  PluginRef plugin;
  const bt_component_class_source* cls =
      FindSourceClass(plugin_name, name, &plugin.out(), &out.error);
  if (!cls) {
    out.setup_error = true;
    return out;
  }
  bt_query_executor* q = bt_query_executor_create(
      bt_component_class_source_as_component_class_const(cls), object, params);
  bt_query_executor_query_status status = BT_QUERY_EXECUTOR_QUERY_STATUS_ERROR;
  for (int attempt = 0; q && attempt < 50; ++attempt) {
    status = bt_query_executor_query(q, &out.result);
    if (status != BT_QUERY_EXECUTOR_QUERY_STATUS_AGAIN) break;
  }
  if (status != BT_QUERY_EXECUTOR_QUERY_STATUS_OK) {
    bt_value_put_ref(out.result);
    out.result = nullptr;
    out.error = TakeBabeltraceError();
  }
  bt_query_executor_put_ref(q);
  return out;
}

bt_value* MakeInputsParams(const std::vector<std::string>& inputs) {
  bt_value* params = bt_value_map_create();
  bt_value* array = bt_value_array_create();
  for (const std::string& in : inputs) bt_value_array_append_string_element(array, in.c_str());
  bt_value_map_insert_entry(params, "inputs", array);
  bt_value_put_ref(array);
  return params;
}

}  // namespace waitpath
