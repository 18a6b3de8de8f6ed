// Raw hot-path tick reads: the CPU's invariant counter where it is usable, CLOCK_MONOTONIC ns
// otherwise. A tick is meaningless on its own; Clock (clock.h) converts ticks to CLOCK_MONOTONIC
// nanoseconds off the hot path.
//
// Threads: any. Never blocks, never allocates. Reading the counter costs a few ns (rdtsc on
// x86-64, cntvct_el0 on aarch64); the clock_gettime fallback costs ~20 ns through the vDSO.
//
// The architecture switch below selects an instruction, not a backend: every architecture has the
// same code path around it.
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>

namespace gpuwise::profiler {

enum class TickSource : uint8_t {
  Monotonic = 0, // clock_gettime(CLOCK_MONOTONIC): ticks are already nanoseconds
  Counter = 1,   // rdtsc (x86-64, invariant TSC) or cntvct_el0 (aarch64)
};

inline uint64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// True when this build can read a hardware counter at all (the runtime check that the counter is
// trustworthy is counterUsable() in clock.h).
inline constexpr bool kHaveHardwareCounter =
#if defined(__x86_64__) || defined(__aarch64__)
    true;
#else
    false;
#endif

inline uint64_t readHardwareCounter() {
#if defined(__x86_64__)
  uint32_t lo, hi;
  // rdtsc without a fence: hooks need ordering against their own call, not against other loads.
  asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (uint64_t(hi) << 32) | lo;
#elif defined(__aarch64__)
  uint64_t v;
  asm volatile("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
  return v;
#else
  return monotonicNs();
#endif
}

inline uint64_t readTicks(TickSource source) {
  return source == TickSource::Counter ? readHardwareCounter() : monotonicNs();
}

namespace detail {
// The source the process-wide clock chose (set once by initProcessClock(), before any hook
// records). Read on every hooked call: one relaxed load of a line that is never written again.
inline std::atomic<TickSource> g_process_source{TickSource::Monotonic};
} // namespace detail

// The hot-path timestamp used by the hooks: ticks of the process-wide clock.
inline uint64_t processTicks() {
  return readTicks(detail::g_process_source.load(std::memory_order_relaxed));
}

} // namespace gpuwise::profiler
