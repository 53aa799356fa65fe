#include "live/session_discovery.h"

#include <mutex>

#include "live/bt_util.h"

namespace waitpath {
namespace {

std::string Str(const bt_value* map, const char* key) {
  const bt_value* v = bt_value_map_borrow_entry_value_const(map, key);
  return v && bt_value_is_string(v) ? bt_value_string_get(v) : std::string();
}

uint64_t Num(const bt_value* map, const char* key) {
  const bt_value* v = bt_value_map_borrow_entry_value_const(map, key);
  if (!v) return 0;
  if (bt_value_is_unsigned_integer(v)) return bt_value_integer_unsigned_get(v);
  if (bt_value_is_signed_integer(v)) return static_cast<uint64_t>(bt_value_integer_signed_get(v));
  return 0;
}

}  // namespace

bool QuerySessions(const std::string& relayd_url, std::vector<LiveSession>* sessions, std::string* error) {
  std::lock_guard lock(BabeltraceSetupMutex());
  const bt_plugin* plugin = nullptr;
  const bt_component_class_source* cls = FindSourceClass("ctf", "lttng-live", &plugin, error);
  if (!cls) return false;
  bt_value* params = bt_value_map_create();
  bt_value_map_insert_string_entry(params, "url", relayd_url.c_str());
  bt_query_executor* q =
      bt_query_executor_create(bt_component_class_source_as_component_class_const(cls), "sessions", params);
  const bt_value* result = nullptr;
  bt_query_executor_query_status status = BT_QUERY_EXECUTOR_QUERY_STATUS_ERROR;
  // The query may ask to be retried (AGAIN) while the relayd answers.
  for (int attempt = 0; q && attempt < 50; ++attempt) {
    status = bt_query_executor_query(q, &result);
    if (status != BT_QUERY_EXECUTOR_QUERY_STATUS_AGAIN) break;
  }
  bool ok = status == BT_QUERY_EXECUTOR_QUERY_STATUS_OK && result && bt_value_is_array(result);
  if (ok) {
    sessions->clear();
    for (uint64_t i = 0; i < bt_value_array_get_length(result); ++i) {
      const bt_value* s = bt_value_array_borrow_element_by_index_const(result, i);
      if (!bt_value_is_map(s)) continue;
      sessions->push_back(LiveSession{Str(s, "url"), Str(s, "target-hostname"), Str(s, "session-name"),
                                      Num(s, "stream-count"), Num(s, "client-count")});
    }
  } else {
    const std::string cause = TakeBabeltraceError();
    *error = "cannot list the sessions of relayd " + relayd_url + (cause.empty() ? "" : ": " + cause);
  }
  bt_value_put_ref(result);
  bt_query_executor_put_ref(q);
  bt_value_put_ref(params);
  bt_plugin_put_ref(plugin);
  return ok;
}

}  // namespace waitpath
