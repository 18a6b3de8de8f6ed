// Kernels: how many ran, how long they took in total, and which names cost the most.
//
// Per distinct kernel name (across processes, since names live in per-process tables): count,
// total/min/max GPU time, the flags seen, and its launch configurations (grid, block, registers,
// shared memory), most frequent first. Totals are sums of durations, not unions: two overlapping
// kernels both count, as in every profiler's kernel table.
//
// Each distinct name is also classified once (advisor/precision: precision, tensor cores) and
// each execution's occupancy is added to its name's OccupancyStats (occupancy_analyzer.h).
//
// Pure function of the trace; any thread. Results merge by name (sums, minima, maxima).
#pragma once

#include "advisor/analysis/occupancy_analyzer.h"
#include "advisor/precision/kernel_classifier.h"
#include "profiler/model/trace.h"

#include <optional>
#include <string>
#include <string_view>
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
  profiler::KernelClass kernel_class; // precision and tensor cores, from display_name
  bool matmul_like = false;           // a GEMM / convolution (isMatmulLike)
  OccupancyStats occupancy;

  static constexpr size_t kMaxConfigs = 8;
  std::optional<double> meanSeconds() const;
};

struct KernelResult {
  uint64_t count = 0;
  uint64_t timed_count = 0;
  model::TimeNs total_ns = 0;
  std::vector<KernelStats> by_name; // by total_ns descending, then count, then name
  OccupancyStats occupancy;         // every execution's (the sum over by_name)

  void merge(const KernelResult& other);
};

KernelResult analyzeKernels(const model::Trace& trace);

// True for GEMM and convolution kernels (cuBLAS/cuDNN/CUTLASS/nvjet names, "gemm", "conv",
// "matmul", "wgrad"/"dgrad", Winograd): the work tensor cores run when the data type allows.
bool isMatmulLike(std::string_view demangled_name);

} // namespace gpuwise::advisor
