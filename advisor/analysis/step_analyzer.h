// Steps: the training iterations of each process, what each one spent its time on, and how much
// they vary.
//
// Where steps come from, best first:
//   profiler_step  ProfilerStep#N ranges (torch.profiler with a schedule)
//   nvtx           other Step ranges (an NVTX "step" range, or one an exporter marked as a step)
//   inferred       the period of the launch sequence (step_inference.h), when there are none
// A process with neither has no steps; the job's source is then null. Nested or overlapping step
// ranges keep the outermost.
//
// Windows: the host range [start, end) of an annotated step; for inferred steps, windows on the
// GPU timeline (step_inference.h). Per step, inside its window and summed over the process's
// devices: GPU busy time, idle time by cause (idle_attribution.h; input is the input stall), host
// time blocked in synchronising calls (union per thread, summed over threads), host time in
// DataLoader ranges, kernels started. A step's idle covers its whole window: where a step began
// before a device's first activity, that time is attributed like a gap ended by the first
// activity (attributeIdleBefore); after the last activity it is "other". So per step, busy plus
// idle is the duration times the devices, even though the timeline's idle counts only the span.
//
// Input stall ratio (the report's summary.input_stall_ratio): input idle inside the steps over
// step time x the process's active devices; with no steps, input idle over the GPU span (the
// span acts as one step), which StepResult leaves to the caller (JobAnalysis::inputStallRatio).
//
// Pure; any thread. Results merge by appending (windows of a live job are disjoint in time; each
// window counts annotated steps by their end and inferred ones by their start, window_bounds.h).
// Inferred steps of a live run are inferred per window (its records and the carried context since
// the previous window's last step), so a window with fewer than two whole periods holds its
// records until it has them; the step cut positions can differ from a whole-trace inference by a
// launch or so at a boundary.
#pragma once

#include "advisor/analysis/activity_index.h"
#include "advisor/analysis/idle_attribution.h"
#include "advisor/analysis/window_bounds.h"
#include "profiler/model/trace.h"

#include <array>
#include <optional>
#include <vector>

namespace gpuwise::advisor {

enum class StepSource : uint8_t { None = 0, Inferred, Nvtx, ProfilerStep }; // worse to better
// "profiler_step", "nvtx", "inferred"; nullptr for None (the report writes null).
const char* toString(StepSource source);

struct StepRecord {
  int64_t number = -1; // ProfilerStep#N's N; the index in the process otherwise
  model::TimeNs start = 0, end = 0;
  model::TimeNs gpu_busy_ns = 0;
  std::array<model::TimeNs, kIdleCauses> idle_ns{};
  model::TimeNs host_sync_ns = 0;
  model::TimeNs data_loader_ns = 0;
  uint64_t kernels = 0;

  model::TimeNs durationNs() const { return end - start; }
  model::TimeNs idle(IdleCause c) const { return idle_ns[static_cast<size_t>(c)]; }
  model::TimeNs inputStallNs() const { return idle(IdleCause::Input); }
};

struct ProcessSteps {
  int64_t pid = 0;
  int32_t rank = -1;
  StepSource source = StepSource::None;
  uint32_t devices = 0; // devices with GPU activity: the per-step figures sum over them
  // Inferred steps: the period in launches and syncs, its match rate, what gave it.
  uint32_t inferred_period = 0;
  double inferred_match_rate = 0;
  const char* inferred_anchor = "";
  std::vector<StepRecord> steps; // in time order
};

struct StepStats {
  uint64_t count = 0;
  model::TimeNs total_ns = 0, mean_ns = 0, p50_ns = 0, p90_ns = 0, min_ns = 0, max_ns = 0;
  double stddev_ns = 0;
  // stddev / mean: step-to-step variation (0 for identical steps).
  double cv() const { return mean_ns > 0 ? stddev_ns / double(mean_ns) : 0.0; }
};

struct StepResult {
  std::vector<ProcessSteps> processes; // only processes with steps

  StepSource source() const; // the best source of any process; None without steps
  StepStats stats() const;   // step durations over every process
  uint64_t count() const;
  // Sums over steps of (duration x the process's devices), and of the per-step figures.
  model::TimeNs deviceStepNs() const;
  model::TimeNs inputStallNs() const;
  model::TimeNs hostSyncNs() const;
  model::TimeNs idleNs(IdleCause cause) const;
  // inputStallNs() / deviceStepNs(); nullopt without steps.
  std::optional<double> inputStallRatio() const;
  void merge(const StepResult& other);
};

// The steps of one process from its index and the idle segments of its devices (aligned with
// the timeline's devices for that index: analyzeTimeline(index, options, &idle)).
// With `bounds` (a window of a live run, window_bounds.h): only the steps the window counts;
// nullopt when no step source was found, an empty list when every step was counted before.
std::optional<ProcessSteps> analyzeSteps(const ActivityIndex& index,
                                         const std::vector<DeviceIdle>& idle,
                                         const IdleOptions& options = {},
                                         const WindowBounds* bounds = nullptr);
// Every process of a trace (builds the indices and idle segments itself).
StepResult analyzeSteps(const model::Trace& trace, const IdleOptions& options = {});

StepStats stepStats(std::vector<model::TimeNs> durations);

} // namespace gpuwise::advisor
