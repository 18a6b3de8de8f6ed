// overlap_communication: collective communication that no compute kernel hid holds a real share
// of step time.
//
// Measured job-wide over the GPU span (summed over devices): communication and its exposed part
// (the communication analyzer's where it ran, else the timeline's), less the ranks' collective
// wait for a late rank (collective_alignment.h; a straggler is fix_straggler's, and the ranks'
// start-up is not the job). Fires when that exposed transfer is at least
// Thresholds::OverlapCommunication::min_exposed_share of the span, or when overlap is already
// good (ratio >= good_overlap_ratio) but communication still takes min_communication_share of it.
// The change follows what the trace shows:
//   ddp          all-reduce is most of the collective time: DDP's bucket_cap_mb,
//                gradient_as_bucket_view=True, static_graph=True
//   fsdp         all-gather and reduce-scatter are: forward_prefetch=True,
//                backward_prefetch=BackwardPrefetch.BACKWARD_PRE, limit_all_gathers=True
//   fewer_syncs  overlap already good: gradient accumulation under no_sync(), a larger per-rank
//                batch
// Evidence: exposed seconds, the overlap ratio, and the bus bandwidth against the GPU's nominal
// NVLink / PCIe bandwidth (gpu_tables.h) where both are known. Expected saving: the exposed
// transfer (three quarters of it for fewer_syncs: accumulating 4 micro-batches syncs a quarter as
// often). Confidence: medium.
#pragma once

#include "advisor/rules/rule.h"

namespace gpuwise::advisor {

class OverlapCommunicationRule final : public Rule {
public:
  std::string_view id() const override { return "overlap_communication"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

} // namespace gpuwise::advisor
