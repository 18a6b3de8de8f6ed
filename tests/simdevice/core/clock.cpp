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
  // An absolute sleep on CLOCK_MONOTONIC: interruptions and late wake-ups do not add up.
  const TimeNs wake = deadline - kSpinTailNs;
  if (wake > nowNs()) {
    const timespec ts{static_cast<time_t>(wake / 1'000'000'000),
                      static_cast<long>(wake % 1'000'000'000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
    }
  }
  spinUntil(deadline);
}

} // namespace gpuwise::sim
