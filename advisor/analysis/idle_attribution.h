// Idle causes: why a device sat idle inside its GPU span, split into causes a user can act on.
//
// Idle time is the complement of the busy union (kernels, copies, memsets) inside the span, so it
// is a list of gaps [g0, g1). Let N be the GPU activity that ends the gap (the first to start at
// g1), P the one whose end opened it, T the thread that launched N and [ls, le] the host call
// that launched it (Kineto: the runtime call joined by correlation; live: the launch interval the
// shim carries on the record). Every nanosecond of every gap gets exactly one cause, in this order:
//
//   launch_overhead  the whole gap, when P and N are both kernels, N's launch call began before
//                    the gap began (ls < g0, or the launch is unknown) and the gap is shorter than
//                    IdleOptions::launch_overhead_max_gap_ns: the host had already asked, and the
//                    GPU waited only for the launch to travel (what CUDA graphs and fusion remove).
//   launch_overhead  also the whole gap, when the host was only launching: P and N are both
//                    kernels, and in W (below) thread T made no CUDA call but kernel launches,
//                    spent less than IdleOptions::host_launch_max_outside_ns outside them, was in
//                    no synchronising call and no DataLoader range overlaps it: the host went from
//                    one launch call to the next (however long it sat inside them), and the launch
//                    path's cost kept the GPU waiting, which is what CUDA/HIP graphs remove. Host
//                    time of its own (Python between ops, another thread's lock) or other calls
//                    (allocations, module loads, copies) make the gap host_bound.
//   other            the whole gap, when N's launch call began before the gap (ls <= g0) but the
//                    gap is longer or not between two kernels (stream/event dependencies, another
//                    device or rank, the driver), or when N's launch is unknown; except that with
//                    an unknown launch, DataLoader time inside the gap is still input.
//   otherwise the host had not asked yet: the window W = [g0, min(ls, g1)) is split by what
//   thread T was doing, and the launch latency [ls, g1) takes the cause of W's last piece:
//   input            W's time inside a DataLoader range (any thread of the process); and, in a
//                    trace without DataLoader ranges, when the gap ends in a host-to-device copy
//                    (N is an H2D copy: the next batch), W's time while T was outside every CUDA
//                    call (the host preparing the batch). Where the trace has DataLoader ranges
//                    they are the evidence: input idle never exceeds the idle they overlap, and
//                    host time outside them is host_bound. The two parts are kept apart as
//                    input_data_loader_ns and input_inferred_ns.
//   sync             W's time while T was blocked in a synchronising call; and all the remaining
//                    time of W when such a call was in progress on T when the gap began (the host
//                    waited for the GPU to drain, so nothing was queued behind the work: the gap is
//                    the price of that sync).
//   host_bound       the rest of W: T was busy on the host (Python, other CUDA calls) and had not
//                    launched N yet.
//
// Pure; any thread. O(gaps x log n).
#pragma once

#include "advisor/analysis/activity_index.h"

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace gpuwise::advisor {

enum class IdleCause : uint8_t { HostBound = 0, LaunchOverhead, Sync, Input, Other };
inline constexpr size_t kIdleCauses = 5;
// "host_bound", "launch_overhead", "sync", "input", "other": the report's keys.
const char* toString(IdleCause cause);

struct IdleOptions {
  // "A few microseconds": the launch latency of a queued kernel on current GPUs is 1-4 us; a
  // longer wait with work already queued is a dependency, not launch overhead.
  model::TimeNs launch_overhead_max_gap_ns = 5'000;
  // The host's own time between two launch calls (W's time outside every call) below which it
  // still counts as launching: the loop, the launch wrapper, an eager framework's per-op
  // dispatch (5-20 us in PyTorch; the launch_bound sample's shim and loop 1-10 us on a loaded
  // host). More is host work of its own (Python between ops, a lock, another thread).
  model::TimeNs host_launch_max_outside_ns = 20'000;
};

struct IdleSegment {
  model::TimeNs start = 0, end = 0;
  IdleCause cause = IdleCause::Other;
  bool inferred_input = false; // Input found from host state, not from a DataLoader range
};

struct IdleBreakdown {
  std::array<model::TimeNs, kIdleCauses> ns{}; // by IdleCause; sums to the idle time
  model::TimeNs input_data_loader_ns = 0;      // the part of Input inside DataLoader ranges
  model::TimeNs input_inferred_ns = 0;         // the part of Input inferred from host state
  uint64_t gaps = 0;                           // idle gaps inside the span
  uint64_t launch_overhead_gaps = 0;           // gaps attributed wholly to launch overhead
  uint64_t host_bound_gaps = 0;                // gaps with any host-bound time

  model::TimeNs at(IdleCause c) const { return ns[static_cast<size_t>(c)]; }
  model::TimeNs total() const;
  void add(const IdleBreakdown& other);
};

struct DeviceIdle {
  uint32_t device = 0;
  IdleBreakdown breakdown;
  std::vector<IdleSegment> segments; // in time order, disjoint, covering every gap exactly
};

// Gaps that begin before `count_from` or at/after `count_until` (a live window's context, counted
// by the previous window: see window_bounds.h) are attributed and kept in `segments` but left out
// of `breakdown`.
DeviceIdle attributeIdle(const ActivityIndex& index, const DeviceActivity& device,
                         const IdleOptions& options = {},
                         model::TimeNs count_from = std::numeric_limits<model::TimeNs>::min(),
                         model::TimeNs count_until = std::numeric_limits<model::TimeNs>::max());

// The idle before the device's first activity, from `from` (a step that began before the GPU
// span): the same causes, with N the first activity and no P (so never launch overhead). Not
// part of the span's idle; the step analyzer counts it inside step windows. Empty when `from` is
// not before the first activity.
std::vector<IdleSegment> attributeIdleBefore(const ActivityIndex& index,
                                             const DeviceActivity& device, model::TimeNs from,
                                             const IdleOptions& options = {});

} // namespace gpuwise::advisor
