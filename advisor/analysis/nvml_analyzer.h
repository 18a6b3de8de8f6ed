// NVML's view of the devices, per (process, device): the peak memory NVML saw the process use
// (context and allocator overhead included, unlike the allocator's own figures), the device's peak
// used memory and mean utilisation, from the shim's DeviceSamples (live runs only).
//
// Pure; any thread.
#pragma once

#include "profiler/model/trace.h"

#include <cstdint>
#include <vector>

namespace gpuwise::advisor {

struct NvmlDeviceFigures {
  int64_t pid = 0;
  int32_t rank = -1; // with pid, tells apart processes of different ranks (containers reuse pids)
  uint32_t device = 0;
  uint64_t samples = 0;
  int64_t process_used_peak_bytes = -1; // -1: NVML never listed the process (pid namespace)
  int64_t device_used_peak_bytes = -1;
  int64_t device_total_bytes = -1;
  double gpu_utilization_mean = -1; // percent; -1 unknown (MIG slices report none)
};

struct NvmlResult {
  std::vector<NvmlDeviceFigures> devices; // by pid, rank, then device
  bool sampled() const { return !devices.empty(); }
  void merge(const NvmlResult& other);
};

NvmlResult analyzeNvml(const model::Trace& trace);

} // namespace gpuwise::advisor
