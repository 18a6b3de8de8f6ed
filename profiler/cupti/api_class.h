// What kind of host call a CUPTI API record (or a hook record) describes, for joining GPU records
// to their launch and for telling whether CUPTI already covered a call the hooks also saw. Plain
// enum: no CUPTI types, so the interposer's coverage logic can use it.
#pragma once

#include <cstdint>

namespace gpuwise::profiler {

enum class ApiClass : uint8_t {
  Other = 0,
  Launch,      // kernel launches: GPU record CONCURRENT_KERNEL
  Copy,        // memcpy: GPU record MEMCPY
  Memset,      // memset: GPU record MEMSET
  Sync,        // device/stream/event synchronisation and stream-wait-event: SYNCHRONIZATION
  GraphLaunch, // cudaGraphLaunch: the graph's kernels and copies carry its correlation id
};
inline constexpr int kApiClassCount = 6;

// One host API call as CUPTI saw it (a RUNTIME or DRIVER activity record), on our timeline.
struct ApiSpan {
  int64_t start = 0, end = 0;
  uint32_t thread = 0; // OS thread id (CUPTI is told to report system thread ids)
  uint32_t correlation = 0;
  ApiClass cls = ApiClass::Other;
};

} // namespace gpuwise::profiler
