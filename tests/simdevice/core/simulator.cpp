// Devices, contexts, streams, events and synchronisation. Work (launches, copies, memsets,
// memory) is in simulator_work.cpp, capture and graphs in simulator_graphs.cpp.
#include "tests/simdevice/core/simulator.h"

#include <algorithm>
#include <cstring>

namespace gpuwise::sim {
namespace {

thread_local int t_device = 0;

// Per-thread default streams (cudaStreamPerThread, or stream 0 through a _ptsz entry point), one
// per device, owned by the simulator that created them: a forked child's new simulator starts over.
struct PerThreadStreams {
  const Simulator* owner = nullptr;
  StreamState* by_device[16] = {};
};
thread_local PerThreadStreams t_per_thread;

} // namespace

Simulator::Simulator(const SimConfig& config, Activity& activity, Subscriber& subscriber)
    : config_(config), cost_(config), activity_(activity), subscriber_(subscriber) {
  const DeviceModel* model = findDeviceModel(config.device_key);
  if (model == nullptr) model = &deviceModels()[0];
  for (int i = 0; i < config.device_count; ++i) {
    auto device = std::make_unique<DeviceState>();
    device->ordinal = i;
    device->model = model;
    device->context_id = static_cast<uint32_t>(i + 1);
    device->legacy.device = i;
    device->legacy.id = 7; // the id CUPTI gives the legacy default stream
    device->legacy.legacy = true;
    devices_.push_back(std::move(device));
  }
}

int Simulator::currentDevice() const {
  return std::clamp(t_device, 0, deviceCount() - 1);
}

cudaError_t Simulator::setDevice(int device) {
  if (device < 0 || device >= deviceCount()) return cudaErrorInvalidDevice;
  t_device = device;
  return cudaSuccess;
}

void Simulator::ensureContext(int device) {
  if (device < 0 || device >= deviceCount()) return;
  {
    std::lock_guard lock(mutex_);
    if (devices_[device]->context_created) return;
    devices_[device]->context_created = true;
  }
  CUpti_ResourceData data{};
  data.context = contextHandle(device);
  subscriber_.invoke(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &data);
}

CUcontext Simulator::contextHandle(int device) const {
  // The DeviceState's address is the context handle: stable, unique, and checkable.
  return reinterpret_cast<CUcontext>(devices_[device].get());
}

uint32_t Simulator::contextId(int device) const {
  return devices_[device]->context_id;
}

bool Simulator::contextInfo(CUcontext ctx, uint32_t* device, uint32_t* context_id) const {
  for (const auto& d : devices_) {
    if (reinterpret_cast<CUcontext>(d.get()) == ctx) {
      if (device != nullptr) *device = static_cast<uint32_t>(d->ordinal);
      if (context_id != nullptr) *context_id = d->context_id;
      return true;
    }
  }
  return false;
}

bool Simulator::streamId(cudaStream_t stream, bool per_thread, uint32_t* id) {
  std::lock_guard lock(mutex_);
  StreamState* s = resolveStreamLocked(stream, per_thread);
  if (s == nullptr) return false;
  *id = s->id;
  return true;
}

bool Simulator::streamInfo(cudaStream_t stream, bool per_thread, StreamState* info) {
  std::lock_guard lock(mutex_);
  StreamState* s = resolveStreamLocked(stream, per_thread);
  if (s == nullptr) return false;
  *info = *s;
  return true;
}

void Simulator::emitDeviceRecords() {
  for (const auto& d : devices_)
    emitDeviceRecord(activity_, *d->model, d->ordinal);
}

StreamState* Simulator::resolveStreamLocked(cudaStream_t stream, bool per_thread) {
  DeviceState& device = *devices_[currentDevice()];
  if (stream == cudaStreamLegacy || (stream == nullptr && !per_thread)) return &device.legacy;
  if (stream == cudaStreamPerThread || stream == nullptr) {
    if (t_per_thread.owner != this) t_per_thread = PerThreadStreams{this, {}};
    StreamState*& s = t_per_thread.by_device[device.ordinal];
    if (s == nullptr) {
      s = new StreamState();
      s->device = device.ordinal;
      s->id = device.next_stream_id++;
      device.streams.push_back(s);
    }
    return s;
  }
  if (live_streams_.count(stream) == 0) return nullptr;
  return reinterpret_cast<StreamState*>(stream);
}

EventState* Simulator::resolveEventLocked(cudaEvent_t event) {
  if (event == nullptr || live_events_.count(event) == 0) return nullptr;
  return reinterpret_cast<EventState*>(event);
}

TimeNs Simulator::readyLocked(const StreamState& s) const {
  const DeviceState& device = *devices_[s.device];
  TimeNs ready = s.tail;
  if (s.legacy) {
    for (const StreamState* other : device.streams) {
      if (other->blocking) ready = std::max(ready, other->tail);
    }
  } else if (s.blocking) {
    ready = std::max(ready, device.legacy.tail);
  }
  return ready;
}

TimeNs Simulator::deviceDoneLocked(int device) const {
  const DeviceState& d = *devices_[device];
  TimeNs done = std::max({d.legacy.tail, d.h2d_engine_tail, d.d2h_engine_tail});
  for (const StreamState* s : d.streams)
    done = std::max(done, s->tail);
  return done;
}

Placement Simulator::placementLocked(const StreamState& s) const {
  return Placement{static_cast<uint32_t>(s.device), devices_[s.device]->context_id, s.id};
}

void Simulator::waitUntil(TimeNs until) {
  sleepUntil(until);
}

cudaError_t Simulator::streamCreate(cudaStream_t* out, unsigned flags, int priority) {
  if (out == nullptr || (flags & ~cudaStreamNonBlocking) != 0) return cudaErrorInvalidValue;
  StreamState* s = new StreamState();
  {
    std::lock_guard lock(mutex_);
    DeviceState& device = *devices_[currentDevice()];
    s->device = device.ordinal;
    s->id = device.next_stream_id++;
    s->blocking = (flags & cudaStreamNonBlocking) == 0;
    s->flags = flags;
    s->priority = std::clamp(priority, -5, 0); // the range cudaDeviceGetStreamPriorityRange reports
    s->tail = 0;
    device.streams.push_back(s);
    live_streams_.insert(s);
  }
  *out = reinterpret_cast<cudaStream_t>(s);
  CUpti_ResourceData data{};
  data.context = contextHandle(s->device);
  data.resourceHandle.stream = *out;
  subscriber_.invoke(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_CREATED, &data);
  return cudaSuccess;
}

cudaError_t Simulator::streamDestroy(cudaStream_t stream) {
  std::lock_guard lock(mutex_);
  if (live_streams_.count(stream) == 0) return cudaErrorInvalidResourceHandle;
  StreamState* s = reinterpret_cast<StreamState*>(stream);
  // Work already queued still completes; the legacy stream keeps waiting for it.
  live_streams_.erase(stream);
  s->destroyed = true;
  return cudaSuccess;
}

cudaError_t Simulator::streamQuery(cudaStream_t stream, bool per_thread) {
  settle(stream, per_thread);
  std::lock_guard lock(mutex_);
  StreamState* s = resolveStreamLocked(stream, per_thread);
  if (s == nullptr) return cudaErrorInvalidResourceHandle;
  if (s->capture != nullptr) return cudaErrorStreamCaptureUnsupported;
  return nowNs() >= (s->legacy ? readyLocked(*s) : s->tail) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t Simulator::streamSynchronize(cudaStream_t stream, bool per_thread,
                                         const CallInfo& call) {
  TimeNs until = 0;
  Placement where;
  settle(stream, per_thread);
  {
    std::lock_guard lock(mutex_);
    StreamState* s = resolveStreamLocked(stream, per_thread);
    if (s == nullptr) return cudaErrorInvalidResourceHandle;
    if (s->capture != nullptr) {
      s->capture_invalidated = true;
      return cudaErrorStreamCaptureUnsupported;
    }
    until = s->legacy ? readyLocked(*s) : s->tail;
    where = placementLocked(*s);
  }
  waitUntil(until);
  emitSyncRecord(activity_, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, call.start,
                 nowNs(), call.correlation, where, 0);
  CUpti_SynchronizeData data{contextHandle(static_cast<int>(where.device)), stream};
  subscriber_.invoke(CUPTI_CB_DOMAIN_SYNCHRONIZE, CUPTI_CBID_SYNCHRONIZE_STREAM_SYNCHRONIZED,
                     &data);
  return cudaSuccess;
}

cudaError_t Simulator::deviceSynchronize(const CallInfo& call) {
  const int device = currentDevice();
  TimeNs until = 0;
  settleDevice(device);
  {
    std::lock_guard lock(mutex_);
    until = deviceDoneLocked(device);
  }
  waitUntil(until);
  Placement where{static_cast<uint32_t>(device), devices_[device]->context_id, 0};
  emitSyncRecord(activity_, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, call.start,
                 nowNs(), call.correlation, where, 0);
  CUpti_SynchronizeData data{contextHandle(device), nullptr};
  subscriber_.invoke(CUPTI_CB_DOMAIN_SYNCHRONIZE, CUPTI_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED,
                     &data);
  return cudaSuccess;
}

cudaError_t Simulator::eventCreate(cudaEvent_t* out, unsigned flags) {
  constexpr unsigned kKnown =
      cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
  if (out == nullptr || (flags & ~kKnown) != 0) return cudaErrorInvalidValue;
  std::lock_guard lock(mutex_);
  EventState& e = events_.emplace_back();
  e.device = currentDevice();
  e.id = next_event_id_++;
  e.flags = flags;
  live_events_.insert(&e);
  *out = reinterpret_cast<cudaEvent_t>(&e);
  return cudaSuccess;
}

cudaError_t Simulator::eventDestroy(cudaEvent_t event) {
  std::lock_guard lock(mutex_);
  EventState* e = resolveEventLocked(event);
  if (e == nullptr) return cudaErrorInvalidResourceHandle;
  e->destroyed = true;
  live_events_.erase(event);
  return cudaSuccess;
}

cudaError_t Simulator::eventRecord(cudaEvent_t event, cudaStream_t stream, bool per_thread) {
  settle(stream, per_thread);
  std::lock_guard lock(mutex_);
  EventState* e = resolveEventLocked(event);
  StreamState* s = resolveStreamLocked(stream, per_thread);
  if (e == nullptr || s == nullptr) return cudaErrorInvalidResourceHandle;
  // The event completes when the work queued before it does; on an idle stream, once the GPU
  // processes the record (a launch latency after the host issued it).
  e->time = std::max(readyLocked(*s), nowNs() + config_.launch_latency_ns / 2);
  e->recorded = true;
  e->device = s->device;
  return cudaSuccess;
}

cudaError_t Simulator::eventQuery(cudaEvent_t event) {
  std::lock_guard lock(mutex_);
  EventState* e = resolveEventLocked(event);
  if (e == nullptr) return cudaErrorInvalidResourceHandle;
  return !e->recorded || nowNs() >= e->time ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t Simulator::eventSynchronize(cudaEvent_t event, const CallInfo& call) {
  TimeNs until = 0;
  uint32_t event_id = 0;
  int device = 0;
  {
    std::lock_guard lock(mutex_);
    EventState* e = resolveEventLocked(event);
    if (e == nullptr) return cudaErrorInvalidResourceHandle;
    until = e->recorded ? e->time : 0;
    event_id = e->id;
    device = e->device;
  }
  waitUntil(until);
  Placement where{static_cast<uint32_t>(device), devices_[device]->context_id, 0};
  emitSyncRecord(activity_, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, call.start,
                 nowNs(), call.correlation, where, event_id);
  return cudaSuccess;
}

cudaError_t Simulator::eventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (ms == nullptr) return cudaErrorInvalidValue;
  std::lock_guard lock(mutex_);
  EventState* a = resolveEventLocked(start);
  EventState* b = resolveEventLocked(end);
  if (a == nullptr || b == nullptr) return cudaErrorInvalidResourceHandle;
  if (((a->flags | b->flags) & cudaEventDisableTiming) != 0) return cudaErrorInvalidResourceHandle;
  if (!a->recorded || !b->recorded) return cudaErrorInvalidResourceHandle;
  const TimeNs now = nowNs();
  if (now < a->time || now < b->time) return cudaErrorNotReady;
  *ms = static_cast<float>(static_cast<double>(b->time - a->time) / 1e6);
  return cudaSuccess;
}

cudaError_t Simulator::streamWaitEvent(cudaStream_t stream, cudaEvent_t event, bool per_thread,
                                       const CallInfo& call) {
  Placement where;
  uint32_t event_id = 0;
  {
    std::lock_guard lock(mutex_);
    StreamState* s = resolveStreamLocked(stream, per_thread);
    EventState* e = resolveEventLocked(event);
    if (s == nullptr || e == nullptr) return cudaErrorInvalidResourceHandle;
    if (e->recorded) s->tail = std::max(s->tail, e->time);
    where = placementLocked(*s);
    event_id = e->id;
  }
  emitSyncRecord(activity_, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, call.start,
                 nowNs(), call.correlation, where, event_id);
  return cudaSuccess;
}

} // namespace gpuwise::sim
