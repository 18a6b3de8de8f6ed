// The numeric precision a kernel computes in, as the report names it
// (`summary.precision_time_ratio`, `top_kernels[].precision`).
//
// Pure values and two lookups; any thread, never blocks, no allocation.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuwise::profiler {

// Declaration order is the report's key order. Other covers kernels whose work is not
// floating-point arithmetic on tensors (copies of opaque bytes, integer index math, collectives)
// and kernels whose name does not say (Triton, unknown libraries).
enum class Precision : uint8_t {
  Other = 0,
  Fp64,
  Fp32, // FP32 on the CUDA cores (FFMA); never on tensor cores
  Tf32, // FP32 data rounded to TF32 inside tensor-core MMAs (Ampere+)
  Fp16,
  Bf16,
  Fp8, // e4m3 / e5m2, plain or MX-scaled
  Fp4, // e2m1 (NVFP4, MXFP4)
  Int8,
};

inline constexpr size_t kPrecisionCount = 9;

inline constexpr std::array<Precision, kPrecisionCount> kAllPrecisions = {
    Precision::Fp64, Precision::Fp32, Precision::Tf32, Precision::Fp16,  Precision::Bf16,
    Precision::Fp8,  Precision::Fp4,  Precision::Int8, Precision::Other,
};

// "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp4", "int8", "other": the report's keys.
std::string_view precisionName(Precision p);

// The inverse of precisionName; nullopt for anything else.
std::optional<Precision> parsePrecision(std::string_view name);

} // namespace gpuwise::profiler
