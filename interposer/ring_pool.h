// The preallocated pool of per-thread rings. A thread claims a ring with one compare-and-swap on
// its first event (after that nothing on its launch path allocates), releases it when it exits (a
// thread_local destructor), and the drain thread recycles a released ring once it has emptied it.
// The storage is reserved once with mmap (MAP_NORESERVE: pages are committed as threads write) and
// never unmapped: exiting threads and CUPTI callbacks may touch it during process exit.
//
// Slot states: Free -> Claiming (claimer writes the owner tid) -> Owned -> Released -> Free.
//
// Threads: claim()/release() on application threads, lock-free. forEachActive()/recycle() on the
// drain thread. resetAfterFork() only in a fork child, before any other thread exists there.
#pragma once

#include "interposer/ring.h"

#include <atomic>
#include <cstdint>

namespace gpuwise::interposer {

struct RingSlot {
  enum State : uint32_t { kFree = 0, kClaiming = 1, kOwned = 2, kReleased = 3 };
  EventRing ring;
  std::atomic<uint32_t> state{kFree};
  uint32_t tid = 0;   // owner's OS thread id, valid while Owned or Released
  uint32_t index = 0; // position in the pool (also the pinned registry's hazard slot)
};

class RingPool {
public:
  RingPool() = default;
  RingPool(const RingPool&) = delete;
  RingPool& operator=(const RingPool&) = delete;

  // Reserves `rings` rings of `events_per_ring` events (rounded up to a power of two, at least 64).
  bool init(uint32_t rings, uint32_t events_per_ring);
  bool valid() const { return slots_ != nullptr; }
  uint32_t ringCount() const { return count_; }
  uint32_t eventsPerRing() const { return events_; }

  // Claims a free ring for thread `tid`; nullptr when every ring is taken.
  RingSlot* claim(uint32_t tid);
  // The owner is done with it (thread exit). Its remaining events are still drained.
  void release(RingSlot* slot);

  // Drain thread: fn(RingSlot&) for every ring that is Owned or Released.
  template <class Fn> void forEachActive(Fn&& fn) {
    for (uint32_t i = 0; i < count_; ++i) {
      uint32_t s = slots_[i].state.load(std::memory_order_acquire);
      if (s == RingSlot::kOwned || s == RingSlot::kReleased) fn(slots_[i]);
    }
  }
  // Drain thread: a Released ring that is empty goes back to Free. Returns true if it did.
  bool recycle(RingSlot& slot);

  // Fork child: every ring is free and empty (the parent's threads do not exist here).
  void resetAfterFork();

  RingSlot* slot(uint32_t i) { return i < count_ ? &slots_[i] : nullptr; }
  uint32_t inUse() const;

private:
  RingSlot* slots_ = nullptr;
  RawEvent* events_storage_ = nullptr;
  uint32_t count_ = 0;
  uint32_t events_ = 0;
  std::atomic<uint32_t> hint_{0};
};

} // namespace gpuwise::interposer
