// Timing helpers of the shim's hook benchmarks (launches, NCCL calls): a fenced cycle counter
// read and the percentile of a sample, shared so that every hook is timed the same way.
#pragma once

#include "profiler/clock/clock.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace gpuwise::bench {

// The TSC read between fences, so the timed calls neither start early nor finish late.
inline uint64_t fencedTicks() {
#if defined(__x86_64__)
  _mm_lfence();
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
#else
  return profiler::readTicks(profiler::TickSource::Counter);
#endif
}

// The p-th percentile (0..1) of v, by the closest rank below; reorders v.
inline double percentile(std::vector<double>& v, double p) {
  size_t i = size_t(p * double(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + long(i), v.end());
  return v[i];
}

} // namespace gpuwise::bench
