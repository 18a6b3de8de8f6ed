// enable_mixed_precision / enable_tf32: GEMM and convolution time that tensor cores could run.
//
// Candidates (precision_analyzer.h): FP32 GEMM/convolution kernels on the CUDA cores
// (fp32_matmul_ns) and, for mixed precision only, TF32 tensor-core kernels (TF32 where BF16 would
// do). Speedups from the GPU's dense peak throughput (gpu_tables.h):
//   enable_mixed_precision  16-bit tensor rate (BF16, or FP16 with a gradient scaler on GPUs
//                           without BF16) over the FP32 rate for FP32 time, over the TF32 rate
//                           for TF32 time
//   enable_tf32             TF32 tensor rate over the FP32 rate, for FP32 time only; only on
//                           GPUs with TF32 (Ampere and later)
// Expected saving = sum over candidates of time x (1 - 1/speedup), over the GPU span; fires when
// the candidate time is >= Thresholds::Precision::min_share of GPU busy time (the GPU's own work:
// a host-bound job, or one slowed by a profiler's host overhead, still does that work). The peak
// ratio is an upper bound (memory-bound layers gain less): confidence medium for a GPU in the
// table, low for an architecture's representative (from the compute capability, or, for a trace
// without device properties, from the architecture cuBLAS/cuDNN kernel names carry: volta_,
// ampere_, sm90_...).
#pragma once

#include "advisor/rules/rule.h"

namespace gpuwise::advisor {

class EnableMixedPrecisionRule final : public Rule {
public:
  std::string_view id() const override { return "enable_mixed_precision"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

class EnableTf32Rule final : public Rule {
public:
  std::string_view id() const override { return "enable_tf32"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

} // namespace gpuwise::advisor
