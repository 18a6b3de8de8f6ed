// Copies: bytes, counts and time by direction and by the kind of host memory involved (pageable
// or pinned), effective bandwidths, and the synchronous copies that blocked the host.
//
// Time of a copy: its GPU duration when the record has GPU timestamps (CUPTI tier, imports),
// otherwise its host call duration (interposer tier), which for a pageable copy is close to the
// real cost because the driver stages pageable memory synchronously. Bandwidth uses GPU time only
// when available, so the two are not mixed.
//
// Pure function of the trace; any thread. Results merge by adding.
#pragma once

#include "profiler/model/trace.h"

#include <array>
#include <optional>

namespace gpuwise::advisor {

struct CopyStats {
  uint64_t count = 0, bytes = 0;
  model::TimeNs time_ns = 0; // GPU time when known, else host call time (see above)
  // Copies with GPU timestamps.
  uint64_t gpu_timed_count = 0, gpu_timed_bytes = 0;
  model::TimeNs gpu_ns = 0;
  // Copies with host call timestamps.
  uint64_t call_timed_count = 0, call_timed_bytes = 0;
  model::TimeNs call_ns = 0;

  void add(const model::Copy& c);
  void merge(const CopyStats& o);
  // Bytes per second from GPU timing when any, else from host call timing; nullopt when untimed.
  std::optional<double> bandwidthBytesPerSecond() const;
  // Bytes per second from GPU timing only.
  std::optional<double> gpuBandwidthBytesPerSecond() const;
};

inline constexpr size_t kCopyDirections = 6; // model::CopyDirection values
inline constexpr size_t kMemoryKinds = 6;    // model::MemoryKind values

// The host side of a copy: the source of H2D, the destination of D2H, pageable if either side of
// an H2H copy is; Device for copies between devices.
model::MemoryKind hostMemoryKind(const model::Copy& c);

struct CopyResult {
  CopyStats total;
  std::array<CopyStats, kCopyDirections> by_direction{};
  // [direction][host memory kind].
  std::array<std::array<CopyStats, kMemoryKinds>, kCopyDirections> by_direction_host{};
  CopyStats synchronous; // copies issued without *Async: the host waited for each

  const CopyStats& at(model::CopyDirection d) const { return by_direction[static_cast<size_t>(d)]; }
  const CopyStats& at(model::CopyDirection d, model::MemoryKind host) const {
    return by_direction_host[static_cast<size_t>(d)][static_cast<size_t>(host)];
  }
  // H2D plus D2H copies whose host memory has this kind (pageable: the contract's
  // summary.memcpy.pageable_bytes / pageable_seconds).
  CopyStats hostTransfers(model::MemoryKind host) const;

  void merge(const CopyResult& other);
};

CopyResult analyzeCopies(const model::Trace& trace);

} // namespace gpuwise::advisor
