// ActivityIndex: one process's records arranged for the time-based analyzers (timeline, idle
// causes, steps, input stalls), built once per process in O(n log n).
//
//   - per device: its timed GPU activities (kernels, copies, memsets) sorted by start, and the
//     union of their intervals (the busy time of the HTA / TraceLens definition);
//   - per host thread: the union of the intervals it spent inside any CUDA call (API calls, the
//     launch / call intervals carried on GPU records, host syncs) and, separately, inside calls
//     that block it (HostSync except StreamWaitEvent, synchronous copies' host calls), and inside
//     kernel launch calls;
//   - the union of DataLoader ranges over all threads, and the step ranges.
//
// Both sources are handled: Kineto traces list every launch as an ApiCall and also carry its
// interval on the GPU record (the builder joins them by correlation); live runs have no ApiCall
// for launches, only the interval on the GPU record. The unions make either count once.
//
// A thread id of 0 (unknown) is one thread. Pure; any thread. The index points into the process
// trace it was built from (kernel names), which must outlive it.
#pragma once

#include "advisor/analysis/interval_union.h"
#include "profiler/model/trace.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace gpuwise::advisor {

enum class ActivityKind : uint8_t { Kernel, Copy, Memset };

struct GpuActivity {
  model::TimeNs start = 0, end = 0;
  model::TimeNs launch_start = 0, launch_end = 0; // host call that issued it; 0 when unknown
  uint32_t thread = 0;                            // launching thread; 0 when unknown
  uint32_t stream = 0;
  model::NameId name = 0; // kernels only
  ActivityKind kind = ActivityKind::Kernel;
  model::CopyDirection direction = model::CopyDirection::Unknown; // copies only
  uint8_t flags = 0;                                              // model::KernelFlags (kernels)

  bool launchKnown() const { return launch_start != 0; }
  bool isHostToDeviceCopy() const {
    return kind == ActivityKind::Copy && direction == model::CopyDirection::HostToDevice;
  }
  bool isCommunication() const {
    return kind == ActivityKind::Kernel && (flags & model::kKernelCommunication) != 0;
  }
};

struct DeviceActivity {
  uint32_t device = 0;
  std::vector<GpuActivity> activities; // timed only, sorted by (start, end)
  std::vector<Interval> busy;          // union of the activities, sorted and disjoint
  uint64_t untimed = 0;                // activities without GPU timestamps (not on the timeline)

  model::TimeNs spanStart() const { return busy.empty() ? 0 : busy.front().start; }
  model::TimeNs spanEnd() const { return busy.empty() ? 0 : busy.back().end; }
};

struct ThreadHost {
  std::vector<Interval> calls; // inside any CUDA call (blocking ones included), merged
  std::vector<Interval> syncs; // inside a call that blocks the host on the GPU, merged
  // Inside a kernel launch call (from the kernels' launch intervals), merged.
  std::vector<Interval> launches;
};

struct ActivityIndex {
  const model::ProcessTrace* process = nullptr; // what it was built from (names, ranges)
  int64_t pid = 0;
  int32_t rank = -1;
  std::vector<DeviceActivity> devices; // by device index, only devices with any GPU record
  std::unordered_map<uint32_t, ThreadHost> threads;
  std::vector<Interval> data_loader;            // DataLoader ranges of every thread, merged
  std::vector<const model::Range*> step_ranges; // RangeKind::Step, by start

  // The host timeline of a thread, nullptr when it made no CUDA call.
  const ThreadHost* thread(uint32_t tid) const;
  bool hasDataLoader() const { return !data_loader.empty(); }
};

ActivityIndex buildActivityIndex(const model::ProcessTrace& process);

// Length of the part of [lo, hi) covered by a sorted, disjoint list (binary search + scan).
model::TimeNs coveredLength(const std::vector<Interval>& merged, model::TimeNs lo,
                            model::TimeNs hi);

// True when a sorted, disjoint list covers time t (start <= t <= end).
bool covers(const std::vector<Interval>& merged, model::TimeNs t);

// The pieces of [lo, hi) that `merged` covers (inside == true) or does not cover (inside ==
// false), in time order, appended to `out`.
void clip(const std::vector<Interval>& merged, model::TimeNs lo, model::TimeNs hi, bool inside,
          std::vector<Interval>& out);

} // namespace gpuwise::advisor
