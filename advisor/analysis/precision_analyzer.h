// Precision: where kernel time went by numeric precision, how much of it ran on tensor cores, and
// how much FP32 GEMM/convolution time tensor cores could take over (TF32 or BF16 autocast).
//
// From the kernel table (kernel_analyzer.h), where every distinct name is classified once by
// advisor/precision; shares are of timed kernel time (sums of durations, like the kernel table).
// Names the classifier does not recognise are listed, most time first, so the table can grow;
// their time counts as "other".
//
// Pure; any thread. Recomputed from the merged kernel table when analyses merge.
#pragma once

#include "advisor/analysis/kernel_analyzer.h"
#include "advisor/precision/precision.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

struct UnknownKernel {
  std::string name; // display (demangled) name
  uint64_t count = 0;
  model::TimeNs total_ns = 0;
};

struct PrecisionResult {
  model::TimeNs kernel_ns = 0; // timed kernel time, the denominator of every share
  std::array<model::TimeNs, profiler::kPrecisionCount> ns{}; // by profiler::Precision value
  model::TimeNs tensor_core_ns = 0;
  // FP32 kernels off tensor cores that are GEMMs or convolutions: what TF32 / BF16 could move.
  model::TimeNs fp32_matmul_ns = 0;
  uint64_t unknown_names = 0;
  model::TimeNs unknown_ns = 0;
  std::vector<UnknownKernel> unknown; // most time first, at most kMaxUnknownListed

  static constexpr size_t kMaxUnknownListed = 20;

  model::TimeNs at(profiler::Precision p) const { return ns[static_cast<size_t>(p)]; }
  // Shares of kernel_ns; nullopt without timed kernels.
  std::optional<double> share(profiler::Precision p) const;
  std::optional<double> tensorCoreShare() const;
  std::optional<double> fp32MatmulShare() const;
  // Share of FP32 time that is GEMM/convolution; nullopt without FP32 time.
  std::optional<double> fp32MatmulShareOfFp32() const;
};

PrecisionResult analyzePrecision(const KernelResult& kernels);

} // namespace gpuwise::advisor
