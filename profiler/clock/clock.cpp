#include "profiler/clock/clock.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace gpuwise::profiler {

namespace {

bool kernelClocksourceIsTsc(const char* sysfs_root) {
  char path[512];
  std::snprintf(path, sizeof path, "%s/devices/system/clocksource/clocksource0/current_clocksource",
                sysfs_root);
  std::FILE* f = std::fopen(path, "re");
  if (!f) return false;
  char buf[64] = {};
  bool tsc = std::fgets(buf, sizeof buf, f) && std::strncmp(buf, "tsc", 3) == 0 &&
             (buf[3] == '\n' || buf[3] == '\0');
  std::fclose(f);
  return tsc;
}

// ns = ns0 + (ticks - tick0) * slope, in 128-bit so an hour of 3 GHz ticks cannot overflow.
int64_t convert(uint64_t ticks, uint64_t tick0, int64_t ns0, uint64_t slope_q32) {
  __int128 delta = __int128(int64_t(ticks - tick0));
  __int128 scaled = delta * __int128(slope_q32);
  // Arithmetic shift rounds towards -inf for negative deltas, which keeps the map monotonic.
  return ns0 + int64_t(scaled >> 32);
}

} // namespace

bool counterUsable(const char* sysfs_root) {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000007u &&
      __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8))) {
    return true;
  }
  // Hypervisors often hide the invariant bit while the kernel still trusts the TSC.
  return kernelClocksourceIsTsc(sysfs_root);
#elif defined(__aarch64__)
  (void)sysfs_root;
  return true; // the generic timer is architecturally constant-rate
#else
  (void)sysfs_root;
  return false;
#endif
}

Clock::Clock(TickSource source) : source_(source) {
  if (source_ == TickSource::Monotonic) {
    publish(0, 0, uint64_t{1} << 32); // identity: ticks are ns
    return;
  }
  first_ = sample();
  // A short baseline to get started; recalibrate() lengthens it every batch interval.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  Sample s = sample();
  uint64_t dt = s.ticks - first_.ticks;
  int64_t dn = s.ns - first_.ns;
  uint64_t slope = dt ? uint64_t((__int128(dn) << 32) / dt) : (uint64_t{1} << 32);
  publish(s.ticks, s.ns, slope);
}

Clock::Sample Clock::sample() const {
  // Bracket clock_gettime between two counter reads and keep the tightest of a few tries, so a
  // preemption in the middle of one try does not skew the pair.
  Sample best{0, 0};
  uint64_t best_window = ~uint64_t{0};
  for (int i = 0; i < 7; ++i) {
    uint64_t a = readTicks(source_);
    int64_t n = int64_t(monotonicNs());
    uint64_t b = readTicks(source_);
    if (b - a < best_window) {
      best_window = b - a;
      best = {a + (b - a) / 2, n};
    }
  }
  return best;
}

void Clock::publish(uint64_t tick0, int64_t ns0, uint64_t slope_q32) {
  uint32_t s = seq_.load(std::memory_order_relaxed);
  seq_.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  tick0_.store(tick0, std::memory_order_relaxed);
  ns0_.store(ns0, std::memory_order_relaxed);
  slope_q32_.store(slope_q32, std::memory_order_relaxed);
  seq_.store(s + 2, std::memory_order_release);
}

int64_t Clock::toNs(uint64_t ticks) const {
  for (;;) {
    uint32_t s1 = seq_.load(std::memory_order_acquire);
    uint64_t t0 = tick0_.load(std::memory_order_relaxed);
    int64_t n0 = ns0_.load(std::memory_order_relaxed);
    uint64_t slope = slope_q32_.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    uint32_t s2 = seq_.load(std::memory_order_relaxed);
    if (s1 == s2 && (s1 & 1) == 0) return convert(ticks, t0, n0, slope);
  }
}

int64_t Clock::recalibrate() {
  if (source_ == TickSource::Monotonic) return 0;
  Sample s = sample();
  uint64_t t0 = tick0_.load(std::memory_order_relaxed);
  int64_t n0 = ns0_.load(std::memory_order_relaxed);
  uint64_t slope = slope_q32_.load(std::memory_order_relaxed);
  int64_t predicted = convert(s.ticks, t0, n0, slope);
  int64_t error = s.ns - predicted;

  // Long-baseline rate: everything since the first sample, so sampling noise shrinks with time.
  uint64_t dt = s.ticks - first_.ticks;
  int64_t dn = s.ns - first_.ns;
  if (dt == 0 || dn <= 0) return error;
  __int128 rate_q32 = (__int128(dn) << 32) / dt;

  if (error > kStepThresholdNs || error < -kStepThresholdNs) {
    // Too far to slew (suspend, migration): step, and restart the baseline from here.
    first_ = s;
    publish(s.ticks, s.ns, uint64_t(rate_q32));
    return error;
  }
  // Continue from where the old line is at this instant and bend it so the error is gone one
  // horizon later: slope = rate + error / horizon_ticks.
  __int128 horizon_ticks = (__int128(kSlewHorizonNs) << 32) / rate_q32;
  if (horizon_ticks <= 0) horizon_ticks = 1;
  __int128 new_slope = rate_q32 + (__int128(error) << 32) / horizon_ticks;
  // Never let the line flatten or reverse: that would break monotonicity.
  __int128 floor = rate_q32 / 2, ceil = rate_q32 * 2;
  if (new_slope < floor) new_slope = floor;
  if (new_slope > ceil) new_slope = ceil;
  publish(s.ticks, predicted, uint64_t(new_slope));
  return error;
}

void Clock::repairAfterFork() {
  uint32_t s = seq_.load(std::memory_order_relaxed);
  if (s & 1) seq_.store(s + 1, std::memory_order_relaxed);
  if (source_ == TickSource::Monotonic) {
    publish(0, 0, uint64_t{1} << 32);
    return;
  }
  // The slope may be the half-written one; the first sample's long baseline is writer-only state
  // that fork copied whole, so derive the rate from it.
  Sample now = sample();
  uint64_t dt = now.ticks - first_.ticks;
  int64_t dn = now.ns - first_.ns;
  uint64_t slope = slope_q32_.load(std::memory_order_relaxed);
  if (dt > 0 && dn > 0) slope = uint64_t((__int128(dn) << 32) / dt);
  publish(now.ticks, now.ns, slope);
}

double Clock::ticksPerSecond() const {
  uint64_t slope = slope_q32_.load(std::memory_order_relaxed);
  return slope ? 1e9 * double(uint64_t{1} << 32) / double(slope) : 0.0;
}

namespace {
std::atomic<Clock*> g_clock{nullptr};
std::mutex g_clock_mutex;
} // namespace

Clock& initProcessClock(bool allow_counter) {
  if (Clock* c = g_clock.load(std::memory_order_acquire)) return *c;
  std::lock_guard<std::mutex> lock(g_clock_mutex);
  if (Clock* c = g_clock.load(std::memory_order_relaxed)) return *c;
  TickSource source = (allow_counter && kHaveHardwareCounter && counterUsable())
                          ? TickSource::Counter
                          : TickSource::Monotonic;
  // Leaked on purpose: CUPTI's timestamp callback and exiting threads may read it during exit.
  Clock* c = new Clock(source);
  detail::g_process_source.store(source, std::memory_order_relaxed);
  g_clock.store(c, std::memory_order_release);
  return *c;
}

Clock* processClock() {
  return g_clock.load(std::memory_order_acquire);
}

} // namespace gpuwise::profiler
