#include "advisor/import/trace_chunker.h"

#include "advisor/import/event_prefilter.h"
#include "advisor/import/trace_splitter.h"

#include <algorithm>
#include <cstring>

namespace gpuwise::advisor {
namespace {

constexpr size_t kPadding = 64; // SIMDJSON_PADDING, and the splitter's look-ahead
constexpr size_t kMaxBatchBytes = size_t{1} << 31;

bool isSeparator(char c) {
  return c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// How many separators follow `boundary` in cur[0, fill): skipped when the tail is carried over.
inline size_t separatorsAfter(const BatchBuffer& cur, size_t boundary, size_t fill) {
  size_t skipped = 0;
  while (boundary + skipped < fill && isSeparator(cur.data[boundary + skipped]))
    ++skipped;
  return skipped;
}

// Moves cur[from + skipped, fill) to the start of a fresh buffer from the pool (after an optional
// '['); nullptr when the pool is cancelled.
inline BatchBuffer* carryTail(BufferPool& pool, const BatchBuffer& cur, size_t fill, size_t from,
                              size_t skipped, bool openBracket) {
  BatchBuffer* next = pool.acquire();
  if (!next) return nullptr;
  const size_t tail = fill - from - skipped;
  while (next->capacity < tail + 64 + 1)
    next->grow(0);
  size_t to = 0;
  if (openBracket) next->data[to++] = '[';
  std::memcpy(next->data.get() + to, cur.data.get() + from + skipped, tail);
  return next;
}

} // namespace

BatchBuffer::BatchBuffer(size_t cap) : data(new char[cap + kPadding]), capacity(cap) {
  std::memset(data.get() + cap, ' ', kPadding);
}

void BatchBuffer::grow(size_t keep) {
  const size_t cap = capacity * 2;
  std::unique_ptr<char[]> bigger(new char[cap + kPadding]);
  std::memcpy(bigger.get(), data.get(), keep);
  std::memset(bigger.get() + cap, ' ', kPadding);
  data = std::move(bigger);
  capacity = cap;
}

BufferPool::BufferPool(size_t count, size_t capacity) : capacity_(capacity) {
  all_.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    all_.push_back(std::make_unique<BatchBuffer>(capacity));
    free_.push_back(all_.back().get());
  }
}

BatchBuffer* BufferPool::acquire() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return cancelled_ || !free_.empty(); });
  if (cancelled_) return nullptr;
  BatchBuffer* b = free_.back();
  free_.pop_back();
  return b;
}

void BufferPool::release(BatchBuffer* buffer) {
  {
    std::lock_guard lock(mutex_);
    // A buffer grown for one huge event goes back to the normal size, so one odd event does not
    // pin its memory for the rest of the import.
    if (buffer->capacity > capacity_ * 4) *buffer = BatchBuffer(capacity_);
    free_.push_back(buffer);
  }
  cv_.notify_one();
}

void BufferPool::cancel() {
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
  }
  cv_.notify_all();
}

bool TraceChunker::run(ByteSource& source, BufferPool& pool,
                       const std::function<void(const EventBatch&)>& emit) {
  TraceSplitter splitter;
  splitter.forceScalar(force_scalar_);
  BatchBuffer* cur = pool.acquire();
  if (!cur) {
    error_ = "import cancelled";
    return false;
  }
  size_t fill = 0;
  auto failWith = [&](std::string message) {
    error_ = std::move(message);
    if (cur) pool.release(cur);
    return false;
  };
  // Drops what the model never uses, closes the array, and hands `cur` to the parser (or back to
  // the pool when nothing is left). False on a malformed array; `cur` then stays ours.
  auto emitBatch = [&](size_t close) {
    const auto& events = splitter.events();
    size_t dropped = 0;
    const size_t begin = splitter.batchBegin();
    const size_t end = compactEvents(cur->data.get(), begin, close, events.data(), events.size(),
                                     keep_operators_, &dropped);
    if (end == 0) return false;
    events_dropped_ += dropped;
    if (end - begin > 2)
      emit(EventBatch{cur, begin, end, splitter.streamOffset()});
    else
      pool.release(cur);
    return true;
  };

  for (;;) {
    const size_t want = cur->capacity - fill;
    const int64_t n = source.read(cur->data.get() + fill, want);
    if (n < 0) return failWith(source.error());
    fill += size_t(n);
    json_bytes_ += uint64_t(n);
    const bool final = size_t(n) < want;
    if (!splitter.scan(cur->data.get(), fill, final)) return failWith(splitter.error());

    if (splitter.eventsEnd() != TraceSplitter::npos) {
      // The events array closed here: emit it whole; what follows is metadata.
      const size_t from = splitter.scanPos();
      BatchBuffer* next = carryTail(pool, *cur, fill, from, 0, false);
      if (!next) return failWith("import cancelled");
      if (!emitBatch(splitter.eventsEnd() - 1)) {
        pool.release(next);
        return failWith("malformed traceEvents array");
      }
      fill -= from;
      splitter.rebase(from, 0, 0, TraceSplitter::npos);
      cur = next;
    } else if (splitter.mode() == TraceSplitter::Mode::Events && fill == cur->capacity) {
      const size_t boundary = splitter.lastBoundary();
      if (boundary != TraceSplitter::npos) {
        const size_t skipped = separatorsAfter(*cur, boundary, fill);
        BatchBuffer* next = carryTail(pool, *cur, fill, boundary, skipped, true);
        if (!next) return failWith("import cancelled");
        if (!emitBatch(0)) {
          pool.release(next);
          return failWith("malformed traceEvents array");
        }
        fill = 1 + (fill - boundary - skipped);
        splitter.rebase(boundary, skipped, 1, 0);
        cur = next;
      } else {
        // Not one whole event in the buffer yet: a large event. Make room for it.
        if (cur->capacity >= kMaxBatchBytes)
          return failWith("a single trace event is larger than 2 GiB");
        cur->grow(fill);
      }
    } else if (splitter.mode() != TraceSplitter::Mode::Events && fill == cur->capacity) {
      // Metadata (already copied by the splitter) or whitespace: keep only the unscanned bytes.
      const size_t from = splitter.scanPos();
      std::memmove(cur->data.get(), cur->data.get() + from, fill - from);
      fill -= from;
      splitter.rebase(from, 0, 0, TraceSplitter::npos);
    }
    if (final) break;
  }
  pool.release(cur);
  cur = nullptr;
  saw_events_ = splitter.sawEvents();
  meta_ = std::move(splitter.meta());
  return true;
}

} // namespace gpuwise::advisor
