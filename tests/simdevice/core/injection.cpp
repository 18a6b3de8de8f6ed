#include "tests/simdevice/core/injection.h"

#include <dlfcn.h>
#include <sched.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace gpuwise::sim {
namespace {

enum State : int { kNotStarted = 0, kRunning = 1, kDone = 2 };
std::atomic<int> g_state{kNotStarted};
std::atomic<int> g_calls{0};
thread_local bool t_injecting = false;

void runInjection() {
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  if (path == nullptr || *path == '\0') return;
  void* library = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) {
    std::fprintf(stderr, "gwsim: CUDA_INJECTION64_PATH: cannot load %s: %s\n", path, dlerror());
    return;
  }
  using InitializeInjection = int (*)();
  auto init = reinterpret_cast<InitializeInjection>(dlsym(library, "InitializeInjection"));
  if (init == nullptr) {
    std::fprintf(stderr, "gwsim: CUDA_INJECTION64_PATH: %s has no InitializeInjection\n", path);
    return;
  }
  g_calls.fetch_add(1, std::memory_order_relaxed);
  init();
}

} // namespace

void ensureInjected() {
  if (g_state.load(std::memory_order_acquire) == kDone || t_injecting) return;
  int expected = kNotStarted;
  if (g_state.compare_exchange_strong(expected, kRunning, std::memory_order_acq_rel)) {
    t_injecting = true;
    runInjection();
    t_injecting = false;
    g_state.store(kDone, std::memory_order_release);
    return;
  }
  while (g_state.load(std::memory_order_acquire) != kDone)
    sched_yield();
}

void markInjectionDoneAfterFork() {
  if (g_state.load(std::memory_order_relaxed) == kRunning && !t_injecting) {
    g_state.store(kDone, std::memory_order_relaxed);
  }
}

int injectionCalls() {
  return g_calls.load(std::memory_order_relaxed);
}

} // namespace gpuwise::sim
