// A single-producer single-consumer ring of RawEvents: the owning application thread writes, the
// drain thread reads. Publishing is one release store of the head; the writer reads the reader's
// tail only when its cached copy says the ring is full. When the ring really is full the event is
// dropped and counted (a counter only the writer writes), never waited for.
//
// Threads: tryReserve()/publish() only on the owning thread; drain()/takeDropped() only on the
// drain thread; reset() only while nobody owns the ring (RingPool's recycling).
#pragma once

#include "interposer/raw_event.h"

#include <atomic>
#include <cstdint>

namespace gpuwise::interposer {

class EventRing {
public:
  // `capacity` must be a power of two; `slots` outlives the ring.
  void init(RawEvent* slots, uint32_t capacity) {
    slots_ = slots;
    mask_ = capacity - 1;
    reset();
  }

  // Writer. nullptr when full (the drop is already counted).
  RawEvent* tryReserve() {
    uint64_t h = head_.load(std::memory_order_relaxed);
    if (h - cached_tail_ > mask_) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (h - cached_tail_ > mask_) {
        dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        return nullptr;
      }
    }
    return &slots_[h & mask_];
  }
  // Writer: makes the reserved event visible. Returns true when this publish filled the ring to
  // half (by the writer's possibly stale view), the moment to wake the drain thread early.
  bool publish() {
    uint64_t h = head_.load(std::memory_order_relaxed) + 1;
    head_.store(h, std::memory_order_release);
    return h - cached_tail_ == (uint64_t(mask_) + 1) / 2;
  }

  // Writer: one more launch that was counted, not recorded (a plain store: one writer).
  void count() {
    counted_.store(counted_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  // Reader: fn(const RawEvent&) for up to `max` events in order; returns how many.
  template <class Fn> uint64_t drain(Fn&& fn, uint64_t max = ~uint64_t{0}) {
    uint64_t t = tail_.load(std::memory_order_relaxed);
    uint64_t h = head_.load(std::memory_order_acquire);
    uint64_t n = h - t;
    if (n > max) n = max;
    for (uint64_t i = 0; i < n; ++i)
      fn(slots_[(t + i) & mask_]);
    tail_.store(t + n, std::memory_order_release);
    return n;
  }
  bool empty() const {
    return head_.load(std::memory_order_acquire) == tail_.load(std::memory_order_relaxed);
  }
  uint64_t size() const {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire);
  }
  // Reader: drops counted since the previous call.
  uint64_t takeDropped() {
    uint64_t d = dropped_.load(std::memory_order_relaxed);
    uint64_t delta = d - dropped_seen_;
    dropped_seen_ = d;
    return delta;
  }
  // Reader: counted launches since the previous call.
  uint64_t takeCounted() {
    uint64_t c = counted_.load(std::memory_order_relaxed);
    uint64_t delta = c - counted_seen_;
    counted_seen_ = c;
    return delta;
  }
  uint32_t capacity() const { return mask_ + 1; }

  void reset() {
    head_.store(0, std::memory_order_relaxed);
    tail_.store(0, std::memory_order_relaxed);
    dropped_.store(0, std::memory_order_relaxed);
    counted_.store(0, std::memory_order_relaxed);
    cached_tail_ = 0;
    dropped_seen_ = 0;
    counted_seen_ = 0;
  }

private:
  // Writer's line.
  alignas(64) std::atomic<uint64_t> head_{0};
  uint64_t cached_tail_ = 0;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> counted_{0};
  RawEvent* slots_ = nullptr;
  uint32_t mask_ = 0;
  // Reader's line.
  alignas(64) std::atomic<uint64_t> tail_{0};
  uint64_t dropped_seen_ = 0;
  uint64_t counted_seen_ = 0;
};

} // namespace gpuwise::interposer
