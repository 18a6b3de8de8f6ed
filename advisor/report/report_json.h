// The JSON report, schema `gpuwise.report/v1` (DESIGN.md's report contract: every contract field
// is present, null where the figure is unknown), plus gpuwise's own detail sections
// (generated_by, collection, timeline, copies, host_syncs, memory, idle, steps, precision,
// occupancy).
//
// Pure; any thread. Field order is stable so reports diff cleanly.
#pragma once

#include "advisor/analysis/job_analysis.h"
#include "advisor/cost/waste_cost.h"
#include "advisor/gpu/gpu_type_choice.h"
#include "advisor/rules/recommendation.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuwise::advisor {

inline constexpr const char* kReportSchema = "gpuwise.report/v1";

struct ReportInput {
  const JobAnalysis& analysis;
  const std::vector<Recommendation>& recommendations;
  // Findings under the advice floor (rules/rule_set.h: advise()); nullptr: none. The JSON lists
  // them as notes[] with the recommendations' fields, the terminal on one line.
  const std::vector<Recommendation>* notes = nullptr;
};

struct ReportOptions {
  size_t top_kernels = 20;
  CostOptions cost; // GPU-hour price for the `cost` sections (advisor/cost/waste_cost.h)
  size_t max_steps_listed = 200; // per process, in steps.processes[].steps
  IdleOptions idle;              // the thresholds the analysis used, stated in the report
  GpuTypeOptions gpu_types;      // the `gpu_types` section: every GPU class for this job
};

nlohmann::ordered_json buildReportJson(const ReportInput& input, const ReportOptions& options = {});

// The `recommendations[]` array of those recommendations, as the report writes it (the per-pod
// report merge writes the job's own findings with it).
nlohmann::ordered_json recommendationsJson(const std::vector<Recommendation>& recommendations);

// The job's collection tier: the processes' common tier, "mixed" when they differ, "unknown"
// when there is no process.
std::string jobTier(const CollectionResult& collection);

// The gpuwise version string compiled into the advisor ("0.1.0").
const char* gpuwiseVersion();

} // namespace gpuwise::advisor
