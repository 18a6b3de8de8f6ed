#include "advisor/analysis/analyzer_registry.h"

#include "advisor/analysis/distributed_analyzer.h"
#include "advisor/analysis/job_analysis.h"

#include <array>

namespace gpuwise::advisor {
namespace {

// The common merge: the result's own merge().
template <auto Field> void mergeField(JobAnalysis& into, const JobAnalysis& other) {
  (into.*Field).merge(other.*Field);
}

using Stage = AnalyzerStage;
using Input = AnalyzerInput;

// The one list. Order matters where an entry reads another's field: precision runs on, and is
// recomputed from, the kernels listed before it.
const std::array kAnalyzers{
    Analyzer{"timeline", Stage::Timeline, nullptr, mergeField<&JobAnalysis::timeline>},
    Analyzer{"steps", Stage::Timeline, nullptr,
             [](JobAnalysis& a, const JobAnalysis& o) { a.steps.fold(o.steps); },
             [](JobAnalysis& a) { a.steps.markWarmup(); }},
    Analyzer{"collection", Stage::Records,
             [](const Input& in, JobAnalysis& a) {
               a.collection = analyzeCollection(in.trace, in.ingest);
             },
             mergeField<&JobAnalysis::collection>},
    Analyzer{"kernels", Stage::Records,
             [](const Input& in, JobAnalysis& a) { a.kernels = analyzeKernels(in.trace); },
             mergeField<&JobAnalysis::kernels>},
    Analyzer{"precision", Stage::Records,
             [](const Input&, JobAnalysis& a) { a.precision = analyzePrecision(a.kernels); },
             [](JobAnalysis& a, const JobAnalysis&) { a.precision = analyzePrecision(a.kernels); }},
    Analyzer{"blas", Stage::Records,
             [](const Input& in, JobAnalysis& a) { a.blas = analyzeBlasPrecision(in.trace); },
             mergeField<&JobAnalysis::blas>},
    Analyzer{"copies", Stage::Records,
             [](const Input& in, JobAnalysis& a) { a.copies = analyzeCopies(in.trace); },
             mergeField<&JobAnalysis::copies>},
    Analyzer{"syncs", Stage::Records,
             [](const Input& in, JobAnalysis& a) { a.syncs = analyzeSyncs(in.trace); },
             mergeField<&JobAnalysis::syncs>},
    Analyzer{"nvml", Stage::Records,
             [](const Input& in, JobAnalysis& a) { a.nvml = analyzeNvml(in.trace); },
             mergeField<&JobAnalysis::nvml>},
    // Counts its kernels here; its times are the timeline's (a window attaches them after its
    // timeline runs), re-read from the merged timeline on merge.
    Analyzer{"communication", Stage::Records,
             [](const Input& in, JobAnalysis& a) {
               a.communication = analyzeCommunication(in.trace, a.timeline);
             },
             [](JobAnalysis& a, const JobAnalysis& o) {
               a.communication.merge(o.communication);
               a.communication.attachTimeline(a.timeline);
             }},
    Analyzer{"memory", Stage::MemoryLevels,
             [](const Input& in, JobAnalysis& a) { a.memory = analyzeMemory(in.trace); },
             mergeField<&JobAnalysis::memory>},
    Analyzer{"utilization", Stage::MemoryLevels,
             [](const Input& in, JobAnalysis& a) { a.utilization = analyzeUtilization(in.trace); },
             mergeField<&JobAnalysis::utilization>},
    Analyzer{"collective_timings", Stage::Records,
             [](const Input& in, JobAnalysis& a) {
               a.distributed.collectives = collectCollectiveTimings(in.trace);
             },
             [](JobAnalysis& a, const JobAnalysis& o) {
               mergeCollectiveTimings(a.distributed.collectives, o.distributed.collectives);
             }},
    // Last: reads the timeline, steps (their warm-up), collection and communication merged
    // before it.
    Analyzer{"distributed", Stage::Summary, [](const Input&, JobAnalysis& a) { summarizeRanks(a); },
             nullptr, summarizeRanks},
};

} // namespace

std::span<const Analyzer> analyzers() {
  return kAnalyzers;
}

void runAnalyzers(AnalyzerStage stage, const AnalyzerInput& input, JobAnalysis& into) {
  for (const auto& analyzer : kAnalyzers)
    if (analyzer.stage == stage && analyzer.run) analyzer.run(input, into);
}

void mergeAnalyzers(JobAnalysis& into, const JobAnalysis& other) {
  foldAnalyzers(into, other);
  finishAnalyzers(into);
}

void foldAnalyzers(JobAnalysis& into, const JobAnalysis& other) {
  for (const auto& analyzer : kAnalyzers)
    if (analyzer.merge) analyzer.merge(into, other);
}

void finishAnalyzers(JobAnalysis& into) {
  for (const auto& analyzer : kAnalyzers)
    if (analyzer.finish) analyzer.finish(into);
}

} // namespace gpuwise::advisor
