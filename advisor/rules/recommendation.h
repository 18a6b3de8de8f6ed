// A recommendation: what to change, why (evidence), and what it is expected to save. The fields
// are the report contract's recommendations[] entries (DESIGN.md, gpuwise.report/v1).
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <string>
#include <string_view>

namespace gpuwise::advisor {

// The contract's recommendation ids; a rule returns one of these and nothing else.
inline constexpr std::array<std::string_view, 13> kRecommendationIds = {
    "increase_batch_size", "enable_mixed_precision", "enable_tf32",     "use_pinned_memory",
    "prefetch_input",      "reduce_host_syncs",      "use_cuda_graphs", "right_size_mig",
    "share_gpu",           "reduce_memory_pressure", "fix_straggler",   "overlap_communication",
    "right_size_gpu_type",
};
bool isKnownRecommendationId(std::string_view id);

// The part of the time breakdown a recommendation explains, and the time that part accounts for:
// its expected saving never exceeds seconds / reference_seconds (evaluateRules clamps it), so
// the advice and the breakdown beside it cannot disagree. Parts:
//   idle.launch_overhead, idle.host_bound, idle.sync, idle.input, idle.other
//                      an idle cause of advisor/analysis/idle_attribution.h (the report's
//                      summary.idle_seconds_by_cause; idle.input is summary.input_stall_seconds)
//   copies.pageable    pageable host<->device copy time (summary.memcpy.pageable_seconds)
//   busy.fp32_matmul   FP32/TF32 GEMM and convolution kernel time
//   busy               GPU busy time (summary.gpu_busy_seconds)
//   gpu.unused         the GPU capacity the job leaves unused (1 - busy share x SM fill)
//   gpu.class          the price of the GPU class beyond the cheapest that fits: the GPU span x
//                      the share of the money per step a cheaper class saves
//   communication.wait     the other ranks' collective wait for a straggler
//   communication.exposed  collective transfer no compute kernel hid
//   risk.memory        not time: a risk (OOM, allocator retries); the advice floor ignores it
struct Explains {
  std::string part;
  double seconds = 0;
  double reference_seconds = 0;
  bool isTime() const { return part.rfind("risk.", 0) != 0; }
  double share() const { return reference_seconds > 0 ? seconds / reference_seconds : 0.0; }
};

enum class Confidence : uint8_t { Low, Medium, High };
const char* toString(Confidence);

struct Recommendation {
  std::string id;
  std::string title; // one line a person reads; every number in it is also in evidence
  // {metric: value}: every number the title and action use, under a name that says what it is.
  nlohmann::ordered_json evidence = nlohmann::ordered_json::object();
  double expected_saving_ratio = 0.0; // share of step (or GPU) time saved, 0..1
  Confidence confidence = Confidence::Low;
  std::string action; // what to change, as code or configuration
  nlohmann::ordered_json parameters = nlohmann::ordered_json::object();
  Explains explains;
  // A finding worth knowing that is not advice (evidence["note"] says why): reported with the
  // notes under the advice floor, whatever its saving.
  bool note_only = false;
};

} // namespace gpuwise::advisor
