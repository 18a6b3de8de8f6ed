#include "advisor/rules/rule_set.h"

#include "advisor/rules/use_pinned_memory_rule.h"

#include <algorithm>

namespace gpuwise::advisor {

bool isKnownRecommendationId(std::string_view id) {
  return std::find(kRecommendationIds.begin(), kRecommendationIds.end(), id) !=
         kRecommendationIds.end();
}

const char* toString(Confidence c) {
  switch (c) {
  case Confidence::High: return "high";
  case Confidence::Medium: return "medium";
  case Confidence::Low: break;
  }
  return "low";
}

ReferenceTime referenceTime(const JobAnalysis& a) {
  // Steps are not analysed yet (the steps analyzer comes next); when it lands, total step time
  // goes first here.
  if (a.timeline.known() && a.timeline.span_ns > 0) return {a.timeline.span_ns, "gpu_span"};
  if (a.wall_ns && *a.wall_ns > 0) return {*a.wall_ns, "wall"};
  return {};
}

std::vector<std::unique_ptr<Rule>> defaultRules() {
  std::vector<std::unique_ptr<Rule>> rules;
  rules.push_back(std::make_unique<UsePinnedMemoryRule>());
  return rules;
}

std::vector<Recommendation> evaluateRules(const std::vector<std::unique_ptr<Rule>>& rules,
                                          const RuleContext& context) {
  std::vector<Recommendation> out;
  for (const auto& rule : rules) {
    if (auto r = rule->evaluate(context)) out.push_back(std::move(*r));
  }
  std::sort(out.begin(), out.end(), [](const Recommendation& a, const Recommendation& b) {
    if (a.expected_saving_ratio != b.expected_saving_ratio)
      return a.expected_saving_ratio > b.expected_saving_ratio;
    if (a.confidence != b.confidence) return a.confidence > b.confidence;
    return a.id < b.id;
  });
  return out;
}

std::vector<Recommendation> recommend(const JobAnalysis& analysis, const model::Trace* trace) {
  Thresholds thresholds;
  return evaluateRules(defaultRules(), RuleContext{analysis, trace, thresholds});
}

} // namespace gpuwise::advisor
