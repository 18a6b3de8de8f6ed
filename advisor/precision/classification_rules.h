// Internal to advisor/precision: the shape of one entry of the classification table. The table
// itself is in classification_rules.cpp; kernel_classifier.cpp walks it.
#pragma once

#include "advisor/precision/precision.h"

#include <span>
#include <string_view>

namespace gpuwise::profiler::detail {

enum class PrecisionFrom : uint8_t {
  Fixed,       // Rule::precision is the answer
  Tokens,      // the name's element-type words (dtype_tokens.cpp); Rule::precision when it has none
  NvjetCode,   // cuBLASLt nvjet type code ("tst", "hsh", "qqtst", "oohsh" ...)
  TensileCode, // ROCm Tensile / hipBLASLt type code ("Cijk_Alik_Bljk_BBS_...")
};

enum class TensorCores : uint8_t {
  No,
  Yes,     // yes, unless the precision came out FP32: FP32 data never goes through tensor cores
  Markers, // as Yes, but only when the name carries a tensor-core marker (kTensorCoreMarkers)
  Decoder, // the vendor-code decoder decides (nvjet, Tensile)
};

struct Rule {
  std::string_view id;     // returned as KernelClass::rule
  std::string_view match;  // pattern (name_text.h) the name must match; empty matches all
  std::string_view also;   // a second pattern that must also match; empty: no second condition
  std::string_view unless; // the rule does not apply when this matches; empty: never
  PrecisionFrom from;
  Precision precision;
  TensorCores tensor_cores;
  bool other_is_known; // Other is a definite answer here (collectives, Triton), not a gap
};

std::span<const Rule> classificationRules();

// Names that say the kernel issues matrix-multiply-accumulate instructions.
extern const std::string_view kTensorCoreMarkers;

} // namespace gpuwise::profiler::detail
