// The state the shim's runtime files share (runtime.cpp: the mode machine and exit;
// session_start.cpp: building a session; runtime_fork.cpp: fork, exec and the CUPTI handover;
// runtime_test_hooks.cpp: what tests drive). Internal to the shim: hooks use runtime.h.
//
// Process-wide state, leaked on purpose: hooks on other threads and CUPTI callbacks may touch it
// while the process exits. g_config and g_deps are written once by configure() before any hook
// runs; the atomics are read by any thread.
#pragma once

#include "interposer/drain.h"
#include "interposer/pinned_registry.h"
#include "interposer/process_identity.h"
#include "interposer/ring_pool.h"
#include "interposer/runtime.h"
#include "profiler/cupti/cupti_collector.h"
#include "profiler/nvml/nvml_monitor.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include <sys/types.h>

namespace gpuwise::interposer::detail {

// One start of the shim: its id, its CUPTI collector and its drain thread (runtime.h).
struct Session {
  uint64_t id = 0;
  pid_t pid = 0; // the process that started it
  int64_t start_ns = 0;
  std::unique_ptr<profiler::CuptiPort> port;
  std::unique_ptr<profiler::CuptiCollector> cupti;
  // Set at start; changed once more by the drain thread if CUPTI is handed over to the
  // application (yieldCuptiToApplication). Read under tier_mu after the drain has started.
  std::mutex tier_mu;
  model::CollectionTier tier = model::CollectionTier::Interposer;
  std::string tier_reason;
  std::unique_ptr<Drain> drain;
  bool devices_queried = false; // drain thread only
  DeviceQuery devices;          // drain thread only
  // NVML: the library is loaded by startSession (see there); nvmlInit and every query run on the
  // drain thread once the devices are known, never on an application thread.
  bool nvml_tried = false;
  std::unique_ptr<profiler::NvmlPort> nvml_port;
  std::unique_ptr<profiler::NvmlMonitor> nvml;
};

extern const Config* g_config;
extern ShimDeps* g_deps;
extern std::atomic<RingPool*> g_rings;
extern std::atomic<PinnedRegistry*> g_pinned;
extern std::atomic<Session*> g_session;
extern std::atomic<uint64_t> g_unringed_drops;
extern std::atomic<bool> g_shutdown_done;
// The CUPTI call by which the application showed it runs its own CUPTI client (torch.profiler's
// Kineto, another tool linked in), or null: from then on gpuwise leaves CUPTI to it.
extern std::atomic<const char*> g_app_cupti_call;

// Builds and starts a session from g_config (the starting thread, in kModeStarting): reserves the
// rings on first use, chooses the tier, starts the drain thread and publishes g_session. False:
// the shim stays off (the reason is logged). May throw std::bad_alloc; startShim catches it.
bool startSession();

// Forgets the calling thread's ring without releasing it (after fork, or a test's reset), so that
// its next event claims a fresh one.
void forgetThreadRing();

} // namespace gpuwise::interposer::detail
