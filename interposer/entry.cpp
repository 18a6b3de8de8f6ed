// The injection entry points of libgpuwise.so.
//
// Workflow:
//   init       LD_PRELOAD: the constructor below reads the environment once into an immutable
//              Config and registers the fork handlers. Nothing else: a process that never calls
//              CUDA never starts anything and never prints anything.
//              CUDA_INJECTION64_PATH: the driver dlopens this library (constructor as above) and
//              calls InitializeInjection() from cuInit.
//   subscribe  on the first CUDA call a hook sees (or in InitializeInjection), startShim():
//              process clock, ring pool, cuptiSubscribe (another subscriber, or any refusal on
//              the way in: interposer tier, the reason in the Hello), the drain thread and its
//              connection.
//   enable     the CUPTI collector enables kernel/copy/memset/sync/memory/NVTX/overhead activity
//              and the launch/copy/memset/sync API records that join them to their host calls;
//              hooks record every call into their thread's ring.
//   flush      the drain thread, every GPUWISE_BATCH_MS or when a ring is half full: rings and
//              CUPTI buffers -> model records -> one batch; a Hello on every (re)connection.
//   teardown   atexit (registered after the first recorded call, so it runs before the runtime's
//              own teardown), or this library's destructor: mode off, final flush (CUPTI forced
//              flush, final batch), socket closed with bounded linger; every wait has a deadline.
//              fork: the child abandons the parent's session and restarts on its own first call.
//
// No exception leaves this file, and nothing here exits or aborts.
#include "interposer/config.h"
#include "interposer/log.h"
#include "interposer/runtime.h"

#include <atomic>
#include <cstdlib>

#include <pthread.h>

using namespace gpuwise::interposer;

namespace {

void onForkPrepare() {
  forkPrepare();
}
void onForkParent() {
  forkParent();
}
void onForkChild() {
  forkChild();
}

__attribute__((constructor)) void gpuwiseLoad() {
  try {
    configure(readConfig([](const char* name) { return std::getenv(name); }), defaultDeps());
    pthread_atfork(onForkPrepare, onForkParent, onForkChild);
  } catch (...) {
    // Out of memory while reading the environment: stay off, silently forwarding.
  }
}

__attribute__((destructor)) void gpuwiseUnload() {
  try {
    shutdownShim();
  } catch (...) {
  }
}

} // namespace

// CUDA_INJECTION64_PATH: called by the driver from cuInit, once per process. Returns 1 (success)
// whatever happens: a profiler failing must not fail the application's cuInit.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::atomic<bool> once{false};
  if (once.exchange(true)) return 1;
  try {
    if (startShim()) registerExitHandlerOnce();
  } catch (...) {
    logLine(LogLevel::Warn, "InitializeInjection failed; continuing without profiling");
  }
  return 1;
}
