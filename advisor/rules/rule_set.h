// The rules gpuwise runs, and the ranking of what they recommend.
#pragma once

#include "advisor/rules/rule.h"

#include <memory>
#include <vector>

namespace gpuwise::advisor {

std::vector<std::unique_ptr<Rule>> defaultRules();

// Evaluates every rule and returns their recommendations ranked, most valuable first: by
// expected saving, then confidence, then id (so equal inputs give an identical report).
std::vector<Recommendation> evaluateRules(const std::vector<std::unique_ptr<Rule>>& rules,
                                          const RuleContext& context);

// defaultRules() on the analysis, with default thresholds.
std::vector<Recommendation> recommend(const JobAnalysis& analysis, const model::Trace* trace);

} // namespace gpuwise::advisor
