// The rules gpuwise runs, and the ranking of what they recommend.
#pragma once

#include "advisor/rules/rule.h"

#include <memory>
#include <vector>

namespace gpuwise::advisor {

std::vector<std::unique_ptr<Rule>> defaultRules();

// Drops recommendations another one supersedes:
//   increase_batch_size    when reduce_memory_pressure fired (the memory is already short)
//   reduce_host_syncs      when use_pinned_memory fired (a pageable copy syncs its stream anyway)
//   right_size_mig, share_gpu  when a fix for the idle GPU fired (prefetch_input,
//                          reduce_host_syncs, use_cuda_graphs, use_pinned_memory)
//   share_gpu              when right_size_mig fired (MIG isolates; time-slicing is the fallback)
void resolveConflicts(std::vector<Recommendation>& recommendations);

// Evaluates every rule, resolves conflicts (resolveConflicts) and returns the recommendations
// ranked, most valuable first: by expected saving, then confidence, then id (so equal inputs give
// an identical report).
std::vector<Recommendation> evaluateRules(const std::vector<std::unique_ptr<Rule>>& rules,
                                          const RuleContext& context);

// defaultRules() on the analysis, with default thresholds.
std::vector<Recommendation> recommend(const JobAnalysis& analysis, const model::Trace* trace);

} // namespace gpuwise::advisor
