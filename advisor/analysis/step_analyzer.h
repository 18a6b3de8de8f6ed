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
// Warm-up and steady state, per process. A job's first steps are not the job: data-loader workers
// start, allocators grow, kernels autotune or compile, and those steps wait for it. Averaged in,
// a few of them make a healthy loop look input-bound and two identical runs look different. So:
//   reference  the median duration of the steps after the cap (below): the steady step
//   settled    a step no longer than (1 + kWarmupBand) x the reference (one-sided: warm-up steps
//              are slow because something is starting; a short step is not warm-up)
//   warm-up    the leading steps before the first run of kSettledRun consecutive settled steps
//              (one settled step among slow ones, a batch that happened to be ready, has not
//              settled), and at most n x kMaxWarmupShare of the n steps, rounded down (none under
//              10 steps): a bounded warm-up can never hide a slow phase of the job itself.
// The steady state is every step after the warm-up. Every per-step aggregate of StepResult that
// advice reads (deviceStepNs, inputStallNs, hostSyncNs, idleNs, inputStallRatio, steadyStats)
// covers the steady state only; count() and stats() cover every step; warmup*() the warm-up.
//
// Input stall ratio (the report's summary.input_stall_ratio): input idle inside the steady steps
// over their step time x the process's active devices; with no steps, input idle over the GPU
// span (the span acts as one step), which StepResult leaves to the caller
// (JobAnalysis::inputStallRatio).
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
#include <span>
#include <vector>

namespace gpuwise::advisor {

inline constexpr double kWarmupBand = 0.5;
inline constexpr size_t kSettledRun = 3;
inline constexpr double kMaxWarmupShare = 0.1;

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
  size_t warmup = 0;             // the leading steps that are warm-up (markWarmup)

  std::span<const StepRecord> warmupSteps() const { return {steps.data(), warmup}; }
  std::span<const StepRecord> steadySteps() const {
    return {steps.data() + warmup, steps.size() - warmup};
  }
};

// How many leading steps are warm-up, by the rule above.
size_t countWarmupSteps(const std::vector<StepRecord>& steps);
// Sets p.warmup from its steps (again after steps were appended).
void markWarmup(ProcessSteps& p);

struct StepStats {
  uint64_t count = 0;
  model::TimeNs total_ns = 0, mean_ns = 0, min_ns = 0, max_ns = 0;
  // Percentiles by linear interpolation between closest ranks (numpy's default).
  model::TimeNs p10_ns = 0, p25_ns = 0, p50_ns = 0, p75_ns = 0, p90_ns = 0;
  double stddev_ns = 0;
  // The median's distribution-free 95% confidence interval: the order statistics at ranks
  // (n -/+ 1.96 sqrt(n)) / 2. It needs no shape: a few host-starved steps, or a quarter of
  // them, widen it only as far as they move the median (the IQR would double).
  model::TimeNs p50_ci_low_ns = 0, p50_ci_high_ns = 0;
  // stddev / mean: step-to-step variation (0 for identical steps).
  double cv() const { return mean_ns > 0 ? stddev_ns / double(mean_ns) : 0.0; }
  // (p75 - p25) / p50, the robust step-to-step variation: a few outliers do not move it.
  double iqrRatio() const { return p50_ns > 0 ? double(p75_ns - p25_ns) / double(p50_ns) : 0.0; }
};

struct StepResult {
  std::vector<ProcessSteps> processes; // only processes with steps

  StepSource source() const; // the best source of any process; None without steps
  StepStats stats() const;   // step durations over every process, warm-up included
  uint64_t count() const;    // every step, warm-up included
  // The steady state (after each process's warm-up): its durations and count.
  StepStats steadyStats() const;
  uint64_t steadyCount() const;
  // The warm-up: its steps, their summed duration, and per device-step figures.
  uint64_t warmupCount() const;
  model::TimeNs warmupNs() const;
  model::TimeNs warmupDeviceStepNs() const;
  model::TimeNs warmupIdleNs(IdleCause cause) const;
  model::TimeNs warmupBusyNs() const;
  // What held the warm-up back: an idle cause's name (toString(IdleCause): "input", ...) whose
  // idle is over half the warm-up's device time, "gpu_busy" when busy time is, else "mixed";
  // nullptr without warm-up.
  const char* warmupLimiter() const;
  // Sums over the steady steps of (duration x the process's devices), and of the per-step figures.
  model::TimeNs deviceStepNs() const;
  model::TimeNs inputStallNs() const;
  model::TimeNs hostSyncNs() const;
  model::TimeNs busyNs() const;
  model::TimeNs idleNs(IdleCause cause) const;
  // inputStallNs() / deviceStepNs(); nullopt without steady steps.
  std::optional<double> inputStallRatio() const;
  // The share of steady steps that each waited for input at least `min_share` of their own
  // device time: near 1 when the loader is slow every step, near 0 when a few steps hold all of
  // the stall (a host that was busy elsewhere, one slow read); nullopt without steady steps.
  std::optional<double> inputStalledStepShare(double min_share) const;
  // busyNs() / deviceStepNs(): the GPU busy share of the steady steps; nullopt without them.
  std::optional<double> busyRatio() const;
  // The median over steady steps of each step's busy share (busy / (duration x devices)): what
  // a typical step keeps the GPU busy, which a few host-starved steps do not move.
  std::optional<double> busyRatioP50() const;
  // Appends another window's steps and marks each process's warm-up again over all its steps.
  void merge(const StepResult& other);
  // merge() in two halves, for a live run that folds many windows and reads the result rarely:
  // fold() appends (each process's warm-up is stale until markWarmup() marks it again over all
  // its steps, a sort of every step so far: per fold, a long job's cost grew with its length).
  void fold(const StepResult& other);
  void markWarmup();
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
