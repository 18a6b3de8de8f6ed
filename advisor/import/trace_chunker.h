// Turns one trace file into batches of whole events, each a self-contained JSON array
// `[ {event}, ... ]` in a padded buffer that simdjson parses in place.
//
// Threads: the reader thread runs TraceChunker::run(); the parsing thread receives the batches
// through the `emit` callback's queue and hands each buffer back with BufferPool::release(). The
// pool holds a fixed number of buffers, so the reader can be at most that many batches ahead and
// memory stays bounded whatever the trace size. acquire() blocks while all buffers are out;
// cancel() wakes it (returning nullptr) when the parsing side gives up.
#pragma once

#include "advisor/import/byte_source.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gpuwise::advisor {

// A buffer with SIMDJSON_PADDING (64) readable bytes past its capacity.
struct BatchBuffer {
  std::unique_ptr<char[]> data;
  size_t capacity = 0;
  explicit BatchBuffer(size_t cap);
  // Doubles the capacity keeping the first `keep` bytes.
  void grow(size_t keep);
};

class BufferPool {
public:
  BufferPool(size_t count, size_t capacity);
  BatchBuffer* acquire(); // blocks; nullptr once cancelled
  void release(BatchBuffer* buffer);
  void cancel();

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<BatchBuffer>> all_;
  std::vector<BatchBuffer*> free_;
  size_t capacity_;
  bool cancelled_ = false;
};

struct EventBatch {
  BatchBuffer* buffer = nullptr; // owned by the receiver until released to the pool
  size_t begin = 0, end = 0;     // the JSON array is buffer->data[begin, end)
  uint64_t stream_offset = 0;    // where buffer->data[0] sits in the inflated stream (approx.)
};

class TraceChunker {
public:
  // Reads `source` to its end. Returns false with error() set (one line, no file name) when the
  // content is not a Chrome trace, is truncated or corrupt, or the pool was cancelled.
  bool run(ByteSource& source, BufferPool& pool,
           const std::function<void(const EventBatch&)>& emit);

  // Top-level members other than traceEvents, as a JSON object text (`{... "traceEvents": null}`).
  std::string& meta() { return meta_; }
  bool sawEvents() const { return saw_events_; }
  const std::string& error() const { return error_; }
  uint64_t jsonBytes() const { return json_bytes_; }

  // For tests: use the scalar scanner even where AVX2 exists.
  void forceScalar(bool on) { force_scalar_ = on; }
  // Keep CPU operator events (otherwise dropped before parsing, see event_prefilter.h).
  void keepOperators(bool on) { keep_operators_ = on; }
  uint64_t eventsDropped() const { return events_dropped_; }

private:
  std::string meta_;
  std::string error_;
  bool saw_events_ = false;
  bool force_scalar_ = false;
  bool keep_operators_ = false;
  uint64_t json_bytes_ = 0;
  uint64_t events_dropped_ = 0;
};

} // namespace gpuwise::advisor
