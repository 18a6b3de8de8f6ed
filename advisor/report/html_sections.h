// The sections of the HTML report, each drawn from the report JSON (gpuwise.report/v1 plus its
// additive sections), so the page shows exactly what the JSON says and a field that a build does
// not produce yet degrades to "not measured" instead of failing.
//
//   html_sections.cpp   verdict, utilisation over time, where the GPU span went / idle causes,
//                       training steps (steady state, warm-up), precision mix, memory over time
//   html_tables.cpp     top kernels, copies, host syncs, recommendations, collection
//
// Each function appends one <section> to `out`. Every string from the report is escaped. Pure; any
// thread.
#pragma once

#include "advisor/report/report_fields.h"

#include <ostream>
#include <string>

namespace gpuwise::advisor {

void htmlVerdictSection(std::ostream& out, const ReportJson& report);
void htmlUtilizationSection(std::ostream& out, const ReportJson& report);
void htmlIdleSection(std::ostream& out, const ReportJson& report);
void htmlStepsSection(std::ostream& out, const ReportJson& report);
void htmlPrecisionSection(std::ostream& out, const ReportJson& report);
void htmlMemorySection(std::ostream& out, const ReportJson& report);
// html_ranks.cpp: per-rank step time and compute/communication, for a job of several ranks.
void htmlRanksSection(std::ostream& out, const ReportJson& report);

void htmlKernelsSection(std::ostream& out, const ReportJson& report);
void htmlCopiesSection(std::ostream& out, const ReportJson& report);
void htmlSyncsSection(std::ostream& out, const ReportJson& report);
void htmlRecommendationsSection(std::ostream& out, const ReportJson& report);
void htmlCollectionSection(std::ostream& out, const ReportJson& report);
// html_gpu_types.cpp: every GPU class with the job's predicted step and cost (right_size_gpu_type).
void htmlGpuTypesSection(std::ostream& out, const ReportJson& report);

} // namespace gpuwise::advisor
