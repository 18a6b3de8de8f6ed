// The shim's configuration, read from the environment once (in the LD_PRELOAD constructor) into an
// immutable value. Every variable is named here; a bad value is named in `problems` and the
// default is kept, never a failure.
//
//   GPUWISE_ENDPOINT      where batches go (tcp://host:port, ipc://path; "null:" records and
//                         discards). Unset: the shim stays off (nothing to send to).
//   GPUWISE_DISABLE=1     off: hooks only forward.
//   GPUWISE_CUPTI=0       stay on the interposer tier (no CUPTI).
//   GPUWISE_CUPTI_LIBRARY the libcupti.so.13 to load, and no other (default: searched for, see
//                         profiler/cupti/cupti_library.h; CUDA_HOME or CUDA_PATH is one place)
//   GPUWISE_LOG           quiet | warn (default) | debug
//   GPUWISE_RING_EVENTS   events per thread ring (default 8192, rounded up to a power of two)
//   GPUWISE_MAX_THREADS   rings in the pool: threads that can record at once (default 256)
//   GPUWISE_BATCH_MS      batch interval (default 50)
//   GPUWISE_EXIT_TIMEOUT_MS  the most the final flush may add to process exit (default 2000)
//   GPUWISE_LINGER_MS     how long the socket may flush queued messages at exit (default 200)
//   GPUWISE_CLOCK         counter (default: rdtsc/cntvct where usable) | monotonic
//   GPUWISE_LAUNCH_DETAIL auto (default: launches CUPTI records are only counted by the hooks) |
//                         full (the hooks record every launch as well)
//   GPUWISE_OVERHEAD_BUDGET  share of wall time the hooks may cost before launch detail is shed
//                         (sampled windows); default 0.01, 0 never sheds
// Process identity, read at the same time: RANK, LOCAL_RANK, WORLD_SIZE; GPUWISE_POD,
// GPUWISE_NAMESPACE, GPUWISE_CONTAINER or POD_NAME, POD_NAMESPACE, CONTAINER_NAME; GPUWISE_JOB (the
// training job's name, which the webhook sets from the pod's labels); GPUWISE_NODE (the node's
// name, which the webhook sets from spec.nodeName; the host name when unset).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace gpuwise::interposer {

enum class LogLevel : uint8_t { Quiet = 0, Warn = 1, Debug = 2 };

struct Config {
  std::string endpoint;
  bool disabled = false;
  bool cupti = true;
  std::string cupti_library; // GPUWISE_CUPTI_LIBRARY
  std::string cuda_home;     // CUDA_HOME, else CUDA_PATH: where a toolkit's CUPTI may be
  LogLevel log = LogLevel::Warn;
  uint32_t ring_events = 8192;
  uint32_t max_threads = 256;
  uint32_t batch_ms = 50;
  uint32_t exit_timeout_ms = 2000;
  uint32_t linger_ms = 200;
  bool allow_counter_clock = true;
  bool record_covered_launches = false;
  double overhead_budget = 0.01;

  int32_t rank = -1, local_rank = -1, world_size = -1;
  std::string pod, ns, container, job, node;

  std::string problems; // "GPUWISE_BATCH_MS='abc' is not a number; ..." or empty
};

using GetEnv = std::function<const char*(const char*)>;
Config readConfig(const GetEnv& getenv);

} // namespace gpuwise::interposer
