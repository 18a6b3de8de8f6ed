// reduce_host_syncs: the host blocks in synchronising calls (cudaDeviceSynchronize,
// cudaStreamSynchronize, synchronous copies, .item()-style readbacks) and the GPU drains at each.
//
// It counts the GPU idle the syncs cause, not the host's wait (a GPU-bound job waits in syncs
// at no cost). Without the syncs the host would queue work ahead, so the GPU span T would shrink
// to max(B, H): B the GPU busy time, H = T - blocked the host's own time. Recoverable =
// min(sync-attributed idle, T - max(B, H), syncs x max_cost_per_sync_ns); fires when that is >= min_saving of T. Expected
// saving = recoverable / T. Confidence medium: the model assumes the host's work overlaps the
// GPU's once nothing forces it to wait.
#pragma once

#include "advisor/rules/rule.h"

namespace gpuwise::advisor {

class ReduceHostSyncsRule final : public Rule {
public:
  std::string_view id() const override { return "reduce_host_syncs"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

} // namespace gpuwise::advisor
