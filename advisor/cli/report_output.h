// The end of every command that produces a report: analyse the trace (or take the live ingest's
// aggregated analysis), run the rules, write the JSON and HTML files, print the terminal summary.
#pragma once

#include "advisor/analysis/job_analysis.h"
#include "advisor/cli/terminal_style.h"
#include "advisor/cost/waste_cost.h"
#include "advisor/gpu/gpu_type_choice.h"
#include "profiler/model/trace.h"

#include <optional>
#include <ostream>
#include <string>

namespace gpuwise::advisor {

struct ReportTargets {
  std::string json_path;      // empty: not written
  std::string html_path;      // empty: not written
  CostOptions cost;           // the GPU-hour price (--gpu-hour-price) for the reports' cost figures
  double advice_floor = 0.02; // --advice-floor: findings saving less are notes
  GpuTypeOptions gpu_type;    // right_size_gpu_type's slowdown and prices, and the report's table
  bool verbose = false;       // --verbose: the terminal shows each recommendation's evidence
  // Width and colour of the summary; produceReport() takes them from the summary's stream
  // (terminalStyleFor(descriptorOf(summary))) unless set here.
  std::optional<TerminalStyle> terminal;
};

// False with `error` set (one line naming the file) when a report file could not be written; the
// summary is printed either way.
bool produceReport(const model::Trace& trace, const AnalysisOptions& analysis_options,
                   const ReportTargets& targets, std::ostream& summary, std::string* error);
// The same from an analysis already made (a live run's windows, aggregated by the ingest).
bool produceReport(const JobAnalysis& analysis, const ReportTargets& targets, std::ostream& summary,
                   std::string* error);

} // namespace gpuwise::advisor
