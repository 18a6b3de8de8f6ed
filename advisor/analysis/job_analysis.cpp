#include "advisor/analysis/job_analysis.h"

#include "advisor/analysis/analyzer_registry.h"
#include "advisor/analysis/interval_union.h"

#include <algorithm>
#include <limits>
#include <type_traits>

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

template <typename R> void addRecord(Span& s, const R& r) {
  if constexpr (requires { r.start; }) {
    s.add(r.start, r.end);
    if constexpr (requires { r.launch_start; }) s.add(r.launch_start, r.launch_end);
    if constexpr (requires { r.call_start; }) s.add(r.call_start, r.call_end);
  } else {
    s.addInstant(r.time);
  }
}

Span recordSpan(const model::ProcessTrace& p) {
  Span s;
  p.forEachColumn([&](const auto& column) {
    using Record = typename std::decay_t<decltype(column)>::value_type;
    // NVML samples and cuBLAS calls do not extend the span: the samples mark the sampler's ticks,
    // not work, and a cuBLAS call's work is its kernels, which do.
    if constexpr (!std::is_same_v<Record, model::DeviceSample> &&
                  !std::is_same_v<Record, model::BlasCall>)
      for (const auto& r : column)
        addRecord(s, r);
  });
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
    if (auto steps = analyzeSteps(index, idle, options.idle))
      a.steps.processes.push_back(std::move(*steps));
  }
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
