// What tests drive in the shim (runtime.h): waiting on the drain thread's cycles, and a reset to
// "unstarted" so one test process can run several sessions.
#include "interposer/recorder.h"
#include "interposer/runtime_state.h"

#include <time.h>

namespace gpuwise::interposer {

using namespace detail;

bool drainAndWait(std::chrono::milliseconds deadline, int cycles) {
  Session* s = g_session.load();
  if (!s) return false;
  uint64_t target = s->drain->cycles() + uint64_t(cycles);
  auto until = std::chrono::steady_clock::now() + deadline;
  while (s->drain->cycles() < target) {
    if (std::chrono::steady_clock::now() > until) return false;
    s->drain->kick();
    timespec ts{0, 1000000};
    nanosleep(&ts, nullptr);
  }
  return true;
}

bool resetForTest(std::chrono::milliseconds deadline) {
  Session* s = g_session.load();
  g_mode.store(kModeOff);
  bool ok = !s || s->drain->finish(deadline);
  g_session.store(nullptr);
  g_count_launches.store(0);
  g_app_cupti_call.store(nullptr);
  g_shutdown_done.store(false);
  if (RingPool* rings = g_rings.load(); rings && ok) rings->resetAfterFork();
  forgetThreadRing();
  t_state.exited = 0;
  if (g_config) g_mode.store(g_config->disabled ? kModeOff : kModeUnstarted);
  return ok;
}

} // namespace gpuwise::interposer
