// WindowBounds: what one window of a live process counts, when the advisor analyses a long run
// window by window instead of keeping every event (advisor/ingest/windowed_stream.h).
//
// A window is cut at a time `until`: it holds the records that start before `until` and were not
// counted by the previous window, plus the previous window's *context*: the records that reach
// into it (the GPU activity whose end opens the first gap of each device, host calls and
// DataLoader ranges open at the boundary, the last steps). The context is there so the analyzers
// that look back in time (idle causes, steps, step inference) see what the whole trace would
// have shown them; it is never counted twice:
//
//   - GPU time per device is counted from `device_from` (where the previous window's span ended:
//     its last busy end, or its `until` when a busy interval crossed it) to `until`: the gap
//     across a boundary lies wholly in the next window, attributed there with its true cause,
//     and span, busy and idle of consecutive windows add up exactly;
//   - idle gaps are counted by the window in which they begin at or after `device_from`;
//   - GPU activities (kernel counts, short kernels, per-stream counts) by their start
//     (`owned_from` <= start < `until`);
//   - steps: annotated steps by their end (a step range reaching past `until` stays for the next
//     window with its context), inferred steps by their start (>= `steps_from`, the end of the
//     previous window's last inferred step).
//
// Pure data; any thread.
#pragma once

#include "profiler/model/events.h"

#include <cstdint>
#include <limits>
#include <map>

namespace gpuwise::advisor {

struct WindowBounds {
  static constexpr model::TimeNs kMin = std::numeric_limits<model::TimeNs>::min();
  static constexpr model::TimeNs kMax = std::numeric_limits<model::TimeNs>::max();

  model::TimeNs owned_from = kMin; // records starting before were counted by the previous window
  model::TimeNs until = kMax;      // the cut; kMax for the open (last) window
  // GPU time (span, busy, idle gaps by their start) is counted up to here, <= until: for a process
  // with annotated steps, the end of its last complete step, so every host range that explains
  // the window's idle (a DataLoader range still open at the cut) has arrived.
  model::TimeNs count_until = kMax;
  model::TimeNs steps_from = kMin; // inferred steps starting before were counted already
  std::map<uint32_t, model::TimeNs>
      device_from; // per device; absent: count from its first activity
  // The process annotates its steps (a step range was seen): a window without one has no steps
  // to count yet, rather than steps to infer.
  bool annotated_steps = false;

  model::TimeNs deviceFrom(uint32_t device) const {
    auto it = device_from.find(device);
    return it == device_from.end() ? kMin : it->second;
  }
};

} // namespace gpuwise::advisor
