// The shim's process-wide state and its life cycle: configure (load time) -> start (first CUDA
// call or InitializeInjection) -> record -> final flush (exit) -> off; and fork, after which the
// child starts afresh on its own first CUDA call.
//
// A Session is one start: its id, its CUPTI collector and its drain thread (with the connection).
// Sessions are never destroyed (exit, fork): their threads and sockets may still be in use, or
// belong to a parent process.
//
// Threads: configure() before any hook runs (the LD_PRELOAD constructor) or from a test's main
// thread. startShim() from any thread (one wins, others forward until it is done). shutdownShim()
// from exit paths (idempotent, bounded by GPUWISE_EXIT_TIMEOUT_MS). fork handlers as pthread_atfork
// calls them.
#pragma once

#include "interposer/batch_sink.h"
#include "interposer/config.h"
#include "interposer/drain.h"
#include "interposer/pinned_registry.h"
#include "profiler/cupti/cupti_port.h"
#include "profiler/model/process.h"
#include "profiler/nvml/nvml_port.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace gpuwise::interposer {

struct ShimDeps {
  // Defaults: makeSink(config.endpoint, ...), DlCuptiPort("libcupti.so.13"), DlNvmlPort.
  std::function<Expected<std::unique_ptr<BatchSink>>(const Config&, const model::NameTable&,
                                                     uint64_t session_id, int64_t pid)>
      make_sink;
  std::function<std::unique_ptr<profiler::CuptiPort>()> make_cupti_port;
  // Default DlNvmlPort("libnvidia-ml.so.1"); null: no device facts from NVML. Both factories are
  // called on the thread that starts the shim, never on the drain thread (they dlopen).
  std::function<std::unique_ptr<profiler::NvmlPort>()> make_nvml_port;
  // Tests shorten the coverage horizons; zero keeps the defaults.
  DrainOptions drain;
};
ShimDeps defaultDeps();

void configure(const Config& config, ShimDeps deps);
bool startShim();
void shutdownShim();
// Registers shutdownShim with atexit once; called after the first recorded call returned (so it
// runs before the CUDA runtime's own exit teardown, which was registered earlier).
void registerExitHandlerOnce();

// exec hooks: the final flush before the image is replaced, in the process that owns the session
// only (a vfork child shares the parent's memory). Afterwards the shim is off, as after exit.
void flushBeforeExec();

void forkPrepare();
void forkParent();
void forkChild();

// The application called `call` (cuptiSubscribe, cuptiActivityRegisterCallbacks): it runs its own
// CUPTI client, which CUPTI allows only one of. A running session hands CUPTI over (Drain::
// yieldCupti, bounded by GPUWISE_EXIT_TIMEOUT_MS) and goes on at the interposer tier; a session
// started later leaves CUPTI alone. From any application thread (hooks_cupti.cpp); `call` must be
// a string literal.
void yieldCuptiToApplication(const char* call);

// The pinned/managed host ranges (null before the first start).
PinnedRegistry* pinnedRegistry();

struct ShimStatus {
  uint8_t mode = 0; // Mode
  bool session = false;
  uint64_t session_id = 0;
  model::CollectionTier tier = model::CollectionTier::Unknown;
  std::string tier_reason;
  Drain::Stats drain;
  uint64_t unringed_drops = 0;
};
ShimStatus shimStatus();

// Tests: wake the drain and wait until it has completed `cycles` more cycles (deadline bounded).
bool drainAndWait(std::chrono::milliseconds deadline, int cycles = 2);
// Tests only: final-flushes the current session (like exit) and returns to "unstarted", so the next
// configure()/startShim() begins a new session in the same process (and forgets that the
// application took CUPTI).
bool resetForTest(std::chrono::milliseconds deadline);

} // namespace gpuwise::interposer
