#include "advisor/analysis/job_analysis.h"

#include "advisor/analysis/analyzer_registry.h"
#include "advisor/analysis/interval_union.h"

#include <algorithm>
#include <limits>

namespace gpuwise::advisor {
namespace {

struct Span {
  model::TimeNs lo = std::numeric_limits<model::TimeNs>::max();
  model::TimeNs hi = std::numeric_limits<model::TimeNs>::min();
  void add(model::TimeNs start, model::TimeNs end) {
    if (!isTimed(start, end)) return;
    lo = std::min(lo, start);
    hi = std::max(hi, end);
  }
  void addInstant(model::TimeNs t) {
    if (t != 0) add(t, t);
  }
  bool known() const { return lo <= hi; }
};

Span recordSpan(const model::ProcessTrace& p) {
  Span s;
  for (const auto& k : p.kernels)
    s.add(k.start, k.end), s.add(k.launch_start, k.launch_end);
  for (const auto& c : p.copies)
    s.add(c.start, c.end), s.add(c.call_start, c.call_end);
  for (const auto& m : p.memsets)
    s.add(m.start, m.end), s.add(m.call_start, m.call_end);
  for (const auto& x : p.syncs)
    s.add(x.start, x.end);
  for (const auto& a : p.api_calls)
    s.add(a.start, a.end);
  for (const auto& r : p.ranges)
    s.add(r.start, r.end);
  for (const auto& a : p.allocations)
    s.addInstant(a.time);
  for (const auto& m : p.memory_samples)
    s.addInstant(m.time);
  return s;
}

} // namespace

std::optional<model::TimeNs> wallTime(const model::Trace& trace) {
  std::optional<model::TimeNs> wall;
  for (const auto& p : trace.processes) {
    std::optional<model::TimeNs> w;
    if (isTimed(p.wall_start, p.wall_end)) {
      w = p.wall_end - p.wall_start;
    } else if (auto s = recordSpan(p); s.known()) {
      w = s.hi - s.lo;
    }
    if (w && (!wall || *w > *wall)) wall = w;
  }
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
  a.wall_ns = options.wall_ns ? options.wall_ns : wallTime(trace);
  for (const auto& p : trace.processes) {
    // One index per process feeds the timeline, the idle causes and the steps.
    auto index = buildActivityIndex(p);
    std::vector<DeviceIdle> idle;
    a.timeline.append(analyzeTimeline(index, options.idle, &idle));
    if (auto steps = analyzeSteps(index, idle, options.idle)) a.steps.processes.push_back(std::move(*steps));
  }
  analyzeRecords(trace, options.ingest, a);
  analyzeMemoryLevels(trace, a);
  return a;
}

void analyzeRecords(const model::Trace& trace, const IngestHealth* ingest, JobAnalysis& a) {
  runAnalyzers(AnalyzerStage::Records, {trace, ingest}, a);
}

void analyzeMemoryLevels(const model::Trace& trace, JobAnalysis& a) {
  runAnalyzers(AnalyzerStage::MemoryLevels, {trace}, a);
}

std::optional<model::TimeNs> recordSpanStart(const model::ProcessTrace& process) {
  auto s = recordSpan(process);
  return s.known() ? std::optional(s.lo) : std::nullopt;
}

std::optional<model::TimeNs> recordSpanEnd(const model::ProcessTrace& process) {
  auto s = recordSpan(process);
  return s.known() ? std::optional(s.hi) : std::nullopt;
}

void JobAnalysis::merge(const JobAnalysis& o) {
  source.simulated = source.simulated || o.source.simulated;
  for (const auto& f : o.source.files)
    if (std::find(source.files.begin(), source.files.end(), f) == source.files.end())
      source.files.push_back(f);
  if (o.wall_ns) wall_ns = wall_ns.value_or(0) + *o.wall_ns;
  mergeAnalyzers(*this, o);
}

} // namespace gpuwise::advisor
