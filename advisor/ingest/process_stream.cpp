#include "advisor/ingest/process_stream.h"

namespace gpuwise::advisor {
namespace {

template <typename T> void append(std::vector<T>& to, std::vector<T>& from) {
  if (to.empty()) {
    to = std::move(from);
  } else {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  }
}

} // namespace

ProcessStream::ProcessStream(int64_t pid, uint64_t session_id)
    : decoder_(trace_.names), session_id_(session_id) {
  trace_.info.pid = pid;
  trace_.info.tier_reason = "no Hello received (the advisor started after the process, or the "
                            "Hello was lost): identity and devices unknown";
}

std::optional<transport::DecodeError> ProcessStream::accept(std::span<const uint8_t> message) {
  auto result = decoder_.decode(message);
  if (auto* error = std::get_if<transport::DecodeError>(&result)) return std::move(*error);
  if (auto* hello = std::get_if<transport::Hello>(&result)) {
    applyHello(std::move(*hello));
  } else {
    applyBatch(std::move(std::get<transport::Batch>(result)));
  }
  return std::nullopt;
}

void ProcessStream::applyHello(transport::Hello&& hello) {
  // A second Hello starts a new connection epoch (the sender reconnected): identity and devices
  // are refreshed, events and counters carry on.
  hello_received_ = true;
  simulated_ = simulated_ || hello.simulated;
  trace_.info = std::move(hello.process);
  trace_.devices = std::move(hello.devices);
  if (hello.start_time != 0 && (trace_.wall_start == 0 || hello.start_time < trace_.wall_start))
    trace_.wall_start = hello.start_time;
}

void ProcessStream::applyBatch(transport::Batch&& batch) {
  ++batches_;
  // Batches arrive in order on one connection; a gap means the ones between never arrived
  // (dropped by the sender's high-water mark, sent before this advisor listened, or lost on a
  // reconnect). A sequence below the expected one (sender restarted its count) is not a loss.
  uint64_t expected = next_sequence_.value_or(0);
  if (batch.sequence > expected) lost_batches_ += batch.sequence - expected;
  next_sequence_ = batch.sequence + 1;
  trace_.events_dropped += batch.events_dropped;
  if (batch.sent_time != 0) trace_.wall_end = std::max(trace_.wall_end, batch.sent_time);
  if (batch.final) final_received_ = true;
  // Cumulative figures: the latest session time wins (batches of one connection arrive in order).
  if (batch.shim_cost.session_ns >= trace_.shim_cost.session_ns) trace_.shim_cost = batch.shim_cost;
  absorb(std::move(batch));
}

void ProcessStream::absorb(transport::Batch&& b) {
  events_ += b.eventCount();
  append(trace_.kernels, b.kernels);
  append(trace_.copies, b.copies);
  append(trace_.memsets, b.memsets);
  append(trace_.syncs, b.syncs);
  append(trace_.api_calls, b.api_calls);
  append(trace_.allocations, b.allocations);
  append(trace_.memory_samples, b.memory_samples);
  append(trace_.ranges, b.ranges);
}

StreamHealth ProcessStream::health() const {
  StreamHealth h;
  h.session_id = session_id_;
  h.hello_received = hello_received_;
  h.final_received = final_received_;
  h.batches = batches_;
  h.lost_batches = lost_batches_;
  h.undecodable_events = decoder_.undecodableEvents();
  return h;
}

} // namespace gpuwise::advisor
