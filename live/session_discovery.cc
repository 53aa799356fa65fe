#include "live/session_discovery.h"

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

bool QuerySessions(const std::string& relayd_url, std::vector<LiveSession>* sessions,
                   std::string* error) {
  ValueRef params(bt_value_map_create());
  bt_value_map_insert_string_entry(params.get(), "url", relayd_url.c_str());
  QueryOutcome q = QuerySource("ctf", "lttng-live", "sessions", params.get());
  if (q.setup_error) {
    *error = q.error;
    return false;
  }
  const bool ok = q.result && bt_value_is_array(q.result);
  if (ok) {
    sessions->clear();
    for (uint64_t i = 0; i < bt_value_array_get_length(q.result); ++i) {
      const bt_value* s = bt_value_array_borrow_element_by_index_const(q.result, i);
      if (!bt_value_is_map(s)) continue;
      sessions->push_back(LiveSession{Str(s, "url"), Str(s, "target-hostname"),
                                      Str(s, "session-name"), Num(s, "stream-count"),
                                      Num(s, "client-count")});
    }
  } else {
    *error = "cannot list the sessions of relayd " + relayd_url +
             (q.error.empty() ? "" : ": " + q.error);
  }
  bt_value_put_ref(q.result);
  return ok;
}

}  // namespace waitpath
