#include "advisor/rules/rule_set.h"

#include "advisor/rules/fix_straggler_rule.h"
#include "advisor/rules/increase_batch_size_rule.h"
#include "advisor/rules/overlap_communication_rule.h"
#include "advisor/rules/precision_rules.h"
#include "advisor/rules/prefetch_input_rule.h"
#include "advisor/rules/reduce_host_syncs_rule.h"
#include "advisor/rules/reduce_memory_pressure_rule.h"
#include "advisor/rules/right_size_gpu_type_rule.h"
#include "advisor/rules/right_size_mig_rule.h"
#include "advisor/rules/share_gpu_rule.h"
#include "advisor/rules/use_cuda_graphs_rule.h"
#include "advisor/rules/use_pinned_memory_rule.h"

#include "advisor/report/format.h"

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

const char* referenceWords(const ReferenceTime& ref) {
  std::string_view kind = ref.kind;
  return kind == "gpu_span" ? "the GPU span" : kind == "step_time" ? "step time" : "the wall time";
}

const model::DeviceInfo* primaryGpu(const JobAnalysis& a) {
  return a.collection.gpus.empty() ? nullptr : &a.collection.gpus.front().info;
}

Platform platformOf(const JobAnalysis& a) {
  if (a.collection.hip_api) return Platform::Rocm;
  for (const auto& g : a.collection.gpus) {
    const auto& n = g.info.name;
    for (const char* amd : {"AMD", "Instinct", "Radeon"})
      if (n.find(amd) != std::string::npos) return Platform::Rocm;
  }
  return Platform::Cuda;
}

Explains idleExplains(const JobAnalysis& a, IdleCause cause) {
  return {std::string("idle.") + toString(cause), toSeconds(a.timeline.idle.at(cause)),
          toSeconds(a.timeline.span_ns)};
}

std::optional<double> busyShare(const JobAnalysis& a) {
  if (!a.timeline.known() || a.timeline.span_ns <= 0) return std::nullopt;
  return double(a.timeline.busy_ns) / double(a.timeline.span_ns);
}

std::vector<std::unique_ptr<Rule>> defaultRules() {
  std::vector<std::unique_ptr<Rule>> rules;
  rules.push_back(std::make_unique<UsePinnedMemoryRule>());
  rules.push_back(std::make_unique<PrefetchInputRule>());
  rules.push_back(std::make_unique<EnableMixedPrecisionRule>());
  rules.push_back(std::make_unique<EnableTf32Rule>());
  rules.push_back(std::make_unique<UseCudaGraphsRule>());
  rules.push_back(std::make_unique<IncreaseBatchSizeRule>());
  rules.push_back(std::make_unique<ReduceMemoryPressureRule>());
  rules.push_back(std::make_unique<ReduceHostSyncsRule>());
  rules.push_back(std::make_unique<RightSizeMigRule>());
  rules.push_back(std::make_unique<ShareGpuRule>());
  rules.push_back(std::make_unique<FixStragglerRule>());
  rules.push_back(std::make_unique<OverlapCommunicationRule>());
  rules.push_back(std::make_unique<RightSizeGpuTypeRule>());
  return rules;
}

void resolveConflicts(std::vector<Recommendation>& recs) {
  auto has = [&](std::string_view id) {
    return std::any_of(recs.begin(), recs.end(), [&](const auto& r) { return r.id == id; });
  };
  auto drop = [&](std::string_view id) {
    recs.erase(std::remove_if(recs.begin(), recs.end(), [&](const auto& r) { return r.id == id; }),
               recs.end());
  };
  // A larger batch needs the memory that is already short.
  if (has("reduce_memory_pressure")) drop("increase_batch_size");
  // A pageable H2D copy is itself a stream synchronisation (the runtime syncs the stream before
  // staging it), so explicit syncs cost nothing extra until the copies are pinned; re-profile
  // after pinning.
  if (has("use_pinned_memory")) drop("reduce_host_syncs");
  // Giving the GPU away (a smaller slice, replicas) is advice for a job whose low use is
  // inherent; while a fix would fill the idle GPU, that fix comes first.
  bool fixable_idle = has("prefetch_input") || has("reduce_host_syncs") || has("use_cuda_graphs") ||
                      has("use_pinned_memory");
  if (fixable_idle) {
    drop("right_size_mig");
    drop("share_gpu");
    drop("right_size_gpu_type"); // its slowdown counts the idle the fix removes as fixed
  }
  // A MIG slice isolates memory and faults; time-slicing is the fallback where MIG does not fit.
  if (has("right_size_mig")) drop("share_gpu");
}

namespace {

// Consistency by construction: a saving never exceeds the share of the reference time that the
// part of the breakdown it explains accounts for.
void boundByExplainedPart(Recommendation& r) {
  if (!r.explains.isTime() || r.explains.reference_seconds <= 0) return;
  double bound = std::max(0.0, r.explains.share());
  if (r.expected_saving_ratio <= bound) return;
  r.expected_saving_ratio = bound;
  if (r.evidence.contains("expected_saving_ratio")) r.evidence["expected_saving_ratio"] = bound;
}

nlohmann::ordered_json asAlternative(const Recommendation& r) {
  nlohmann::ordered_json j;
  j["id"] = r.id;
  j["title"] = r.title;
  j["expected_saving_ratio"] = r.expected_saving_ratio;
  j["action"] = r.action;
  j["parameters"] = r.parameters;
  return j;
}

} // namespace

void foldAlternatives(std::vector<Recommendation>& recs) {
  auto find = [&](std::string_view id) {
    return std::find_if(recs.begin(), recs.end(), [&](const auto& r) { return r.id == id; });
  };
  auto mixed = find("enable_mixed_precision");
  auto tf32 = find("enable_tf32");
  if (mixed == recs.end() || tf32 == recs.end()) return;
  mixed->parameters["alternatives"] = nlohmann::ordered_json::array({asAlternative(*tf32)});
  mixed->evidence["alternative_tf32_expected_saving_ratio"] = tf32->expected_saving_ratio;
  mixed->action += "\nAlternative where the model needs FP32 ranges (saves ~" +
                   formatPercent(tf32->expected_saving_ratio) +
                   "): torch.backends.cuda.matmul.allow_tf32 = True; "
                   "torch.backends.cudnn.allow_tf32 = True";
  recs.erase(tf32);
}

std::vector<Recommendation> evaluateRules(const std::vector<std::unique_ptr<Rule>>& rules,
                                          const RuleContext& context) {
  std::vector<Recommendation> out;
  for (const auto& rule : rules) {
    if (auto r = rule->evaluate(context)) {
      boundByExplainedPart(*r);
      out.push_back(std::move(*r));
    }
  }
  resolveConflicts(out);
  foldAlternatives(out);
  std::sort(out.begin(), out.end(), [](const Recommendation& a, const Recommendation& b) {
    if (a.expected_saving_ratio != b.expected_saving_ratio)
      return a.expected_saving_ratio > b.expected_saving_ratio;
    if (a.confidence != b.confidence) return a.confidence > b.confidence;
    return a.id < b.id;
  });
  return out;
}

Advice splitByFloor(std::vector<Recommendation> ranked, double advice_floor) {
  Advice out;
  for (auto& r : ranked) {
    bool below = (r.explains.isTime() && r.expected_saving_ratio < advice_floor) || r.note_only;
    (below ? out.notes : out.recommendations).push_back(std::move(r));
  }
  return out;
}

Advice advise(const JobAnalysis& analysis, const model::Trace* trace,
              const Thresholds& thresholds) {
  return splitByFloor(evaluateRules(defaultRules(), RuleContext{analysis, trace, thresholds}),
                      thresholds.advice_floor);
}

std::vector<Recommendation> recommend(const JobAnalysis& analysis, const model::Trace* trace) {
  return advise(analysis, trace).recommendations;
}

} // namespace gpuwise::advisor
