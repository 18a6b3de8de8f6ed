#include "interposer/ring_pool.h"

#include <new>

#include <sys/mman.h>

namespace gpuwise::interposer {

namespace {

uint32_t roundUpPow2(uint32_t v) {
  uint32_t p = 64;
  while (p < v && p < (1u << 30))
    p <<= 1;
  return p;
}

void* reserve(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

} // namespace

bool RingPool::init(uint32_t rings, uint32_t events_per_ring) {
  if (slots_ || rings == 0) return false;
  events_ = roundUpPow2(events_per_ring);
  size_t slot_bytes = sizeof(RingSlot) * size_t(rings);
  size_t event_bytes = sizeof(RawEvent) * size_t(events_) * size_t(rings);
  void* s = reserve(slot_bytes);
  void* e = reserve(event_bytes);
  if (!s || !e) {
    if (s) munmap(s, slot_bytes);
    if (e) munmap(e, event_bytes);
    return false;
  }
  auto* slots = static_cast<RingSlot*>(s);
  events_storage_ = static_cast<RawEvent*>(e);
  for (uint32_t i = 0; i < rings; ++i) {
    new (&slots[i]) RingSlot();
    slots[i].index = i;
    slots[i].ring.init(events_storage_ + size_t(i) * events_, events_);
  }
  count_ = rings;
  slots_ = slots;
  return true;
}

RingSlot* RingPool::claim(uint32_t tid) {
  if (!slots_) return nullptr;
  uint32_t start = hint_.load(std::memory_order_relaxed);
  for (uint32_t k = 0; k < count_; ++k) {
    uint32_t i = (start + k) % count_;
    uint32_t expected = RingSlot::kFree;
    if (slots_[i].state.load(std::memory_order_relaxed) != RingSlot::kFree) continue;
    if (slots_[i].state.compare_exchange_strong(
            expected, RingSlot::kClaiming, std::memory_order_acquire, std::memory_order_relaxed)) {
      slots_[i].tid = tid;
      slots_[i].state.store(RingSlot::kOwned, std::memory_order_release);
      hint_.store((i + 1) % count_, std::memory_order_relaxed);
      return &slots_[i];
    }
  }
  return nullptr;
}

void RingPool::release(RingSlot* slot) {
  // Release: the drain thread that sees Released also sees every event published before it.
  if (slot) slot->state.store(RingSlot::kReleased, std::memory_order_release);
}

bool RingPool::recycle(RingSlot& slot) {
  if (slot.state.load(std::memory_order_acquire) != RingSlot::kReleased || !slot.ring.empty())
    return false;
  slot.ring.reset();
  slot.tid = 0;
  slot.state.store(RingSlot::kFree, std::memory_order_release);
  return true;
}

void RingPool::resetAfterFork() {
  for (uint32_t i = 0; i < count_; ++i) {
    slots_[i].ring.reset();
    slots_[i].tid = 0;
    slots_[i].state.store(RingSlot::kFree, std::memory_order_relaxed);
  }
  hint_.store(0, std::memory_order_relaxed);
}

uint32_t RingPool::inUse() const {
  uint32_t n = 0;
  for (uint32_t i = 0; i < count_; ++i)
    n += slots_[i].state.load(std::memory_order_relaxed) != RingSlot::kFree;
  return n;
}

} // namespace gpuwise::interposer
