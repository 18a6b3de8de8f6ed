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
//   right_size_mig, share_gpu, right_size_gpu_type  when a fix for the idle GPU fired
//   (prefetch_input,
//                          reduce_host_syncs, use_cuda_graphs, use_pinned_memory)
//   share_gpu              when right_size_mig fired (MIG isolates; time-slicing is the fallback)
void resolveConflicts(std::vector<Recommendation>& recommendations);

// Alternatives become one recommendation with options: when enable_mixed_precision and
// enable_tf32 both fired, TF32 goes into mixed precision's parameters.alternatives (id, title,
// saving, action, parameters) and its action's last line, and is not listed on its own.
void foldAlternatives(std::vector<Recommendation>& recommendations);

// Evaluates every rule, bounds each saving by the share of the breakdown part it explains
// (Recommendation::explains), resolves conflicts (resolveConflicts), folds alternatives, and
// returns the findings ranked, most valuable first: by expected saving, then confidence, then id
// (so equal inputs give an identical report). Notes included: see advise().
std::vector<Recommendation> evaluateRules(const std::vector<std::unique_ptr<Rule>>& rules,
                                          const RuleContext& context);

// What gpuwise says: recommendations, and notes, the findings whose expected saving is below the
// advice floor (Thresholds::advice_floor). Risks that are not time (explains "risk.*") are
// recommendations whatever their saving. Both ranked as evaluateRules ranks.
struct Advice {
  std::vector<Recommendation> recommendations;
  std::vector<Recommendation> notes;
};
Advice splitByFloor(std::vector<Recommendation> ranked, double advice_floor);
Advice advise(const JobAnalysis& analysis, const model::Trace* trace,
              const Thresholds& thresholds = {});

// advise()'s recommendations with default thresholds (notes left out).
std::vector<Recommendation> recommend(const JobAnalysis& analysis, const model::Trace* trace);

} // namespace gpuwise::advisor
