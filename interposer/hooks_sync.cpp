// Runtime hooks for the calls that block the host on the GPU (device, stream and event
// synchronisation) and for stream-wait-event (a device-side wait, kept for the GPU timeline). The
// hook's interval is the host's blocked time.
//
// Every hook forwards to the real function and returns its result unchanged, records only when the
// shim is recording, and cannot throw.
#include "interposer/real_symbol.h"
#include "interposer/recorder.h"
#include "profiler/model/events.h"

#include <cuda_runtime_api.h>

using namespace gpuwise::interposer;
using gpuwise::model::SyncKind;

namespace {

GPUWISE_REAL_RUNTIME(cudaDeviceSynchronize);
GPUWISE_REAL_RUNTIME(cudaStreamSynchronize);
GPUWISE_REAL_RUNTIME(cudaEventSynchronize);
GPUWISE_REAL_RUNTIME(cudaStreamWaitEvent);

constexpr cudaError_t kNoRuntime = cudaErrorInitializationError;

template <class Call>
[[gnu::noinline]] cudaError_t recordSync(ApiId api, SyncKind kind, const void* handle,
                                         Call&& call) {
  Recorder rec;
  if (!rec.begin()) return call();
  cudaError_t r = call();
  if (RawEvent* e = rec.end(EventKind::Sync, api, r, uint8_t(kind))) {
    e->u.sync.handle = reinterpret_cast<uint64_t>(handle);
    rec.publish();
  }
  return r;
}

} // namespace

GPUWISE_EXPORT cudaError_t cudaDeviceSynchronize() {
  auto fn = real_cudaDeviceSynchronize.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn();
  return recordSync(ApiId::cudaDeviceSynchronize, SyncKind::Device, nullptr, [=] { return fn(); });
}

GPUWISE_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  auto fn = real_cudaStreamSynchronize.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(stream);
  return recordSync(ApiId::cudaStreamSynchronize, SyncKind::Stream, stream,
                    [=] { return fn(stream); });
}

GPUWISE_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  auto fn = real_cudaEventSynchronize.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(event);
  return recordSync(ApiId::cudaEventSynchronize, SyncKind::Event, event, [=] { return fn(event); });
}

GPUWISE_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                               unsigned int flags) {
  auto fn = real_cudaStreamWaitEvent.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(stream, event, flags);
  return recordSync(ApiId::cudaStreamWaitEvent, SyncKind::StreamWaitEvent, stream,
                    [=] { return fn(stream, event, flags); });
}
