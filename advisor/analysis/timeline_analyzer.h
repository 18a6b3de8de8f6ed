// Timeline: how much of its GPU span each (process, device) spent doing anything.
//
//   span  = first GPU activity start .. last GPU activity end (kernels, copies, memsets)
//   busy  = length of the union of those intervals, over all streams of the device
//   idle  = span - busy; idle ratio = idle / span
//
// This is the definition HTA (temporal breakdown) and TraceLens (gpu_timeline) use, so figures
// agree with theirs on the same trace. Job totals are sums over (process, device).
//
// Busy time is also split by what the GPU did: compute (kernels that are not collective
// communication), communication (NCCL/RCCL kernels), memory (copies and memsets), each as its own
// union, so they may overlap; communication_exposed is communication time with no compute running
// (what a rank waits on its peers for). Idle time is split by cause (idle_attribution.h).
//
// Pure function of the trace; any thread. Every process of a trace keeps its own entries; results
// of separate windows merge by (pid, rank, device): spans widen, busy and idle times add, which is
// exact when the merged results cover adjacent disjoint time windows (a live run's windows,
// window_bounds.h, each counting from where the previous one stopped). Idle between two windows
// that neither counted (results of unrelated windows) is "other".
#pragma once

#include "advisor/analysis/idle_attribution.h"
#include "advisor/analysis/window_bounds.h"
#include "profiler/model/trace.h"

#include <optional>
#include <vector>

namespace gpuwise::advisor {

struct StreamBusy {
  uint32_t stream = 0;
  model::TimeNs busy_ns = 0; // union of this stream's kernel, copy and memset intervals
  uint64_t kernels = 0, copies = 0, memsets = 0;
};

struct DeviceTimeline {
  int64_t pid = 0;
  int32_t rank = -1; // with pid, tells apart processes of different hosts (imported traces)
  uint32_t device = 0;
  model::TimeNs span_start = 0, span_end = 0;
  model::TimeNs busy_ns = 0;        // union of kernels, copies and memsets
  model::TimeNs kernel_busy_ns = 0; // union of kernels alone
  model::TimeNs copy_busy_ns = 0;   // union of copies alone
  model::TimeNs memset_busy_ns = 0; // union of memsets alone
  // Copy time during which no kernel ran: the part of copying that stalls compute.
  model::TimeNs copy_exposed_ns = 0;
  model::TimeNs compute_busy_ns = 0;          // union of kernels other than communication
  model::TimeNs communication_busy_ns = 0;    // union of communication kernels
  model::TimeNs memory_busy_ns = 0;           // union of copies and memsets
  model::TimeNs communication_exposed_ns = 0; // communication while no compute kernel ran
  IdleBreakdown idle;                         // idle_ns() split by cause
  uint64_t timed_kernels = 0;
  uint64_t short_kernels = 0;      // timed kernels shorter than kShortKernelNs
  std::vector<StreamBusy> streams; // sorted by stream id

  model::TimeNs spanNs() const { return span_end - span_start; }
  model::TimeNs idleNs() const { return spanNs() - busy_ns; }
  std::optional<double> idleRatio() const;
};

// A kernel this short finishes before the host can launch the next one (a launch costs the host
// 2-5 us): a stream of them leaves the GPU waiting on launches.
inline constexpr model::TimeNs kShortKernelNs = 10'000;

struct TimelineResult {
  std::vector<DeviceTimeline> devices; // in trace order; by (pid, rank, device) after merge()
  // Sums over devices.
  model::TimeNs span_ns = 0, busy_ns = 0, kernel_busy_ns = 0, copy_busy_ns = 0, memset_busy_ns = 0,
                copy_exposed_ns = 0, compute_busy_ns = 0, communication_busy_ns = 0,
                memory_busy_ns = 0, communication_exposed_ns = 0;
  IdleBreakdown idle; // sums over devices; idle.total() == span_ns - busy_ns
  uint64_t timed_kernels = 0, short_kernels = 0;
  // Kernels, copies and memsets without GPU timestamps (interposer tier): not on the timeline.
  uint64_t untimed_events = 0;

  // False when no GPU activity had timestamps: span, busy and idle are then unknown (null).
  bool known() const { return !devices.empty(); }
  std::optional<double> idleRatio() const;
  // Share of idle time attributed to `cause`; nullopt when the timeline is unknown, 0 when the
  // GPU never idled.
  std::optional<double> idleShare(IdleCause cause) const;
  // Adds the devices of another process (no device in common) and their totals.
  void append(TimelineResult&& other);
  void merge(const TimelineResult& other);
};

TimelineResult analyzeTimeline(const model::Trace& trace, const IdleOptions& options = {});
// The devices of one process (pid and rank taken from its ProcessInfo), with their totals.
TimelineResult analyzeTimeline(const model::ProcessTrace& process, const IdleOptions& options = {});
// The same from an index already built; the idle segments of each device are appended to
// `idle_segments` (aligned with the result's devices) when it is not null.
// With `bounds` (a window of a live run, window_bounds.h), only the window's own time and
// activities are counted; the idle segments still cover every gap of the index (steps need them).
TimelineResult analyzeTimeline(const ActivityIndex& index, const IdleOptions& options,
                               std::vector<DeviceIdle>* idle_segments,
                               const WindowBounds* bounds = nullptr);

} // namespace gpuwise::advisor
