#include "advisor/cli/report_output.h"

#include "advisor/report/report_writer.h"
#include "advisor/report/terminal_summary.h"
#include "advisor/rules/rule_set.h"

namespace gpuwise::advisor {

bool produceReport(const model::Trace& trace, const AnalysisOptions& analysis_options,
                   const ReportTargets& targets, std::ostream& summary, std::string* error) {
  return produceReport(analyzeJob(trace, analysis_options), targets, summary, error);
}

bool produceReport(const JobAnalysis& analysis, const ReportTargets& targets, std::ostream& summary,
                   std::string* error) {
  Thresholds thresholds;
  thresholds.advice_floor = targets.advice_floor;
  thresholds.gpu_type = targets.gpu_type;
  auto advice = advise(analysis, nullptr, thresholds);
  ReportInput input{analysis, advice.recommendations, &advice.notes};
  ReportOptions report_options;
  report_options.cost = targets.cost;
  // One price per GPU class: the `cost` section prices the job's GPUs at the --gpu-price /
  // --gpu-prices figures the `gpu_types` table uses (--gpu-hour-price still first).
  report_options.cost.class_prices = targets.gpu_type.prices.by_class;
  report_options.gpu_types = targets.gpu_type;
  TerminalOptions terminal;
  terminal.verbose = targets.verbose;
  terminal.advice_floor = targets.advice_floor;
  terminal.energy_price_kwh = targets.cost.energy_price_kwh;
  const TerminalStyle style = targets.terminal.value_or(terminalStyleFor(descriptorOf(summary)));
  terminal.width = style.width;
  terminal.colour = style.colour;
  bool ok = true;
  std::string first_error;
  auto note = [&](bool written, const std::string& path, const std::string& e) {
    if (written) {
      terminal.written_files.push_back(path);
    } else if (ok) {
      ok = false;
      first_error = e;
    }
  };
  std::string e;
  if (!targets.json_path.empty())
    note(writeJsonReport(targets.json_path, input, &e, report_options), targets.json_path, e);
  if (!targets.html_path.empty())
    note(writeHtmlReport(targets.html_path, input, &e, report_options), targets.html_path, e);
  summary << renderTerminalSummary(input, terminal) << std::flush;
  if (!ok) *error = first_error;
  return ok;
}

} // namespace gpuwise::advisor
