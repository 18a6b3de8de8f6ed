// Bounded advisor memory on long live runs: one process stream's events are analysed window by
// window and only the aggregates are kept. A stream decodes into its pending trace; when
// that holds `window_events` events, the oldest ~3/4 of them (by time) become a window: analysed
// (analysis/window_bounds.h says what a window counts), folded into a running JobAnalysis, and
// dropped, except the context the next window needs. Name table, process and device identity,
// drop counters and shim cost stay in the pending trace for the whole run.
//
// What crosses a boundary, so the headline figures equal a whole-trace analysis:
//   - per device, where the window's GPU time stopped (its last busy end, or the cut when a busy
//     interval crossed it) and the records from there on: the gap across the boundary is counted
//     once, in the next window, with its true cause (the GPU activity that opened it, the host
//     calls, syncs and DataLoader ranges open at the boundary);
//   - annotated steps: the records since the last step range's end (the next step's range
//     arrives when it ends), and a step range that ends after the cut waits for the next window
//     with them; inferred steps: the records since the last inferred step of the window, so the
//     next window infers the following steps from a step boundary;
//   - device memory: allocations not freed by the cut are carried (addressed ones as they are, the
//     rest as one net record per device), so the allocation level goes on from where it was.
//
// Approximations (stated, small): the cut is the 75th percentile of the pending GPU activities'
// starts, so records that arrive after a later one's window was cut ("late": a device whose
// CUPTI records lag by more than a quarter window) are counted by the per-record analyzers but
// not on the timeline (lateEvents() counts them); a device silent for a whole window loses its
// context, so the idle before its next activity is "other"; context is capped at half a window
// (a process whose steps cannot be inferred keeps at most that much; eight windows while an
// annotated step is open, and in the first eight windows before any step is known), and inferred
// steps are found per window: their count and cut points can differ from a whole-trace inference
// (the time figures and the input stall do not); the utilisation series are re-bucketed at each
// merge (exact totals, approximate shape; the recent 1 s series merge exactly); kernel duration
// percentiles merge approximately.
//
// Per-GPU figures (device_aggregates.h) are aggregated alongside, for /metrics: kernels and copies
// per device once the process has used a second device (exact: they are per-record figures),
// memory held now per device.
//
// Owned by one ProcessStream, on its thread. Never throws except std::bad_alloc.
#pragma once

#include "advisor/analysis/job_analysis.h"
#include "advisor/ingest/device_aggregates.h"
#include "profiler/model/trace.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>

namespace gpuwise::advisor {

// A quarter of a million events: about 25 MB of raw records (a kernel record is ~100 bytes), and
// as much again while a window is analysed; the advisor's memory swings by that much, not more.
inline constexpr size_t kDefaultWindowEvents = 250'000;

// Bytes the record vectors of `trace` hold (by capacity) and its name table's text: what a stream's
// pending records cost, for the ingest's memory budget.
size_t recordBytes(const model::ProcessTrace& trace);

class WindowAggregator {
public:
  explicit WindowAggregator(size_t window_events = kDefaultWindowEvents);

  // Cuts a window off `pending` when it holds window_events events; true when it did.
  bool maybeCut(model::ProcessTrace& pending);
  // The whole process so far: the windows cut and the open window (`pending` and the context),
  // with `health` (this stream's view, may be null) in the collection figures. wall_ns is left
  // unset (see wallNs()). `devices` (may be null) receives the per-GPU aggregates of the same.
  // `pending` is taken by value: a caller holding a copy of its own moves it in.
  JobAnalysis analysis(model::ProcessTrace pending, const StreamHealth* health,
                       DeviceAggregates* devices = nullptr) const;
  // The process's wall time: the producer's span when known, else its records' span.
  std::optional<model::TimeNs> wallNs(const model::ProcessTrace& pending) const;

  size_t windowEvents() const { return window_events_; }
  // Changes the window size from the next cut on (the router shrinks it to keep ingest within its
  // memory budget; the context caps, in windows, shrink with it).
  void setWindowEvents(size_t window_events) {
    window_events_ = std::max<size_t>(window_events, 16);
  }
  // Bytes of records this aggregator holds between cuts (the context carried into the next
  // window).
  size_t heldBytes() const;
  uint64_t windows() const { return windows_cut_; }
  uint64_t lateEvents() const { return late_events_; }
  size_t contextEvents() const { return context_.eventCount(); }

private:
  void cut(model::ProcessTrace& pending, model::TimeNs until);
  // Analyses `owned` (the window's records, moved in) with the context; `owned` ends up holding
  // the window's records and the context together. `devices` (may be null: not computed) receives
  // the window's per-GPU aggregates (split when the process has used more than one device, this
  // window included).
  JobAnalysis analyse(model::ProcessTrace& owned, const WindowBounds& bounds,
                      const IngestHealth* health, DeviceAggregates* devices) const;
  // `into` (the windows cut so far, or a copy) with a later window's per-GPU aggregates.
  void mergeDevices(DeviceAggregates& into, const DeviceAggregates& window) const;
  void carryAllocations(const model::ProcessTrace& owned);
  void keepContext(model::ProcessTrace& all, const JobAnalysis& window, model::TimeNs until,
                   model::TimeNs deferred_step_start);

  size_t window_events_;
  std::optional<JobAnalysis> done_; // the windows cut so far, merged
  DeviceAggregates devices_done_;   // their per-GPU aggregates
  model::ProcessTrace context_;     // records carried for the next window (vectors only)
  std::vector<model::Allocation> carried_allocations_; // live at the last cut
  WindowBounds bounds_;                                // what the next window counts
  std::optional<model::TimeNs> span_lo_, span_hi_;     // records of the windows cut
  uint64_t windows_cut_ = 0;
  uint64_t late_events_ = 0;
};

} // namespace gpuwise::advisor
