// reduce_memory_pressure: the job's peak device memory is near the device limit, or the caching
// allocator holds much more than it hands out while near the limit (fragmentation).
//
// Fires when peak / capacity >= min_peak_ratio, or reserved >= min_fragmented_reserved_ratio of
// the device with (reserved - allocated) / reserved >= min_fragmentation. Expected saving 0: the
// finding is a risk (OOM, allocator retries that synchronise), not time the trace can measure;
// it ranks after every time saving. Confidence high: both figures are measured.
#pragma once

#include "advisor/rules/rule.h"

namespace gpuwise::advisor {

class ReduceMemoryPressureRule final : public Rule {
public:
  std::string_view id() const override { return "reduce_memory_pressure"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

} // namespace gpuwise::advisor
