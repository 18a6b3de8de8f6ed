// Memory: peak device memory per (process, device).
//
// Sources, best first: MemorySample reserved bytes (the caching allocator's or NVML's view: what
// the process holds on the device), MemorySample allocated bytes when only those are known (a
// lower bound), otherwise the highest running sum of the process's allocations on that device
// (allocation_replay.h: the same replay the memory curve draws). Unknown (nullopt) when there is
// no such record.
//
// Pure function of the trace; any thread. Results merge by maximum.
#pragma once

#include "profiler/model/trace.h"

#include <optional>
#include <vector>

namespace gpuwise::advisor {

enum class MemorySource : uint8_t { Reserved, Allocated, Allocations };
const char* toString(MemorySource);

struct DeviceMemory {
  int64_t pid = 0;
  int32_t rank = -1;
  uint32_t device = 0;
  uint64_t peak_bytes = 0;
  MemorySource source = MemorySource::Reserved;
  uint64_t memory_total_bytes = 0; // the device's capacity, 0 when unknown
};

struct MemoryResult {
  std::vector<DeviceMemory> devices; // only (process, device) pairs with a known peak
  // The largest per-(process, device) peak: what had to fit on one GPU. nullopt when unknown.
  std::optional<uint64_t> peakBytes() const;
  void merge(const MemoryResult& other);
};

MemoryResult analyzeMemory(const model::Trace& trace);

} // namespace gpuwise::advisor
