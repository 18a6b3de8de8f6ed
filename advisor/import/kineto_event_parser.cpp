// Compiled with the Haswell instruction set on x86-64 (see CMakeLists.txt): simdjson On-Demand is
// header code built for the compile-time target, and without AVX2 it falls back to its scalar
// kernel. kineto_importer.cpp checks the CPU before anything here runs.
#include "advisor/import/kineto_event_parser.h"

#include "advisor/import/kineto_text.h"

#include <simdjson.h>

#include <charconv>
#include <cstring>

namespace gpuwise::advisor {
namespace {

namespace od = simdjson::ondemand;

template <size_t N> inline bool keyIs(const char* raw, const char (&lit)[N]) {
  return std::memcmp(raw, lit, N - 1) == 0 && raw[N - 1] == '"';
}

inline bool isSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

inline std::string_view token(od::value& v) {
  std::string_view t = v.raw_json_token();
  while (!t.empty() && isSpace(t.back()))
    t.remove_suffix(1);
  return t;
}

// A string value without copying when it has no escapes (nearly always).
std::string_view stringValue(od::value& v) {
  const std::string_view t = token(v);
  if (t.size() < 2 || t.front() != '"') return {};
  const std::string_view inner = t.substr(1, t.size() - 2);
  if (std::memchr(inner.data(), '\\', inner.size()) == nullptr) return inner;
  std::string_view s;
  if (v.get_string().get(s)) return {};
  return s;
}

void parseId(std::string_view tok, int64_t* value, bool* numeric) {
  if (!tok.empty() && tok.front() == '"')
    *numeric = parseTrailingInt(tok, value);
  else
    *numeric = parseLooseInt(tok, value);
}

inline int64_t intValue(od::value& v, int64_t fallback) {
  int64_t x;
  return parseLooseInt(token(v), &x) ? x : fallback;
}

double doubleValue(od::value& v, double fallback) {
  const std::string_view t = token(v);
  double d = fallback;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), d);
  return r.ec == std::errc() ? d : fallback;
}

void dim3Value(od::value& v, model::Dim3* out, bool* has) {
  od::array arr;
  if (v.get_array().get(arr)) return;
  uint32_t xyz[3] = {1, 1, 1};
  size_t i = 0;
  for (auto element : arr) {
    od::value e;
    if (std::move(element).get(e)) return;
    int64_t x;
    if (i < 3 && parseLooseInt(token(e), &x) && x >= 0) xyz[i] = uint32_t(x);
    ++i;
  }
  *out = {xyz[0], xyz[1], xyz[2]};
  *has = true;
}

[[noreturn]] void malformed(const char* what, simdjson::error_code code, uint64_t offset) {
  throw KinetoParseError(std::string("malformed JSON in traceEvents near byte ") +
                         std::to_string(offset) + ": " + what + " (" +
                         simdjson::error_message(code) + ")");
}

// The collective's args (record_param_comms and newer collective kernels), and the External id
// that joins the operator to its kernel.
void parseCollectiveArg(const char* k, od::value& v, KinetoArgs& a) {
  switch (k[0]) {
  case 'C':
    if (keyIs(k, "Collective name")) {
      a.collective = true;
      a.collective_name = stringValue(v);
    }
    break;
  case 'I':
    if (keyIs(k, "In msg nelems")) a.in_nelems = intValue(v, -1);
    break;
  case 'O':
    if (keyIs(k, "Out msg nelems")) a.out_nelems = intValue(v, -1);
    break;
  case 'G':
    if (keyIs(k, "Group size")) a.group_size = intValue(v, -1);
    break;
  case 'E':
    if (keyIs(k, "External id")) a.external_id = intValue(v, -1);
    break;
  case 'P':
    if (keyIs(k, "Process Group Name")) a.process_group = stringValue(v);
    break;
  default: break;
  }
}

void parseArgs(od::object& obj, KinetoArgs& a) {
  for (auto fieldResult : obj) {
    od::field field;
    if (auto err = std::move(fieldResult).get(field)) throw simdjson::simdjson_error(err);
    const char* k = field.key().raw();
    od::value& v = field.value();
    switch (k[0]) {
    case 'd':
      if (keyIs(k, "device"))
        a.device = intValue(v, -1);
      else if (keyIs(k, "dynamic shared memory"))
        a.dynamic_shared = intValue(v, -1);
      else if (keyIs(k, "direction"))
        a.direction = stringValue(v);
      else if (keyIs(k, "dtype"))
        a.dtype = stringValue(v);
      break;
    case 's':
      if (keyIs(k, "stream") || keyIs(k, "stream_id"))
        a.stream = intValue(v, -1);
      else if (keyIs(k, "shared memory"))
        a.shared_memory = intValue(v, -1);
      else if (keyIs(k, "static shared memory"))
        a.static_shared = intValue(v, -1);
      else if (keyIs(k, "size"))
        a.bytes = intValue(v, -1);
      break;
    case 'c':
      if (keyIs(k, "correlation")) {
        const int64_t c = intValue(v, 0);
        a.correlation = c > 0 ? uint64_t(c) : 0;
      } else if (keyIs(k, "cuda_sync_kind")) {
        a.sync_kind = stringValue(v);
      } else if (keyIs(k, "cooperative")) {
        a.cooperative = intValue(v, 0) != 0 || token(v) == "true";
      }
      break;
    case 'b':
      if (keyIs(k, "bytes"))
        a.bytes = intValue(v, -1);
      else if (keyIs(k, "block"))
        dim3Value(v, &a.block, &a.has_block);
      break;
    case 'g':
      if (keyIs(k, "grid"))
        dim3Value(v, &a.grid, &a.has_grid);
      else if (keyIs(k, "graph id"))
        a.graph_id = intValue(v, -1);
      else if (keyIs(k, "gpuwise.kind"))
        a.gw_kind = stringValue(v);
      else if (keyIs(k, "gpuwise.step"))
        a.gw_step = intValue(v, -1);
      break;
    case 'r':
      if (keyIs(k, "registers per thread")) a.registers = intValue(v, -1);
      break;
    case 'e':
      if (keyIs(k, "est. achieved occupancy %")) a.occupancy_pct = doubleValue(v, -1);
      break;
    case 'D':
      if (keyIs(k, "Device Type"))
        a.device_type = intValue(v, -1);
      else if (keyIs(k, "Device Id"))
        a.device_id = intValue(v, -1);
      break;
    case 'A':
      if (keyIs(k, "Addr")) {
        int64_t x;
        if (parseLooseInt(token(v), &x)) {
          a.addr = uint64_t(x);
          a.has_addr = true;
        }
      }
      break;
    case 'B':
      if (keyIs(k, "Bytes")) {
        int64_t x;
        if (parseLooseInt(token(v), &x)) {
          a.mem_bytes = x;
          a.has_mem_bytes = true;
        }
      }
      break;
    case 'T':
      if (keyIs(k, "Total Allocated"))
        a.total_allocated = intValue(v, -1);
      else if (keyIs(k, "Total Reserved"))
        a.total_reserved = intValue(v, -1);
      break;
    case 'n':
      if (keyIs(k, "name")) a.meta_name = stringValue(v);
      break;
    case 'l':
      if (keyIs(k, "labels")) a.labels = stringValue(v);
      break;
    default: parseCollectiveArg(k, v, a); break;
    }
  }
}

} // namespace

KinetoCategory classifyCategory(std::string_view cat) {
  using C = KinetoCategory;
  switch (cat.empty() ? '\0' : cat[0]) {
  case 'k':
    if (cat == "kernel") return C::Kernel;
    break;
  case 'K':
    if (cat == "Kernel") return C::Kernel;
    break;
  case 'g':
    if (cat == "gpu_memcpy") return C::Memcpy;
    if (cat == "gpu_memset") return C::Memset;
    if (cat == "gpu_user_annotation") return C::GpuAnnotation;
    break;
  case 'M':
    if (cat == "Memcpy") return C::Memcpy;
    if (cat == "Memset") return C::Memset;
    break;
  case 'c':
    if (cat == "cpu_op") return C::CpuOp;
    if (cat == "cuda_runtime") return C::Runtime;
    if (cat == "cuda_driver") return C::Driver;
    if (cat == "cuda_sync") return C::CudaSync;
    if (cat == "cpu_instant_event") return C::CpuInstant;
    break;
  case 'R':
    if (cat == "Runtime") return C::Runtime;
    break;
  case 'O':
    if (cat == "Operator") return C::CpuOp;
    break;
  case 'u':
    if (cat == "user_annotation") return C::UserAnnotation;
    break;
  case 'p':
    if (cat == "python_function") return C::Python;
    break;
  case 'm':
    if (cat == "mtia_ccp_events") return C::MtiaDevice;
    if (cat == "mtia_runtime") return C::MtiaRuntime;
    break;
  default: break;
  }
  return C::Other;
}

struct KinetoEventParser::Impl {
  od::parser parser;
  od::parser args_parser; // for `args` that came before the fields that say what the event is
  const char* data = nullptr;
  size_t capacity = 0;
};

KinetoEventParser::KinetoEventParser() : impl_(std::make_unique<Impl>()) {}
KinetoEventParser::~KinetoEventParser() = default;

void KinetoEventParser::parseBatch(const char* data, size_t len, size_t capacity,
                                   uint64_t stream_offset, KinetoEventSink& sink) {
  Impl& im = *impl_;
  im.data = data;
  im.capacity = capacity;
  od::document doc;
  if (auto err = im.parser.iterate(data, len, capacity).get(doc))
    malformed("cannot index the batch", err, stream_offset);
  auto where = [&]() -> uint64_t {
    const char* p = nullptr;
    if (doc.current_location().get(p) || p < data || p > data + len) return stream_offset;
    return stream_offset + uint64_t(p - data);
  };
  try {
    od::array events;
    if (auto err = doc.get_array().get(events))
      malformed("traceEvents is not an array", err, where());
    for (auto element : events) {
      od::object obj;
      if (auto err = element.get_object().get(obj))
        malformed("an event is not an object", err, where());
      ++events_seen_;
      KinetoEvent ev;
      KinetoArgs args;
      bool haveArgs = false;
      bool sawCat = false;
      std::string_view deferred;
      for (auto fieldResult : obj) {
        od::field field;
        if (auto err = std::move(fieldResult).get(field))
          malformed("bad event field", err, where());
        const char* k = field.key().raw();
        od::value& v = field.value();
        switch (k[0]) {
        case 'c':
          if (keyIs(k, "cat")) {
            const std::string_view t = token(v);
            ev.cat = t.size() >= 2 && t.front() == '"' ? classifyCategory(t.substr(1, t.size() - 2))
                                                       : KinetoCategory::Other;
            sawCat = true;
          }
          break;
        case 'p':
          if (keyIs(k, "ph")) {
            const std::string_view t = token(v);
            ev.ph = t.size() >= 3 ? t[1] : 0;
          } else if (keyIs(k, "pid")) {
            parseId(token(v), &ev.pid, &ev.pid_numeric);
          }
          break;
        case 't':
          if (keyIs(k, "ts"))
            ev.has_ts = parseMicrosToNs(token(v), &ev.ts);
          else if (keyIs(k, "tid"))
            parseId(token(v), &ev.tid, &ev.tid_numeric);
          break;
        case 'd':
          if (keyIs(k, "dur")) ev.has_dur = parseMicrosToNs(token(v), &ev.dur);
          break;
        case 'n':
          if (keyIs(k, "name")) ev.name = stringValue(v);
          break;
        case 'a':
          if (keyIs(k, "args")) {
            od::object argsObj;
            if (v.get_object().get(argsObj)) break; // args that are not an object carry nothing
            if (!sawCat) {
              // What this event is may only be said after its args (never in Kineto's own
              // writer): keep the raw text and decide at the end.
              if (auto err = argsObj.raw_json().get(deferred)) malformed("bad args", err, where());
            } else if (sink.wantsArgs(ev)) {
              parseArgs(argsObj, args);
              haveArgs = true;
            }
          }
          break;
        default: break;
        }
      }
      if (!deferred.empty() && sink.wantsArgs(ev)) {
        od::document argsDoc;
        const size_t cap = size_t(im.data + im.capacity - deferred.data());
        if (auto err = im.args_parser.iterate(deferred.data(), deferred.size(), cap).get(argsDoc))
          malformed("bad args", err, where());
        od::object argsObj;
        if (auto err = argsDoc.get_object().get(argsObj)) malformed("bad args", err, where());
        parseArgs(argsObj, args);
        haveArgs = true;
      }
      sink.onEvent(ev, haveArgs ? &args : nullptr);
    }
  } catch (const simdjson::simdjson_error& e) {
    malformed("bad value", e.error(), where());
  }
}

} // namespace gpuwise::advisor
