// A recommendation: what to change, why (evidence), and what it is expected to save. The fields
// are the report contract's recommendations[] entries (DESIGN.md, gpuwise.report/v1).
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <string>
#include <string_view>

namespace gpuwise::advisor {

// The contract's recommendation ids; a rule returns one of these and nothing else.
inline constexpr std::array<std::string_view, 10> kRecommendationIds = {
    "increase_batch_size", "enable_mixed_precision", "enable_tf32",     "use_pinned_memory",
    "prefetch_input",      "reduce_host_syncs",      "use_cuda_graphs", "right_size_mig",
    "share_gpu",           "reduce_memory_pressure",
};
bool isKnownRecommendationId(std::string_view id);

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
};

} // namespace gpuwise::advisor
