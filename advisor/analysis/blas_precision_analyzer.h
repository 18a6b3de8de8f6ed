// The cuBLAS precision probe: what each recorded cuBLAS / cuBLASLt matmul asked for (its data
// types, compute type and math mode) beside what the kernels it launched say they computed in
// (advisor/precision's classification of their names). The kernel-name classification is what
// every other precision figure rests on; this is its ground truth where the shim saw the call.
//
// Requested precision (requestedPrecision): the A/B data type, except FP32 data, where the compute
// type decides (32F_FAST_TF32 or default math with CUBLAS_TF32_TENSOR_OP_MATH: tf32; 32F_FAST_16F
// fp16; 32F_FAST_16BF bf16; 64F fp64; otherwise fp32).
//
// Matching: a kernel belongs to a call when the same thread launched it while the call ran
// (launch_start within the call's host interval). Agreement: the kernel's classified precision
// equals the requested one. A kernel whose name the classifier cannot place (unknown or "other")
// is counted as unclassified, not as a disagreement. A disagreement is a finding in itself: TF32
// or 16-bit math asked for, an FP32 CUDA-core kernel ran (unaligned shapes, a heuristic's choice),
// or a name rule that misreads cuBLAS's kernel names.
//
// Pure; any thread.
#pragma once

#include "advisor/precision/precision.h"
#include "profiler/model/trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

// One (call signature, kernel) pair: the calls with these types that ran this kernel.
struct BlasKernelMatch {
  std::string api;   // "cublasGemmEx"
  std::string types; // "A=fp16 B=fp16 C=fp32 compute=32F math=default"
  profiler::Precision requested = profiler::Precision::Other;
  std::string kernel; // display (demangled) name
  profiler::Precision kernel_precision = profiler::Precision::Other;
  bool classified = false; // the name told its precision
  bool agrees = false;
  uint64_t calls = 0;
  model::TimeNs kernel_ns = 0; // timed kernel time of those launches

  bool sameKey(const BlasKernelMatch& o) const {
    return api == o.api && types == o.types && kernel == o.kernel;
  }
};

struct BlasPrecisionResult {
  uint64_t calls = 0;              // BLAS calls recorded (0: no probe data, e.g. injection-only)
  uint64_t calls_with_kernels = 0; // calls whose kernels were found
  uint64_t agreeing_calls = 0;     // every classified kernel of the call agrees
  uint64_t disagreeing_calls = 0;  // at least one classified kernel disagrees
  uint64_t unclassified_calls = 0; // kernels found, none classified
  model::TimeNs disagreeing_kernel_ns = 0;
  // Disagreements first (most kernel time first), then agreements; at most kMaxListed.
  std::vector<BlasKernelMatch> matches;
  static constexpr size_t kMaxListed = 20;

  bool probed() const { return calls > 0; }
  void merge(const BlasPrecisionResult& other);
};

BlasPrecisionResult analyzeBlasPrecision(const model::Trace& trace);

// The precision a call's types ask for; nullopt when the types are unknown or not a GEMM type.
std::optional<profiler::Precision> requestedPrecision(const model::BlasCall& call);
// "A=fp32 B=fp32 C=fp32 compute=32F math=TF32_TENSOR_OP" (numeric values where unnamed).
std::string describeTypes(const model::BlasCall& call);

} // namespace gpuwise::advisor
