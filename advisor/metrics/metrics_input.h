// What the Prometheus exposition is built from: per (process, GPU) figures of a live job. The live
// advisor builds them from each stream's aggregates (IngestServer::streamAnalyses(): the windows
// analysed so far and the open one, never the raw records of the run, so its memory stays
// bounded); a whole trace (tests, replays) is analysed per process into the same aggregates. The
// contract labels every series with the process's rank, so figures are per process; the kernel and
// copy figures are per GPU for a process that used several (device_aggregates.h).
//
// busy_ratio_60s comes from the utilisation analyzer's recent series (1 s buckets): exact while the
// device's span is shorter than 60 s; otherwise the bucket the 60 s window starts in counts in
// proportion to the part of it inside, off by at most that bucket's busy time (1 s in 60 s).
//
// Pure; any thread. The inputs are taken by value and moved from.
#pragma once

#include "advisor/analysis/collection_analyzer.h"
#include "advisor/analysis/job_analysis.h"
#include "advisor/ingest/process_stream.h"
#include "advisor/rules/recommendation.h"
#include "profiler/model/trace.h"

#include <optional>
#include <vector>

namespace gpuwise::advisor::metrics {

// One GPU as one process used it.
struct DeviceFigures {
  uint32_t device = 0;
  std::optional<model::DeviceInfo> info;  // what the process reported about the device
  std::optional<DeviceTimeline> timeline; // absent without GPU timestamps (interposer tier)
  // Busy share of the window [max(span start, span end - 60 s), span end]; absent with timeline.
  std::optional<double> busy_ratio_60s;
  KernelResult kernels;                      // this device's kernels only
  CopyResult copies;                         // this device's copies only
  std::optional<uint64_t> memory_used_bytes; // latest reserved sample, else net allocations
  std::optional<uint64_t> memory_peak_bytes;
  // NVML's energy counter's difference (or integrated power) since the process connected: the
  // whole GPU's; absent without NVML power readings.
  std::optional<double> energy_joules;
};

struct ProcessFigures {
  model::ProcessInfo info;
  std::vector<model::DeviceInfo> devices;
  std::vector<DeviceFigures> gpus; // every device with any activity, in device order
  bool timeline_known = false;     // any GPU timestamp in this process
  model::TimeNs input_stall_ns = 0;
  SyncResult syncs;
  std::optional<ProcessSteps> steps; // absent while no step was recognised
  uint64_t events = 0, events_dropped = 0;
  bool connected = true; // its final batch has not arrived
};

// One pod's recommendations: the rules run on the merged analysis of that pod's processes only, so
// an advisor that several pods reach (a shared --endpoint) never labels one pod with another's
// findings.
struct PodRecommendations {
  std::string ns, pod; // as the processes reported them (ProcessInfo), unsanitised
  std::vector<Recommendation> recommendations;
};

struct JobFigures {
  std::vector<ProcessFigures> processes; // in order of first contact
  std::vector<PodRecommendations> pods;  // in order of first contact
  bool simulated = false;

  // The recommendations of the pod (ns, pod); empty for a pod not seen.
  const std::vector<Recommendation>& recommendationsOf(const std::string& ns,
                                                       const std::string& pod) const;
};

// From each stream's aggregates (in order of first contact); the recommendations per pod (namespace
// and pod of the stream's ProcessInfo). Each stream's analysis carries its health (the events the
// advisor received, the losses it counted, whether it finished).
JobFigures buildMetricsInput(std::vector<StreamAnalysis> streams);

// Analyses `trace` per process into the same aggregates, as one window each; `health` (aligned
// with trace.processes) as above; nullptr: all connected.
JobFigures buildMetricsInput(model::Trace trace, const IngestHealth* health);

} // namespace gpuwise::advisor::metrics
