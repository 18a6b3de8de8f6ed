// Leaving the process and the hand-over of CUPTI: the final flush before exec, the fork handlers
// (the child abandons the parent's session and starts its own), and giving CUPTI to an application
// that runs its own client (runtime.h).
#include "interposer/kernel_registry.h"
#include "interposer/log.h"
#include "interposer/recorder.h"
#include "interposer/runtime_state.h"
#include "profiler/clock/clock.h"

#include <unistd.h>

namespace gpuwise::interposer {

using namespace detail;

void flushBeforeExec() {
  Session* s = g_session.load(std::memory_order_acquire);
  if (!s || s->pid != getpid()) return;
  shutdownShim();
}

void forkPrepare() {
  // Hold our locks across fork so the child never inherits one taken by a thread it lacks.
  KernelRegistry::process().lockForFork();
  if (PinnedRegistry* p = g_pinned.load()) p->lockForFork();
}

void forkParent() {
  if (PinnedRegistry* p = g_pinned.load()) p->unlockAfterFork();
  KernelRegistry::process().unlockAfterFork();
}

void forkChild() {
  if (PinnedRegistry* p = g_pinned.load()) {
    p->unlockAfterFork();
    p->clear(); // the parent's page-locked ranges are not the child's
  }
  KernelRegistry::process().unlockAfterFork();
  // The parent's session (its drain thread, its ZeroMQ context) does not exist here / is not ours:
  // abandon it untouched. The child starts its own on its first CUDA call.
  g_session.store(nullptr, std::memory_order_relaxed);
  g_count_launches.store(0,
                         std::memory_order_relaxed); // the child records until its own CUPTI says
  uint8_t m = g_mode.load(std::memory_order_relaxed);
  if (m == kModeRecording || m == kModeStarting)
    g_mode.store(kModeUnstarted, std::memory_order_relaxed);
  if (RingPool* rings = g_rings.load()) rings->resetAfterFork();
  if (profiler::Clock* c = profiler::processClock()) c->repairAfterFork();
  forgetThreadRing();
  t_state.tid = 0;
  t_state.in_hook = 0;
  t_state.claim_backoff = 0;
}

void yieldCuptiToApplication(const char* call) {
  const char* none = nullptr;
  g_app_cupti_call.compare_exchange_strong(none, call, std::memory_order_acq_rel);
  Session* s = g_session.load(std::memory_order_acquire);
  // Whether CUPTI is still active is the drain thread's to read (it changes it): it answers at
  // once when there is nothing left to hand over.
  if (!s || s->pid != getpid() || !s->cupti) return;
  uint32_t budget = g_config ? g_config->exit_timeout_ms : 2000;
  if (!s->drain->yieldCupti(std::chrono::milliseconds(budget)))
    logLine(LogLevel::Warn, "could not hand CUPTI over to the application within %u ms (%s)",
            budget, call);
}

} // namespace gpuwise::interposer
