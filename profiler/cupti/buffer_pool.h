// A capped pool of CUPTI activity buffers, reserved up front, handed out and returned without
// locks: CUPTI calls the request callback on whatever thread needs a buffer (an application thread
// inside a CUDA call, CUPTI's worker) and the completion callback on its worker or on the thread
// that flushes. Both only flip a per-buffer state; decoding happens on the drain thread.
//
// When every buffer is lent or waiting to be decoded, acquire() returns nullptr and CUPTI drops
// records, which it counts (cuptiActivityGetNumDroppedRecords): memory stays bounded.
//
// Threads: acquire()/complete() any thread, lock-free. consume() one thread (the drain thread).
// The storage is never unmapped: CUPTI may still hold a buffer at process exit.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace gpuwise::profiler {

class BufferPool {
public:
  // `buffer_bytes` is rounded up to a multiple of 8 (CUPTI's record alignment).
  BufferPool(size_t buffer_bytes, size_t count);
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  bool valid() const { return base_ != nullptr; }
  size_t bufferBytes() const { return buffer_bytes_; }
  size_t count() const { return count_; }

  uint8_t* acquire();
  // `buffer` must have come from acquire(); anything else is ignored (and counted as foreign).
  void complete(uint8_t* buffer, size_t valid_bytes);

  // Calls fn(buffer, valid_bytes) for each completed buffer, oldest completion first, then makes it
  // free again. Returns how many buffers it handed over.
  template <class Fn> size_t consume(Fn&& fn) {
    size_t n = 0;
    for (;;) {
      size_t i = oldestCompleted();
      if (i == kNone) return n;
      fn(base_ + i * buffer_bytes_, slots_[i].valid_bytes.load(std::memory_order_relaxed));
      release(i);
      ++n;
    }
  }

  uint64_t exhausted() const { return exhausted_.load(std::memory_order_relaxed); }
  uint64_t foreign() const { return foreign_.load(std::memory_order_relaxed); }
  size_t inUse() const;

private:
  static constexpr size_t kNone = ~size_t{0};
  enum State : uint32_t { kFree = 0, kLent = 1, kCompleted = 2 };
  struct Slot {
    std::atomic<uint32_t> state{kFree};
    std::atomic<size_t> valid_bytes{0};
    std::atomic<uint64_t> completion{0};
  };
  size_t oldestCompleted() const;
  void release(size_t i);

  size_t buffer_bytes_;
  size_t count_;
  uint8_t* base_ = nullptr;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> completions_{0};
  std::atomic<size_t> next_hint_{0};
  std::atomic<uint64_t> exhausted_{0};
  std::atomic<uint64_t> foreign_{0};
};

} // namespace gpuwise::profiler
