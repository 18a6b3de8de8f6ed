// The per-GPU figures of one process that JobAnalysis does not keep per device, as aggregates, so
// /metrics is built from a stream's windows rather than its raw records (bounded memory): which
// devices the process used, the kernel and copy results of each device of a process that used
// several, and what the process holds on each device now (memory_used_bytes).
//
// For a process that used one device its own JobAnalysis::kernels / copies are that device's
// (split stays false, nothing more is computed or kept). Once a second device shows up, each
// window's kernels and copies are also analysed per device; the windows before, all on the one
// device seen until then, are that device's share of the process's results so far (promote()).
//
// Pure; any thread. Results of later windows merge into earlier ones (merge()).
#pragma once

#include "advisor/analysis/copy_analyzer.h"
#include "advisor/analysis/kernel_analyzer.h"
#include "profiler/model/trace.h"

#include <map>
#include <optional>
#include <set>

namespace gpuwise::advisor {

struct DeviceAggregate {
  // This device's kernels and copies only; filled only in a split DeviceAggregates.
  KernelResult kernels;
  CopyResult copies;
  // The latest MemorySample with a reserved figure (later record wins a tie).
  std::optional<model::TimeNs> reserved_time;
  int64_t reserved_bytes = 0;
  // Device allocations minus frees (sizes as recorded), and whether there was any.
  bool any_allocation = false;
  int64_t net_allocated_bytes = 0;

  // What the process holds on the device now: the latest reserved sample, else the device
  // allocations not freed (never below 0); nullopt when nothing says.
  std::optional<uint64_t> memoryUsedBytes() const;
};

struct DeviceAggregates {
  std::map<uint32_t, DeviceAggregate> devices; // every device with any activity
  bool split = false; // devices[d].kernels/copies hold each device's own results

  // Folds in a later window's aggregates (both split, or neither).
  void merge(const DeviceAggregates& later);
  // Turns a single-device aggregate into a split one: its one device's kernels and copies are
  // `kernels` and `copies` (the process's results so far).
  void promote(const KernelResult& kernels, const CopyResult& copies);
};

// The aggregates of `p`'s own records. `before` is what the same process's earlier records gave
// (empty for a whole process): kernels and copies are analysed per device (split) once the process
// has used more than one device, counting `before`'s (the per-device analysis copies one device's
// kernels and copies at a time and borrows p's name table, which is back in `p` when this returns;
// p's records are not changed).
DeviceAggregates aggregateDevices(model::ProcessTrace& p, const DeviceAggregates& before = {});

} // namespace gpuwise::advisor
