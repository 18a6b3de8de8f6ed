#include "profiler/cupti/buffer_pool.h"

#include <new>

#include <sys/mman.h>

namespace gpuwise::profiler {

BufferPool::BufferPool(size_t buffer_bytes, size_t count)
    : buffer_bytes_((buffer_bytes + 7) & ~size_t{7}), count_(count) {
  if (buffer_bytes_ == 0 || count_ == 0) return;
  // Reserved, not committed: pages cost memory only once CUPTI writes into them.
  void* p = mmap(nullptr, buffer_bytes_ * count_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;
  base_ = static_cast<uint8_t*>(p);
  slots_.reset(new (std::nothrow) Slot[count_]);
  if (!slots_) {
    munmap(p, buffer_bytes_ * count_);
    base_ = nullptr;
  }
}

uint8_t* BufferPool::acquire() {
  if (!base_) return nullptr;
  size_t start = next_hint_.load(std::memory_order_relaxed);
  for (size_t k = 0; k < count_; ++k) {
    size_t i = (start + k) % count_;
    uint32_t expected = kFree;
    if (slots_[i].state.compare_exchange_strong(expected, kLent, std::memory_order_acquire,
                                                std::memory_order_relaxed)) {
      next_hint_.store((i + 1) % count_, std::memory_order_relaxed);
      return base_ + i * buffer_bytes_;
    }
  }
  exhausted_.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void BufferPool::complete(uint8_t* buffer, size_t valid_bytes) {
  if (!base_ || buffer < base_ || buffer >= base_ + buffer_bytes_ * count_ ||
      size_t(buffer - base_) % buffer_bytes_ != 0) {
    foreign_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Slot& s = slots_[size_t(buffer - base_) / buffer_bytes_];
  s.valid_bytes.store(valid_bytes > buffer_bytes_ ? buffer_bytes_ : valid_bytes,
                      std::memory_order_relaxed);
  s.completion.store(completions_.fetch_add(1, std::memory_order_relaxed),
                     std::memory_order_relaxed);
  s.state.store(kCompleted, std::memory_order_release); // publishes the records CUPTI wrote
}

size_t BufferPool::oldestCompleted() const {
  size_t best = kNone;
  uint64_t best_seq = ~uint64_t{0};
  for (size_t i = 0; i < count_; ++i) {
    if (slots_[i].state.load(std::memory_order_acquire) != kCompleted) continue;
    uint64_t seq = slots_[i].completion.load(std::memory_order_relaxed);
    if (seq < best_seq) {
      best_seq = seq;
      best = i;
    }
  }
  return best;
}

void BufferPool::release(size_t i) {
  slots_[i].state.store(kFree, std::memory_order_release);
}

size_t BufferPool::inUse() const {
  size_t n = 0;
  for (size_t i = 0; i < count_; ++i)
    n += slots_[i].state.load(std::memory_order_relaxed) != kFree;
  return n;
}

} // namespace gpuwise::profiler
