// What the Prometheus exposition is built from: per (process, GPU) figures of a live job, taken
// from one snapshot of the ingest. The analysis runs per process (the contract labels every series
// with the process's rank), and the kernel and copy analyzers per GPU of a multi-GPU process.
//
// Pure; any thread. buildMetricsInput() takes the snapshot by value and moves the processes out of
// it, so the caller's copy of a long run is not copied again.
#pragma once

#include "advisor/analysis/collection_analyzer.h"
#include "advisor/analysis/job_analysis.h"
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

struct JobFigures {
  std::vector<ProcessFigures> processes; // in order of first contact
  std::vector<Recommendation> recommendations;
  bool simulated = false;
};

// Analyses `trace` per process; `health` (aligned with trace.processes) gives the events the
// advisor received, the losses it counted and which streams finished; nullptr: all connected.
JobFigures buildMetricsInput(model::Trace trace, const IngestHealth* health);

} // namespace gpuwise::advisor::metrics
