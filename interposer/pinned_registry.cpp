#include "interposer/pinned_registry.h"

#include "profiler/model/process_lifetime.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>

namespace gpuwise::interposer {

PinnedRegistry::PinnedRegistry(uint32_t readers)
    : hazards_(new std::atomic<const Snapshot*>[readers ? readers : 1]), readers_(readers) {
  for (uint32_t i = 0; i < (readers ? readers : 1); ++i)
    hazards_[i].store(nullptr);
}

PinnedRegistry::~PinnedRegistry() {
  // Only tests destroy a registry; the shim's is leaked (copies may run during exit).
  std::free(const_cast<Snapshot*>(current_.load()));
  for (const Snapshot* s : retired_)
    std::free(const_cast<Snapshot*>(s));
}

PinnedRegistry::Snapshot* PinnedRegistry::makeSnapshot(const std::vector<Range>& ranges) {
  if (ranges.empty()) return nullptr;
  static_assert(sizeof(Snapshot) % alignof(Range) == 0);
  size_t bytes = sizeof(Snapshot) + sizeof(Range) * ranges.size();
  void* p = std::malloc(bytes);
  if (!p) return nullptr;
  auto* s = new (p) Snapshot{ranges.size()};
  std::uninitialized_copy(ranges.begin(), ranges.end(), reinterpret_cast<Range*>(s + 1));
  return s;
}

void PinnedRegistry::publish(const std::vector<Range>& ranges) {
  Snapshot* next = makeSnapshot(ranges);
  if (!next && !ranges.empty()) return; // out of memory: keep the old view rather than none
  const Snapshot* old = current_.exchange(next, std::memory_order_seq_cst);
  if (old) retired_.push_back(old);
  reclaim();
}

void PinnedRegistry::reclaim() {
  // A reader announces the snapshot in its hazard slot and then re-checks current_; a retired
  // snapshot that no slot names can no longer be reached by anyone.
  auto still_read = [&](const Snapshot* s) {
    for (uint32_t i = 0; i < readers_; ++i)
      if (hazards_[i].load(std::memory_order_seq_cst) == s) return true;
    return false;
  };
  auto it = std::remove_if(retired_.begin(), retired_.end(), [&](const Snapshot* s) {
    if (still_read(s)) return false;
    std::free(const_cast<Snapshot*>(s));
    return true;
  });
  retired_.erase(it, retired_.end());
}

void PinnedRegistry::add(const void* begin, size_t bytes, model::MemoryKind kind) {
  if (!begin || bytes == 0) return;
  uintptr_t b = reinterpret_cast<uintptr_t>(begin), e = b + bytes;
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    std::erase_if(ranges_, [&](const Range& r) { return r.begin < e && b < r.end; });
    auto pos = std::lower_bound(ranges_.begin(), ranges_.end(), b,
                                [](const Range& r, uintptr_t v) { return r.begin < v; });
    ranges_.insert(pos, Range{b, e, kind});
    publish(ranges_);
  } catch (...) {
    // Out of memory inside a hook: the range reads as pageable; nothing may reach the caller.
  }
}

size_t PinnedRegistry::remove(const void* begin) {
  uintptr_t b = reinterpret_cast<uintptr_t>(begin);
  std::lock_guard<std::mutex> lock(mutex_);
  auto pos = std::lower_bound(ranges_.begin(), ranges_.end(), b,
                              [](const Range& r, uintptr_t v) { return r.begin < v; });
  if (pos == ranges_.end() || pos->begin != b) return 0;
  size_t bytes = pos->end - pos->begin;
  ranges_.erase(pos);
  try {
    publish(ranges_);
  } catch (...) {
    // retired_ could not grow: the old array stays published until the next registration.
  }
  return bytes;
}

model::MemoryKind PinnedRegistry::classify(const void* address, uint32_t reader) const {
  // Nothing registered (the common case for many jobs): no fence at all.
  const Snapshot* s = current_.load(std::memory_order_acquire);
  if (!s) return model::MemoryKind::Pageable;
  if (reader >= readers_) return model::MemoryKind::Unknown;
  std::atomic<const Snapshot*>& hazard = hazards_[reader];
  for (;;) {
    hazard.store(s, std::memory_order_seq_cst);
    const Snapshot* again = current_.load(std::memory_order_seq_cst);
    if (again == s) break;
    s = again;
    if (!s) {
      hazard.store(nullptr, std::memory_order_release);
      return model::MemoryKind::Pageable;
    }
  }
  uintptr_t a = reinterpret_cast<uintptr_t>(address);
  const Range* first = s->begin();
  const Range* last = s->end();
  // The last range starting at or before `a`.
  const Range* it =
      std::upper_bound(first, last, a, [](uintptr_t v, const Range& r) { return v < r.begin; });
  model::MemoryKind kind = model::MemoryKind::Pageable;
  if (it != first && a < (it - 1)->end) kind = (it - 1)->kind;
  hazard.store(nullptr, std::memory_order_release);
  return kind;
}

size_t PinnedRegistry::rangeCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ranges_.size();
}

size_t PinnedRegistry::retiredCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return retired_.size();
}

void PinnedRegistry::clear() {
  // The parent's snapshots are abandoned (not freed): cheap, and safe whatever state they were in.
  for (const Snapshot* s : retired_)
    model::keptForProcessLifetime(s);
  model::keptForProcessLifetime(current_.load(std::memory_order_seq_cst));
  ranges_.clear();
  retired_.clear();
  current_.store(nullptr, std::memory_order_seq_cst);
  for (uint32_t i = 0; i < readers_; ++i)
    hazards_[i].store(nullptr, std::memory_order_relaxed);
}

} // namespace gpuwise::interposer
