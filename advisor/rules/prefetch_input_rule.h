// prefetch_input: the GPU waits for the next batch (input stall, idle_attribution.h) for a real
// share of each step; more DataLoader workers prefetching ahead would hide it.
//
// Fires when JobAnalysis::inputStallRatio() >= Thresholds::PrefetchInput::min_ratio. Expected
// saving: the stall itself (prefetching hides all of it when the workers keep up), as a share of
// step time x devices (or the GPU span without steps). Suggested num_workers: with a stall share
// r of each step, one worker prepares a batch in r/(1-r) steps' worth of GPU time, so ceil(r/(1-r))
// workers keep up; one more absorbs step-to-step variation; bounded by min/max_workers.
// Confidence: high when the stall was measured inside DataLoader ranges, medium when inferred
// from host state.
#pragma once

#include "advisor/rules/rule.h"

namespace gpuwise::advisor {

class PrefetchInputRule final : public Rule {
public:
  std::string_view id() const override { return "prefetch_input"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

} // namespace gpuwise::advisor
