// gpuwise report: the report of recorded traces, offline.
//
// Inputs (trace_input.h): gpuwise .gwt recordings, PyTorch profiler (Kineto) traces, plain or
// gzipped, and Nsight Systems SQLite exports; several are one job. A trace without GPU activity (a
// CPU-only rank) still gets a report, which says so; a file that is not a trace is one exit-2 line
// naming it.
#include "advisor/cli/commands.h"
#include "advisor/cli/report_inputs.h"
#include "advisor/cli/report_output.h"
#include "advisor/cli/trace_input.h"
#include "profiler/model/record_limits.h"

namespace gpuwise::advisor {
namespace {

// One line saying what the input bounds (profiler/model/record_limits.h) left out, empty when
// nothing: the report carries the same counts in collection.input_bounds.
std::string inputBoundsWarning(const model::Trace& trace) {
  model::LimitsApplied sum;
  for (const auto& p : trace.processes) {
    sum.absurd_times += p.limits.absurd_times;
    sum.devices_dropped += p.limits.devices_dropped;
    sum.processes_dropped += p.limits.processes_dropped;
    sum.names_truncated += p.limits.names_truncated;
  }
  std::string parts;
  auto add = [&](uint64_t n, const char* one, const char* many, const std::string& rest) {
    if (n == 0) return;
    parts += (parts.empty() ? "" : "; ") + std::to_string(n) + " " + (n == 1 ? one : many) + rest;
  };
  add(sum.absurd_times, "record", "records", " with absurd times dropped");
  add(sum.devices_dropped, "device id", "device ids",
      " beyond the first " + std::to_string(model::kMaxDevicesPerTrace) +
          " of a trace dropped, with their records");
  add(sum.processes_dropped, "process", "processes",
      " beyond the busiest " + std::to_string(model::kMaxProcessesPerTrace) +
          " of a trace dropped");
  add(sum.names_truncated, "name", "names",
      " longer than " + std::to_string(model::kMaxNameBytes) + " bytes truncated");
  if (parts.empty()) return parts;
  const auto& files = trace.source.files;
  return "warning: " +
         (files.size() == 1 ? files.front() + " exceeds" : std::string("the inputs exceed")) +
         " gpuwise's input bounds: " + parts;
}

} // namespace

int reportCommand(const ReportOptionsCli& o, CliIo io) {
  auto fail = [&](const std::string& line) {
    logLine(io.err, "report", line);
    return kExitUsage;
  };
  if (o.inputs.empty()) return fail("at least one INPUT is required");

  std::string error;
  ClassifiedInputs classified;
  if (!classifyReportInputs(o.inputs, &classified, &error)) return fail(error);
  if (classified.reports) {
    const bool defaults = o.json.empty() && o.html.empty();
    return mergeReportsCommand(classified.report_files, defaults ? kDefaultJsonReport : o.json,
                               defaults ? kDefaultHtmlReport : o.html, io);
  }

  LoadedInputs loaded;
  if (!loadTraceInputs(o.inputs, "gpuwise report", &io.err, &loaded, &error)) return fail(error);

  if (auto bounds = inputBoundsWarning(loaded.trace); !bounds.empty())
    logLine(io.err, "report", bounds);

  ReportTargets targets;
  targets.json_path = o.json;
  targets.html_path = o.html;
  targets.cost.gpu_hour_price = o.gpu_hour_price;
  targets.cost.energy_price_kwh = o.energy_price;
  targets.advice_floor = o.advice.floor;
  targets.gpu_type = o.advice.gpu_type;
  targets.verbose = o.advice.verbose;
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
