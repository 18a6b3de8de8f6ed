// Kernel launches, copies, memsets and memory on the simulated device's timeline.
#include <algorithm>
#include <cstring>

#include "tests/simdevice/core/graph_state.h"
#include "tests/simdevice/core/kernel_registry.h"
#include "tests/simdevice/core/simulator.h"

namespace gpuwise::sim {
namespace {

constexpr TimeNs kCopySubmitNs = 1'000; // host call -> the copy engine can start

CUpti_ActivityMemoryKind cuptiKind(MemKind kind) {
  switch (kind) {
  case MemKind::Pageable: return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  case MemKind::Pinned: return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  case MemKind::Device: return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  case MemKind::Managed: return CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  }
  return CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
}

bool deviceSide(MemKind kind) {
  return kind == MemKind::Device || kind == MemKind::Managed;
}

uint64_t accountedBytes(size_t bytes) {
  // The driver hands out device memory in 2 MiB pages for large allocations, 512 B otherwise.
  const uint64_t granule = bytes >= (1u << 20) ? (2u << 20) : 512;
  return (bytes + granule - 1) / granule * granule;
}

} // namespace

cudaError_t Simulator::launch(const LaunchRequest& request, const CallInfo& call) {
  KernelInfo info;
  if (!KernelRegistry::instance().find(request.func, &info)) return cudaErrorInvalidDeviceFunction;
  settle(request.stream, request.per_thread);
  KernelShape shape{request.grid,       request.block,  request.dynamic_shared,
                    info.static_shared, info.registers, info.work};
  std::lock_guard lock(mutex_);
  StreamState* s = resolveStreamLocked(request.stream, request.per_thread);
  if (s == nullptr) return cudaErrorInvalidResourceHandle;
  DeviceState& device = *devices_[s->device];
  const uint64_t seq = ++op_seq_;
  const KernelCost cost = cost_.kernel(*device.model, shape, seq);
  if (cost.error != cudaSuccess) return cost.error;
  if (s->capture != nullptr) {
    GraphNode node;
    node.type = GraphNode::Type::Kernel;
    node.id = next_graph_node_id_++;
    node.kernel = info;
    node.shape = shape;
    node.cooperative = request.cooperative;
    s->capture->nodes.push_back(node);
    return cudaSuccess;
  }
  TimeNs start = std::max(call.start + config_.launch_latency_ns, readyLocked(*s));
  const bool serial = !activity_.enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) &&
                      activity_.enabled(CUPTI_ACTIVITY_KIND_KERNEL);
  if (serial) start = std::max(start, device.kernel_serial_tail);
  const TimeNs end = start + cost.duration_ns;
  s->tail = end;
  device.kernel_serial_tail = std::max(device.kernel_serial_tail, end);

  KernelRecordArgs record;
  record.kernel = &info;
  record.shape = shape;
  record.where = placementLocked(*s);
  record.queued = call.start + 300;
  record.submitted = std::min(start, call.start + config_.launch_latency_ns / 2);
  record.start = start;
  record.end = end;
  record.correlation = call.correlation;
  record.grid_id = static_cast<int64_t>(seq);
  record.cooperative = request.cooperative;
  emitKernelRecord(activity_, record);
  return cudaSuccess;
}

Simulator::ResolvedCopy Simulator::resolveCopyLocked(const CopyRequest& r) const {
  ResolvedCopy out;
  out.async = r.async; // CUPTI flags the copies issued by *Async calls
  out.bytes = uint64_t{r.width} * r.height;
  const size_t src_span = r.height > 1 && r.src_pitch != 0 ? (r.height - 1) * r.src_pitch + r.width
                                                           : r.width * r.height;
  const size_t dst_span = r.height > 1 && r.dst_pitch != 0 ? (r.height - 1) * r.dst_pitch + r.width
                                                           : r.width * r.height;
  auto classify = [&](const void* p, size_t span, bool* in_range) {
    const Region* region = memory_.find(p);
    if (region == nullptr) {
      *in_range = true;
      return MemKind::Pageable;
    }
    *in_range = reinterpret_cast<uintptr_t>(p) + span <= region->base + region->size;
    return region->kind;
  };
  bool src_ok = true, dst_ok = true;
  const MemKind src = classify(r.src, src_span, &src_ok);
  const MemKind dst = classify(r.dst, dst_span, &dst_ok);
  cudaMemcpyKind actual = cudaMemcpyHostToHost;
  if (deviceSide(src) && deviceSide(dst)) {
    actual = cudaMemcpyDeviceToDevice;
  } else if (deviceSide(dst)) {
    actual = cudaMemcpyHostToDevice;
  } else if (deviceSide(src)) {
    actual = cudaMemcpyDeviceToHost;
  }
  if ((r.kind != cudaMemcpyDefault && r.kind != actual) || !src_ok || !dst_ok ||
      static_cast<int>(r.kind) < 0 || static_cast<int>(r.kind) > cudaMemcpyDefault) {
    out.error = cudaErrorInvalidValue;
    return out;
  }
  out.src_kind = cuptiKind(src);
  out.dst_kind = cuptiKind(dst);
  switch (actual) {
  case cudaMemcpyHostToDevice:
    out.kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    out.path = src == MemKind::Pinned ? CopyPath::Pinned : CopyPath::Pageable;
    break;
  case cudaMemcpyDeviceToHost:
    out.kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    out.path = dst == MemKind::Pinned ? CopyPath::Pinned : CopyPath::Pageable;
    break;
  case cudaMemcpyDeviceToDevice:
    out.kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    out.path = CopyPath::DeviceToDevice;
    break;
  default:
    out.kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
    out.path = CopyPath::HostToHost;
    break;
  }
  // Pageable memory is staged through a driver bounce buffer: even an *Async copy holds the
  // host until it is done. A synchronous copy waits too, except device-to-device.
  out.staged = out.path == CopyPath::Pageable || out.path == CopyPath::HostToHost;
  out.blocks_host = out.staged || (!r.async && out.path != CopyPath::DeviceToDevice);
  return out;
}

TimeNs Simulator::placeCopyLocked(StreamState& s, const ResolvedCopy& copy, TimeNs earliest,
                                  uint32_t correlation, uint32_t graph_id, uint64_t node_id,
                                  TimeNs min_end) {
  DeviceState& device = *devices_[s.device];
  TimeNs start = std::max(earliest, readyLocked(s));
  // One copy engine per direction: same-direction copies on different streams queue up.
  TimeNs* engine = copy.kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD   ? &device.h2d_engine_tail
                   : copy.kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? &device.d2h_engine_tail
                                                                  : nullptr;
  if (engine != nullptr) start = std::max(start, *engine);
  const TimeNs end =
      std::max(start + cost_.copyNs(*device.model, copy.path, copy.bytes, ++op_seq_), min_end);
  s.tail = end;
  if (engine != nullptr) *engine = end;
  CopyRecordArgs record;
  record.copy_kind = copy.kind;
  record.src_kind = copy.src_kind;
  record.dst_kind = copy.dst_kind;
  record.async = copy.async;
  record.bytes = copy.bytes;
  record.where = placementLocked(s);
  record.start = start;
  record.end = end;
  record.correlation = correlation;
  record.graph_id = graph_id;
  record.graph_node_id = node_id;
  emitMemcpyRecord(activity_, record);
  return end;
}

void Simulator::copyBytes(const CopyRequest& r) {
  if (r.height <= 1 || (r.dst_pitch == 0 && r.src_pitch == 0)) {
    std::memmove(r.dst, r.src, r.width * r.height);
    return;
  }
  const size_t dst_pitch = r.dst_pitch != 0 ? r.dst_pitch : r.width;
  const size_t src_pitch = r.src_pitch != 0 ? r.src_pitch : r.width;
  for (size_t row = 0; row < r.height; ++row) {
    std::memmove(static_cast<char*>(r.dst) + row * dst_pitch,
                 static_cast<const char*>(r.src) + row * src_pitch, r.width);
  }
}

cudaError_t Simulator::copy(const CopyRequest& r, const CallInfo& call) {
  if (r.width == 0 || r.height == 0) return cudaSuccess;
  if (r.dst == nullptr || r.src == nullptr) return cudaErrorInvalidValue;
  if ((r.dst_pitch != 0 && r.dst_pitch < r.width) || (r.src_pitch != 0 && r.src_pitch < r.width)) {
    return cudaErrorInvalidPitchValue;
  }
  TimeNs end = 0;
  ResolvedCopy copy;
  StreamState* s = nullptr;
  settle(r.async ? r.stream : nullptr, r.per_thread);
  {
    std::lock_guard lock(mutex_);
    copy = resolveCopyLocked(r);
    if (copy.error != cudaSuccess) return copy.error;
    s = resolveStreamLocked(r.async ? r.stream : nullptr, r.per_thread);
    if (s == nullptr) return cudaErrorInvalidResourceHandle;
    if (s->capture != nullptr) {
      if (!r.async) {
        s->capture_invalidated = true;
        return cudaErrorStreamCaptureImplicit;
      }
      GraphNode node;
      node.type = GraphNode::Type::Copy;
      node.id = next_graph_node_id_++;
      node.copy = r;
      s->capture->nodes.push_back(node);
      return cudaSuccess;
    }
    if (!copy.staged)
      end = placeCopyLocked(*s, copy, call.start + kCopySubmitNs, call.correlation, 0, 0);
  }
  copyBytes(r);
  if (copy.staged) {
    // The driver stages pageable memory through a pinned buffer on the calling thread: the copy
    // cannot end before this host really moved the bytes (on a slow host, later than the model).
    const TimeNs staged_at = nowNs();
    std::lock_guard lock(mutex_); // StreamState objects are never freed: s is still valid
    end = placeCopyLocked(*s, copy, call.start + kCopySubmitNs, call.correlation, 0, 0, staged_at);
  }
  if (copy.blocks_host) waitUntil(end);
  return cudaSuccess;
}

cudaError_t Simulator::memset(void* p, int value, size_t bytes, cudaStream_t stream, bool async,
                              bool per_thread, const CallInfo& call) {
  if (bytes == 0) return cudaSuccess;
  settle(async ? stream : nullptr, per_thread);
  {
    std::lock_guard lock(mutex_);
    const Region* region = memory_.find(p);
    if (region == nullptr || !deviceSide(region->kind) ||
        reinterpret_cast<uintptr_t>(p) + bytes > region->base + region->size) {
      return cudaErrorInvalidValue;
    }
    const bool managed = region->kind == MemKind::Managed;
    StreamState* s = resolveStreamLocked(async ? stream : nullptr, per_thread);
    if (s == nullptr) return cudaErrorInvalidResourceHandle;
    if (s->capture != nullptr) {
      GraphNode node;
      node.type = GraphNode::Type::Memset;
      node.id = next_graph_node_id_++;
      node.memset_ptr = p;
      node.memset_value = value;
      node.memset_bytes = bytes;
      node.memset_managed = managed;
      s->capture->nodes.push_back(node);
      return cudaSuccess;
    }
    DeviceState& device = *devices_[s->device];
    const TimeNs start = std::max(call.start + kCopySubmitNs, readyLocked(*s));
    const TimeNs end = start + cost_.memsetNs(*device.model, bytes, ++op_seq_);
    s->tail = end;
    MemsetRecordArgs record;
    record.value = static_cast<uint32_t>(value);
    record.bytes = bytes;
    record.memory_kind =
        managed ? CUPTI_ACTIVITY_MEMORY_KIND_MANAGED : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    record.async = async;
    record.where = placementLocked(*s);
    record.start = start;
    record.end = end;
    record.correlation = call.correlation;
    emitMemsetRecord(activity_, record);
  }
  std::memset(p, value, bytes);
  return cudaSuccess;
}

cudaError_t Simulator::allocate(void** out, size_t bytes, MemKind kind, const CallInfo& call,
                                cudaStream_t async_stream, bool async) {
  if (out == nullptr) return cudaErrorInvalidValue;
  if (bytes == 0) {
    *out = nullptr;
    return cudaSuccess;
  }
  std::lock_guard lock(mutex_);
  const int device_index = currentDevice();
  DeviceState& device = *devices_[device_index];
  Placement where{static_cast<uint32_t>(device_index), device.context_id, 0};
  if (async) {
    StreamState* s = resolveStreamLocked(async_stream, false);
    if (s == nullptr) return cudaErrorInvalidResourceHandle;
    where.stream = s->id;
  }
  const uint64_t accounted = kind == MemKind::Device ? accountedBytes(bytes) : 0;
  const uint64_t usable = device.model->total_memory_bytes - config_.context_reserve_bytes;
  if (accounted > usable || device.memory_used + accounted > usable) {
    return cudaErrorMemoryAllocation;
  }
  size_t mapped = 0;
  void* p = mapBacking(bytes, &mapped);
  if (p == nullptr) return cudaErrorMemoryAllocation;
  Region region;
  region.base = reinterpret_cast<uintptr_t>(p);
  region.size = bytes;
  region.mapped = mapped;
  region.accounted = accounted;
  region.kind = kind;
  region.device = device_index;
  region.async = async;
  memory_.add(region);
  device.memory_used += accounted;
  device.memory_peak = std::max(device.memory_peak, device.memory_used);
  MemoryRecordArgs record;
  record.memory_kind = cuptiKind(kind);
  record.address = region.base;
  record.bytes = bytes;
  record.where = where;
  record.time = nowNs();
  record.correlation = call.correlation;
  record.async = async;
  emitMemoryRecord(activity_, record);
  *out = p;
  return cudaSuccess;
}

cudaError_t Simulator::release(void* p, MemKind kind, const CallInfo& call, bool async) {
  if (p == nullptr) return cudaSuccess;
  TimeNs until = 0;
  if (!async && kind != MemKind::Pinned) settleDevice(currentDevice());
  {
    std::lock_guard lock(mutex_);
    const Region* region = memory_.find(p);
    if (region == nullptr || region->base != reinterpret_cast<uintptr_t>(p) || region->registered ||
        (kind == MemKind::Pinned) != (region->kind == MemKind::Pinned)) {
      return cudaErrorInvalidValue;
    }
    // cudaFree waits for the device to finish its work, like the real runtime.
    if (!async && kind != MemKind::Pinned) until = deviceDoneLocked(region->device);
  }
  waitUntil(until);
  std::lock_guard lock(mutex_);
  std::optional<Region> region = memory_.remove(p);
  if (!region) return cudaErrorInvalidValue; // freed by another thread meanwhile
  DeviceState& device = *devices_[region->device];
  device.memory_used -= std::min(device.memory_used, uint64_t{region->accounted});
  unmapBacking(p, region->mapped);
  MemoryRecordArgs record;
  record.release = true;
  record.memory_kind = cuptiKind(region->kind);
  record.address = region->base;
  record.bytes = region->size;
  record.where = Placement{static_cast<uint32_t>(region->device), device.context_id, 0};
  record.time = nowNs();
  record.correlation = call.correlation;
  record.async = async;
  emitMemoryRecord(activity_, record);
  return cudaSuccess;
}

cudaError_t Simulator::hostRegister(void* p, size_t bytes) {
  if (p == nullptr || bytes == 0) return cudaErrorInvalidValue;
  std::lock_guard lock(mutex_);
  if (memory_.overlaps(p, bytes)) return cudaErrorHostMemoryAlreadyRegistered;
  Region region;
  region.base = reinterpret_cast<uintptr_t>(p);
  region.size = bytes;
  region.kind = MemKind::Pinned;
  region.device = currentDevice();
  region.registered = true;
  memory_.add(region);
  return cudaSuccess;
}

cudaError_t Simulator::hostUnregister(void* p) {
  std::lock_guard lock(mutex_);
  const Region* region = memory_.find(p);
  if (region == nullptr || !region->registered || region->base != reinterpret_cast<uintptr_t>(p)) {
    return cudaErrorHostMemoryNotRegistered;
  }
  memory_.remove(p);
  return cudaSuccess;
}

cudaError_t Simulator::memGetInfo(size_t* free_bytes, size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr) return cudaErrorInvalidValue;
  std::lock_guard lock(mutex_);
  const DeviceState& device = *devices_[currentDevice()];
  const uint64_t total = device.model->total_memory_bytes;
  const uint64_t taken = config_.context_reserve_bytes + device.memory_used;
  *total_bytes = total;
  *free_bytes = taken >= total ? 0 : total - taken;
  return cudaSuccess;
}

uint64_t Simulator::memoryUsed(int device) {
  std::lock_guard lock(mutex_);
  if (device < 0 || device >= int(devices_.size())) return 0;
  return config_.context_reserve_bytes + devices_[device]->memory_used;
}

cudaError_t Simulator::pointerAttributes(cudaPointerAttributes* a, const void* p) {
  if (a == nullptr) return cudaErrorInvalidValue;
  std::memset(a, 0, sizeof(*a));
  std::lock_guard lock(mutex_);
  const Region* region = memory_.find(p);
  if (region == nullptr) {
    a->type = cudaMemoryTypeUnregistered;
    a->device = -2;
    a->hostPointer = const_cast<void*>(p);
    return cudaSuccess;
  }
  a->device = region->device;
  switch (region->kind) {
  case MemKind::Device: a->type = cudaMemoryTypeDevice; break;
  case MemKind::Managed: a->type = cudaMemoryTypeManaged; break;
  default: a->type = cudaMemoryTypeHost; break;
  }
  a->devicePointer = const_cast<void*>(p);
  a->hostPointer = region->kind == MemKind::Device ? nullptr : const_cast<void*>(p);
  return cudaSuccess;
}

} // namespace gpuwise::sim
