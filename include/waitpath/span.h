/* Application spans for waitpath (docs/requests.md): mark where a request begins and ends in
 * the thread that runs it, and where another thread takes it over. waitpath resolves the
 * span's interval into its active path (which threads, on which hosts, were running, waiting
 * for a CPU, a disk, the network...) from the kernel events of the same LTTng session.
 *
 *   waitpath_span_begin(trace_id, span_id, parent_span_id, "GET /cart");
 *   ...                                   (the request's work, in this thread)
 *   waitpath_span_end(span_id);
 *
 * A worker that takes the request from a queue calls waitpath_span_handoff(span_id) when it
 * does: until then the request was waiting for that worker, and from then on it follows it.
 * Span ids must be unique per host among open spans. Costs a few hundred ns per event when
 * the session records them, a branch when it does not. */
#ifndef WAITPATH_SPAN_H
#define WAITPATH_SPAN_H

#include <stdint.h>

#include "waitpath/span_tp.h"

static inline uint64_t waitpath_span_be64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

/* trace_id: the 16 bytes of the W3C/OpenTelemetry trace id (NULL: none). */
static inline void waitpath_span_begin(const uint8_t trace_id[16], uint64_t span_id,
                                       uint64_t parent_span_id, const char* name) {
  const uint64_t hi = trace_id ? waitpath_span_be64(trace_id) : 0;
  const uint64_t lo = trace_id ? waitpath_span_be64(trace_id + 8) : 0;
  lttng_ust_tracepoint(waitpath_span, begin, hi, lo, span_id, parent_span_id, name ? name : "");
}

static inline void waitpath_span_end(uint64_t span_id) {
  lttng_ust_tracepoint(waitpath_span, end, span_id);
}

static inline void waitpath_span_handoff(uint64_t span_id) {
  lttng_ust_tracepoint(waitpath_span, handoff, span_id);
}

#ifdef __cplusplus
namespace waitpath {

// A span for the lifetime of a scope (or until moved to the thread that ends it).
class Span {
 public:
  Span(const uint8_t trace_id[16], uint64_t span_id, uint64_t parent_span_id, const char* name)
      : id_(span_id) {
    waitpath_span_begin(trace_id, span_id, parent_span_id, name);
  }
  Span(Span&& other) noexcept : id_(other.id_), open_(other.open_) { other.open_ = false; }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  Span& operator=(Span&&) = delete;
  ~Span() { End(); }

  // Called by the thread that takes the request over.
  void Handoff() const {
    if (open_) waitpath_span_handoff(id_);
  }
  void End() {
    if (open_) waitpath_span_end(id_);
    open_ = false;
  }
  uint64_t id() const { return id_; }

 private:
  uint64_t id_;
  bool open_ = true;
};

}  // namespace waitpath
#endif

#endif /* WAITPATH_SPAN_H */
