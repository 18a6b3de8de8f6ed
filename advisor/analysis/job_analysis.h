// JobAnalysis: every analyzer's result for one job (or one window of a live job), side by side.
//
// Which analyzers run, in which order, and how their results merge is the registry's
// (analyzer_registry.h): adding an analyzer is its own files, a field below for its result, and
// one entry there. This header includes the result types its fields hold, nothing more.
//
// Pure; any thread. A JobAnalysis owns its results and holds no reference to the trace.
#pragma once

#include "advisor/analysis/blas_precision_analyzer.h"
#include "advisor/analysis/collection_analyzer.h"
#include "advisor/analysis/communication_analyzer.h"
#include "advisor/analysis/copy_analyzer.h"
#include "advisor/analysis/interval_union.h"
#include "advisor/analysis/kernel_analyzer.h"
#include "advisor/analysis/memory_analyzer.h"
#include "advisor/analysis/nvml_analyzer.h"
#include "advisor/analysis/precision_analyzer.h"
#include "advisor/analysis/rank_summary.h"
#include "advisor/analysis/step_analyzer.h"
#include "advisor/analysis/sync_analyzer.h"
#include "advisor/analysis/timeline_analyzer.h"
#include "advisor/analysis/utilization_analyzer.h"
#include "profiler/model/trace.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <type_traits>

namespace gpuwise::advisor {

struct AnalysisOptions {
  // Wall time measured by the caller (`gpuwise run` times the command itself); otherwise derived
  // from the trace (see wallTime()).
  std::optional<model::TimeNs> wall_ns;
  // The ingest's view of the streams (live runs, .gwt files); nullptr for imported traces.
  const IngestHealth* ingest = nullptr;
  IdleOptions idle;
  // Threads for the per-process work (process_workers.h): 0, one per core, at most one per
  // process; 1, all on the caller's thread. The result is the same either way.
  unsigned workers = 0;
};

struct JobAnalysis {
  model::SourceInfo source;
  std::optional<model::TimeNs> wall_ns; // whole run (live) or trace span (offline)

  TimelineResult timeline;
  KernelResult kernels;
  PrecisionResult precision; // from `kernels`
  BlasPrecisionResult blas;  // cuBLAS call types vs their kernels' names (live runs)
  CopyResult copies;
  SyncResult syncs;
  MemoryResult memory;
  NvmlResult nvml; // NVML device samples (live runs)
  StepResult steps;
  CollectionResult collection;
  UtilizationResult utilization;     // busy and memory over time, bounded series for the charts
  CommunicationResult communication; // collective kernels per rank, their overlap with compute
  DistributedResult distributed;     // the ranks side by side, and the straggler

  // True when the trace came from, or ran on, the simulated device.
  bool simulated() const { return source.simulated || collection.simulated_device; }

  // summary.input_stall_ratio: input idle inside the steady steps (after the warm-up) over their
  // step time (x devices); without steps, all input idle over the GPU span. nullopt when the GPU
  // timeline is unknown.
  std::optional<double> inputStallRatio() const;
  // The input idle time that ratio counts, and what it is measured against.
  model::TimeNs inputStallNs() const;
  model::TimeNs inputStallReferenceNs() const;
  // summary.launch_overhead_ratio: launch-overhead idle over all idle (0 when never idle).
  std::optional<double> launchOverheadRatio() const {
    return timeline.idleShare(IdleCause::LaunchOverhead);
  }
  // Host time blocked in syncs per steady step (after the warm-up); nullopt without steps.
  std::optional<double> hostSyncSecondsPerStep() const;
  // Combines the analysis of another window of the same job (sums, maxima, widened spans).
  void merge(const JobAnalysis& other) {
    fold(other);
    finish();
  }
  // merge() in two halves: fold() combines, leaving what is derived from the combined figures
  // (the steps' warm-up, the ranks side by side) stale until finish(). For many folds read once.
  void fold(const JobAnalysis& other);
  void finish();
};

// The whole trace. Each process's index, timeline, idle causes and steps are computed on a worker
// of their own (options.workers) and folded in process order; the Records and MemoryLevels
// stages then run over the whole trace on the caller's thread.
JobAnalysis analyzeJob(const model::Trace& trace, const AnalysisOptions& options = {});

// The registry's Records stage (kernels, precision, BLAS, copies, syncs, NVML, collection): into
// `a`. `ingest`: the ingest's figures (may be null).
void analyzeRecords(const model::Trace& trace, const IngestHealth* ingest, JobAnalysis& a);
// The registry's MemoryLevels stage (memory, utilisation): a window runs it after the allocations
// still live at its start are added.
void analyzeMemoryLevels(const model::Trace& trace, JobAnalysis& a);
// The registry's Summary stage (the ranks side by side): last, once the other stages ran.
void analyzeSummary(const model::Trace& trace, JobAnalysis& a);

// First start and last end of a process's timed records (wallTime()'s fallback), nullopt when
// it has none. One walk over the records gives both.
struct RecordSpan {
  model::TimeNs start = 0, end = 0;
};
std::optional<RecordSpan> recordSpanOf(const model::ProcessTrace& process);

// The same span, widened one record at a time (a walk that visits the records anyway, such as a
// live window's cut, need not walk them again). NVML samples and cuBLAS calls do not extend it:
// the samples mark the sampler's ticks, not work, and a cuBLAS call's work is its kernels, which
// do.
class RecordSpanAccumulator {
public:
  template <typename R> void add(const R& r) {
    if constexpr (std::is_same_v<R, model::DeviceSample> || std::is_same_v<R, model::PowerSample> ||
                  std::is_same_v<R, model::BlasCall>) {
      return;
    } else if constexpr (requires { r.start; }) {
      add(r.start, r.end);
      if constexpr (requires { r.launch_start; }) add(r.launch_start, r.launch_end);
      if constexpr (requires { r.call_start; }) add(r.call_start, r.call_end);
    } else if (r.time != 0) {
      add(r.time, r.time);
    }
  }
  std::optional<RecordSpan> span() const {
    return lo_ <= hi_ ? std::optional(RecordSpan{lo_, hi_}) : std::nullopt;
  }

private:
  void add(model::TimeNs start, model::TimeNs end) {
    if (!isTimed(start, end)) return;
    lo_ = std::min(lo_, start);
    hi_ = std::max(hi_, end);
  }
  model::TimeNs lo_ = std::numeric_limits<model::TimeNs>::max();
  model::TimeNs hi_ = std::numeric_limits<model::TimeNs>::min();
};

// The wall time a trace covers: per process, the producer's wall span (wall_start..wall_end)
// when known, otherwise the span of all its timed records, host and GPU; the longest process
// wins (processes on different hosts have unrelated clocks). nullopt for a trace without times.
std::optional<model::TimeNs> wallTime(const model::Trace& trace);

} // namespace gpuwise::advisor
