// Which host address ranges are page-locked (cudaMallocHost, cudaHostAlloc, cudaHostRegister,
// cuMemAllocHost) or managed (cudaMallocManaged), so a copy hook can say whether its host side is
// pinned or pageable: pageable copies are staged through a bounce buffer and cannot overlap with
// compute, the thing `use_pinned_memory` is about.
//
// Reads happen on every copy, so they take no lock and allocate nothing: the ranges live in an
// immutable sorted array published by an atomic pointer swap. Registration (rare) copies the
// array under a mutex, swaps it in, and frees a retired array only once no reader announces it in
// its hazard slot (one slot per ring, so readers are the threads that record).
//
// Threads: classify() from any recording thread, with its own hazard slot index. add()/remove()
// from any thread (they lock). clear() in a fork child.
#pragma once

#include "profiler/model/events.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gpuwise::interposer {

class PinnedRegistry {
public:
  explicit PinnedRegistry(uint32_t readers);
  ~PinnedRegistry();
  PinnedRegistry(const PinnedRegistry&) = delete;
  PinnedRegistry& operator=(const PinnedRegistry&) = delete;

  // Registration path. `kind` is Pinned or Managed. A range that overlaps an existing one
  // replaces it (the runtime would have refused the overlap; the newest call wins).
  void add(const void* begin, size_t bytes, model::MemoryKind kind);
  // Removes the range starting at `begin`; returns its size (0 when unknown).
  size_t remove(const void* begin);
  // Copy path: Pinned or Managed for an address inside a registered range, Pageable otherwise.
  // `reader` is the caller's hazard slot (its ring index); out of range reads as Unknown.
  model::MemoryKind classify(const void* address, uint32_t reader) const;

  size_t rangeCount() const;
  size_t retiredCount() const; // arrays waiting for readers to move on (tests)
  // Fork child: empty, and the mutex is known to be free (see lockForFork()).
  void clear();
  // fork(): prepare locks, parent/child unlock, so the child never inherits a held mutex.
  void lockForFork() { mutex_.lock(); }
  void unlockAfterFork() { mutex_.unlock(); }

private:
  struct Range {
    uintptr_t begin, end;
    model::MemoryKind kind;
  };
  // One allocation: the header, then `count` ranges.
  struct Snapshot {
    size_t count;
    const Range* begin() const { return reinterpret_cast<const Range*>(this + 1); }
    const Range* end() const { return begin() + count; }
  };
  static Snapshot* makeSnapshot(const std::vector<Range>& ranges);
  void publish(const std::vector<Range>& ranges); // mutex held
  void reclaim();                                 // mutex held

  std::atomic<const Snapshot*> current_{nullptr};
  std::unique_ptr<std::atomic<const Snapshot*>[]> hazards_;
  uint32_t readers_;
  mutable std::mutex mutex_;
  std::vector<Range> ranges_;            // the writer's copy, sorted by begin
  std::vector<const Snapshot*> retired_; // swapped out, maybe still read
};

} // namespace gpuwise::interposer
