// share_gpu: the job uses a small fraction of the GPU, in bursts separated by idle milliseconds
// that another process's work could fill: time-slicing (device plugin sharing.timeSlicing) or
// MPS replicas.
//
// Fires when GPU busy share < max_busy and the mean idle gap >= min_mean_idle_gap_ns. Replicas:
// floor(target_busy / busy share), capped by memory (replicas x peak within 90% of the device)
// and max_replicas; at least two. Expected saving: the GPU share each job stops paying for,
// 1 - 1/replicas. Confidence medium: replicas contend in their bursts.
#pragma once

#include "advisor/rules/rule.h"

namespace gpuwise::advisor {

class ShareGpuRule final : public Rule {
public:
  std::string_view id() const override { return "share_gpu"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

} // namespace gpuwise::advisor
