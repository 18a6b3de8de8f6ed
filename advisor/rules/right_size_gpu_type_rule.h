// right_size_gpu_type: a cheaper GPU class runs the job's step for less money, within the
// slowdown the user accepts.
//
// Every class of the table is compared (advisor/gpu/gpu_type_choice.h: the step-time model's
// prediction, memory with headroom, precisions, vendor, NVLink for jobs of several ranks, price);
// the qualifying class with the lowest cost per step is recommended when it costs less per step
// than the class the job ran on. Expected saving: the share of the money per step saved,
// 1 - cost_per_step_target / cost_per_step_current (it explains "gpu.class": the price of the
// GPU class beyond the cheapest that fits, the same share of the GPU span). Confidence medium
// when the steps are known and at least 80% of kernel time has a known precision, else low: the
// prediction is a ratio of datasheet peaks. Quiet on the simulated device (its timings follow
// the host's CPU, not a GPU class), on a MIG slice, and when the GPU or the peak memory is
// unknown.
#pragma once

#include "advisor/rules/rule.h"

namespace gpuwise::advisor {

class RightSizeGpuTypeRule final : public Rule {
public:
  std::string_view id() const override { return "right_size_gpu_type"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

} // namespace gpuwise::advisor
