// Building a session (detail::startSession), step by step: rings, tier, libraries, drain thread;
// and what the drain thread asks of the session afterwards (the hello, device facts and samples,
// kernel names, the CUPTI handover's new tier).
#include "interposer/kernel_registry.h"
#include "interposer/log.h"
#include "interposer/recorder.h"
#include "interposer/runtime_state.h"
#include "profiler/clock/clock.h"
#include "profiler/model/process_lifetime.h"

#include <cstdio>
#include <cstring>

#include <dlfcn.h>
#include <sys/random.h>
#include <unistd.h>

namespace gpuwise::interposer::detail {
namespace {

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
  if (!s.nvml_port) return; // loaded (or not) by startSession, see there
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
    if (f.index != UINT32_MAX) d.nvml_index = int32_t(f.index);
    if (f.mig && f.gpu_instance != UINT32_MAX) d.gpu_instance = int32_t(f.gpu_instance);
  }
  s.nvml = std::move(monitor);
}

void sampleDevices(Session& s, int64_t now, std::vector<model::DeviceSample>& out,
                   std::vector<model::PowerSample>& power) {
  knowDevices(s);
  if (s.nvml) s.nvml->sample(now, uint32_t(getpid()), out, power);
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

// The drain thread handed CUPTI to the application `now`: the session goes on at the interposer
// tier, and says since when.
void noteCuptiHandedOver(Session& s, int64_t now) {
  const char* call = g_app_cupti_call.load(std::memory_order_acquire);
  char when[32];
  std::snprintf(when, sizeof when, "%.2f", double(now - s.start_ns) / 1e9);
  std::lock_guard<std::mutex> lock(s.tier_mu);
  s.tier = model::CollectionTier::Interposer;
  s.tier_reason = std::string("handed to the application's own CUPTI client ") + when +
                  " s into the session (it called " + (call ? call : "CUPTI") +
                  ", as torch.profiler does); CUPTI's records until then, the hooks' since";
  logLine(LogLevel::Debug, "interposer tier from now: %s", s.tier_reason.c_str());
}

// Whether the configuration asks for a session at all.
bool wantsSession(const Config& c) {
  if (c.disabled) return false;
  if (c.endpoint.empty()) {
    logLine(LogLevel::Debug, "GPUWISE_ENDPOINT is not set: staying off");
    return false;
  }
  if (!c.problems.empty()) logLine(LogLevel::Warn, "ignoring bad settings: %s", c.problems.c_str());
  return true;
}

// The rings and the pinned-range registry, once per process (a fork child or a test's next session
// keeps them). False: not enough memory for them, and the shim stays off.
bool reserveRings(const Config& c) {
  if (g_rings.load()) return true;
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
  return true;
}

// The CUPTI tier when CUPTI is ours to take and starts; otherwise the interposer tier, with the
// reason.
void chooseTier(Session& s, const Config& c) {
  if (const char* call = g_app_cupti_call.load(std::memory_order_acquire)) {
    s.tier_reason = std::string("the application runs its own CUPTI client (it called ") + call +
                    ", as torch.profiler does): CUPTI is left to it";
  } else if (!c.cupti) {
    s.tier_reason = "GPUWISE_CUPTI=0";
  } else if (!g_deps->make_cupti_port) {
    s.tier_reason = "no CUPTI in this build";
  } else {
    s.port = g_deps->make_cupti_port();
    s.cupti =
        std::make_unique<profiler::CuptiCollector>(*s.port, profiler::CuptiCollector::Options{});
    auto r = s.cupti->start(&cuptiTimestamp);
    s.tier_reason = r ? *r : r.error().message;
    if (r) {
      s.tier = model::CollectionTier::Cupti;
    } else {
      s.cupti.reset();
      logLine(LogLevel::Debug, "interposer tier: %s", s.tier_reason.c_str());
    }
  }
}

// What the drain thread reads and calls back into; the session outlives it (never destroyed).
DrainDeps drainDepsFor(Session* s, profiler::Clock& clock, bool launches_covered) {
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
  d.sample_devices = [s](int64_t now, std::vector<model::DeviceSample>& out,
                         std::vector<model::PowerSample>& power) {
    sampleDevices(*s, now, out, power);
  };
  d.on_cupti_released = [s](int64_t now) { noteCuptiHandedOver(*s, now); };
  d.resolver = resolveName;
  d.unringed_drops = &g_unringed_drops;
  d.count_launches = &g_count_launches;
  d.launches_covered = launches_covered;
  return d;
}

DrainOptions drainOptionsFor(const Config& c) {
  DrainOptions o = g_deps->drain;
  o.batch_ms = c.batch_ms;
  o.linger_ms = int(c.linger_ms);
  o.overhead_budget = c.overhead_budget;
  return o;
}

} // namespace

bool startSession() {
  const Config& c = *g_config;
  if (!wantsSession(c)) return false;
  profiler::Clock& clock = profiler::initProcessClock(c.allow_counter_clock);
  if (!reserveRings(c)) return false;

  auto* s = model::keptForProcessLifetime(new Session); // leaked, see runtime_state.h
  s->id = newSessionId();
  s->pid = getpid();
  s->start_ns = clock.nowNs();
  chooseTier(*s, c);

  // Every library the shim loads is loaded here, on the application's thread that starts it, never
  // on the drain thread: a fork while another thread is inside dlopen leaves the child's loader
  // mid-update, and the child's next dlopen aborts it (glibc: "Inconsistency detected by ld.so:
  // dl-open.c: ... r_state == RT_CONSISTENT"). The application's own loads race its own forks; the
  // shim must not add a thread that does. NVML's slow nvmlInit still runs on the drain thread.
  if (g_deps->make_nvml_port) s->nvml_port = g_deps->make_nvml_port();

  // CUPTI records every launch with its API interval: the hooks need only count them.
  const bool launches_covered =
      s->cupti && s->cupti->covers(profiler::ApiClass::Launch) && !c.record_covered_launches;
  s->drain = std::make_unique<Drain>(drainDepsFor(s, clock, launches_covered), drainOptionsFor(c));
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

} // namespace gpuwise::interposer::detail
