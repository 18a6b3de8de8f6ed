// The rule interface: a rule looks at a JobAnalysis (and, when it needs records the analyzers do
// not summarise, at the trace) and returns at most one Recommendation.
//
// Adding a rule: rules/<id>_rule.{h,cpp} implementing Rule, its thresholds in thresholds.h, and a
// line in defaultRules() (rule_set.cpp). Rules are pure and any thread may evaluate them.
#pragma once

#include "advisor/analysis/job_analysis.h"
#include "advisor/rules/recommendation.h"
#include "advisor/rules/thresholds.h"

#include <optional>
#include <string_view>

namespace gpuwise::advisor {

struct RuleContext {
  const JobAnalysis& analysis;
  const model::Trace* trace = nullptr; // may be null (a merged analysis of live windows)
  const Thresholds& thresholds;
};

class Rule {
public:
  virtual ~Rule() = default;
  virtual std::string_view id() const = 0; // one of kRecommendationIds
  virtual std::optional<Recommendation> evaluate(const RuleContext& context) const = 0;
};

// The time a saving is measured against: step time when the steps are known, else the GPU span
// (first to last GPU activity, summed over devices), else the wall time. kind names it in
// evidence ("step_time", "gpu_span", "wall").
struct ReferenceTime {
  model::TimeNs ns = 0;
  const char* kind = "unknown";
  bool known() const { return ns > 0; }
};
ReferenceTime referenceTime(const JobAnalysis& analysis);
// "the GPU span", "step time", "the wall time": how rule texts name a reference.
const char* referenceWords(const ReferenceTime& reference);

// The job's GPU as the tables see it: the first GPU the collection lists (jobs run on one model);
// nullptr when the trace names none.
const model::DeviceInfo* primaryGpu(const JobAnalysis& analysis);
// The platform the job ran on, so actions are written in its terms: ROCm when the trace names an
// AMD GPU or the host called hip* APIs, else CUDA.
enum class Platform : uint8_t { Cuda, Rocm };
Platform platformOf(const JobAnalysis& analysis);

// Explains{part, seconds, reference} for an idle cause measured against the GPU span.
Explains idleExplains(const JobAnalysis& analysis, IdleCause cause);

// GPU busy time over the GPU span, summed over devices; nullopt when the timeline is unknown.
std::optional<double> busyShare(const JobAnalysis& analysis);

} // namespace gpuwise::advisor
