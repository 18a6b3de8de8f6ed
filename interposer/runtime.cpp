// The shim's mode machine (configure -> start -> record -> final flush -> off, runtime.h), the
// threads' rings, and the exit path. Building a session is session_start.cpp; fork, exec and the
// CUPTI handover are runtime_fork.cpp; what tests drive is runtime_test_hooks.cpp.
#include "interposer/runtime.h"

#include "interposer/kernel_registry.h"
#include "interposer/log.h"
#include "interposer/recorder.h"
#include "interposer/runtime_state.h"
#include "profiler/cupti/cupti_library.h"
#include "profiler/cupti/dl_cupti_port.h"
#include "profiler/model/process_lifetime.h"
#include "profiler/nvml/dl_nvml_port.h"

#include <cstdlib>

#include <unistd.h>

namespace gpuwise::interposer {

__thread ThreadState t_state __attribute__((tls_model("initial-exec")));

namespace detail {
std::atomic<uint8_t> g_mode{kModeUnstarted};
std::atomic<uint8_t> g_count_launches{0};

const Config* g_config = nullptr;
ShimDeps* g_deps = nullptr;
std::atomic<RingPool*> g_rings{nullptr};
std::atomic<PinnedRegistry*> g_pinned{nullptr};
std::atomic<Session*> g_session{nullptr};
std::atomic<uint64_t> g_unringed_drops{0};
std::atomic<bool> g_shutdown_done{false};
std::atomic<const char*> g_app_cupti_call{nullptr};
} // namespace detail

using namespace detail;

namespace {

std::atomic<bool> g_exit_registered{false};

// Releases the thread's ring when the thread exits. Only touched on a thread's first event.
struct RingReleaser {
  RingSlot* slot = nullptr;
  ~RingReleaser() {
    if (!slot) return;
    t_state.ring = nullptr;
    t_state.exited = 1;
    if (RingPool* pool = g_rings.load(std::memory_order_acquire)) pool->release(slot);
    slot = nullptr;
  }
};
thread_local RingReleaser t_releaser;

void atExit() {
  shutdownShim();
}

} // namespace

namespace detail {

bool beginSlow(uint8_t mode) {
  if (mode == kModeUnstarted) return startShim();
  return false;
}

RingSlot* claimRing(ThreadState& ts) {
  if (ts.exited) {
    g_unringed_drops.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  if (ts.claim_backoff) {
    --ts.claim_backoff;
    g_unringed_drops.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  RingPool* pool = g_rings.load(std::memory_order_acquire);
  if (!pool) return nullptr;
  if (!ts.tid) ts.tid = uint32_t(gettid());
  RingSlot* slot = pool->claim(ts.tid);
  if (!slot) {
    ts.claim_backoff = 1023; // every thread slot taken: retry now and then, not on every call
    g_unringed_drops.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  ts.ring = slot;
  t_releaser.slot = slot;
  registerExitHandlerOnce();
  return slot;
}

void kickDrain() {
  if (Session* s = g_session.load(std::memory_order_acquire)) s->drain->kick();
}

void forgetThreadRing() {
  t_state.ring = nullptr;
  t_releaser.slot = nullptr;
}

} // namespace detail

ShimDeps defaultDeps() {
  ShimDeps d;
  d.make_sink = [](const Config& c, const model::NameTable& names, uint64_t session, int64_t pid) {
    return makeSink(c.endpoint, names, session, pid, int(c.linger_ms));
  };
  d.make_cupti_port = [] {
    profiler::CuptiSearch search;
    if (g_config) {
      search.library = g_config->cupti_library;
      search.cuda_home = g_config->cuda_home;
    }
    search.loaded = profiler::loadedObjects();
    auto port = std::make_unique<profiler::DlCuptiPort>(profiler::cuptiCandidates(search));
    if (port->available()) logLine(LogLevel::Debug, "CUPTI from %s", port->loadedFrom().c_str());
    return port;
  };
  d.make_nvml_port = [] { return std::make_unique<profiler::DlNvmlPort>(); };
  return d;
}

void configure(const Config& config, ShimDeps deps) {
  g_config = model::keptForProcessLifetime(new Config(config));
  g_deps = model::keptForProcessLifetime(new ShimDeps(std::move(deps)));
  setLogLevel(config.log);
  g_mode.store(config.disabled ? kModeOff : kModeUnstarted, std::memory_order_release);
}

bool startShim() {
  if (!g_config) return false;
  uint8_t expected = kModeUnstarted;
  if (!g_mode.compare_exchange_strong(expected, kModeStarting, std::memory_order_acq_rel))
    return expected == kModeRecording;
  bool ok = false;
  try {
    ok = detail::startSession();
  } catch (...) {
    logLine(LogLevel::Warn, "could not start (out of memory?): off");
  }
  g_mode.store(ok ? kModeRecording : kModeOff, std::memory_order_release);
  return ok;
}

void registerExitHandlerOnce() {
  if (!g_exit_registered.exchange(true)) std::atexit(atExit);
}

void shutdownShim() {
  if (g_shutdown_done.exchange(true)) return;
  // From here hooks only forward; events already in flight still land in the rings and are drained.
  g_mode.store(kModeOff, std::memory_order_release);
  Session* s = g_session.load(std::memory_order_acquire);
  if (!s) return;
  uint32_t budget = g_config ? g_config->exit_timeout_ms : 2000;
  if (!s->drain->finish(std::chrono::milliseconds(budget))) {
    logLine(LogLevel::Warn, "final flush did not finish within %u ms; exiting without it", budget);
    return;
  }
  Drain::Stats st = s->drain->stats();
  logLine(
      LogLevel::Debug,
      "session %016llx: %llu events recorded, %llu records sent in %llu batches, %llu dropped%s",
      (unsigned long long)s->id, (unsigned long long)st.events_drained,
      (unsigned long long)st.records_sent, (unsigned long long)st.batches_sent,
      (unsigned long long)st.dropped_total, st.final_sent ? "" : " (no final batch delivered)");
}

PinnedRegistry* pinnedRegistry() {
  return g_pinned.load(std::memory_order_acquire);
}

ShimStatus shimStatus() {
  ShimStatus st;
  st.mode = g_mode.load();
  st.unringed_drops = g_unringed_drops.load();
  if (Session* s = g_session.load()) {
    st.session = true;
    st.session_id = s->id;
    std::lock_guard<std::mutex> lock(s->tier_mu);
    st.tier = s->tier;
    st.tier_reason = s->tier_reason;
    st.drain = s->drain->stats();
  }
  return st;
}

} // namespace gpuwise::interposer
