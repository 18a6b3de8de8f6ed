#include "advisor/ingest/process_stream.h"

#include "profiler/model/record_limits.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include <sys/mman.h>

namespace gpuwise::advisor {
namespace {

// Storing events is the largest cost of ingest: each new page of a trace's vectors is a page
// fault, and a doubling vector touches twice its final size. Kernel rows grow ahead of need (one
// batch's worst case, so the decoder never reallocates mid-batch) in big steps, and large buffers
// ask for transparent huge pages, which cut the faults 512-fold where the kernel allows it
// ("madvise" mode, the common default). A hint: nothing changes if it is refused.
template <typename T> void growAhead(std::vector<T>& v, size_t headroom) {
  if (v.capacity() - v.size() >= headroom) return;
  // x4 rather than x2: every step copies the rows so far, and untouched capacity costs no memory.
  const size_t want = std::max(v.size() + headroom, v.capacity() * 4);
  std::vector<T> bigger;
  bigger.reserve(want);
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t bytes = want * sizeof(T);
  if (bytes >= 2 * kHuge) {
    // The 2 MiB-aligned part of the new buffer, before anything touches it.
    // Offsets from the buffer's start, so the address is only ever computed from the pointer.
    char* const base = reinterpret_cast<char*>(bigger.data());
    const uintptr_t addr = reinterpret_cast<uintptr_t>(base);
    const size_t begin = (kHuge - addr % kHuge) % kHuge;
    const size_t end = bytes - (addr + bytes) % kHuge;
    if (end > begin) ::madvise(base + begin, end - begin, MADV_HUGEPAGE);
  }
  bigger.insert(bigger.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
  v.swap(bigger);
}

} // namespace

ProcessStream::ProcessStream(int64_t pid, uint64_t session_id, size_t window_events)
    : decoder_(trace_.names), session_id_(session_id), full_window_(window_events) {
  if (window_events > 0) windows_ = std::make_unique<WindowAggregator>(window_events);
  trace_.info.pid = pid;
  trace_.info.tier_reason = "no Hello received (the advisor started after the process, or the "
                            "Hello was lost): identity and devices unknown";
}

std::optional<transport::DecodeError> ProcessStream::accept(const transport::MessageOpener& opened,
                                                            size_t shed_above_events) {
  ++version_; // whatever the message does, the aggregates are computed again
  const auto marks = model::RecordMarks::of(trace_);
  // Headroom in proportion to what the stream already holds: small streams stay small. Under a
  // memory budget (limited_), none: the decoder grows the vector to what the batch needs, and
  // releaseSlack() gives it back.
  if (!limited_)
    growAhead(trace_.kernels,
              std::clamp(trace_.kernels.size(), size_t{8192}, transport::kMaxBatchEvents));
  const size_t before = trace_.eventCount();
  const uint64_t undecodable_before = decoder_.undecodableEvents();
  // The one place decoded events enter the advisor's memory: appended to the trace's columns.
  auto result = decoder_.decode(opened, &trace_);
  size_t added = trace_.eventCount() - before;
  // What a batch carried, decoded or not: the sender's events_delivered counts the same.
  const uint64_t carried = added + (decoder_.undecodableEvents() - undecodable_before);
  const bool shed_events = added > shed_above_events;
  if (shed_events) marks.restore(trace_);
  if (!result) return std::move(result.error());
  if (auto* hello = std::get_if<transport::Hello>(&*result)) {
    applyHello(std::move(*hello));
  } else {
    if (shed_events) {
      events_shed_ += added;
      trace_.events_dropped += added; // never reached the analysis, as the report says of drops
      added = 0;
    }
    events_ += added;
    // Absurd times (an end at INT64_MAX) are dropped and counted like the producer's drops.
    model::dropAbsurdTimes(trace_, marks);
    applyBatch(std::get<transport::Batch>(*result), carried);
    cutWindows();
    if (limited_ || shed_events) releaseSlack(shed_events);
  }
  return std::nullopt;
}

void ProcessStream::cutWindows() {
  if (!windows_) return;
  // A large batch may hold several windows: cut until less than one is left (or a cut frees
  // nothing, which ends the loop).
  for (size_t before = trace_.eventCount(); windows_->maybeCut(trace_);
       before = trace_.eventCount())
    if (trace_.eventCount() >= before) break;
}

void ProcessStream::limitWindow(size_t window_events) {
  if (!windows_) return;
  ++version_;
  // Only a window smaller than the stream was made with changes how vectors grow: a process alone
  // under the budget keeps the fast path (rows reserved ahead in accept()).
  limited_ = window_events < full_window_;
  const bool smaller = window_events < windows_->windowEvents();
  windows_->setWindowEvents(window_events);
  if (smaller) cutWindows();
  releaseSlack();
}

void ProcessStream::releaseSlack(bool all) {
  // Give back what a large batch grew a vector to: the pages its rows touched stay resident after
  // the cut moved them out. Small vectors keep their slack (a shrink per batch would cost more),
  // unless the batch was shed (`all`): its rows touched the pages and left nothing in them.
  const size_t keep_bytes = all ? 0 : size_t{256} << 10;
  auto shrink = [keep_bytes](auto& v) {
    const size_t slack = (v.capacity() - v.size()) * sizeof(v[0]);
    if (slack > keep_bytes && v.capacity() > 2 * v.size()) v.shrink_to_fit();
  };
  trace_.forEachColumn(shrink);
}

size_t ProcessStream::heldBytes() const {
  return recordBytes(trace_) + (windows_ ? windows_->heldBytes() : 0);
}

namespace {

// One stream's analysis: through its window aggregator, or of the whole trace when windowing is
// off. `trace` by value: callers with a copy of their own move it in.
JobAnalysis analyseStream(model::ProcessTrace trace, const WindowAggregator* windows,
                          const StreamHealth& health, DeviceAggregates* devices) {
  if (windows) return windows->analysis(std::move(trace), &health, devices);
  model::Trace t;
  t.processes.push_back(std::move(trace));
  IngestHealth one;
  one.streams.push_back(health);
  auto a = analyzeJob(t, {std::nullopt, &one, {}});
  a.wall_ns.reset();
  if (devices) *devices = aggregateDevices(t.processes.front());
  return a;
}

std::optional<model::TimeNs> streamWallNs(const model::ProcessTrace& trace,
                                          const WindowAggregator* windows) {
  if (windows) return windows->wallNs(trace);
  if (trace.wall_start != 0 && trace.wall_end >= trace.wall_start)
    return trace.wall_end - trace.wall_start;
  auto span = recordSpanOf(trace);
  if (!span) return std::nullopt;
  return span->end - span->start;
}

} // namespace

JobAnalysis ProcessStream::analysis(DeviceAggregates* devices) const {
  return analyseStream(trace_, windows_.get(), health(), devices);
}

std::optional<model::TimeNs> ProcessStream::wallNs() const {
  return streamWallNs(trace_, windows_.get());
}

FrozenStream ProcessStream::freeze() const {
  FrozenStream f;
  f.trace = trace_;
  if (windows_) f.windows = *windows_;
  f.health = health();
  f.simulated = simulated_;
  return f;
}

void ProcessStream::keepAggregates(uint64_t version,
                                   std::shared_ptr<const StreamAnalysis> aggregates) {
  if (version != version_) return; // the stream moved on while they were computed
  kept_version_ = version;
  kept_ = std::move(aggregates);
}

StreamAnalysis FrozenStream::aggregates() && {
  StreamAnalysis s;
  s.info = trace.info;
  s.devices = trace.devices;
  s.simulated = simulated;
  const WindowAggregator* w = windows ? &*windows : nullptr;
  auto wall = streamWallNs(trace, w); // before the records move into the analysis
  s.analysis = analyseStream(std::move(trace), w, health, &s.gpus);
  s.analysis.source.simulated = s.analysis.source.simulated || simulated;
  s.analysis.wall_ns = wall;
  return s;
}

void ProcessStream::applyHello(transport::Hello&& hello) {
  // A second Hello starts a new connection epoch (the sender reconnected): identity and devices
  // are refreshed, events and counters carry on.
  hello_received_ = true;
  hello_fields_truncated_ += hello.truncated_fields;
  simulated_ = simulated_ || hello.simulated;
  trace_.info = std::move(hello.process);
  trace_.devices = std::move(hello.devices);
  if (hello.start_time != 0 && model::plausibleTime(hello.start_time) &&
      (trace_.wall_start == 0 || hello.start_time < trace_.wall_start))
    trace_.wall_start = hello.start_time;
}

void ProcessStream::applyBatch(const transport::Batch& batch, uint64_t carried) {
  ++batches_;
  // Events lost in transit: the sender says how many events its socket accepted before this
  // batch; whatever of those never arrived went with a dropped connection. Kept as a high-water
  // mark against the events received, so batches that arrive out of order (an old connection's
  // leftovers after a reconnect) are never counted both received and lost. Saturating: the counts
  // come from the wire.
  events_carried_ += carried;
  const uint64_t through =
      batch.events_delivered > UINT64_MAX - carried ? UINT64_MAX : batch.events_delivered + carried;
  events_delivered_high_ = std::max(events_delivered_high_, through);
  // Lost batches: the sequence numbers up to the highest seen that never arrived (dropped by the
  // sender's high-water mark, sent before this advisor listened, lost on a reconnect). Kept, like
  // events lost, as a high-water mark against the batches received, so a batch that arrives late
  // (an old connection's leftovers after a reconnect) stops counting as lost instead of opening a
  // second gap: 0, 2, 1, 5 loses 3 and 4, two batches.
  sequence_high_ = std::max(sequence_high_, batch.sequence);
  trace_.events_dropped += batch.events_dropped;
  if (batch.sent_time != 0 && model::plausibleTime(batch.sent_time))
    trace_.wall_end = std::max(trace_.wall_end, batch.sent_time);
  if (batch.final) final_received_ = true;
  // Cumulative figures: the latest session time wins (batches of one connection arrive in order).
  if (batch.shim_cost.session_ns >= trace_.shim_cost.session_ns) trace_.shim_cost = batch.shim_cost;
}

StreamHealth ProcessStream::health() const {
  StreamHealth h;
  h.session_id = session_id_;
  h.hello_received = hello_received_;
  h.final_received = final_received_;
  h.batches = batches_;
  // Saturating: a sequence far beyond the batches received comes from the wire.
  const uint64_t numbered = sequence_high_ == UINT64_MAX ? UINT64_MAX : sequence_high_ + 1;
  h.lost_batches = batches_ > 0 && numbered > batches_ ? numbered - batches_ : 0;
  h.events_lost =
      events_delivered_high_ > events_carried_ ? events_delivered_high_ - events_carried_ : 0;
  h.undecodable_events = decoder_.undecodableEvents();
  return h;
}

} // namespace gpuwise::advisor
