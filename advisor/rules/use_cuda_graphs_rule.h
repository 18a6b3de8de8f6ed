// use_cuda_graphs: launch-bound: most kernels finish before the host's next launch arrives, and
// the GPU sits idle between them waiting on launches.
//
// Fires when the share of short kernels (< kShortKernelNs) >= min_short_kernel_share and the
// launch-caused idle (launch_overhead + host_bound, idle_attribution.h) >= min_launch_idle_share
// of the GPU span. Expected saving = (launch-caused idle - kernels x graph_gap_per_kernel_ns) /
// span: a replayed graph launches its kernels back to back. Confidence medium: what a graph
// captures depends on the code (dynamic shapes and host syncs break capture).
#pragma once

#include "advisor/rules/rule.h"

namespace gpuwise::advisor {

class UseCudaGraphsRule final : public Rule {
public:
  std::string_view id() const override { return "use_cuda_graphs"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

} // namespace gpuwise::advisor
