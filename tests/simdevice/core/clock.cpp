#include "tests/simdevice/core/clock.h"

#include <sched.h>

namespace gpuwise::sim {

void spinUntil(TimeNs deadline) {
  int spins = 0;
  while (nowNs() < deadline) {
    // Give the core away now and then: the machines running the simulator are small and shared.
    if (++spins % 256 == 0) sched_yield();
  }
}

void sleepUntil(TimeNs deadline) {
  for (;;) {
    const TimeNs left = deadline - nowNs();
    if (left <= kSpinTailNs) break;
    const TimeNs nap = left - kSpinTailNs;
    timespec ts{static_cast<time_t>(nap / 1'000'000'000), static_cast<long>(nap % 1'000'000'000)};
    nanosleep(&ts, nullptr);
  }
  spinUntil(deadline);
}

} // namespace gpuwise::sim
