// Syncs: how long the host sat blocked waiting for the GPU.
//
// Blocked time is the union, per (process, thread), of the synchronising calls on that thread:
// HostSync records (device, stream, event synchronisation, synchronous copies) and the host calls
// of synchronous copies (Copy with async == false), so a cudaMemcpy reported both as a copy and as
// a SyncCopy, or a stream sync nested in a device sync, counts once. StreamWaitEvent records are
// device-side waits that do not block the host and are not counted. A thread id of 0 (unknown)
// is treated as one thread.
//
// Pure function of the trace; any thread. Results merge by adding (exact for disjoint windows).
#pragma once

#include "profiler/model/trace.h"

#include <array>

namespace gpuwise::advisor {

inline constexpr size_t kSyncKinds = 6; // model::SyncKind values

struct SyncKindStats {
  uint64_t calls = 0;
  model::TimeNs blocked_ns = 0; // union per thread of this kind's calls, summed over threads
};

struct SyncResult {
  uint64_t calls = 0;
  model::TimeNs blocked_ns = 0; // union per thread of all blocking calls, summed over threads
  std::array<SyncKindStats, kSyncKinds> by_kind{};
  uint64_t threads = 0;       // (process, thread) pairs that blocked at least once
  uint64_t untimed_calls = 0; // blocking calls without host timestamps

  const SyncKindStats& at(model::SyncKind k) const { return by_kind[static_cast<size_t>(k)]; }
  void merge(const SyncResult& other);
};

SyncResult analyzeSyncs(const model::Trace& trace);

} // namespace gpuwise::advisor
