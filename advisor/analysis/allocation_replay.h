// Allocation replay: the running sum of a process's device memory, per device, from its Allocation
// records. The one replay behind the memory analyzer's peak and the utilisation analyzer's memory
// curve, so the two cannot disagree.
//
// Counts device, managed and unknown-kind allocations (pinned host memory is not device memory).
// Records are replayed in time order, ties in record order; a free without a size is matched to
// its allocation by address. A record at time 0 (the model's "unknown") is left out: a running
// sum depends on order, and such a record has none (put first, its free would subtract from
// nothing and its allocation would seem held from the start).
//
// Pure function of the trace; any thread.
#pragma once

#include "profiler/model/trace.h"

#include <map>
#include <vector>

namespace gpuwise::advisor {

// True for the memory kinds the replay counts as device memory.
bool countsAsDeviceMemory(model::MemoryKind kind);

struct AllocationLevel {
  model::TimeNs time = 0;
  uint64_t bytes = 0; // the running sum just after the record at `time`
};

struct DeviceAllocations {
  std::vector<AllocationLevel> levels; // one per replayed allocation or free, in time order
  uint64_t peak_bytes = 0;             // the highest level
  bool allocated = false;              // at least one allocation (not only frees) was replayed
};

// Per device, the devices with at least one replayed record.
std::map<uint32_t, DeviceAllocations> replayAllocations(const model::ProcessTrace& process);

} // namespace gpuwise::advisor
