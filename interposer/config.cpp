#include "interposer/config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gpuwise::interposer {

namespace {

void note(Config& c, const char* var, const char* value, const char* why) {
  if (!c.problems.empty()) c.problems += "; ";
  c.problems += std::string(var) + "='" + value + "' " + why;
}

void readUint(Config& c, const GetEnv& getenv, const char* var, uint32_t& out, uint32_t lo,
              uint32_t hi) {
  const char* v = getenv(var);
  if (!v || !*v) return;
  errno = 0;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, 10);
  if (errno || *end || v[0] == '-') return note(c, var, v, "is not a number");
  if (n < lo || n > hi)
    return note(c, var, v,
                ("is outside " + std::to_string(lo) + ".." + std::to_string(hi)).c_str());
  out = uint32_t(n);
}

void readInt(const GetEnv& getenv, const char* var, int32_t& out) {
  const char* v = getenv(var);
  if (!v || !*v) return;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end == '\0' && n >= 0 && n < (1l << 30)) out = int32_t(n);
}

std::string firstOf(const GetEnv& getenv, const char* a, const char* b) {
  const char* v = getenv(a);
  if (v && *v) return v;
  v = getenv(b);
  return v ? v : "";
}

} // namespace

Config readConfig(const GetEnv& getenv) {
  Config c;
  if (const char* v = getenv("GPUWISE_ENDPOINT")) c.endpoint = v;
  if (const char* v = getenv("GPUWISE_DISABLE"); v && *v) {
    if (!std::strcmp(v, "1") || !std::strcmp(v, "true"))
      c.disabled = true;
    else if (std::strcmp(v, "0") != 0 && std::strcmp(v, "false") != 0)
      note(c, "GPUWISE_DISABLE", v, "is not 0 or 1");
  }
  if (const char* v = getenv("GPUWISE_CUPTI"); v && *v) {
    if (!std::strcmp(v, "0") || !std::strcmp(v, "false"))
      c.cupti = false;
    else if (std::strcmp(v, "1") != 0 && std::strcmp(v, "true") != 0)
      note(c, "GPUWISE_CUPTI", v, "is not 0 or 1");
  }
  if (const char* v = getenv("GPUWISE_CUPTI_LIBRARY")) c.cupti_library = v;
  for (const char* name : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* v = getenv(name);
    if (v && *v && c.cuda_home.empty()) c.cuda_home = v;
  }
  if (const char* v = getenv("GPUWISE_LOG"); v && *v) {
    if (!std::strcmp(v, "quiet"))
      c.log = LogLevel::Quiet;
    else if (!std::strcmp(v, "warn"))
      c.log = LogLevel::Warn;
    else if (!std::strcmp(v, "debug"))
      c.log = LogLevel::Debug;
    else
      note(c, "GPUWISE_LOG", v, "is not quiet, warn or debug");
  }
  if (const char* v = getenv("GPUWISE_CLOCK"); v && *v) {
    if (!std::strcmp(v, "monotonic"))
      c.allow_counter_clock = false;
    else if (std::strcmp(v, "counter") != 0)
      note(c, "GPUWISE_CLOCK", v, "is not counter or monotonic");
  }
  if (const char* v = getenv("GPUWISE_LAUNCH_DETAIL"); v && *v) {
    if (!std::strcmp(v, "full"))
      c.record_covered_launches = true;
    else if (std::strcmp(v, "auto") != 0)
      note(c, "GPUWISE_LAUNCH_DETAIL", v, "is not auto or full");
  }
  if (const char* v = getenv("GPUWISE_OVERHEAD_BUDGET"); v && *v) {
    char* end = nullptr;
    double b = std::strtod(v, &end);
    if (*end || !(b >= 0 && b <= 1))
      note(c, "GPUWISE_OVERHEAD_BUDGET", v, "is not a ratio in 0..1");
    else
      c.overhead_budget = b;
  }
  readUint(c, getenv, "GPUWISE_RING_EVENTS", c.ring_events, 64, 1u << 20);
  readUint(c, getenv, "GPUWISE_MAX_THREADS", c.max_threads, 1, 4096);
  readUint(c, getenv, "GPUWISE_BATCH_MS", c.batch_ms, 1, 60000);
  readUint(c, getenv, "GPUWISE_EXIT_TIMEOUT_MS", c.exit_timeout_ms, 0, 60000);
  readUint(c, getenv, "GPUWISE_LINGER_MS", c.linger_ms, 0, 60000);

  readInt(getenv, "RANK", c.rank);
  readInt(getenv, "LOCAL_RANK", c.local_rank);
  readInt(getenv, "WORLD_SIZE", c.world_size);
  c.pod = firstOf(getenv, "GPUWISE_POD", "POD_NAME");
  c.ns = firstOf(getenv, "GPUWISE_NAMESPACE", "POD_NAMESPACE");
  c.container = firstOf(getenv, "GPUWISE_CONTAINER", "CONTAINER_NAME");
  if (const char* job = getenv("GPUWISE_JOB")) c.job = job;
  if (const char* node = getenv("GPUWISE_NODE")) c.node = node;
  return c;
}

} // namespace gpuwise::interposer
