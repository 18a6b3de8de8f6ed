#include "interposer/runtime.h"

#include "interposer/kernel_registry.h"
#include "interposer/log.h"
#include "interposer/process_identity.h"
#include "interposer/recorder.h"
#include "profiler/clock/clock.h"
#include "profiler/cupti/cupti_collector.h"
#include "profiler/cupti/cupti_library.h"
#include "profiler/cupti/dl_cupti_port.h"
#include "profiler/model/process_lifetime.h"
#include "profiler/nvml/dl_nvml_port.h"
#include "profiler/nvml/nvml_monitor.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <dlfcn.h>
#include <sys/random.h>
#include <unistd.h>

namespace gpuwise::interposer {

__thread ThreadState t_state __attribute__((tls_model("initial-exec")));

namespace detail {
std::atomic<uint8_t> g_mode{kModeUnstarted};
std::atomic<uint8_t> g_count_launches{0};
} // namespace detail

namespace {

using detail::g_count_launches;
using detail::g_mode;

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
  // NVML: the library is loaded by doStart (see there); nvmlInit and every query run on the drain
  // thread once the devices are known, never on an application thread.
  bool nvml_tried = false;
  std::unique_ptr<profiler::NvmlPort> nvml_port;
  std::unique_ptr<profiler::NvmlMonitor> nvml;
};

// Process-wide state. Leaked on purpose: hooks on other threads and CUPTI callbacks may touch it
// while the process exits.
const Config* g_config = nullptr;
ShimDeps* g_deps = nullptr;
std::atomic<RingPool*> g_rings{nullptr};
std::atomic<PinnedRegistry*> g_pinned{nullptr};
std::atomic<Session*> g_session{nullptr};
std::atomic<uint64_t> g_unringed_drops{0};
std::atomic<bool> g_shutdown_done{false};
std::atomic<bool> g_exit_registered{false};
// The CUPTI call by which the application showed it runs its own CUPTI client (torch.profiler's
// Kineto, another tool linked in), or null: from then on gpuwise leaves CUPTI to it.
std::atomic<const char*> g_app_cupti_call{nullptr};

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

uint64_t newSessionId() {
  uint64_t id = 0;
  if (getrandom(&id, sizeof id, GRND_NONBLOCK) != ssize_t(sizeof id) || id == 0)
    id = (profiler::monotonicNs() * 0x9E3779B97F4A7C15ull) ^ (uint64_t(getpid()) << 32);
  return id ? id : 1;
}

uint64_t CUPTIAPI cuptiTimestamp() {
  profiler::Clock* c = profiler::processClock();
  return c ? uint64_t(c->nowNs()) : profiler::monotonicNs();
}

// Names kernels the registry does not know, through the driver and runtime (drain thread).
std::string resolveName(const void* func, FuncKind kind) {
  using NameFn = int (*)(const char**, const void*);
  static NameFn cu_func = reinterpret_cast<NameFn>(dlsym(RTLD_DEFAULT, "cuFuncGetName"));
  static NameFn cu_kernel = reinterpret_cast<NameFn>(dlsym(RTLD_DEFAULT, "cuKernelGetName"));
  static NameFn cuda_func = reinterpret_cast<NameFn>(dlsym(RTLD_DEFAULT, "cudaFuncGetName"));
  NameFn fn = kind == FuncKind::DriverFunction ? cu_func
              : kind == FuncKind::KernelHandle ? cu_kernel
                                               : cuda_func;
  const char* name = nullptr;
  if (fn && fn(&name, func) == 0 && name) return name;
  return {};
}

// Queries the devices once, then NVML once: each device's UUID and MIG slice (drain thread). A
// machine without NVML gets one log line and devices without those facts.
void knowDevices(Session& s) {
  if (!s.devices_queried) {
    s.devices = queryDevices();
    s.devices_queried = true;
  }
  if (s.nvml_tried || s.devices.devices.empty()) return;
  s.nvml_tried = true;
  if (!s.nvml_port) return; // loaded (or not) by doStart, see there
  auto monitor = std::make_unique<profiler::NvmlMonitor>(*s.nvml_port);
  if (auto opened = monitor->open(); !opened) {
    logLine(LogLevel::Debug, "no device facts from NVML: %s", opened.error().message.c_str());
    return;
  }
  for (size_t i = 0; i < s.devices.devices.size(); ++i) {
    model::DeviceInfo& d = s.devices.devices[i];
    uint8_t uuid[16] = {};
    if (i < s.devices.uuids.size()) std::memcpy(uuid, s.devices.uuids[i].data(), sizeof uuid);
    profiler::NvmlDeviceFacts f = monitor->identify(d.index, uuid);
    if (!f.found) continue;
    d.uuid = f.uuid;
    if (!f.mig_profile.empty()) d.mig_profile = f.mig_profile;
  }
  s.nvml = std::move(monitor);
}

void sampleDevices(Session& s, int64_t now, std::vector<model::DeviceSample>& out) {
  knowDevices(s);
  if (s.nvml) s.nvml->sample(now, uint32_t(getpid()), out);
}

transport::Hello makeHello(Session& s) {
  transport::Hello h;
  h.session_id = s.id;
  h.process = readProcessInfo(*g_config);
  {
    std::lock_guard<std::mutex> lock(s.tier_mu);
    h.process.tier = s.tier;
    h.process.tier_reason = s.tier_reason;
  }
  knowDevices(s);
  h.devices = s.devices.devices;
  h.simulated = s.devices.simulated;
  h.start_time = s.start_ns;
  return h;
}

bool doStart() {
  const Config& c = *g_config;
  if (c.disabled) return false;
  if (c.endpoint.empty()) {
    logLine(LogLevel::Debug, "GPUWISE_ENDPOINT is not set: staying off");
    return false;
  }
  if (!c.problems.empty()) logLine(LogLevel::Warn, "ignoring bad settings: %s", c.problems.c_str());
  profiler::Clock& clock = profiler::initProcessClock(c.allow_counter_clock);

  if (!g_rings.load()) {
    auto* rings = new RingPool;
    if (!rings->init(c.max_threads, c.ring_events)) {
      logLine(LogLevel::Warn, "could not reserve %u rings of %u events: off", c.max_threads,
              c.ring_events);
      delete rings;
      return false;
    }
    model::keptForProcessLifetime(rings);
    g_pinned.store(model::keptForProcessLifetime(new PinnedRegistry(rings->ringCount())));
    g_rings.store(rings, std::memory_order_release);
  }

  auto* s = model::keptForProcessLifetime(new Session); // leaked, see above
  s->id = newSessionId();
  s->pid = getpid();
  s->start_ns = clock.nowNs();
  if (const char* call = g_app_cupti_call.load(std::memory_order_acquire)) {
    s->tier_reason = std::string("the application runs its own CUPTI client (it called ") + call +
                     ", as torch.profiler does): CUPTI is left to it";
  } else if (!c.cupti) {
    s->tier_reason = "GPUWISE_CUPTI=0";
  } else if (!g_deps->make_cupti_port) {
    s->tier_reason = "no CUPTI in this build";
  } else {
    s->port = g_deps->make_cupti_port();
    s->cupti = std::make_unique<profiler::CuptiCollector>(*s->port, profiler::CuptiCollector::Options{});
    auto r = s->cupti->start(&cuptiTimestamp);
    s->tier_reason = r ? *r : r.error().message;
    if (r) {
      s->tier = model::CollectionTier::Cupti;
    } else {
      s->cupti.reset();
      logLine(LogLevel::Debug, "interposer tier: %s", s->tier_reason.c_str());
    }
  }

  // Every library the shim loads is loaded here, on the application's thread that starts it, never
  // on the drain thread: a fork while another thread is inside dlopen leaves the child's loader
  // mid-update, and the child's next dlopen aborts it (glibc: "Inconsistency detected by ld.so:
  // dl-open.c: ... r_state == RT_CONSISTENT"). The application's own loads race its own forks; the
  // shim must not add a thread that does. NVML's slow nvmlInit still runs on the drain thread.
  if (g_deps->make_nvml_port) s->nvml_port = g_deps->make_nvml_port();

  // CUPTI records every launch with its API interval: the hooks need only count them.
  const bool launches_covered =
      s->cupti && s->cupti->covers(profiler::ApiClass::Launch) && !c.record_covered_launches;
  DrainDeps d;
  d.rings = g_rings.load();
  d.clock = &clock;
  d.kernels = &KernelRegistry::process();
  d.cupti = s->cupti.get();
  d.cupti_port = s->cupti ? s->port.get() : nullptr;
  d.make_sink = [s](const model::NameTable& names) {
    return g_deps->make_sink(*g_config, names, s->id, int64_t(getpid()));
  };
  d.make_hello = [s] { return makeHello(*s); };
  d.sample_devices = [s](int64_t now, std::vector<model::DeviceSample>& out) {
    sampleDevices(*s, now, out);
  };
  d.on_cupti_released = [s](int64_t now) {
    const char* call = g_app_cupti_call.load(std::memory_order_acquire);
    char when[32];
    std::snprintf(when, sizeof when, "%.2f", double(now - s->start_ns) / 1e9);
    std::lock_guard<std::mutex> lock(s->tier_mu);
    s->tier = model::CollectionTier::Interposer;
    s->tier_reason = std::string("handed to the application's own CUPTI client ") + when +
                     " s into the session (it called " + (call ? call : "CUPTI") +
                     ", as torch.profiler does); CUPTI's records until then, the hooks' since";
    logLine(LogLevel::Debug, "interposer tier from now: %s", s->tier_reason.c_str());
  };
  d.resolver = resolveName;
  d.unringed_drops = &g_unringed_drops;
  d.count_launches = &g_count_launches;
  d.launches_covered = launches_covered;
  DrainOptions o = g_deps->drain;
  o.batch_ms = c.batch_ms;
  o.linger_ms = int(c.linger_ms);
  o.overhead_budget = c.overhead_budget;
  s->drain = std::make_unique<Drain>(std::move(d), o);
  if (auto started = s->drain->start(); !started) {
    logLine(LogLevel::Warn, "off: %s", started.error().message.c_str());
    if (s->cupti) s->cupti->stop();
    return false;
  }
  // From the first launch on, launches CUPTI records are only counted by the hooks (the drain
  // thread keeps this up to date from here).
  g_count_launches.store(launches_covered, std::memory_order_relaxed);
  logLine(LogLevel::Debug, "recording to %s, %s tier (%s)", c.endpoint.c_str(),
          s->tier == model::CollectionTier::Cupti ? "cupti" : "interposer", s->tier_reason.c_str());
  g_session.store(s, std::memory_order_release);
  // An application thread that asked for CUPTI while this one was starting found no session yet.
  if (const char* call = g_app_cupti_call.load(std::memory_order_acquire); call && s->cupti)
    yieldCuptiToApplication(call);
  return true;
}

void atExit() { shutdownShim(); }

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
    ok = doStart();
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
  logLine(LogLevel::Debug,
          "session %016llx: %llu events recorded, %llu records sent in %llu batches, %llu dropped%s",
          (unsigned long long)s->id, (unsigned long long)st.events_drained,
          (unsigned long long)st.records_sent, (unsigned long long)st.batches_sent,
          (unsigned long long)st.dropped_total, st.final_sent ? "" : " (no final batch delivered)");
}

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
  g_count_launches.store(0, std::memory_order_relaxed); // the child records until its own CUPTI says
  uint8_t m = g_mode.load(std::memory_order_relaxed);
  if (m == kModeRecording || m == kModeStarting) g_mode.store(kModeUnstarted, std::memory_order_relaxed);
  if (RingPool* rings = g_rings.load()) rings->resetAfterFork();
  if (profiler::Clock* c = profiler::processClock()) c->repairAfterFork();
  t_state.ring = nullptr;
  t_state.tid = 0;
  t_state.in_hook = 0;
  t_state.claim_backoff = 0;
  t_releaser.slot = nullptr;
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

PinnedRegistry* pinnedRegistry() { return g_pinned.load(std::memory_order_acquire); }

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
  t_state.ring = nullptr;
  t_state.exited = 0;
  t_releaser.slot = nullptr;
  if (g_config) g_mode.store(g_config->disabled ? kModeOff : kModeUnstarted);
  return ok;
}

} // namespace gpuwise::interposer
