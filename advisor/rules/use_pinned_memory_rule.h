// use_pinned_memory: host<->device copies from pageable memory cost a meaningful share of the
// time, and the same bytes would move much faster from pinned (page-locked) memory.
//
// Fires when pageable H2D + D2H copy time >= Thresholds::PinnedMemory::min_share of the
// reference time (referenceTime()) and the pageable bytes reach min_bytes. Expected saving: the
// measured pageable time minus the time the same bytes take at pinned bandwidth, per direction;
// pinned bandwidth is measured from the trace's own pinned copies when it has enough of them
// (confidence high), else taken from the per-GPU table in pinned_bandwidth.h (medium for a known
// GPU, low otherwise).
#pragma once

#include "advisor/rules/rule.h"

namespace gpuwise::advisor {

class UsePinnedMemoryRule final : public Rule {
public:
  std::string_view id() const override { return "use_pinned_memory"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

} // namespace gpuwise::advisor
