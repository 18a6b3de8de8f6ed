#include "advisor/import/event_prefilter.h"

#include "advisor/import/kineto_text.h"

#include <cstring>

namespace gpuwise::advisor {
namespace {

inline bool isSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// A cursor over the head of one event: just enough JSON to read `"key": "value"` pairs.
struct Head {
  const char* p;
  const char* end;

  void ws() {
    while (p < end && isSpace(*p))
      ++p;
  }
  bool lit(char c) {
    ws();
    if (p < end && *p == c) {
      ++p;
      return true;
    }
    return false;
  }
  // A string without escapes (an escaped one makes the caller keep the event). Heads are short
  // strings: a plain loop beats a library call here.
  bool str(std::string_view* out) {
    ws();
    if (p >= end || *p != '"') return false;
    const char* s = ++p;
    while (p < end && *p != '"') {
      if (*p == '\\') return false;
      ++p;
    }
    if (p >= end) return false;
    *out = std::string_view(s, size_t(p - s));
    ++p;
    return true;
  }
  bool member(std::string_view* key, std::string_view* value) {
    return str(key) && lit(':') && str(value);
  }
  // A long string value (frame and operator names): found with memchr, escapes rejected.
  bool longStr(std::string_view* out) {
    ws();
    if (p >= end || *p != '"') return false;
    const char* s = ++p;
    const void* q = std::memchr(s, '"', size_t(end - s));
    if (!q) return false;
    const char* e = static_cast<const char*>(q);
    if (std::memchr(s, '\\', size_t(e - s))) return false;
    *out = std::string_view(s, size_t(e - s));
    p = e + 1;
    return true;
  }
};

} // namespace

bool isDroppableEvent(std::string_view event, bool keep_operators) {
  Head h{event.data(), event.data() + event.size()};
  std::string_view k, v;
  if (!h.lit('{') || !h.member(&k, &v)) return false;
  if (k == "ph") {
    if (v == "s" || v == "f" || v == "t") return true; // flow arrows: correlation ids say the same
    if (v != "X") return false;
    if (!h.lit(',') || !h.member(&k, &v) || k != "cat") return false;
    const bool op = v == "cpu_op" || v == "Operator";
    const bool py = v == "python_function";
    if ((!op && !py) || (op && keep_operators)) return false;
    if (!h.lit(',') || !h.str(&k) || k != "name" || !h.lit(':')) return false;
    if (op) {
      // Only steps, data-loader waits and collectives' parameters are kept, and their names say
      // so in the first bytes.
      h.ws();
      const std::string_view rest(h.p, size_t(h.end - h.p));
      if (rest.size() < 2 || rest[0] != '"') return false;
      if (rest[1] != 'P' && rest[1] != 'e' && rest[1] != 'r') return true;
      if (!h.longStr(&v)) return false;
      return profilerStepNumber(v) < 0 && !isDataLoaderRange(v) && v != "record_param_comms";
    }
    if (!h.longStr(&v)) return false;
    return !isPythonDataLoaderNext(v);
  }
  if (k == "name") {
    if (v != "thread_name" && v != "thread_sort_index" && v != "process_sort_index") return false;
    return h.lit(',') && h.member(&k, &v) && k == "ph" && v == "M";
  }
  return false;
}

size_t compactEvents(char* buf, size_t begin, size_t close, const EventSpan* events, size_t count,
                     bool keep_operators, size_t* dropped) {
  size_t out = begin + 1; // after '['
  size_t prevEnd = begin + 1;
  bool first = true;
  for (size_t i = 0; i < count; ++i) {
    const EventSpan& e = events[i];
    // Between two events: whitespace, exactly one comma (none before the first).
    size_t commas = 0;
    for (size_t j = prevEnd; j < e.start; ++j) {
      if (buf[j] == ',')
        ++commas;
      else if (!isSpace(buf[j]))
        return 0;
    }
    if (commas != (i == 0 ? 0u : 1u)) return 0;
    prevEnd = e.end;
    if (isDroppableEvent(std::string_view(buf + e.start, e.end - e.start), keep_operators)) {
      ++*dropped;
      continue;
    }
    if (!first) buf[out++] = ',';
    first = false;
    if (out != e.start) std::memmove(buf + out, buf + e.start, e.end - e.start);
    out += e.end - e.start;
  }
  if (close != 0)
    for (size_t j = prevEnd; j < close; ++j)
      if (!isSpace(buf[j])) return 0;
  buf[out++] = ']';
  return out;
}

} // namespace gpuwise::advisor
