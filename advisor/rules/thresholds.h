// Every threshold the rules use, in one place, with why it has the value it has. A rule reads its
// own block; tests and (later) configuration override them by value.
#pragma once

#include <cstdint>

namespace gpuwise::advisor {

struct Thresholds {
  struct PinnedMemory {
    // Pageable H2D/D2H copy time as a share of the reference time (step time when steps are
    // known, else the GPU span, else the wall time) at which pinning is worth recommending:
    // below ~5% the change is rarely worth a code change.
    double min_share = 0.05;
    // Total pageable bytes below which the rule stays quiet: a few small copies (a scalar
    // .item(), a tiny config tensor) are latency, not bandwidth, and pinning does not help them.
    uint64_t min_bytes = 16ull << 20;
    // Pinned copies (with GPU timing) the trace needs, per direction, before its own pinned
    // bandwidth is trusted over the per-GPU table: enough bytes that launch latency does not
    // dominate, and more than a single copy.
    uint64_t min_measured_pinned_bytes = 8ull << 20;
    uint64_t min_measured_pinned_copies = 2;
  };
  PinnedMemory pinned_memory;
};

} // namespace gpuwise::advisor
