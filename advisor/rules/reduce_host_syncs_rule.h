// reduce_host_syncs: the host blocks in synchronising calls (cudaDeviceSynchronize,
// cudaStreamSynchronize, synchronous copies, .item()-style readbacks) and the GPU drains at each.
//
// It counts the GPU idle the syncs cause (idle attributed to sync, idle_attribution.h), not the
// host's wait: a GPU-bound job waits in syncs at no cost. One sync costs the GPU at most its
// drain-to-relaunch latency (Thresholds::HostSyncs::max_cost_per_sync_ns); what follows is the
// host's own work, which stays. GPU idle while the host is still inside a sync (a drained GPU and
// a host that has not woken up: a loaded machine's late wake-ups) is recovered in full; it is at
// least I = host blocked time - GPU busy time. Recoverable = min(sync idle, I + syncs x
// max_cost_per_sync_ns); fires when that is >= min_saving of the GPU span; expected saving =
// recoverable / span. Evidence also
// gives the overlap bound span - max(B, H) (B GPU busy, H = span - host blocked time), which a
// loaded host's descheduling distorts, so it does not gate. Confidence medium.
#pragma once

#include "advisor/rules/rule.h"

namespace gpuwise::advisor {

class ReduceHostSyncsRule final : public Rule {
public:
  std::string_view id() const override { return "reduce_host_syncs"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

} // namespace gpuwise::advisor
