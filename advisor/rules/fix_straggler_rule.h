// fix_straggler: one rank arrives last at the collectives and the others wait for it
// (analysis/straggler.h finds it and its cause from the ranks side by side).
//
// Fires when JobAnalysis::distributed.straggler is set. Parameters {rank, cause,
// others_wait_seconds}. Expected saving: the others' wait, as a share of the ranks' summed steady
// step time (the GPU span without steps): what they would get back if the straggler kept pace.
// The action is the cause's: compute (its kernels slower for the same work: a throttled or
// faulty GPU, uneven shards), input (its loader), host (its launches or Python). Confidence:
// medium (the cause is the largest excess over the peers, not a measurement of the fix).
#pragma once

#include "advisor/rules/rule.h"

namespace gpuwise::advisor {

class FixStragglerRule final : public Rule {
public:
  std::string_view id() const override { return "fix_straggler"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

// The ranks' summed steady step time in seconds (step mean x steps), or the GPU span in seconds
// where a rank has no steps; what the distributed rules measure savings against.
double rankReferenceSeconds(const JobAnalysis& analysis, const char** kind);

} // namespace gpuwise::advisor
