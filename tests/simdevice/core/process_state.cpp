// The process-wide simulator state, created on first use, and fork() handling.
//
// fork(): a child that uses the device gets a fresh simulator, activity engine and subscriber (a
// new "context": no streams, events, allocations or CUPTI subscription carried over, as a real
// child may not use its parent's context). The kernel registry survives (the child launches the
// kernels its parent registered before main), and so does the energy meter (the board's counter).
// Old state is leaked, never destroyed: its mutexes may have been held by parent threads that do
// not exist in the child. What the child keeps is locked across fork instead.
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "tests/simdevice/core/energy_meter.h"
#include "tests/simdevice/core/injection.h"
#include "tests/simdevice/core/kernel_registry.h"
#include "tests/simdevice/core/simulator.h"

namespace gpuwise::sim {
namespace {

struct ProcessState {
  SimConfig config;
  Activity* activity = nullptr;
  Subscriber* subscriber = nullptr;
  Simulator* simulator = nullptr;
};

std::atomic<ProcessState*> g_state{nullptr};
std::mutex* g_init_mutex = new std::mutex();

void forkPrepare() {
  g_init_mutex->lock();
  KernelRegistry::instance().lockForFork();
  energyMeter().lockForFork();
}

void forkParent() {
  energyMeter().unlockAfterFork();
  KernelRegistry::instance().unlockAfterFork();
  g_init_mutex->unlock();
}

void forkChild() {
  energyMeter().unlockAfterFork();
  KernelRegistry::instance().unlockAfterFork();
  g_state.store(nullptr, std::memory_order_release);
  g_init_mutex->unlock();
  markInjectionDoneAfterFork();
}

[[gnu::constructor]] void registerForkHandlers() {
  pthread_atfork(forkPrepare, forkParent, forkChild);
}

ProcessState& state() {
  if (ProcessState* s = g_state.load(std::memory_order_acquire)) return *s;
  std::lock_guard lock(*g_init_mutex);
  if (ProcessState* s = g_state.load(std::memory_order_acquire)) return *s;
  auto* s = new ProcessState();
  s->config = loadConfigFromEnv();
  if (!s->config.device_key_known) {
    std::fprintf(stderr, "gwsim: unknown GWSIM_DEVICE '%s'; simulating h200\n",
                 std::getenv("GWSIM_DEVICE"));
  }
  s->activity = new Activity(s->config.cupti_busy);
  s->subscriber = new Subscriber(s->config.cupti_busy);
  s->simulator = new Simulator(s->config, *s->activity, *s->subscriber);
  g_state.store(s, std::memory_order_release);
  return *s;
}

} // namespace

Simulator& simulator() {
  return *state().simulator;
}
Activity& activity() {
  return *state().activity;
}
Subscriber& subscriber() {
  return *state().subscriber;
}

} // namespace gpuwise::sim
