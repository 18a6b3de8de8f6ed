// Converts hot-path ticks (tick.h) to CLOCK_MONOTONIC nanoseconds, the one timeline the shim, CUPTI
// (through its timestamp callback) and the advisor share.
//
// Calibration: a line ns = ns0 + (ticks - tick0) * slope, read lock-free through a seqlock so the
// conversion works on any thread (CUPTI calls its timestamp callback from application threads).
// recalibrate() (the drain thread, every batch interval) samples the counter against
// clock_gettime and slews the line: the new line starts where the old one was at the sample (so
// conversions stay continuous and monotonic) and steers towards CLOCK_MONOTONIC over the next
// second, the way NTP slews rather than steps. Errors above kStepThresholdNs (suspend, VM
// migration) are stepped instead.
//
// Threads: now()/toNs()/nowNs() from any thread, never blocking. recalibrate() from one thread at
// a time (the owner: the drain thread).
#pragma once

#include "profiler/clock/tick.h"

#include <atomic>
#include <cstdint>

namespace gpuwise::profiler {

// Whether the hardware counter is trustworthy as a clock here: invariant TSC (CPUID
// 0x80000007:EDX[8]) or the kernel itself using it as its clocksource; always on aarch64.
// `sysfs_root` lets tests point at a fake /sys.
bool counterUsable(const char* sysfs_root = "/sys");

class Clock {
public:
  // Calibrates immediately (about 2 ms of sleeping when the source is the counter).
  explicit Clock(TickSource source);
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;

  TickSource source() const { return source_; }
  uint64_t now() const { return readTicks(source_); }
  // Any thread, lock-free.
  int64_t toNs(uint64_t ticks) const;
  int64_t nowNs() const { return toNs(now()); }
  // One thread at a time. Returns the error (CLOCK_MONOTONIC minus converted) it corrected, ns.
  int64_t recalibrate();
  // Counter frequency as currently calibrated (ticks per second); 1e9 for Monotonic.
  double ticksPerSecond() const;
  // In a fork child: the parent's drain thread may have died in the middle of publish(), leaving
  // the seqlock odd (readers would spin forever). Re-anchors on a fresh sample with a sane slope.
  void repairAfterFork();

  static constexpr int64_t kStepThresholdNs = 1000000;  // 1 ms
  static constexpr int64_t kSlewHorizonNs = 1000000000; // errors are corrected over 1 s

private:
  struct Sample {
    uint64_t ticks;
    int64_t ns;
  };
  Sample sample() const;
  void publish(uint64_t tick0, int64_t ns0, uint64_t slope_q32);

  TickSource source_;
  // Seqlock-protected calibration; every field atomic so readers racing a writer are defined.
  mutable std::atomic<uint32_t> seq_{0};
  std::atomic<uint64_t> tick0_{0};
  std::atomic<int64_t> ns0_{0};
  std::atomic<uint64_t> slope_q32_{uint64_t{1} << 32}; // ns per tick, 32.32 fixed point
  // Writer-only state: the first sample, for a long-baseline frequency estimate.
  Sample first_{0, 0};
};

// The process-wide clock: chosen once (counter when usable and `allow_counter`, else
// CLOCK_MONOTONIC), published to processTicks(). Thread-safe, idempotent; the first call decides.
Clock& initProcessClock(bool allow_counter = true);
// The clock initProcessClock() made; nullptr before.
Clock* processClock();

} // namespace gpuwise::profiler
