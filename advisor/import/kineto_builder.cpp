#include "advisor/import/kineto_builder.h"

#include "advisor/import/kineto_collective.h"

#include "advisor/import/kineto_text.h"

#include "profiler/model/record_limits.h"

#include <algorithm>
#include <limits>

namespace gpuwise::advisor {
namespace {

using model::CopyDirection;
using model::MemoryKind;
using model::RangeKind;
using model::SyncKind;
using C = KinetoCategory;

constexpr size_t kMaxHostPids = 64;

model::RangeKind rangeKindFromName(std::string_view kind) {
  if (kind == "step") return RangeKind::Step;
  if (kind == "data_loader") return RangeKind::DataLoader;
  if (kind == "annotation") return RangeKind::Annotation;
  if (kind == "gpu_annotation") return RangeKind::GpuAnnotation;
  if (kind == "operator") return RangeKind::Operator;
  return RangeKind::Unknown;
}

uint32_t toU32(int64_t v) {
  return v < 0 ? 0 : uint32_t(std::min<int64_t>(v, UINT32_MAX));
}
// OS thread ids fit 32 bits; a pthread id that does not keeps its low bits (still distinct).
uint32_t threadOf(const KinetoEvent& e) {
  return e.tid_numeric ? uint32_t(uint64_t(e.tid)) : 0;
}
// A negative duration (clock skew in some writers) is an instant, never an interval backwards. An
// end past the int64 range saturates (and is then dropped as absurd, record_limits.h).
model::TimeNs endOf(const KinetoEvent& e) {
  model::TimeNs end = e.ts;
  if (e.has_dur && e.dur > 0 && __builtin_add_overflow(e.ts, e.dur, &end))
    end = std::numeric_limits<model::TimeNs>::max();
  return end;
}

} // namespace

KinetoProcessBuilder::KinetoProcessBuilder(const KinetoImportOptions& options) : options_(options) {
  options_.progress = nullptr; // the builder never reports progress; do not copy a heavy functor
}

bool KinetoProcessBuilder::wantsArgs(const KinetoEvent& e) const {
  switch (e.cat) {
  case C::Kernel:
  case C::Memcpy:
  case C::Memset:
  case C::Runtime:
  case C::Driver:
  case C::CudaSync:
  case C::UserAnnotation:
  case C::GpuAnnotation:
  case C::MtiaDevice:
  case C::MtiaRuntime: return true;
  case C::CpuOp: return e.name == "record_param_comms";
  case C::None:
  case C::CpuInstant:
    if (e.ph == 'i' || e.ph == 'I') return e.name == "[memory]";
    if (e.ph == 'M') return e.name == "process_name" || e.name == "process_labels";
    return false;
  default: return false;
  }
}

void KinetoProcessBuilder::countHostPid(const KinetoEvent& e) {
  if (!e.pid_numeric) return;
  for (auto& [pid, n] : host_pids_)
    if (pid == e.pid) {
      ++n;
      return;
    }
  if (host_pids_.size() < kMaxHostPids) host_pids_.emplace_back(e.pid, 1);
}

void KinetoProcessBuilder::widenWallSpan(const KinetoEvent& e) {
  // The trace's span is that of its plausible times: one absurd event must not stretch it.
  const model::TimeNs end = endOf(e);
  if (e.has_ts && e.ph != 'M' && e.ph != 's' && e.ph != 'f' && e.ph != 't' &&
      model::plausibleTime(e.ts) && model::plausibleTime(end)) {
    if (!wall_set_) {
      wall_min_ = e.ts;
      wall_max_ = end;
      wall_set_ = true;
    } else {
      wall_min_ = std::min(wall_min_, e.ts);
      wall_max_ = std::max(wall_max_, end);
    }
  }
}

// A complete event on an MTIA device row: a wait, a DMA copy or a kernel.
void KinetoProcessBuilder::addMtiaDeviceEvent(const KinetoEvent& e, const KinetoArgs* a,
                                              uint32_t device, uint32_t stream) {
  if (e.name == "event_record") return; // zero-length markers, not work
  if (e.name == "event_wait") {
    addPendingSync(e, {.start = e.ts,
                       .end = endOf(e),
                       .correlation = a ? a->correlation : 0,
                       .device = device,
                       .stream = stream,
                       .kind = SyncKind::StreamWaitEvent});
  } else if (e.name == "dma_request") {
    addCopy(e, a, device, stream);
  } else {
    addKernel(e, a, device, stream);
  }
}

inline void KinetoProcessBuilder::addPendingSync(const KinetoEvent& e,
                                                 const model::HostSync& sync) {
  PendingSync p;
  p.sync = sync;
  p.pid = e.pid;
  p.tid = e.tid;
  pending_syncs_.push_back(p);
}

inline void KinetoProcessBuilder::addApiCall(const KinetoEvent& e, const KinetoArgs* a) {
  trace_.api_calls.push_back({.start = e.ts,
                              .end = endOf(e),
                              .correlation = a ? a->correlation : 0,
                              .name = trace_.names.intern(e.name),
                              .thread = threadOf(e)});
}

// The sync kind comes from the args when the writer put it there, else from the event name.
inline void KinetoProcessBuilder::addCudaSync(const KinetoEvent& e, const KinetoArgs* a,
                                              uint32_t device, uint32_t stream) {
  const std::string_view kindName = a && !a->sync_kind.empty() ? a->sync_kind : e.name;
  addPendingSync(e, {.start = e.ts,
                     .end = endOf(e),
                     .correlation = a ? a->correlation : 0,
                     .device = device,
                     .stream = stream,
                     .kind = syncKindForCudaSync(kindName)});
}

// Our exporter's own kind wins; otherwise the name says whether it is a step or a data-loader wait.
inline void KinetoProcessBuilder::addUserAnnotation(const KinetoEvent& e, const KinetoArgs* a) {
  if (a && !a->gw_kind.empty()) {
    addRange(e, a, rangeKindFromName(a->gw_kind), a->gw_step);
  } else if (const int64_t step = profilerStepNumber(e.name); step >= 0) {
    addRange(e, a, RangeKind::Step, step);
  } else if (isDataLoaderRange(e.name)) {
    addRange(e, a, RangeKind::DataLoader, -1);
  } else {
    addRange(e, a, RangeKind::Annotation, -1);
  }
}

// 2021-era traces record steps and data-loader waits as operators. A collective's operator is
// also kept as an operator when they are asked for (every cpu_op then has a range).
inline void KinetoProcessBuilder::addCpuOp(const KinetoEvent& e, const KinetoArgs* a) {
  if (a && a->external_id >= 0)
    if (auto c = collectiveFromArgs(e, *a)) {
      pending_collectives_.emplace(a->external_id, *c);
      if (options_.include_operators) addRange(e, a, RangeKind::Operator, -1);
      return;
    }
  if (const int64_t step = profilerStepNumber(e.name); step >= 0)
    addRange(e, a, RangeKind::Step, step);
  else if (isDataLoaderRange(e.name))
    addRange(e, a, RangeKind::DataLoader, -1);
  else if (options_.include_operators)
    addRange(e, a, RangeKind::Operator, -1);
}

void KinetoProcessBuilder::onEvent(const KinetoEvent& e, const KinetoArgs* a) {
  widenWallSpan(e);
  const bool complete = e.ph == 'X' && e.has_ts;
  const uint32_t pidDevice = e.pid_numeric ? toU32(e.pid) : 0;
  const uint32_t tidStream = e.tid_numeric ? threadOf(e) : 0;
  auto device = [&] { return a && a->device >= 0 ? toU32(a->device) : pidDevice; };
  auto stream = [&] { return a && a->stream >= 0 ? toU32(a->stream) : tidStream; };

  switch (e.cat) {
  case C::Kernel:
  case C::Memcpy:
  case C::Memset:
    if (!complete) {
      ++trace_.events_dropped; // GPU work without a time cannot be placed; counted, not hidden
      return;
    }
    if (e.cat == C::Kernel)
      addKernel(e, a, device(), stream());
    else if (e.cat == C::Memcpy)
      addCopy(e, a, device(), stream());
    else
      addMemset(e, a, device(), stream());
    return;
  case C::MtiaDevice:
    saw_mtia_ = true;
    if (complete) addMtiaDeviceEvent(e, a, pidDevice, stream());
    return;
  case C::MtiaRuntime: saw_mtia_ = true; [[fallthrough]];
  case C::Runtime:
  case C::Driver:
    countHostPid(e);
    if (complete) addApiCall(e, a);
    return;
  case C::CudaSync:
    if (complete) addCudaSync(e, a, device(), stream());
    return;
  case C::UserAnnotation:
    countHostPid(e);
    if (complete) addUserAnnotation(e, a);
    return;
  case C::GpuAnnotation:
    if (complete) {
      model::Range r{.start = e.ts,
                     .end = endOf(e),
                     .name = trace_.names.intern(e.name),
                     .device = device(),
                     .stream = tidStream,
                     .kind = RangeKind::GpuAnnotation};
      trace_.ranges.push_back(r);
    }
    return;
  case C::CpuOp:
    countHostPid(e);
    if (complete) addCpuOp(e, a);
    return;
  case C::Python:
    countHostPid(e);
    if (complete && isPythonDataLoaderNext(e.name)) {
      python_dataloader_.push_back({.start = e.ts,
                                    .end = endOf(e),
                                    .name = trace_.names.intern(e.name),
                                    .thread = threadOf(e),
                                    .kind = RangeKind::DataLoader});
    }
    return;
  case C::None:
  case C::CpuInstant:
    if (!a) return;
    if ((e.ph == 'i' || e.ph == 'I') && e.has_ts)
      addMemory(e, *a);
    else if (e.ph == 'M')
      addMetadata(e, *a);
    return;
  case C::Other: return;
  }
}

void KinetoProcessBuilder::addKernel(const KinetoEvent& e, const KinetoArgs* a, uint32_t device,
                                     uint32_t stream) {
  model::KernelExec k;
  k.start = e.ts;
  k.end = endOf(e);
  k.name = trace_.names.intern(e.name);
  k.device = device;
  k.stream = stream;
  if (isCommunicationKernel(e.name)) k.flags |= model::kKernelCommunication;
  if (a) {
    k.correlation = a->correlation;
    if (a->has_grid) k.grid = a->grid;
    if (a->has_block) k.block = a->block;
    if (a->registers >= 0) k.registers_per_thread = toU32(a->registers);
    if (a->static_shared >= 0 || a->dynamic_shared >= 0) {
      k.static_shared_bytes = toU32(a->static_shared);
      k.dynamic_shared_bytes = toU32(a->dynamic_shared);
    } else if (a->shared_memory >= 0) {
      k.static_shared_bytes = toU32(a->shared_memory); // Kineto reports only the sum
    }
    if (a->occupancy_pct >= 0) k.achieved_occupancy = float(a->occupancy_pct / 100.0);
    if (a->graph_id > 0) {
      k.graph_id = toU32(a->graph_id);
      k.flags |= model::kKernelFromGraph;
    }
    if (a->cooperative) k.flags |= model::kKernelCooperative;
    if (a->collective) k.flags |= model::kKernelCommunication;
    if (auto c = collectiveFromArgs(e, *a); c && k.correlation != 0) {
      c->correlation = k.correlation; // newer PyTorch: the kernel describes its collective
      c->device = k.device;
      c->stream = k.stream;
      trace_.collectives.push_back(*c);
    } else if ((k.flags & model::kKernelCommunication) && a->external_id >= 0 && k.correlation) {
      collective_kernels_by_external_.emplace(a->external_id, k.correlation);
    }
  }
  trace_.kernels.push_back(k);
}

void KinetoProcessBuilder::addCopy(const KinetoEvent& e, const KinetoArgs* a, uint32_t device,
                                   uint32_t stream) {
  model::Copy c;
  c.start = e.ts;
  c.end = endOf(e);
  c.device = device;
  c.stream = stream;
  if (e.cat == C::MtiaDevice) {
    const std::string_view dir = a ? a->direction : std::string_view();
    if (dir == "HOST_TO_DEVICE")
      c.direction = CopyDirection::HostToDevice;
    else if (dir == "DEVICE_TO_HOST")
      c.direction = CopyDirection::DeviceToHost;
    else if (dir == "DEVICE_TO_DEVICE")
      c.direction = CopyDirection::DeviceToDevice;
  } else {
    const MemcpyNameInfo info = parseMemcpyName(e.name);
    c.direction = info.direction;
    c.src = info.src;
    c.dst = info.dst;
  }
  if (a) {
    c.correlation = a->correlation;
    if (a->bytes >= 0) c.bytes = uint64_t(a->bytes);
  }
  trace_.copies.push_back(c);
}

void KinetoProcessBuilder::addMemset(const KinetoEvent& e, const KinetoArgs* a, uint32_t device,
                                     uint32_t stream) {
  model::Memset m;
  m.start = e.ts;
  m.end = endOf(e);
  m.device = device;
  m.stream = stream;
  m.dst = parseMemsetName(e.name);
  if (a) {
    m.correlation = a->correlation;
    if (a->bytes >= 0) m.bytes = uint64_t(a->bytes);
  }
  trace_.memsets.push_back(m);
}

void KinetoProcessBuilder::addRange(const KinetoEvent& e, const KinetoArgs* a, RangeKind kind,
                                    int64_t step) {
  if (kind == RangeKind::DataLoader) saw_dataloader_ = true;
  model::Range r{.start = e.ts,
                 .end = endOf(e),
                 .name = trace_.names.intern(e.name),
                 .thread = threadOf(e),
                 .kind = kind,
                 .step = step};
  if (kind == RangeKind::GpuAnnotation) {
    r.device = a && a->device >= 0 ? toU32(a->device) : (e.pid_numeric ? toU32(e.pid) : 0);
    r.stream = e.tid_numeric ? threadOf(e) : 0;
    r.thread = 0;
  }
  trace_.ranges.push_back(r);
}

void KinetoProcessBuilder::addMemory(const KinetoEvent& e, const KinetoArgs& a) {
  // Device Type 0 is host memory (the CPU allocator); every other type is an accelerator.
  if (a.device_type <= 0) return;
  const uint32_t device = a.device_id >= 0 ? toU32(a.device_id) : 0;
  if (a.total_allocated >= 0 || a.total_reserved >= 0)
    trace_.memory_samples.push_back({.time = e.ts,
                                     .device = device,
                                     .allocated_bytes = a.total_allocated,
                                     .reserved_bytes = a.total_reserved});
  if (a.has_mem_bytes && a.mem_bytes != 0) {
    trace_.allocations.push_back({.time = e.ts,
                                  .address = a.has_addr ? a.addr : 0,
                                  .bytes = uint64_t(a.mem_bytes < 0 ? -a.mem_bytes : a.mem_bytes),
                                  .device = device,
                                  .kind = a.gw_kind == "pinned"    ? MemoryKind::Pinned
                                          : a.gw_kind == "managed" ? MemoryKind::Managed
                                                                   : MemoryKind::Device,
                                  .is_free = a.mem_bytes < 0});
  }
}

void KinetoProcessBuilder::addMetadata(const KinetoEvent& e, const KinetoArgs& a) {
  if (!e.pid_numeric) return;
  if (e.name == "process_name" && !a.meta_name.empty())
    process_names_[e.pid] = std::string(a.meta_name);
  else if (e.name == "process_labels" && !a.labels.empty())
    process_labels_[e.pid] = std::string(a.labels);
}

} // namespace gpuwise::advisor
