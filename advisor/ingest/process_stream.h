// One sending process (one session of one pid) as the advisor sees it: the decoder that mirrors
// the sender's names and kernel signatures, the ProcessTrace its events accumulate into, and the
// WindowAggregator that analyses and drops them window by window, so a long run's memory stays
// bounded (window_events == 0: keep every event, for callers that want the whole trace).
//
// Owned by StreamRouter on one thread. Not copyable or movable: the decoder holds a reference to
// the trace's name table, so streams live behind a unique_ptr.
#pragma once

#include "advisor/analysis/collection_analyzer.h"
#include "advisor/ingest/window_aggregator.h"
#include "profiler/model/trace.h"
#include "transport/codec.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

namespace gpuwise::advisor {

// One stream as /metrics reads it: its identity and its aggregates, no raw records.
struct StreamAnalysis {
  model::ProcessInfo info;
  std::vector<model::DeviceInfo> devices; // as its Hello reported them
  bool simulated = false;
  // The whole stream so far (ProcessStream::analysis()), with its health in the collection
  // figures and wall_ns set to wallNs().
  JobAnalysis analysis;
  DeviceAggregates gpus; // per-GPU figures of the same
};

// A stream's state as its aggregates are computed from it, copied: the open window's records, the
// window aggregator (the windows cut, the context carried into the open one), health and
// identity. Taken under the lock that guards the stream and analysed after it is released
// (IngestServer::streamAnalyses), so a /metrics refresh holds the ingest thread up for a copy of
// one stream's records rather than the analysis of every stream (advisor_ingest_bench,
// BM_MetricsRefreshLockHold).
struct FrozenStream {
  model::ProcessTrace trace;
  std::optional<WindowAggregator> windows; // empty: windowing off, `trace` holds every record
  StreamHealth health;
  bool simulated = false;

  // The analysis; consumes the copied records.
  StreamAnalysis aggregates() &&;
};

class ProcessStream {
public:
  ProcessStream(int64_t pid, uint64_t session_id, size_t window_events = kDefaultWindowEvents);
  ProcessStream(const ProcessStream&) = delete;
  ProcessStream& operator=(const ProcessStream&) = delete;

  // Decodes the message `opened` holds (routed here) and applies it: a batch's events are decoded
  // straight into this stream's trace. Returns the decode error, if any; the stream stays usable
  // either way. A batch of more than `shed_above_events` events (the ingest is over its memory
  // budget) has its events dropped once decoded (its names, signatures and counters still apply),
  // counted in eventsShed() and the trace's events_dropped.
  std::optional<transport::DecodeError> accept(const transport::MessageOpener& opened,
                                               size_t shed_above_events = SIZE_MAX);

  // What the ingest's memory budget asks of a stream (windowing on only). Windows of at most
  // `window_events` events from now on; the stream's pending records are cut down to that at once,
  // and from now on its vectors give back what a large batch made them grow to.
  void limitWindow(size_t window_events);
  // Bytes this stream holds: pending records, the window context, names (recordBytes()).
  size_t heldBytes() const;
  uint64_t eventsShed() const { return events_shed_; }
  uint64_t helloFieldsTruncated() const { return hello_fields_truncated_; }
  uint64_t namesDropped() const { return decoder_.namesDropped(); }
  // The records not yet folded into a window (every record when windowing is off).
  const model::ProcessTrace& trace() const { return trace_; }
  // Moves the trace out; the stream must not accept messages afterwards.
  model::ProcessTrace takeTrace() { return std::move(trace_); }
  StreamHealth health() const;
  bool finalReceived() const { return final_received_; }
  bool simulated() const { return simulated_; }
  uint64_t events() const { return events_; }
  uint64_t windows() const { return windows_ ? windows_->windows() : 0; }
  size_t windowEvents() const { return windows_ ? windows_->windowEvents() : 0; }
  // The whole stream so far (windows cut and the open one), with its health; wall_ns unset.
  // `devices` (may be null) receives the per-GPU aggregates of the same.
  JobAnalysis analysis(DeviceAggregates* devices = nullptr) const;
  std::optional<model::TimeNs> wallNs() const;
  // A copy of what /metrics reads (FrozenStream::aggregates(): analysis() with the stream's
  // identity and per-GPU aggregates, the open window analysed): the part that needs the stream to
  // hold still.
  FrozenStream freeze() const;
  // Changes whenever a message or a memory limit changes what freeze() copies: aggregates computed
  // from a freeze at this version are those of the stream now.
  uint64_t version() const { return version_; }
  // The aggregates of this stream at `version` (FrozenStream::aggregates() of a freeze taken then),
  // kept so that a /metrics refresh analyses again only the streams that received something since
  // the last one. Held until the next one replaces it; one per live stream.
  void keepAggregates(uint64_t version, std::shared_ptr<const StreamAnalysis> aggregates);
  // Those aggregates while still current (version() unchanged since), else null.
  std::shared_ptr<const StreamAnalysis> currentAggregates() const {
    return kept_version_ == version_ ? kept_ : nullptr;
  }

private:
  void applyHello(transport::Hello&& hello);
  // `carried`: the events the batch held on the wire (decoded, undecodable or shed).
  void applyBatch(const transport::Batch& header, uint64_t carried);
  // Cuts windows until less than one is pending (or a cut frees nothing).
  void cutWindows();
  // Shrinks vectors holding much more than their records (after a large batch was cut); `all`:
  // any slack (after a batch was shed).
  void releaseSlack(bool all = false);

  model::ProcessTrace trace_; // declared before decoder_, which refers to trace_.names
  transport::MessageDecoder decoder_;
  uint64_t session_id_;
  bool hello_received_ = false;
  bool final_received_ = false;
  bool simulated_ = false;
  uint64_t batches_ = 0;
  uint64_t sequence_high_ = 0;         // the highest batch sequence number received (batches_ > 0)
  uint64_t events_carried_ = 0;        // events the batches received held on the wire
  uint64_t events_delivered_high_ = 0; // the most any batch said were delivered up to its end
  uint64_t events_ = 0;
  uint64_t events_shed_ = 0;
  uint64_t hello_fields_truncated_ = 0;
  std::unique_ptr<WindowAggregator> windows_; // null: keep every event
  size_t full_window_;                        // the window the stream was made with
  bool limited_ = false; // limitWindow() made it smaller: keep vectors near their size
  uint64_t version_ = 0;
  uint64_t kept_version_ = 0;
  std::shared_ptr<const StreamAnalysis> kept_; // keepAggregates()
};

} // namespace gpuwise::advisor
