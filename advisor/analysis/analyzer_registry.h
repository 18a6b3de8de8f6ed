// The analyzer registry: the one list of the analyzers a JobAnalysis runs, in the order they run,
// with how each result merges with another window's. analyzeJob() and a live run's windows
// (ingest/window_aggregator.cpp) run this list, JobAnalysis::merge() merges by it.
//
// Adding an analyzer: write analysis/<name>_analyzer.{h,cpp} with a result struct (with merge())
// and a pure `analyze<Name>(...)`, give JobAnalysis a field for its result, and add one entry to
// the table in analyzer_registry.cpp. The report sinks show what they choose to show.
//
// The table is constant; any thread.
#pragma once

#include <cstdint>
#include <span>

namespace gpuwise::model {
struct Trace;
}

namespace gpuwise::advisor {

struct IngestHealth;
struct JobAnalysis;

enum class AnalyzerStage : uint8_t {
  // Per process on its activity index (timeline, steps). The caller runs these itself: a window
  // passes its bounds, analyzeJob() none; the registry holds only their merge. analyzeJob() runs
  // them one process per worker (process_workers.h): job_analysis.cpp's analyzeProcess() computes
  // a process's results into a ProcessAnalysis, and appendProcess() folds them into the job's in
  // process order, so the report is the serial one. An analyzer whose result is per process and
  // costly (it builds its own index or sorts a process's records) belongs there: a field in
  // ProcessAnalysis, a line in each of those two functions, and its merge listed here with this
  // stage. A cheap one-pass analyzer stays in Records.
  Timeline,
  // Record by record, no timeline (kernels, precision, BLAS, copies, syncs, NVML, collection).
  Records,
  // Following the device-memory level through allocations and frees (memory, utilisation): a
  // window runs them after adding the allocations still live at its start.
  MemoryLevels,
  // From the other stages' results, after them (the ranks side by side): analyzeJob() and each
  // live window run it last; its merge recomputes from the merged fields.
  Summary,
};

struct AnalyzerInput {
  const model::Trace& trace;
  const IngestHealth* ingest = nullptr; // the ingest's figures; nullptr for imported traces
};

struct Analyzer {
  const char* name;
  AnalyzerStage stage;
  // Fills the analyzer's field of `into`; may read fields of analyzers listed before it.
  // nullptr for the Timeline stage.
  void (*run)(const AnalyzerInput& input, JobAnalysis& into);
  // Folds `other`'s result into `into`'s; may read fields merged before it. nullptr when the
  // result is only recomputed (finish).
  void (*merge)(JobAnalysis& into, const JobAnalysis& other);
  // Recomputes what the result derives from the folded fields (the steps' warm-up, the ranks
  // side by side), after every analyzer's merge; nullptr when merge leaves nothing to derive.
  // Apart from merge so that a live run folds each window cheaply and derives once, when the
  // analysis is read: derived over the whole job so far, at every window, the cost grew with
  // the job's length.
  void (*finish)(JobAnalysis& into) = nullptr;
};

// Every analyzer, in run and merge order.
std::span<const Analyzer> analyzers();

// Runs the analyzers of one stage (not Timeline) in order.
void runAnalyzers(AnalyzerStage stage, const AnalyzerInput& input, JobAnalysis& into);

// Merges every analyzer's result, in order: foldAnalyzers, then finishAnalyzers.
void mergeAnalyzers(JobAnalysis& into, const JobAnalysis& other);
// Every analyzer's merge, in order; the derived fields are stale until finishAnalyzers().
void foldAnalyzers(JobAnalysis& into, const JobAnalysis& other);
// Every analyzer's finish, in order.
void finishAnalyzers(JobAnalysis& into);

} // namespace gpuwise::advisor
