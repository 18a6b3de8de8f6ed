// Kernels: how many ran, how long they took in total, and which names cost the most.
//
// Per distinct kernel name (across processes, since names live in per-process tables): count,
// total/min/max GPU time, the flags seen, and its launch configurations (grid, block, registers,
// shared memory), most frequent first. Totals are sums of durations, not unions: two overlapping
// kernels both count, as in every profiler's kernel table.
//
// Pure function of the trace; any thread. Results merge by name (sums, minima, maxima).
#pragma once

#include "profiler/model/trace.h"

#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

struct LaunchConfig {
  model::Dim3 grid, block;
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_bytes = 0;
  uint64_t count = 0;
  bool sameShape(const LaunchConfig& o) const {
    return grid == o.grid && block == o.block && registers_per_thread == o.registers_per_thread &&
           static_shared_bytes == o.static_shared_bytes &&
           dynamic_shared_bytes == o.dynamic_shared_bytes;
  }
};

struct KernelStats {
  std::string name;         // as recorded: mangled when the source mangles
  std::string display_name; // demangled (profiler::demangle, as the precision classifier sees it)
  uint64_t count = 0;
  uint64_t timed_count = 0;                           // with GPU timestamps
  model::TimeNs total_ns = 0, min_ns = 0, max_ns = 0; // over timed executions
  uint8_t flags = 0;                                  // model::KernelFlags seen on any execution
  // Distinct configurations, most frequent first, at most kMaxConfigs; executions with further
  // configurations are counted in other_config_count.
  std::vector<LaunchConfig> configs;
  uint64_t other_config_count = 0;

  static constexpr size_t kMaxConfigs = 8;
  std::optional<double> meanSeconds() const;
};

struct KernelResult {
  uint64_t count = 0;
  uint64_t timed_count = 0;
  model::TimeNs total_ns = 0;
  std::vector<KernelStats> by_name; // by total_ns descending, then count, then name

  void merge(const KernelResult& other);
};

KernelResult analyzeKernels(const model::Trace& trace);

} // namespace gpuwise::advisor
