// gpuwise report: the report of recorded traces, offline.
//
// Inputs (trace_input.h): gpuwise .gwt recordings, PyTorch profiler (Kineto) traces, plain or
// gzipped, and Nsight Systems SQLite exports; several are one job. A trace without GPU activity (a
// CPU-only rank) still gets a report, which says so; a file that is not a trace is one exit-2 line
// naming it.
#include "advisor/cli/commands.h"
#include "advisor/cli/report_output.h"
#include "advisor/cli/trace_input.h"

namespace gpuwise::advisor {

int reportCommand(const ReportOptionsCli& o, CliIo io) {
  auto fail = [&](const std::string& line) {
    logLine(io.err, "report", line);
    return kExitUsage;
  };
  if (o.inputs.empty()) return fail("at least one INPUT is required");

  LoadedInputs loaded;
  std::string error;
  if (!loadTraceInputs(o.inputs, "gpuwise report", &io.err, &loaded, &error)) return fail(error);

  ReportTargets targets;
  targets.json_path = o.json;
  targets.html_path = o.html;
  targets.cost.gpu_hour_price = o.gpu_hour_price;
  if (o.json.empty() && o.html.empty()) {
    targets.json_path = kDefaultJsonReport;
    targets.html_path = kDefaultHtmlReport;
  }
  AnalysisOptions ao;
  ao.ingest = loaded.has_ingest ? &loaded.health : nullptr;
  if (!produceReport(loaded.trace, ao, targets, io.out, &error)) return fail(error);
  return 0;
}

} // namespace gpuwise::advisor
