// The simulated device's one clock: the host's CLOCK_MONOTONIC in nanoseconds. Every virtual
// timeline value (kernel start/end, copy end, event time) is a point on this clock, so a host
// thread can wait for the GPU by waiting for the clock to reach a value.
//
// Any thread may call these. sleepUntil/spinUntil block the caller; never call them while holding
// a simulator lock.
#pragma once

#include <cstdint>
#include <ctime>

namespace gpuwise::sim {

using TimeNs = int64_t;

inline TimeNs nowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return TimeNs{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Burns the CPU until the clock reaches deadline. Used for host-side API costs (a launch costs the
// calling thread a few microseconds on a real driver too) and for the last microseconds of a wait.
void spinUntil(TimeNs deadline);

// Blocks until the clock reaches deadline: sleeps for most of the wait, then spins the last
// kSpinTailNs so the caller wakes close to the deadline and never before it.
void sleepUntil(TimeNs deadline);

inline constexpr TimeNs kSpinTailNs = 100'000;

} // namespace gpuwise::sim
