#include "advisor/analysis/job_analysis.h"

#include "advisor/analysis/analyzer_registry.h"
#include "advisor/analysis/interval_union.h"
#include "advisor/analysis/process_workers.h"

#include <algorithm>
#include <limits>
#include <type_traits>

namespace gpuwise::advisor {
namespace {

RecordSpanAccumulator recordSpan(const model::ProcessTrace& p) {
  RecordSpanAccumulator s;
  p.forEachColumn([&](const auto& column) {
    for (const auto& r : column)
      s.add(r);
  });
  return s;
}

// One process's wall time: the producer's wall span when known, else the span of its records.
std::optional<model::TimeNs> processWallTime(const model::ProcessTrace& p) {
  if (isTimed(p.wall_start, p.wall_end)) return p.wall_end - p.wall_start;
  if (auto s = recordSpan(p).span()) return s->end - s->start;
  return std::nullopt;
}

// The longest of the processes' wall times, in process order.
void widenWall(std::optional<model::TimeNs>& wall, std::optional<model::TimeNs> w) {
  if (w && (!wall || *w > *wall)) wall = w;
}

// What one process's own records decide, computed on a worker of its own (process_workers.h):
// the Timeline stage of the registry (timeline with its idle causes, steps) and its wall time.
// A new per-process analyzer adds its result here, fills it in analyzeProcess() and folds it in
// appendProcess().
struct ProcessAnalysis {
  TimelineResult timeline;
  std::optional<ProcessSteps> steps;
  std::optional<model::TimeNs> wall_ns;
};

ProcessAnalysis analyzeProcess(const model::ProcessTrace& p, const AnalysisOptions& options) {
  ProcessAnalysis r;
  // One index per process feeds the timeline, the idle causes and the steps; it is dropped here,
  // so the workers hold one index each, not one per process.
  auto index = buildActivityIndex(p);
  std::vector<DeviceIdle> idle;
  r.timeline = analyzeTimeline(index, options.idle, &idle);
  r.steps = analyzeSteps(index, idle, options.idle);
  if (!options.wall_ns) r.wall_ns = processWallTime(p);
  return r;
}

// Folds one process's results into the job's; called in process order, so the job's result is
// the serial one whatever the number of workers.
void appendProcess(JobAnalysis& a, ProcessAnalysis&& p) {
  a.timeline.append(std::move(p.timeline));
  if (p.steps) a.steps.processes.push_back(std::move(*p.steps));
  widenWall(a.wall_ns, p.wall_ns);
}

} // namespace

std::optional<model::TimeNs> wallTime(const model::Trace& trace) {
  std::optional<model::TimeNs> wall;
  for (const auto& p : trace.processes)
    widenWall(wall, processWallTime(p));
  return wall;
}

model::TimeNs JobAnalysis::inputStallNs() const {
  return steps.count() > 0 ? steps.inputStallNs() : timeline.idle.at(IdleCause::Input);
}

model::TimeNs JobAnalysis::inputStallReferenceNs() const {
  return steps.count() > 0 ? steps.deviceStepNs() : timeline.span_ns;
}

std::optional<double> JobAnalysis::inputStallRatio() const {
  if (!timeline.known()) return std::nullopt;
  model::TimeNs reference = inputStallReferenceNs();
  if (reference <= 0) return std::nullopt;
  return double(inputStallNs()) / double(reference);
}

std::optional<double> JobAnalysis::hostSyncSecondsPerStep() const {
  if (steps.steadyCount() == 0) return std::nullopt;
  const double host_sync_seconds = static_cast<double>(steps.hostSyncNs()) / 1e9;
  return host_sync_seconds / double(steps.steadyCount());
}

JobAnalysis analyzeJob(const model::Trace& trace, const AnalysisOptions& options) {
  JobAnalysis a;
  a.source = trace.source;
  a.wall_ns = options.wall_ns;
  const size_t n = trace.processes.size();
  std::vector<ProcessAnalysis> per_process(n);
  runOnWorkers(n, analysisWorkers(n, options.workers),
               [&](size_t i) { per_process[i] = analyzeProcess(trace.processes[i], options); });
  for (auto& p : per_process)
    appendProcess(a, std::move(p));
  per_process = {};
  analyzeRecords(trace, options.ingest, a);
  analyzeMemoryLevels(trace, a);
  analyzeSummary(trace, a);
  return a;
}

void analyzeRecords(const model::Trace& trace, const IngestHealth* ingest, JobAnalysis& a) {
  runAnalyzers(AnalyzerStage::Records, {trace, ingest}, a);
}

void analyzeMemoryLevels(const model::Trace& trace, JobAnalysis& a) {
  runAnalyzers(AnalyzerStage::MemoryLevels, {trace}, a);
}

void analyzeSummary(const model::Trace& trace, JobAnalysis& a) {
  runAnalyzers(AnalyzerStage::Summary, {trace}, a);
}

std::optional<RecordSpan> recordSpanOf(const model::ProcessTrace& process) {
  return recordSpan(process).span();
}

void JobAnalysis::fold(const JobAnalysis& o) {
  source.simulated = source.simulated || o.source.simulated;
  for (const auto& f : o.source.files)
    if (std::find(source.files.begin(), source.files.end(), f) == source.files.end())
      source.files.push_back(f);
  if (o.wall_ns) wall_ns = wall_ns.value_or(0) + *o.wall_ns;
  foldAnalyzers(*this, o);
}

void JobAnalysis::finish() {
  finishAnalyzers(*this);
}

} // namespace gpuwise::advisor
