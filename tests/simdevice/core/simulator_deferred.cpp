// Deferred kernels: work whose end another process decides (the stand-in NCCL's collectives).
//
// A deferred kernel is queued on its stream without an end. Nothing waits for it until something
// needs the stream's ready time; every such operation first calls settle(), which asks the
// kernel's owner (DeferredHooks::resolve, without the simulator lock) for its start and end, then
// puts it on the timeline: the stream's tail moves to its end and its CUPTI kernel record is
// emitted (complete at once when the end has already passed). Consecutive deferred kernels of one
// owner on one stream chain without settling: the owner learns of the previous one from
// launchDeferred and orders them itself. So a host that only issues work never blocks on a peer;
// one that needs a collective's result waits until the peers got there, as on a real GPU.
#include <algorithm>

#include "tests/simdevice/core/kernel_registry.h"
#include "tests/simdevice/core/simulator.h"

namespace gpuwise::sim {

template <typename Pick> void Simulator::settleWhere(Pick pick) {
  if (pending_count_.load(std::memory_order_acquire) == 0) return;
  for (;;) {
    PendingKernel job;
    StreamState* owner = nullptr;
    {
      std::lock_guard lock(mutex_);
      for (auto& device : devices_) {
        auto consider = [&](StreamState* s) {
          if (owner == nullptr && !s->pending.empty() && pick(*s)) owner = s;
        };
        consider(&device->legacy);
        for (StreamState* s : device->streams)
          consider(s);
      }
      if (owner == nullptr) return;
      job = owner->pending.front();
    }
    TimeNs start = 0, end = 0;
    job.hooks.resolve(job.hooks.context, job.hooks.token, &start, &end);
    std::lock_guard lock(mutex_);
    // Another thread may have resolved the same kernel meanwhile: it is then no longer the front.
    if (owner->pending.empty() || owner->pending.front().hooks.token != job.hooks.token ||
        owner->pending.front().hooks.context != job.hooks.context) {
      continue;
    }
    owner->pending.pop_front();
    pending_count_.fetch_sub(1, std::memory_order_release);
    start = std::max(start, job.record.queued);
    end = std::max(end, start);
    owner->tail = std::max(owner->tail, end);
    DeviceState& device = *devices_[owner->device];
    device.kernel_serial_tail = std::max(device.kernel_serial_tail, end);
    job.record.kernel = &job.info;
    job.record.start = start;
    job.record.end = end;
    job.record.submitted = std::min(job.record.submitted, start);
    emitKernelRecord(activity_, job.record);
  }
}

void Simulator::settle(cudaStream_t stream, bool per_thread, bool include_self) {
  if (pending_count_.load(std::memory_order_acquire) == 0) return;
  StreamState* target = nullptr;
  {
    std::lock_guard lock(mutex_);
    target = resolveStreamLocked(stream, per_thread);
  }
  if (target == nullptr) return; // the caller reports the bad handle
  // The streams whose work the target's ready time includes (readyLocked's rules).
  settleWhere([&](const StreamState& s) {
    if (&s == target) return include_self;
    if (s.device != target->device) return false;
    if (target->legacy) return s.blocking;
    return target->blocking && s.legacy;
  });
}

void Simulator::settleDevice(int device) {
  settleWhere([device](const StreamState& s) { return s.device == device; });
}

DeferredHooks Simulator::lastPending(cudaStream_t stream, bool per_thread) {
  std::lock_guard lock(mutex_);
  StreamState* s = resolveStreamLocked(stream, per_thread);
  if (s == nullptr || s->pending.empty()) return {};
  return s->pending.back().hooks;
}

cudaError_t Simulator::launchDeferred(const LaunchRequest& request, const CallInfo& call,
                                      const DeferredHooks& hooks, TimeNs* earliest_start,
                                      DeferredHooks* previous) {
  if (hooks.resolve == nullptr || hooks.token == 0) return cudaErrorInvalidValue;
  KernelInfo info;
  if (!KernelRegistry::instance().find(request.func, &info)) return cudaErrorInvalidDeviceFunction;
  // Work on the streams tied to this one by the legacy-stream rules must be on the timeline.
  settle(request.stream, request.per_thread, /*include_self=*/false);
  std::lock_guard lock(mutex_);
  StreamState* s = resolveStreamLocked(request.stream, request.per_thread);
  if (s == nullptr) return cudaErrorInvalidResourceHandle;
  if (s->capture != nullptr) {
    s->capture_invalidated = true;
    return cudaErrorStreamCaptureUnsupported;
  }
  *previous = s->pending.empty() ? DeferredHooks{} : s->pending.back().hooks;
  const TimeNs earliest = std::max(call.start + config_.launch_latency_ns, readyLocked(*s));
  *earliest_start = earliest;
  s->tail = earliest; // a lower bound until resolved: the kernel cannot end before it starts
  PendingKernel job;
  job.hooks = hooks;
  job.info = info;
  job.record.shape = KernelShape{request.grid,       request.block,  request.dynamic_shared,
                                 info.static_shared, info.registers, info.work};
  job.record.where = placementLocked(*s);
  job.record.queued = call.start + 300;
  job.record.submitted = call.start + config_.launch_latency_ns / 2;
  job.record.correlation = call.correlation;
  job.record.grid_id = static_cast<int64_t>(++op_seq_);
  s->pending.push_back(job);
  pending_count_.fetch_add(1, std::memory_order_release);
  return cudaSuccess;
}

} // namespace gpuwise::sim
